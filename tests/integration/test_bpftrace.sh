#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# The bpftrace scripts (scripts/bpftrace/*.bt) against KVM's own counters:
# each script traces a real kvmmmu-load run (bpftrace -c) and its numbers for
# that process must equal the per-vCPU pf_taken / pf_fixed that kvmmmu-load
# reads from KVM's binary statistics at exit.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BT_DIR=$ROOT/scripts/bpftrace
LOAD_ARGS="--vcpus 2 --mem 64M"

if ! reason=$(need_kvm); then
	skip bpftrace "$reason"
	exit 0
fi
if ! command -v bpftrace >/dev/null 2>&1; then
	skip bpftrace "bpftrace is not installed (apt-get install bpftrace)"
	exit 0
fi
if [ ! -x "$BUILD/kvmmmu-load" ]; then
	skip bpftrace "$BUILD/kvmmmu-load is not built (make)"
	exit 0
fi
# bpftrace reads tracepoint formats from tracefs, which is not always mounted.
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
fi
if [ ! -d /sys/kernel/tracing/events/kvmmmu ] && [ ! -d /sys/kernel/debug/tracing/events/kvmmmu ]; then
	skip bpftrace "no kvmmmu tracepoints in tracefs (KVM without mmutrace, or tracefs unavailable)"
	exit 0
fi

# sum_stat CSV METRIC: the metric summed over vCPUs (per-vCPU kvm_stats rows).
sum_stat() {
	awk -F, -v m="$2" '!/^#/ && $5 == "kvm_stats" && $6 == m && $4 != "" && $7 == "" { s += $8 }
		END { print s + 0 }' "$1"
}
# load_pid CSV: the pid of the kvmmmu-load run that wrote CSV.
load_pid() {
	awk -F, '!/^#/ && $5 == "load" { print $2; exit }' "$1"
}
# bt_value OUT MAP KEY: the value printed for @MAP[KEY] (first number after ': ').
bt_value() {
	awk -v k="@$2[$3]: " 'index($0, k) == 1 { v = substr($0, length(k) + 1); sub(/[^0-9].*/, "", v); print v; exit }' "$1"
}
# run_script NAME: runs scripts/bpftrace/NAME.bt around kvmmmu-load; output in
# $TMP/NAME.out, CSV in $TMP/NAME.csv. Returns non-zero when either failed.
run_script() {
	local name=$1
	# shellcheck disable=SC2086
	timeout -s INT 600 bpftrace "$BT_DIR/$name.bt" \
		-c "$BUILD/kvmmmu-load $LOAD_ARGS --csv $TMP/$name.csv" >"$TMP/$name.out" 2>&1 &&
		[ -s "$TMP/$name.csv" ]
}

# ---- kvmmmu-outcomes.bt ----
if ! run_script kvmmmu-outcomes; then
	fail bpftrace/outcomes "bpftrace or kvmmmu-load failed: $(grep -v RLIMIT_MEMLOCK "$TMP/kvmmmu-outcomes.out" | tail -3 | tr '\n' ' ')"
else
	csv=$TMP/kvmmmu-outcomes.csv out=$TMP/kvmmmu-outcomes.out
	pid=$(load_pid "$csv")
	taken=$(sum_stat "$csv" pf_taken)
	fixed=$(sum_stat "$csv" pf_fixed)
	spurious=$(sum_stat "$csv" pf_spurious)
	bt_faults=$(bt_value "$out" proc_faults "$pid")
	bt_fixed=$(bt_value "$out" proc_fixed "$pid")
	bt_spurious=$(bt_value "$out" proc_spurious "$pid")
	echo "  pid $pid: KVM pf_taken $taken pf_fixed $fixed pf_spurious $spurious;" \
		"bpftrace faults ${bt_faults:-none} fixed ${bt_fixed:-none} spurious ${bt_spurious:-0}"
	check bpftrace/outcomes-prints-banner "no 'Tracing KVM MMU faults' line" \
		grep -q '^Tracing KVM MMU faults... Hit Ctrl-C to end.$' "$out"
	check bpftrace/outcomes-faults-eq-pf_taken "faults ${bt_faults:-none} != pf_taken $taken" \
		test "${bt_faults:-x}" = "$taken" -a "$taken" -gt 0
	check bpftrace/outcomes-fixed-eq-pf_fixed "fixed ${bt_fixed:-none} != pf_fixed $fixed" \
		test "${bt_fixed:-x}" = "$fixed"
	# At most the last request of each vCPU thread can still be pending. On
	# the TDP MMU a request that sets no SPTE may also be a retry (a lost
	# cmpxchg: RET_PF_RETRY, in pf_taken only), which the script, unlike
	# kvmmmu, counts as spurious: up to pf_taken - pf_fixed - pf_spurious more
	# (seen: 1 in 32,775 on 6.12).
	retries=0
	[ "$(host_mmu)" = tdp_mmu ] && retries=$((taken - fixed - spurious))
	check bpftrace/outcomes-spurious-eq-pf_spurious "spurious ${bt_spurious:-0}, pf_spurious $spurious (+ at most $retries retries)" \
		test "${bt_spurious:-0}" -le "$((spurious + retries))" -a "$spurious" -le "$((${bt_spurious:-0} + 2))"
	# Per vCPU thread: "CPU N/KVM" against vCPU N's counters.
	ok=1 detail=
	for v in 0 1; do
		want_t=$(csv_value "$csv" kvm_stats pf_taken "$v")
		want_f=$(csv_value "$csv" kvm_stats pf_fixed "$v")
		got_t=$(grep -E "^@faults\[$pid, [0-9]+, CPU $v/KVM\]: " "$out" | sed 's/.*: //')
		got_f=$(grep -E "^@fixed\[$pid, [0-9]+, CPU $v/KVM\]: " "$out" | sed 's/.*: //')
		detail="$detail vcpu$v faults ${got_t:-none}/$want_t fixed ${got_f:-none}/$want_f;"
		[ "${got_t:-x}" = "$want_t" ] && [ "${got_f:-x}" = "$want_f" ] || ok=0
	done
	check bpftrace/outcomes-per-vcpu-thread "per-thread counts differ from per-vCPU stats:$detail" \
		test "$ok" = 1
fi

# ---- kvmmmu-latency.bt ----
if ! run_script kvmmmu-latency; then
	fail bpftrace/latency "bpftrace or kvmmmu-load failed: $(grep -v RLIMIT_MEMLOCK "$TMP/kvmmmu-latency.out" | tail -3 | tr '\n' ' ')"
else
	csv=$TMP/kvmmmu-latency.csv out=$TMP/kvmmmu-latency.out
	pid=$(load_pid "$csv")
	fixed=$(sum_stat "$csv" pf_fixed)
	count=$(awk -v k="@walk_to_spte_stats[$pid]: count " 'index($0, k) == 1 { v = substr($0, length(k) + 1); sub(/,.*/, "", v); print v; exit }' "$out")
	# Sum of the histogram's buckets for this pid.
	hsum=$(awk -v k="@walk_to_spte_ns[$pid]:" '
		index($0, k) == 1 { on = 1; next }
		on && /^\[/ { sub(/^[^)]*\) */, ""); s += $1; next }
		on { on = 0 }
		END { print s + 0 }' "$out")
	echo "  pid $pid: KVM pf_fixed $fixed; bpftrace samples ${count:-none}, histogram sum $hsum"
	check bpftrace/latency-prints-banner "no 'Tracing KVM MMU faults' line" \
		grep -q '^Tracing KVM MMU faults... Hit Ctrl-C to end.$' "$out"
	if [ "$(host_mmu)" = shadow ]; then
		# the shadow MMU walks the guest's page tables for every fault
		check bpftrace/latency-count-eq-pf_fixed "samples ${count:-none} != pf_fixed $fixed" \
			test "${count:-x}" = "$fixed" -a "$fixed" -gt 0
		check bpftrace/latency-hist-sum-eq-count "histogram holds $hsum samples, stats say ${count:-none}" \
			test "$hsum" = "${count:-x}"
	else
		# nested paging (the $(host_mmu) MMU): no guest page-table walk, so
		# the script has nothing to time (its Limits say so), and says nothing
		check bpftrace/latency-no-samples-without-walks "samples ${count:-none}, histogram sum $hsum ($(host_mmu) MMU, pf_fixed $fixed)" \
			test -z "$count" -a "$hsum" = 0 -a "$fixed" -gt 0
	fi
fi

# ---- every script compiles (bpftrace --emit-elf: parse, check, codegen; no load) ----
for bt in "$BT_DIR"/*.bt; do
	name=$(basename "$bt" .bt)
	if timeout 300 bpftrace --emit-elf "$TMP/$name.elf" "$bt" >"$TMP/$name.elf.log" 2>&1; then
		pass "bpftrace/$name-compiles"
	else
		fail "bpftrace/$name-compiles" "$(grep ERROR "$TMP/$name.elf.log" | grep -v RLIMIT_MEMLOCK | head -1)"
	fi
done
exit 0
