#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# The bpftrace scripts (scripts/bpftrace/) against KVM's own counters, in
# both their modes: each script, run through kvmmmu-bt around a real
# kvmmmu-load (bpftrace -c), must say which mode it uses, the mode kvmmmu-bt
# chose must be the one this host allows (fentry where BPF can attach to
# KVM's functions, else tracepoints), and its numbers for that process must
# equal the per-vCPU pf_taken / pf_fixed / pf_spurious that kvmmmu-load
# reads from KVM's binary statistics at exit. The other mode is then forced
# (--mode), so that both variants are checked on the same host.
#
# What is compared: bpftrace's figures for kvmmmu-load's PID with KVM's,
# summed over its 2 vCPUs, and per vCPU thread ("CPU N/KVM") where a script
# counts per thread; exactly, since both count the same faults of the same
# run. With nested paging the CPU's own accesses to guest memory (the TSS,
# the page tables: test_load.sh) fault too, a few a VM on one vCPU or
# another: KVM counts them and so do the scripts, so they change nothing but
# the expected total, which is checked against test_load.sh's range.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BT_DIR=$ROOT/scripts/bpftrace
BT=$BT_DIR/kvmmmu-bt
PAGES=16384 # per vCPU: 64 MiB
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
# bpftrace reads tracepoint formats, and kfunc probes' function list, from tracefs.
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
fi
if [ ! -d /sys/kernel/tracing/events/kvmmmu ] && [ ! -d /sys/kernel/debug/tracing/events/kvmmmu ]; then
	skip bpftrace "no kvmmmu tracepoints in tracefs (KVM without mmutrace, or tracefs unavailable)"
	exit 0
fi

# What this host lets BPF do, from the kernel rather than from bpftrace (whose
# own probe kvmmmu-bt uses): fentry needs KVM's functions in BTF, a kernel
# that lets BPF attach to functions (as in the other files, the kprobe PMU
# stands for that: no host of the CI kind has one, the guests all do) and
# a readable available_filter_functions (bpftrace's list of kfunc targets;
# EPERM on the CI kind).
host_fentry() {
	local t
	[ -e /sys/bus/event_source/devices/kprobe ] || return 1
	{ [ -e /sys/kernel/btf/kvm ] || [ ! -e /sys/module/kvm/initstate ]; } || return 1
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		head -c 1 "$t/available_filter_functions" >/dev/null 2>&1 && return 0
	done
	return 1
}
if host_fentry; then
	FENTRY=1
	why_not_fentry=
else
	FENTRY=
	why_not_fentry="this kernel does not let BPF attach to KVM's functions (no kprobe PMU, no KVM BTF or no readable available_filter_functions)"
fi
# kvmmmu-bt's auto mode: fentry where it can, unless KVMMMU_PROBE_MODE says
# tracepoint (tests/guest.sh's npt0 pass, run as this host kind's KVM).
if [ -n "$FENTRY" ] && [ "${KVMMMU_PROBE_MODE:-auto}" != tracepoint ]; then
	AUTO=fentry OTHER=tracepoint
else
	AUTO=tracepoint OTHER=fentry
fi
# The done event (kernel-patches' 0001): where KVM has it, kvmmmu-bt's auto
# latency is the done-event script, checked like the others; without it
# (every unpatched kernel) the done-event mode must say so in one line.
if [ -d /sys/kernel/tracing/events/kvmmmu/kvm_mmu_page_fault_done ] ||
	[ -d /sys/kernel/debug/tracing/events/kvmmmu/kvm_mmu_page_fault_done ]; then
	DONE=1
	why_not_done=
else
	DONE=
	why_not_done="this KVM has no kvmmmu:kvm_mmu_page_fault_done event (unpatched: kernel-patches/ 0001; tests/run.sh's 6.12-npt1-tdpY-patched guest pass runs this file on the patched modules)"
fi
AUTO_LATENCY=$AUTO
[ -n "$DONE" ] && [ "${KVMMMU_PROBE_MODE:-auto}" = auto ] && AUTO_LATENCY=done-event
MMU=$(host_mmu)
echo "  host: $MMU MMU, fentry $([ -n "$FENTRY" ] && echo yes || echo no), done event $([ -n "$DONE" ] && echo yes || echo no);" \
	"kvmmmu-bt auto should choose $AUTO ($AUTO_LATENCY for latency; KVMMMU_PROBE_MODE=${KVMMMU_PROBE_MODE:-unset})"

# Faults KVM takes for the run (test_load.sh's reasoning): each vCPU's pages
# plus its code page, plus with nested paging 4 to 8 of the CPU's own.
if [ "$MMU" = shadow ]; then
	TAKEN_MIN=$((2 * (PAGES + 1))) TAKEN_MAX=$((2 * (PAGES + 1)))
else
	TAKEN_MIN=$((2 * (PAGES + 1) + 4)) TAKEN_MAX=$((2 * (PAGES + 1) + 8))
fi

# shellcheck disable=SC2317 # called through check
not() { ! "$@"; }
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
# thread_value OUT MAP PID VCPU: @MAP[PID, TID, CPU VCPU/KVM]'s value.
thread_value() {
	grep -E "^@$2\[$3, [0-9]+, CPU $4/KVM\]: " "$1" | sed 's/.*: //'
}
# hist_sum OUT MAP PID: the sum of the buckets of @MAP[PID]'s histogram.
hist_sum() {
	awk -v k="@$2[$3]:" '
		index($0, k) == 1 { on = 1; next }
		on && /^\[/ { sub(/^[^)]*\) */, ""); s += $1; next }
		on { on = 0 }
		END { print s + 0 }' "$1"
}
# stats_count OUT MAP PID: the count of @MAP[PID]'s stats().
stats_count() {
	awk -v k="@$2[$3]: count " 'index($0, k) == 1 { v = substr($0, length(k) + 1); sub(/,.*/, "", v); print v; exit }' "$1"
}

# run_bt SCRIPT MODE: kvmmmu-bt SCRIPT around kvmmmu-load, in MODE (auto:
# kvmmmu-bt's choice); output in $TMP/SCRIPT-MODE.out, CSV in .csv. Fails
# when bpftrace or kvmmmu-load did. bpftrace -c ends with the command: the
# timeout is only a bound (TCG: attach 5-20 s, the run about 10).
run_bt() {
	local name=$1 mode=$2 base=$TMP/$1-$2 opt=()
	[ "$mode" = auto ] || opt=(--mode "$mode")
	timeout -s INT 600 "$BT" "${opt[@]}" -c "$BUILD/kvmmmu-load $LOAD_ARGS --csv $base.csv" "$name" \
		>"$base.out" 2>&1 && [ -s "$base.csv" ]
}
# mode_line_is LINE SCRIPT WORD: LINE is "kvmmmu-SCRIPT: WORD (what it attaches to)".
# shellcheck disable=SC2317 # called through check
mode_line_is() { [[ $1 == "kvmmmu-$2: $3 ("*")" ]]; }
# check_mode NAME SCRIPT MODE OUT: the script's first line of its own (after
# bpftrace's "Attaching N probes...") names MODE, then its "Tracing" line.
check_mode() {
	local script=$2 word=$3 line
	[ "$3" = tracepoint ] && word=tracepoints
	line=$(grep -v -e RLIMIT_MEMLOCK -e '^Attaching [0-9]* probes\.\.\.$' "$4" | head -1)
	echo "  mode line: $line"
	check "$1-says-mode-$3" "first line '$line', expected 'kvmmmu-$script: $word (...)'" \
		mode_line_is "$line" "$script" "$word"
	check "$1-prints-banner" "no 'Tracing KVM MMU faults' line" \
		grep -q '^Tracing KVM MMU faults... Hit Ctrl-C to end.$' "$4"
}
# check_taken NAME TAKEN: KVM's total is what this host's MMU takes for the run.
check_taken() {
	check "$1-kvm-pf_taken-as-expected" "pf_taken $2, expected $TAKEN_MIN to $TAKEN_MAX ($MMU MMU)" \
		test "$2" -ge $TAKEN_MIN -a "$2" -le $TAKEN_MAX
}

# ran_bt VIEW MODE NAME BASE: runs VIEW in MODE (run_bt); non-zero, said as
# NAME's SKIP or FAIL, when the host cannot attach MODE or a run failed.
ran_bt() {
	if [ "$2" = fentry ] && [ -z "$FENTRY" ]; then
		skip "$3" "$why_not_fentry"
		return 1
	fi
	if [ "$2" = done-event ] && [ -z "$DONE" ]; then
		skip "$3" "$why_not_done"
		return 1
	fi
	if ! run_bt "$1" "$2"; then
		fail "$3" "kvmmmu-bt, bpftrace or kvmmmu-load failed: $(grep -v RLIMIT_MEMLOCK "$4.out" | tail -3 | tr '\n' ' ')"
		return 1
	fi
}

# outcomes SCRIPT-MODE: kvmmmu-bt outcomes in MODE against KVM.
outcomes() {
	local mode=$1 name=bpftrace/outcomes-$1 base=$TMP/outcomes-$1 out csv pid taken fixed spurious
	local emulate bt_faults bt_fixed bt_spurious bt_emulate bt_async ok detail v retries
	ran_bt outcomes "$mode" "$name" "$base" || return
	out=$base.out csv=$base.csv
	pid=$(load_pid "$csv")
	taken=$(sum_stat "$csv" pf_taken)
	fixed=$(sum_stat "$csv" pf_fixed)
	spurious=$(sum_stat "$csv" pf_spurious)
	emulate=$(sum_stat "$csv" pf_emulate)
	bt_faults=$(bt_value "$out" proc_faults "$pid")
	bt_fixed=$(bt_value "$out" proc_fixed "$pid")
	bt_spurious=$(bt_value "$out" proc_spurious "$pid")
	bt_emulate=$(bt_value "$out" proc_emulate "$pid")
	echo "  outcomes ($mode), pid $pid: KVM pf_taken $taken pf_fixed $fixed pf_spurious $spurious pf_emulate $emulate;" \
		"bpftrace faults ${bt_faults:-none} fixed ${bt_fixed:-none} spurious ${bt_spurious:-0} emulate ${bt_emulate:-0}"
	check_mode "$name" outcomes "$mode" "$out"
	check_taken "$name" "$taken"
	check "$name-faults-eq-pf_taken" "faults ${bt_faults:-none} != pf_taken $taken" \
		test "${bt_faults:-x}" = "$taken" -a "$taken" -gt 0
	if [ "$mode" = fentry ]; then
		# async page-fault completions count in pf_fixed too (none expected here)
		bt_async=$(bt_value "$out" proc_async_fixed "$pid")
		check "$name-fixed-eq-pf_fixed" "fixed ${bt_fixed:-none} + async_fixed ${bt_async:-0} != pf_fixed $fixed" \
			test "$((${bt_fixed:-0} + ${bt_async:-0}))" = "$fixed" -a -n "$bt_fixed"
		check "$name-spurious-eq-pf_spurious" "spurious ${bt_spurious:-0} != pf_spurious $spurious" \
			test "${bt_spurious:-0}" = "$spurious"
		# pf_emulate also counts 6.12's write-protection faults emulated
		# after the handler returned RET_PF_WRITE_PROTECTED (in @other)
		check "$name-emulate-le-pf_emulate" "emulate ${bt_emulate:-0} > pf_emulate $emulate" \
			test "${bt_emulate:-0}" -le "$emulate"
		check_ret_pf "$name" "$out"
	else
		check "$name-fixed-eq-pf_fixed" "fixed ${bt_fixed:-none} != pf_fixed $fixed" \
			test "${bt_fixed:-x}" = "$fixed"
		# At most the last request of each vCPU thread can still be pending.
		# On the TDP MMU a request that sets no SPTE may also be a retry (a
		# lost cmpxchg: RET_PF_RETRY, in pf_taken only), which the
		# tracepoint script, unlike kvmmmu, counts as spurious: up to
		# pf_taken - pf_fixed - pf_spurious more (seen: 1 in 32,775 on 6.12).
		retries=0
		[ "$MMU" = tdp_mmu ] && retries=$((taken - fixed - spurious))
		check "$name-spurious-eq-pf_spurious" "spurious ${bt_spurious:-0}, pf_spurious $spurious (+ at most $retries retries)" \
			test "${bt_spurious:-0}" -le "$((spurious + retries))" -a "$spurious" -le "$((${bt_spurious:-0} + 2))"
	fi
	# Per vCPU thread: "CPU N/KVM" against vCPU N's counters.
	ok=1 detail=
	for v in 0 1; do
		local want_t want_f got_t got_f
		want_t=$(csv_value "$csv" kvm_stats pf_taken "$v")
		want_f=$(csv_value "$csv" kvm_stats pf_fixed "$v")
		got_t=$(thread_value "$out" faults "$pid" "$v")
		got_f=$(thread_value "$out" fixed "$pid" "$v")
		detail="$detail vcpu$v faults ${got_t:-none}/$want_t fixed ${got_f:-none}/$want_f;"
		[ "${got_t:-x}" = "$want_t" ] && [ "${got_f:-x}" = "$want_f" ] || ok=0
	done
	check "$name-per-vcpu-thread" "per-thread counts differ from per-vCPU stats:$detail" test "$ok" = 1
}

# check_ret_pf NAME OUT: the RET_PF_* values kvmmmu-bt passed (its mode line)
# are the kernel's, as bpftool reads them from BTF.
check_ret_pf() {
	local line got want dump=()
	if ! command -v bpftool >/dev/null; then
		skip "$1-ret_pf-values-eq-btf" "no bpftool to read RET_PF_* from BTF"
		return
	fi
	if [ -e /sys/kernel/btf/kvm ]; then
		dump=(bpftool -B /sys/kernel/btf/vmlinux btf dump file /sys/kernel/btf/kvm)
	else
		dump=(bpftool btf dump file /sys/kernel/btf/vmlinux)
	fi
	want=$("${dump[@]}" | awk '
		match($0, /'"'"'RET_PF_(FIXED|SPURIOUS|EMULATE|RETRY)'"'"' val=[0-9]+/) {
			s = substr($0, RSTART + 8, RLENGTH - 8); split(s, a, "'"'"' val="); v[a[1]] = a[2] }
		END { printf "FIXED=%s SPURIOUS=%s EMULATE=%s RETRY=%s", v["FIXED"], v["SPURIOUS"], v["EMULATE"], v["RETRY"] }')
	line=$(grep -m1 '^kvmmmu-outcomes: fentry' "$2")
	got=$(sed -n 's/.*RET_PF_\(FIXED=[0-9]* SPURIOUS=[0-9]* EMULATE=[0-9]* RETRY=[0-9]*\)).*/\1/p' <<<"$line")
	check "$1-ret_pf-values-eq-btf" "kvmmmu-bt passed '$got', BTF has '$want'" test -n "$got" -a "$got" = "$want"
}

# latency MODE: kvmmmu-bt latency in MODE against KVM.
latency() {
	local mode=$1 name=bpftrace/latency-$1 base=$TMP/latency-$1 out csv pid taken fixed count hsum
	ran_bt latency "$mode" "$name" "$base" || return
	out=$base.out csv=$base.csv
	pid=$(load_pid "$csv")
	taken=$(sum_stat "$csv" pf_taken)
	fixed=$(sum_stat "$csv" pf_fixed)
	check_mode "$name" latency "$mode" "$out"
	check_taken "$name" "$taken"
	if [ "$mode" = fentry ] || [ "$mode" = done-event ]; then
		# every fault, whatever the MMU: one sample per pf_taken (the
		# done event fires once per fault KVM counts, by construction)
		count=$(stats_count "$out" fault_stats "$pid")
		hsum=$(hist_sum "$out" fault_ns "$pid")
		echo "  latency ($mode), pid $pid: KVM pf_taken $taken; bpftrace samples ${count:-none}, histogram sum $hsum"
		check "$name-count-eq-pf_taken" "samples ${count:-none} != pf_taken $taken" \
			test "${count:-x}" = "$taken" -a "$taken" -gt 0
		check "$name-hist-sum-eq-count" "histogram holds $hsum samples, stats say ${count:-none}" \
			test "$hsum" = "${count:-x}"
		[ "$mode" = fentry ] || return
		check "$name-no-returns-lost" "$(grep '^@returns_lost' "$out")" \
			not grep -q "^@returns_lost\\[$pid\\]" "$out"
		return
	fi
	count=$(stats_count "$out" walk_to_spte_stats "$pid")
	hsum=$(hist_sum "$out" walk_to_spte_ns "$pid")
	echo "  latency (tracepoints), pid $pid: KVM pf_fixed $fixed; bpftrace samples ${count:-none}, histogram sum $hsum"
	if [ "$MMU" = shadow ]; then
		# the shadow MMU walks the guest's page tables for every fault
		check "$name-count-eq-pf_fixed" "samples ${count:-none} != pf_fixed $fixed" \
			test "${count:-x}" = "$fixed" -a "$fixed" -gt 0
		check "$name-hist-sum-eq-count" "histogram holds $hsum samples, stats say ${count:-none}" \
			test "$hsum" = "${count:-x}"
	else
		# nested paging ($MMU MMU): no guest page-table walk, so the
		# tracepoint script has nothing to time (its Limits say so)
		check "$name-no-samples-without-walks" "samples ${count:-none}, histogram sum $hsum ($MMU MMU, pf_fixed $fixed)" \
			test -z "$count" -a "$hsum" = 0 -a "$fixed" -gt 0
	fi
}

# kvmmmu-bt's choice first, then the other modes, forced.
outcomes "$AUTO"
latency "$AUTO_LATENCY"
outcomes "$OTHER"
for m in fentry tracepoint done-event; do
	[ "$m" = "$AUTO_LATENCY" ] || latency "$m"
done

# ---- bad input: one line, "kvmmmu-bt: why", exit 2 ----
one_line_error bpftrace/bt-bad-pid 2 "$BT" latency 12x
one_line_error bpftrace/bt-no-such-pid 2 "$BT" outcomes 999999999
one_line_error bpftrace/bt-bad-mode 2 "$BT" --mode kprobe latency
one_line_error bpftrace/bt-bad-script 2 "$BT" faults
one_line_error bpftrace/bt-done-event-no-outcomes 2 "$BT" --mode done-event outcomes
[ -n "$DONE" ] || one_line_error bpftrace/bt-done-event-absent 2 "$BT" --mode done-event latency
# the fentry outcomes script alone, without the RET_PF_* values it needs
if [ -n "$FENTRY" ]; then
	timeout 300 bpftrace "$BT_DIR/kvmmmu-outcomes-kfunc.bt" >"$TMP/noargs.out" 2>&1
	# one line that says why, and no map printed (nothing traced)
	n=$(grep -c '^kvmmmu-outcomes-kfunc.bt: needs PID FIXED SPURIOUS EMULATE RETRY' "$TMP/noargs.out")
	check bpftrace/outcomes-kfunc-needs-values "$(grep -v RLIMIT_MEMLOCK "$TMP/noargs.out" | head -3 | tr '\n' ' ')" \
		test "$n" = 1 -a "$(grep -c '^@' "$TMP/noargs.out")" = 0
fi

# ---- every script compiles (bpftrace --emit-elf: parse, check, codegen; no load) ----
for bt in "$BT_DIR"/*.bt; do
	name=$(basename "$bt" .bt)
	case $name in
	*-done)
		if [ -z "$DONE" ]; then
			skip "bpftrace/$name-compiles" "$why_not_done"
			continue
		fi
		;;
	*-kfunc)
		if [ -z "$FENTRY" ]; then
			skip "bpftrace/$name-compiles" "$why_not_fentry"
			continue
		fi
		;;
	esac
	if timeout 300 bpftrace --emit-elf "$TMP/$name.elf" "$bt" >"$TMP/$name.elf.log" 2>&1; then
		pass "bpftrace/$name-compiles"
	else
		fail "bpftrace/$name-compiles" "$(grep ERROR "$TMP/$name.elf.log" | grep -v RLIMIT_MEMLOCK | head -1)"
	fi
done
exit 0
