#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-exporter with real parts: Debian's Prometheus scrapes it every second
# while kvmmmu-load VMs run and exit; its figures, read back through
# Prometheus' HTTP API, equal KVM's own counters; every dashboard and rule
# query returns data; hostile clients do not stop the scrapes; bad input is
# a one-line error; TLS and basic auth work; capabilities are dropped.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip exporter/all "$why"
	exit 0
fi
for tool in curl openssl /usr/bin/python3; do
	if ! command -v $tool >/dev/null; then
		skip exporter/all "$tool is not installed (sudo make deps)"
		exit 0
	fi
done
# Without Prometheus or promtool, each check that needs one is a SKIP that
# says so, and the rest (the wire, bad input, TLS, capabilities) still runs.
noprom=$(command -v prometheus >/dev/null || echo "prometheus is not installed (sudo make deps)")
nopromtool=$(command -v promtool >/dev/null || echo "promtool is not installed (sudo make deps)")
# needs WHY NAME DESCRIPTION CMD...: check, or SKIP NAME: WHY when WHY is set
needs() {
	local why=$1
	shift
	if [ -n "$why" ]; then skip "$1" "$why"; else check "$@"; fi
}
EXP=$BUILD/kvmmmu-exporter
LOAD=$BUILD/kvmmmu-load
PY=/usr/bin/python3
source "$TOOLS/../prom.sh"
ROOT=$(cd "$TOOLS/../.." && pwd)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT

# the latency histogram family of this probe mode (lib.sh: LAT)
case $LAT in
fault_ns) LAT_FAMILY=kvmmmu_mmu_page_fault_duration_seconds ;;
*) LAT_FAMILY=kvmmmu_walk_to_spte_duration_seconds ;;
esac
# answers URL-TAIL: the exporter at EPORT answers HTTP or HTTPS (any status)
answers() {
	[ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$EPORT/")" != 000 ] ||
		[ "$(curl -sk -o /dev/null --max-time 5 -w '%{http_code}' "https://127.0.0.1:$EPORT/")" != 000 ]
}
# start_exporter LOG ARGS...: starts kvmmmu-exporter on a free loopback port; sets EPID, EPORT.
# It listens at once and answers once its probes are attached (8-20 s in a
# TCG guest): this waits for that, 3 min at most.
start_exporter() {
	local log=$1 _
	shift
	"$EXP" --web.listen-address=127.0.0.1:0 "$@" >"$log" 2>&1 &
	EPID=$!
	pids+=("$EPID")
	EPORT=
	local end=$((SECONDS + 120))
	while [ $SECONDS -lt $end ]; do
		EPORT=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$log" | head -1)
		[ -n "$EPORT" ] && break
		kill -0 $EPID 2>/dev/null || return 1
		sleep 0.1
	done
	[ -n "$EPORT" ] && until_true 180 answers
}
# --- the exporter (every collector: the dashboards use them all) and Prometheus, every second
start_exporter "$TMP/exp.log" --collector.per_vcpu
check exporter/starts "$(tail -3 "$TMP/exp.log")" test -n "$EPORT"
# plain HTTP is said, as node_exporter says "TLS is disabled"
check exporter/plain-http-says-so "$(grep 'listening on' "$TMP/exp.log")" \
	grep -q 'listening on .*, TLS is off (plain HTTP), no authentication,' "$TMP/exp.log"
URL=http://127.0.0.1:$EPORT
EPORT1=$EPORT
if [ -z "$noprom" ]; then
	start_prometheus "$TMP/prom" 127.0.0.1:$EPORT
	pids+=("$PROM_PID")
fi
needs "$noprom" exporter/prometheus-target-up "$(value 'up{job="kvmmmu"}'); $(tail -2 "$TMP/prom/log")" \
	test "$(value 'up{job="kvmmmu"}')" = 1

# --- the wire format: headers, the landing page, 404 and 405
curl -s -D "$TMP/h" -o "$TMP/scrape0" "$URL/metrics"
check exporter/content-type "$(grep -i '^content-type' "$TMP/h")" \
	grep -qx $'Content-Type: text/plain; version=0.0.4; charset=utf-8\r' "$TMP/h"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check exporter/landing-page "$(curl -s "$URL/")" eval 'curl -s "$URL/" | grep -q "href=\"/metrics\""'
check exporter/404-elsewhere "got $(code "$URL/nope")" test "$(code "$URL/nope")" = 404
check exporter/405-post "got $(code -X POST -d x "$URL/metrics")" test "$(code -X POST -d x "$URL/metrics")" = 405
check exporter/405-put "got $(code -X PUT "$URL/metrics")" test "$(code -X PUT "$URL/metrics")" = 405
# gzip when the client asks, as node_exporter; the same families inside
curl -s -H 'Accept-Encoding: gzip' -D "$TMP/hz" -o "$TMP/scrape0.gz" "$URL/metrics"
check exporter/gzip-when-asked "$(grep -i '^content-encoding\|^vary' "$TMP/hz" | tr -d '\r' | tr '\n' ' ')" \
	eval 'grep -qix $'"'"'Content-Encoding: gzip\r'"'"' "$TMP/hz" && gunzip -c "$TMP/scrape0.gz" | grep -q "^# TYPE kvmmmu_page_faults_total counter"'
check exporter/no-gzip-unasked "$(grep -i '^content-encoding\|^vary' "$TMP/h" | tr -d '\r' | tr '\n' ' ')" \
	eval '! grep -qi "^content-encoding" "$TMP/h" && grep -qix $'"'"'Vary: Accept-Encoding\r'"'"' "$TMP/h"'
c=$(curl -s -H 'Accept-Encoding: gzip;Q=0, identity' -D - -o /dev/null "$URL/metrics" | grep -ci '^content-encoding')
check exporter/no-gzip-at-q0 "$c Content-Encoding headers" test "$c" = 0
# the exporter's own process_* families, as every client library's
start=$(awk '/^process_start_time_seconds / { printf "%d", $2 }' "$TMP/scrape0")
check exporter/process-metrics "$(grep '^process_' "$TMP/scrape0" | tr '\n' ' ')" \
	eval 'for f in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes process_open_fds process_max_fds; do
		grep -qE "^$f [0-9.e+]+$" "$TMP/scrape0" || exit 1; done
		[ -n "$start" ] && [ "$start" -le "$(date +%s)" ] && [ "$start" -ge $(($(date +%s) - 600)) ]'

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
# mid-fault, so the count may be 0; an absent series then means 0)
k=0
for ((v = 0; v < 3; v++)); do
	kv=$(csv_value "$TMP/db.csv" kvm_stats pf_spurious $v)
	[ -n "$kv" ] && [ "$k" != none ] && k=$((k + kv)) || k=none
done
q='sum(last_over_time(kvmmmu_page_faults_total{vm="exp-db",result="spurious"}[10m]))'
got=$(value "$q")
needs "$noprom" exporter/shared-vm-spurious-faults "Prometheus has ${got:-no series}, KVM pf_spurious $k" \
	test "${got:-0}" = "$k"
q='sum(last_over_time(kvmmmu_dirty_log_toggle_duration_seconds_count{vm="exp-web"}[10m]))'
q2='sum(last_over_time(kvmmmu_dirty_log_calls_total{vm="exp-web",call=~"enable|disable"}[10m]))'
needs "$noprom" exporter/dirty-log-toggles "toggle durations: $(value "$q"), enable and disable calls: $(value "$q2")" \
	eval '[ "$(value "$q")" -gt 0 ] && [ "$(value "$q")" = "$(value "$q2")" ]'
# exited VMs: their series are stale by now (one scrape, Prometheus', showed
# the final values; without it the series are still waiting for that scrape)
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
		why="this kernel's probes are tracepoints only; the VM tests run these queries with function probes"
	fi
	run_queries exporter "$TMP/scrape2" "$why"
	kill $tog
	wait $tog 2>/dev/null
fi
check exporter/dashlint "$($DASH lint "$ROOT"/dashboards/*.json 2>&1 | head -5)" $DASH lint "$ROOT"/dashboards/kvmmmu-fleet.json "$ROOT"/dashboards/kvmmmu-vm.json
check exporter/dashlint-catches-mistakes "$($DASH selftest 2>&1 | tail -3)" $DASH selftest
needs "$nopromtool" exporter/promtool-check-rules "$(promtool check rules "$ROOT/dashboards/kvmmmu-rules.yml" 2>&1 | tail -2)" \
	promtool check rules "$ROOT/dashboards/kvmmmu-rules.yml"
needs "$nopromtool" exporter/promtool-test-rules "$(cd "$ROOT/dashboards" && promtool test rules kvmmmu-rules.test.yml 2>&1 | tail -3)" \
	eval '(cd "$ROOT/dashboards" && promtool test rules kvmmmu-rules.test.yml)'

# --- hostile clients, while Prometheus keeps scraping (the busy VM gone: the
# scrapes must not depend on how fast one CPU gets through them)
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null
EPID1=$EPID
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$EPID1/status"; }
rss0=$(rss)
printf 'NOT HTTP AT ALL\r\n\r\n' | timeout 5 curl -s telnet://127.0.0.1:$EPORT >/dev/null 2>&1
exec 3<>/dev/tcp/127.0.0.1/$EPORT && printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nBad header line\r\n\r\n' >&3
exec 3>&-
big=$(head -c 10000 /dev/zero | tr '\0' a)
c=$(code -H "X-Big: $big" "$URL/metrics")
check exporter/10000-header-bytes-answered "got $c" eval '[ "$c" = 200 ] || [ "$c" = 431 ] || [ "$c" = 413 ]'
(ulimit -n 4096 && exec $PC idle 127.0.0.1 $EPORT 1000 6) >"$TMP/idle.out" 2>&1 &
idle=$!
$PC slowread 127.0.0.1 $EPORT /metrics 6 >"$TMP/slow.out" 2>&1 &
slow=$!
until_true 30 grep -q 'connections open' "$TMP/idle.out"
t0=$(date +%s.%N)
c=$(code --max-time 5 "$URL/metrics")
t1=$(date +%s.%N)
check exporter/scrape-with-1000-idle-and-a-slow-reader "got $c in $(echo "$t1 - $t0" | bc 2>/dev/null)s; $(cat "$TMP/idle.out")" test "$c" = 200
wait $idle $slow
sleep 2
# the hostile clients' 8 s and what followed
needs "$noprom" exporter/prometheus-never-lost-it "min up over the last 12 s: $(value 'min_over_time(up{job="kvmmmu"}[12s])')" \
	test "$(value 'min_over_time(up{job="kvmmmu"}[12s])')" = 1
for _ in $(seq 20); do curl -s "$URL/metrics" >/dev/null; done
rss1=$(rss)
if ldd "$EXP" 2>/dev/null | grep -q libasan; then
	# ASan keeps freed memory in quarantine; LeakSanitizer checks the exits here
	skip exporter/memory-flat "an ASan build: its quarantine holds what was freed (the other two passes check it)"
else
	check exporter/memory-flat "VmRSS $rss0 KiB before the hostile clients, $rss1 KiB after" test $((rss1 - rss0)) -lt 8192
fi

# --- counters never go backwards while VMs come and go
for i in 1 2 3 4 5 6; do "$LOAD" --name exp-churn-$i --vcpus 2 --mem 4M >/dev/null 2>&1; done
sleep 2
# (exp-toggle is a new VM of the same name every few seconds, for the
# dashboard queries above: its series start again from 0, as they must)
q='sum(resets(kvmmmu_page_faults_total{job="kvmmmu",vm!="exp-toggle"}[5m])) + sum(resets(kvmmmu_kvm_stat_pf_taken_total{job="kvmmmu",vm!="exp-toggle"}[5m]))'
needs "$noprom" exporter/no-counter-went-backwards "resets: $(value "$q")" test "$(value "$q")" = 0

# --- capabilities: only CAP_SYS_PTRACE kept (kvm_stats), none without it
capeff() { awk '/^CapEff:/ { print $2 }' "/proc/$1/status"; }
check exporter/keeps-only-cap-sys-ptrace "CapEff $(capeff $EPID1)" test "$(capeff $EPID1)" = 0000000000080000
check exporter/says-which-caps "$(grep -i capabilit "$TMP/exp.log")" grep -q 'but CAP_SYS_PTRACE' "$TMP/exp.log"
start_exporter "$TMP/exp2.log" --no-collector.kvm_stats --collector.per_vcpu \
	--web.listen-address=127.0.0.2:0 --web.max-connections=40 --web.disable-exporter-metrics
p2=$EPID
# a second --web.listen-address: both served
port2=$(sed -n 's/.*listening on 127.0.0.2:0 (port \([0-9]*\)).*/\1/p' "$TMP/exp2.log")
check exporter/second-listen-address "$(grep 'listening on' "$TMP/exp2.log" | tr '\n' ' ')" \
	eval '[ -n "$port2" ] && [ "$(code "http://127.0.0.2:$port2/metrics")" = 200 ]'
# past --web.max-connections a client is closed at once, not left in the backlog
# (where it looked like a hung exporter); the others are kept
$PC crowd 127.0.0.1 $EPORT 60 >"$TMP/crowd.out" 2>&1
check exporter/refuses-past-max-connections "$(cat "$TMP/crowd.out")" \
	grep -qx '60 connections, 20 closed by the server, 40 open' "$TMP/crowd.out"
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

# --- bad input: one line, non-zero
bad() { # NAME WANT-RC ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 20 "$EXP" "$@" 2>&1)
	rc=$?
	check "exporter/bad-$name" "rc $rc (want $want), $(wc -l <<<"$out") lines: $out" \
		eval '[ $rc = $want ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "kvmmmu-exporter: " <<<"$out"'
}
printf 'tls_server_config:\n  cert_file: [oops\n' >"$TMP/bad.yml"
printf 'basic_auth_users:\n  alice: plaintext\n' >"$TMP/plain.yml"
printf 'tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n' >"$TMP/unsup.yml"
printf 'no_such_field: 1\n' >"$TMP/unknown.yml"
bad config-missing 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/none.yml"
bad config-not-yaml 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/bad.yml"
bad config-plain-password 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/plain.yml"
bad config-unsupported 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/unsup.yml"
bad config-unknown-field 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/unknown.yml"
# a config that cannot be read whole is fatal, never plain HTTP without its users
mkdir -p "$TMP/config-dir.yml"
bad config-is-a-directory 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/config-dir.yml"
bad listen-port-range 2 --web.listen-address=127.0.0.1:99999
bad listen-no-port 2 --web.listen-address=localhost
bad listen-in-use 1 --web.listen-address=127.0.0.1:$EPORT1
bad listen-not-mine 1 --web.listen-address=192.0.2.1:9486
bad telemetry-path 2 --web.telemetry-path=metrics
bad unknown-collector 2 --collector.nope
bad no-collector-on 2 --collector.disable-defaults
bad no-collector-on-but-per-vcpu 2 --collector.disable-defaults --collector.per_vcpu
bad too-many-listen-addresses 2 $(for i in 1 2 3 4 5 6 7 8 9; do echo --web.listen-address=127.0.0.1:0; done)
bad second-listen-address-bad 2 --web.listen-address=127.0.0.1:0 --web.listen-address=nope

# --- basic auth and TLS (exporter-toolkit's web config)
# cost 12, as people deploy it (about 0.25 s a check here)
hash=$($PY -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=4096)))')
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -keyout "$TMP/key.pem" \
	-out "$TMP/cert.pem" >/dev/null 2>&1
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$TMP/auth.yml"
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  alice: %s\n' \
	"$hash" >"$TMP/tls.yml"
start_exporter "$TMP/exp3.log" --web.config.file="$TMP/auth.yml"
p3=$EPID
A=http://127.0.0.1:$EPORT/metrics
check exporter/auth-none-401 "got $(code "$A")" test "$(code "$A")" = 401
check exporter/auth-wrong-401 "got $(code -u alice:wrong "$A")" test "$(code -u alice:wrong "$A")" = 401
check exporter/auth-unknown-user-401 "got $(code -u bob:s3cret "$A")" test "$(code -u bob:s3cret "$A")" = 401
check exporter/auth-right-200 "got $(code -u alice:s3cret "$A")" test "$(code -u alice:s3cret "$A")" = 200
# 50 clients retrying wrong passwords: bcrypt runs on workers, and the
# scraper's known-good password is not checked again, so its scrapes do not
# wait behind them (they took 5.9 s with 20 such clients, bcrypt on the HTTP thread)
wrong=()
for i in $(seq 50); do
	(end=$((SECONDS + 8)); while [ $SECONDS -lt $end ]; do code --max-time 20 -u "alice:wrong$i" "$A" >/dev/null; done) &
	wrong+=($!)
done
sleep 2
got=""
for i in 1 2 3 4 5; do
	got="$got $(curl -s -o /dev/null --max-time 2 -w '%{http_code}:%{time_total}' -u alice:s3cret "$A")"
	sleep 0.3
done
check exporter/auth-scrapes-under-wrong-password-storm "code:seconds of 5 scrapes (2 s at most each):$got" \
	eval '[ "$(echo $got | tr " " "\n" | grep -c "^200:")" = 5 ]'
wait "${wrong[@]}"
# and a wrong password is still refused (or told to come back), once the
# checks queued by the storm have drained: under TCG bcrypt takes seconds
c=$(code --max-time 180 -u alice:still-wrong "$A")
check exporter/auth-wrong-still-401-after-storm "got $c" eval '[ "$c" = 401 ] || [ "$c" = 503 ]'
check exporter/no-tls-unless-configured "https answered" eval '! curl -sk --max-time 5 "https://127.0.0.1:$EPORT/metrics" >/dev/null'
kill $p3
start_exporter "$TMP/exp4.log" --web.config.file="$TMP/tls.yml" --collector.disable-defaults \
	--collector.faults
p4=$EPID
check exporter/tls-says-so "$(tail -1 "$TMP/exp4.log")" grep -q ', TLS, basic auth,' "$TMP/exp4.log"
c=$(code -k -u alice:s3cret "https://127.0.0.1:$EPORT/metrics")
check exporter/tls-scrape-200 "got $c" test "$c" = 200
# --collector.disable-defaults: only the collectors named
curl -sk -u alice:s3cret "https://127.0.0.1:$EPORT/metrics" >"$TMP/scrape4"
check exporter/disable-defaults-only-named "$(grep '^kvmmmu_scrape_collector_success' "$TMP/scrape4" | tr '\n' ' ')" \
	eval '[ "$(grep -c "^kvmmmu_scrape_collector_success{" "$TMP/scrape4")" = 1 ] &&
		grep -q "^kvmmmu_scrape_collector_success{collector=\"faults\"}" "$TMP/scrape4" &&
		! grep -q "^# TYPE kvmmmu_mmu_lock\|^# TYPE kvmmmu_kvm_stat" "$TMP/scrape4"'
c=$(code --cacert "$TMP/cert.pem" -u alice:wrong "https://127.0.0.1:$EPORT/metrics")
check exporter/tls-wrong-password-401 "got $c" test "$c" = 401
c=$(code --max-time 5 -u alice:s3cret "http://127.0.0.1:$EPORT/metrics")
check exporter/tls-refuses-plain-http "plain HTTP got $c" test "$c" != 200
kill $p4
wait $p4 2>/dev/null

# --- the first exporter, stopped: nothing left behind
kill -TERM "${pids[0]}"
wait "${pids[0]}"
rc=$?
check exporter/first-sigterm-exit-0 "exit $rc" test $rc = 0
n=$(leaked_progs)
check exporter/no-bpf-left "$n kvmmmu programs left behind" test "$n" = 0
