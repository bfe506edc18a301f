#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-exporter with VMs: Debian's Prometheus scrapes it every second
# while kvmmmu-load VMs run and exit; its figures, read back through
# Prometheus' HTTP API, equal KVM's own counters, per VM and per vCPU; every
# dashboard and rule query returns data; counters never go backwards;
# capabilities are dropped. The exporter as an HTTP server (the wire, hostile
# clients, bad input, TLS and auth) is test_exporter_web.sh's: no VM needed.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip exporter/all "$why"
	exit 0
fi
source "$TOOLS/../exporter.sh"
exporter_tools exporter
LOAD=$BUILD/kvmmmu-load

# the latency histogram family of this probe mode (lib.sh: LAT)
case $LAT in
fault_ns) LAT_FAMILY=kvmmmu_mmu_page_fault_duration_seconds ;;
*) LAT_FAMILY=kvmmmu_walk_to_spte_duration_seconds ;;
esac
# --- the exporter (every collector: the dashboards use them all) and Prometheus, every second
# (a short retention: the exited VMs' series are to go stale within the test)
start_exporter "$TMP/exp.log" --collector.per_vcpu --collector.memslot --exited-vm-retention=3s
check exporter/starts "$(tail -3 "$TMP/exp.log")" test -n "$EPORT"
URL=http://127.0.0.1:$EPORT
EPID1=$EPID
if [ -z "$noprom" ]; then
	start_prometheus "$TMP/prom" 127.0.0.1:$EPORT
	pids+=("$PROM_PID")
fi
needs "$noprom" exporter/prometheus-target-up "$(value 'up{job="kvmmmu"}'); $(tail -2 "$TMP/prom/log")" \
	test "$(value 'up{job="kvmmmu"}')" = 1

# --- VMs run and exit under it; its figures equal KVM's, through Prometheus
"$LOAD" --name exp-web --vcpus 2 --mem 64M --dirty-log 3 --csv "$TMP/web.csv" >/dev/null 2>&1 &
l1=$!
"$LOAD" --name exp-db --vcpus 3 --mem 32M --shared --dirty-log 2 --csv "$TMP/db.csv" >/dev/null 2>&1
wait $l1
# the final values, once Prometheus has scraped them (and only then the series go)
for vm in web:2 db:3; do
	name=exp-${vm%:*} n=${vm#*:} k=0
	for ((v = 0; v < n; v++)); do
		# a missing value must fail the checks, not abort the loop unreported
		kv=$(csv_value "$TMP/${vm%:*}.csv" kvm_stats pf_taken $v)
		[ -n "$kv" ] && [ "$k" != none ] && k=$((k + kv)) || k=none
	done
	q="sum(last_over_time(kvmmmu_page_faults_total{job=\"kvmmmu\",vm=\"$name\"}[10m]))"
	[ -z "$noprom" ] && until_true 60 eval "test \"\$(value '$q')\" = $k"
	got=$(value "$q")
	needs "$noprom" "exporter/$name-faults-equal-pf_taken" "Prometheus has $got, KVM pf_taken $k" test "$got" = "$k"
	# the access kinds, and the entries' presence, each sum to the faults
	for fam in accesses entries; do
		q="sum(last_over_time(kvmmmu_page_fault_${fam}_total{job=\"kvmmmu\",vm=\"$name\"}[10m]))"
		got=$(value "$q")
		needs "$noprom" "exporter/$name-$fam-sum-to-pf_taken" "kvmmmu_page_fault_${fam}_total sums to $got, KVM pf_taken $k" \
			test "$got" = "$k"
	done
	q="last_over_time(kvmmmu_kvm_stat_pf_taken_total{job=\"kvmmmu\",vm=\"$name\"}[10m])"
	got=$(value "$q")
	needs "$noprom" "exporter/$name-kvm-stat-pf_taken" "kvmmmu_kvm_stat_pf_taken_total $got, KVM $k" test "$got" = "$k"
	q="histogram_quantile(0.99, sum by (le) (last_over_time(${LAT_FAMILY}_bucket{vm=\"$name\"}[10m])))"
	got=$(value "$q")
	needs "$noprom" "exporter/$name-p99-is-a-number" "histogram_quantile of $LAT_FAMILY: '$got'" \
		eval '[[ "$got" =~ ^[0-9.e+-]+$ ]] && [ "$got" != 0 ]'
	q="last_over_time(kvmmmu_vm_info{vm=\"$name\"}[10m])"
	needs "$noprom" "exporter/$name-info-has-pid" "$(has_data "$q")" eval 'has_data "$q" | grep -q "pid=[0-9]"'
done
# colliding faults are spurious ones, exactly KVM's count (how many collide is
# up to the scheduler: pinned to one CPU, a collision needs a vCPU preempted
# mid-fault, so the count may be 0; the series is there all the same: an
# outcome a fault can end with is always written)
k=0
for ((v = 0; v < 3; v++)); do
	kv=$(csv_value "$TMP/db.csv" kvm_stats pf_spurious $v)
	[ -n "$kv" ] && [ "$k" != none ] && k=$((k + kv)) || k=none
done
q='sum(last_over_time(kvmmmu_page_faults_total{vm="exp-db",result="spurious"}[10m]))'
got=$(value "$q")
needs "$noprom" exporter/shared-vm-spurious-faults "Prometheus has ${got:-no series}, KVM pf_spurious $k" \
	eval '[ -n "$got" ] && [ "$got" = "$k" ]'
q='sum(last_over_time(kvmmmu_dirty_log_toggle_duration_seconds_count{vm="exp-web"}[10m]))'
q2='sum(last_over_time(kvmmmu_dirty_log_calls_total{vm="exp-web",call=~"enable|disable"}[10m]))'
needs "$noprom" exporter/dirty-log-toggles "toggle durations: $(value "$q"), enable and disable calls: $(value "$q2")" \
	eval '[ "$(value "$q")" -gt 0 ] && [ "$(value "$q")" = "$(value "$q2")" ]'
# exited VMs: their series go stale once the retention (3 s from the first
# scrape that showed the final values) is over
[ -z "$noprom" ] && until_true 60 eval '! has_data "kvmmmu_vm_info{vm=\"exp-web\"}"'
needs "$noprom" exporter/exited-vm-series-stale "$(has_data 'kvmmmu_vm_info{vm="exp-web"}')" \
	eval '! has_data "kvmmmu_page_faults_total{vm=\"exp-web\"}"'
needs "$noprom" exporter/exited-vm-gone-from-scrape "still in a scrape" eval '! curl -s "$URL/metrics" | grep -q "vm=\"exp-web\""'
check exporter/not-itself-a-vm "the exporter exports itself" eval '! curl -s "$URL/metrics" | grep -q "vmm=\"kvmmmu-exporter\""'

# --- a scrape as two parsers read it
"$LOAD" --name exp-live --vcpus 2 --mem 32M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
live=$!
pids+=("$live")
# a scrape with the running VM in it
until_true 120 eval 'curl -s "$URL/metrics" | grep -q "vm=\"exp-live\""'
curl -s "$URL/metrics" >"$TMP/scrape1"
# an empty scrape (curl failed) passes the checks below that look for what
# must not be there: each wants a scrape
check exporter/scrape-has-metrics "$(wc -c <"$TMP/scrape1") bytes" grep -q '^kvmmmu_' "$TMP/scrape1"
out=$(promtool check metrics <"$TMP/scrape1" 2>&1)
rc=$?
needs "$nopromtool" exporter/promtool-check-metrics "exit $rc: $(head -5 <<<"$out")" test $rc = 0 -a -z "$out" -a -s "$TMP/scrape1"
check exporter/python-client-parses "$($PC parse "$TMP/scrape1" 2>&1 | head -5)" $PC parse "$TMP/scrape1"
check exporter/no-pid-label-but-info "$(grep -v '^kvmmmu_vm_info' "$TMP/scrape1" | grep -m1 'pid=')" \
	eval 'test -s "$TMP/scrape1" && ! grep -v "^kvmmmu_vm_info" "$TMP/scrape1" | grep -q "pid="'
check exporter/help-type-once "$(grep '^# TYPE' "$TMP/scrape1" | sort | uniq -d | head -3)" \
	eval 'grep -q "^# TYPE" "$TMP/scrape1" && test -z "$(grep "^# TYPE" "$TMP/scrape1" | sort | uniq -d)"'

# --- every dashboard panel's and rule's query returns data from this Prometheus:
# a VM running (rates), and one that turns dirty logging on, keeps it on
# for a few scrapes, and off (annotations: a change Prometheus has seen)
# (VMs that toggle it again and again while the queries run: the annotations
# look back one rate interval, 1m, and a TCG guest takes longer than that
# to get through the queries)
if [ -n "$noprom" ]; then
	skip exporter/queries "$noprom"
else
	toggler() {
		while :; do
			"$LOAD" --name exp-toggle --vcpus 1 --mem 4M --dirty-log 1 >/dev/null 2>&1
			sleep 2
		done
	}
	toggler &
	tog=$!
	pids+=("$tog")
	until_true 60 has_data 'changes(kvmmmu_dirty_log_toggle_duration_seconds_count{vm="exp-toggle"}[1m]) > 0'
	until_true 60 has_data 'rate(kvmmmu_page_faults_total{vm="exp-live"}[1m]) > 0'
	# a few scrapes of the running VM (rates need two): 4 more than now
	n0=$(value 'count_over_time(up{job="kvmmmu"}[10m])')
	until_true 60 eval "[ \"\$(value 'count_over_time(up{job=\"kvmmmu\"}[10m])')\" -ge $((${n0:-0} + 4)) ]"
	curl -s "$URL/metrics" >"$TMP/scrape2"
	if func_probes; then
		why="with function probes kvmmmu times whole faults (fault_ns), not walk-to-SPTE; tracepoint-only hosts run these queries"
	else
		why="tracepoint mode here (no kprobe PMU, or KVMMMU_PROBE_MODE=tracepoint); the VM tests run these queries with function probes"
	fi
	run_queries exporter "$TMP/scrape2" "$why"
	kill $tog
	wait $tog 2>/dev/null
fi
# the busy VM gone
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null

# --- counters never go backwards while VMs come and go
for i in 1 2 3 4 5 6; do "$LOAD" --name exp-churn-$i --vcpus 2 --mem 4M >/dev/null 2>&1; done
sleep 2
# (exp-toggle is a new VM of the same name every few seconds, for the
# dashboard queries above: its series start again from 0, as they must)
q='sum(resets(kvmmmu_page_faults_total{job="kvmmmu",vm!="exp-toggle"}[5m])) + sum(resets(kvmmmu_kvm_stat_pf_taken_total{job="kvmmmu",vm!="exp-toggle"}[5m]))'
needs "$noprom" exporter/no-counter-went-backwards "resets: $(value "$q")" test "$(value "$q")" = 0

# --- capabilities: only CAP_SYS_PTRACE kept (kvm_stats), none without it
check exporter/keeps-only-cap-sys-ptrace "CapEff $(capeff $EPID1)" test "$(capeff $EPID1)" = 0000000000080000
check exporter/says-which-caps "$(grep -i capabilit "$TMP/exp.log")" grep -q 'but CAP_SYS_PTRACE' "$TMP/exp.log"
# a second exporter: no kvm_stats collector (so no capability), per-vCPU counters, no process_*
start_exporter "$TMP/exp2.log" --no-collector.kvm_stats --collector.per_vcpu --web.disable-exporter-metrics
p2=$EPID
check exporter/no-caps-without-kvm-stats "CapEff $(capeff $p2)" test "$(capeff $p2)" = 0000000000000000
"$LOAD" --name exp-vcpu --vcpus 2 --mem 8M --csv "$TMP/vcpu.csv" >/dev/null 2>&1
curl -s "http://127.0.0.1:$EPORT/metrics" >"$TMP/scrape3"
for v in 0 1; do
	k=$(csv_value "$TMP/vcpu.csv" kvm_stats pf_taken $v)
	b=$(awk -v v="vcpu=\"$v\"" 'index($0, "kvmmmu_vcpu_page_faults_total{vm=\"exp-vcpu\"," v) == 1 { s += $NF } END { print s + 0 }' "$TMP/scrape3")
	check "exporter/per-vcpu-$v-equals-pf_taken" "per_vcpu $b, KVM $k" test "$b" = "$k"
done
check exporter/per-vcpu-no-histograms "a per-vCPU histogram, or no scrape" \
	eval 'grep -q "^kvmmmu_vcpu_page_faults_total" "$TMP/scrape3" && ! grep -q "_bucket{.*vcpu=" "$TMP/scrape3"'
check exporter/no-collector-no-family "kvm_stat families with --no-collector.kvm_stats, or no scrape" \
	eval 'grep -q "^kvmmmu_" "$TMP/scrape3" && ! grep -q "^kvmmmu_kvm_stat" "$TMP/scrape3"'
check exporter/disable-exporter-metrics "$(grep -c '^process_' "$TMP/scrape3") process_ lines" \
	eval 'grep -q "^kvmmmu_" "$TMP/scrape3" && ! grep -q "^process_" "$TMP/scrape3"'
kill -TERM $p2
wait $p2
rc=$?
check exporter/sigterm-exit-0 "exit $rc" test $rc = 0

# --- the first exporter, stopped: nothing left behind
kill -TERM "${pids[0]}"
wait "${pids[0]}"
rc=$?
check exporter/first-sigterm-exit-0 "exit $rc" test $rc = 0
n=$(leaked_progs)
check exporter/no-bpf-left "$n kvmmmu programs left behind" test "$n" = 0
