#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kvmmmu benchmark: what tracing costs the guest, side by side, in one run.
#
# Usage: scripts/bench.sh [BUILD_DIR]        (make bench = scripts/bench.sh build)
# Environment: BENCH_ROUNDS (throughput rounds, default 9), BENCH_COST_ROUNDS
# (BPF-cost rounds, default 3), BENCH_VCPUS (2), BENCH_MEM (256M per vCPU),
# BENCH_DIRTY_LOG (3).
#
# 1. Throughput. BENCH_ROUNDS rounds, each running the same kvmmmu-load
#    workload once under every configuration, in an order rotated per round:
#      none      no tracer
#      kvmmmu    build/kvmmmu-hist (all VMs, default metrics, tracepoint mode
#                where fentry/kprobes are unavailable)
#      bpftrace  scripts/bpftrace/kvmmmu-latency.bt (the same walk->set_spte
#                histogram from the same tracepoints)
#    Each tracer is started first and waited for ("Tracing..." line: probes
#    attached), so its start-up is not in the measurement. Fault throughput is
#    kvmmmu-load's own: the sum of pf_taken over vCPUs (KVM's statistics) over
#    the populate time plus the dirty-memory times of its CSV. Medians per
#    configuration, their ratio to "none", and the median of the per-round
#    ratios (each run against the "none" run of its round: less sensitive to
#    drift on a shared machine). BPF statistics are off in this phase.
# 2. BPF cost per event. kernel.bpf_stats_enabled=1 (restored at exit), then
#    BENCH_COST_ROUNDS rounds of {kvmmmu, bpftrace}; around each workload run,
#    `bpftool prog show` gives run_time_ns and run_cnt of every program the
#    tracer's process holds (found through /proc/PID/fdinfo). Baselines run
#    alongside every tracer, on the same events: tp_btf programs built here
#    on kvm_mmu_set_spte (the same dispatch as kvmmmu's programs): empty, one
#    per-CPU counter increment (the "trivial program" of the targets), a
#    per-thread hash lookup (kvmmmu's pattern), the same plus
#    bpf_ktime_get_ns, a task-local-storage lookup, and one field read by
#    bpf_probe_read_kernel() and by a direct load; and bpftrace's
#    `@c = count()` on the same tracepoint (a "tracepoint" program).
#
# 3. Attach time: kvmmmu-hist started BENCH_ATTACH_RUNS times (default 5), from
#    exec to its "Tracing" line; the median.
# 4. kvmmmu-hist's own CPU at a 1 s interval: 8 VMs x 8 vCPUs faulting under
#    dirty logging, kvmmmu-hist 1 tracing them all, its utime+stime over 10 s;
#    then kvmmmu-top -b -d 1 over the same VMs, over 8 s; then kvmmmu-exporter
#    scraped 200 times over the same VMs (its own scrape duration, curl's,
#    and its RSS after 20 and after 200 scrapes) (scripts/bench/cpu.sh).
# 5. contention_begin on locks that are not a traced mmu_lock: a small VM
#    runs while tests/tools/threadstorm contends on the host's own locks
#    (thread creation and exit: tasklist_lock, an rwlock like mmu_lock;
#    mmap_lock), with bpf_stats on: ns per contention_begin against the empty
#    baseline program.
#
# 6. Probe modes. Phase 2 again for each other mode kvmmmu attaches here
#    (BENCH_MODES: tracepoint, fsession, fentry, kprobe, done-event; by default every
#    one that attaches but done-event, which must be named and needs
#    BENCH_PATCHED: KVM's modules built by scripts/kernel-patches.sh, loaded
#    for it in place of the stock ones; the guest below passes them when
#    they are built), kvmmmu-hist forced into it (KVMMMU_PROBE_MODE), against the
#    bpftrace script of that mode (kvmmmu-latency-kfunc.bt where kfunc
#    attaches, kvmmmu-latency.bt with tracepoints) and the same baselines;
#    with phase 1, its throughput cost too (none, kvmmmu, bpftrace). The
#    report has a table per mode and ends with one summary line per mode.
#    (scripts/bench/modes.sh)
#
# 7. The guest: the modes this host's KVM cannot attach (BENCH_MODES, default
#    fsession, fentry and kprobe, with done-event where scripts/kernel-patches.sh
#    built the modules), measured as phases 1, 2 and 6 in a KVM-capable guest
#    (scripts/kvm-guest.sh, Debian BENCH_GUEST_KERNEL, default 6.12, under
#    QEMU/TCG; fsession needs 7.2 or 7.3; BENCH_NPT, default 1:
#    nested paging, and BENCH_TDP_MMU, default Y: the TDP MMU, as users'
#    hosts; N: the legacy MMU's direct faults), reported as a table a
#    mode and summary lines of their own: ratios only (scripts/bench/modes.sh).
#
# BENCH_PHASES (default: throughput cost modes guest attach cpu contention) picks
# phases; phase 2 (cost) always runs: the report and its summary lines are
# its. Without /dev/kvm the benchmark runs in a KVM-capable guest
# (scripts/kvm-guest.sh, Debian BENCH_GUEST_KERNEL (6.12) under QEMU/TCG, npt=0: shadow paging, or
# BENCH_NPT=1: nested paging and the TDP MMU (BENCH_TDP_MMU=N: the legacy MMU),
# where fentry, kprobes and the tracepoints all attach), smaller and without
# phases 4 and 5; there absolute times mean nothing, the ratios do.
#
# The targets (issues 9, 25) are printed with "met"/"NOT met"; nothing here fails on them
# (scripts/bench/targets.sh).
set -u
export LC_ALL=C

BUILD=${1:-build}
ROUNDS=${BENCH_ROUNDS:-9}
COST_ROUNDS=${BENCH_COST_ROUNDS:-3}
VCPUS=${BENCH_VCPUS:-2}
MEM=${BENCH_MEM:-256M}
DIRTY=${BENCH_DIRTY_LOG:-3}
ATTACH_RUNS=${BENCH_ATTACH_RUNS:-5}
PHASES=" ${BENCH_PHASES:-throughput cost modes guest attach cpu contention} "
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
has_phase() { [[ $PHASES == *" $1 "* ]]; }
die() { echo "bench: $*" >&2; exit 2; }
# guest_mmu NPT TDP_MMU: the MMU a guest of BENCH_NPT=NPT and BENCH_TDP_MMU=TDP_MMU
# runs, in words; fails, saying why, for another NPT or TDP_MMU
guest_mmu() {
	case $2 in
	Y | N) ;;
	*) echo "BENCH_TDP_MMU '$2': expected Y or N" && return 1 ;;
	esac
	case $1 in
	0) echo "npt=0: shadow paging" ;;
	1) echo "npt=1: nested paging, tdp_mmu=$2" ;;
	*) echo "BENCH_NPT '$1': expected 0 or 1" && return 1 ;;
	esac
}
BENCH_TDP_MMU=${BENCH_TDP_MMU:-Y}
# the guest's kernel (tests/vm/kernels/*.conf): 6.12 by default; 7.3 has fsession
GUEST_KERNEL=${BENCH_GUEST_KERNEL:-6.12}
[ -f "tests/vm/kernels/$GUEST_KERNEL.conf" ] ||
	die "BENCH_GUEST_KERNEL '$GUEST_KERNEL': expected one of $(cd tests/vm/kernels && ls -- *.conf | sed 's/\.conf$//' | tr '\n' ' ')"

if [ ! -c /dev/kvm ] && [ -z "${BENCH_GUEST:-}" ]; then
	# BENCH_NPT=1: nested paging and the TDP MMU (tdp_mmu=Y), where users' hosts are
	BENCH_NPT=${BENCH_NPT:-0}
	mmu=$(guest_mmu "$BENCH_NPT" "$BENCH_TDP_MMU") || die "$mmu"
	echo "bench: no /dev/kvm here: running in a KVM-capable guest (Debian $GUEST_KERNEL under QEMU/TCG, $mmu)."
	echo "  Under TCG absolute times mean nothing: read the ratios (to the floor, to bpftrace)."
	# the done-event mode's patched modules, where they were built for the guest's kernel
	patched=$(scripts/kernel-patches.sh built "$GUEST_KERNEL" 2>/dev/null)
	exec scripts/kvm-guest.sh --kernel "$GUEST_KERNEL" --npt "$BENCH_NPT" --tdp-mmu "$BENCH_TDP_MMU" --timeout 5400 -- env \
		BENCH_GUEST="a TCG guest (Debian $GUEST_KERNEL, $mmu)" BENCH_PATCHED="${BENCH_PATCHED:-$patched}" \
		BENCH_ROUNDS="${BENCH_ROUNDS:-3}" BENCH_COST_ROUNDS="${BENCH_COST_ROUNDS:-2}" \
		BENCH_MEM="${BENCH_MEM:-32M}" BENCH_DIRTY_LOG="${BENCH_DIRTY_LOG:-1}" \
		BENCH_ATTACH_RUNS="${BENCH_ATTACH_RUNS:-3}" BENCH_MODES="${BENCH_MODES:-}" \
		BENCH_PHASES="${BENCH_PHASES:-throughput cost modes attach}" scripts/bench.sh "$BUILD"
fi
# phase 7's guest: a bad BENCH_NPT or BENCH_TDP_MMU said now, not after the host's phases
mmu=$(guest_mmu "${BENCH_NPT:-1}" "$BENCH_TDP_MMU") || die "$mmu"
LOAD=("$BUILD/kvmmmu-load" --vcpus "$VCPUS" --mem "$MEM")
[ "$DIRTY" -gt 0 ] && LOAD+=(--dirty-log "$DIRTY")
LATENCY_BT=scripts/bpftrace/kvmmmu-latency.bt
LATENCY_KFUNC_BT=scripts/bpftrace/kvmmmu-latency-kfunc.bt
LATENCY_DONE_BT=scripts/bpftrace/kvmmmu-latency-done.bt
PROBE_MODE=auto # kvmmmu-hist's (KVMMMU_PROBE_MODE) in the configuration being run
TRIVIAL_BT='tracepoint:kvmmmu:kvm_mmu_set_spte { @c = count(); }'


[ "$(id -u)" = 0 ] || die "must run as root (KVM, BPF)"
[ -c /dev/kvm ] || die "no /dev/kvm"
for f in kvmmmu-load kvmmmu-hist kvmmmu-top kvmmmu-exporter tests/tools/threadstorm; do
	[ -x "$BUILD/$f" ] || die "$BUILD/$f is not built (make bench builds it)"
done
for c in bpftrace bpftool clang cc curl; do
	command -v "$c" >/dev/null 2>&1 || die "$c is not installed (make deps)"
done
if [ ! -d /sys/kernel/tracing/events ] && [ ! -d /sys/kernel/debug/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || die "cannot mount tracefs (bpftrace needs it)"
fi

TMP=$(mktemp -d /tmp/kvmmmu-bench.XXXXXX)
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
TRACER_PIDS=()
BASE_PIDS=()
VM_PIDS=()
cleanup() {
	local p
	for p in "${TRACER_PIDS[@]}" "${BASE_PIDS[@]}" "${VM_PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	tmux kill-session -t kvmmmu-bench 2>/dev/null
	declare -F cpu_cgroups_remove >/dev/null && cpu_cgroups_remove
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the trivial baseline programs (tp_btf, scripts/bench/) and their loader ----
build_trivial() {
	local inc
	inc=$(clang -v -E - </dev/null 2>&1 |
		sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
	# shellcheck disable=SC2086
	clang -g -O2 -Wall -target bpf $inc -c scripts/bench/baselines.bpf.c -o "$TMP/trivial.bpf.o" \
		>"$TMP/trivial.log" 2>&1 &&
		cc -O2 -Wall -o "$TMP/loader" scripts/bench/baseline-loader.c -lbpf >>"$TMP/trivial.log" 2>&1
}
HAVE_TRIVIAL=1
if ! build_trivial; then
	HAVE_TRIVIAL=0
	echo "bench: cannot build the tp_btf baseline programs (only bpftrace's count() baseline):" >&2
	sed 's/^/  /' "$TMP/trivial.log" | head -5 >&2
fi

# ---- tracers and the workload (scripts/bench/tracers.sh) ----
# shellcheck source=scripts/bench/tracers.sh
source "$ROOT/scripts/bench/tracers.sh"
# shellcheck source=scripts/bench/modes.sh
source "$ROOT/scripts/bench/modes.sh"
# shellcheck source=scripts/bench/cpu.sh
source "$ROOT/scripts/bench/cpu.sh"
# shellcheck source=scripts/bench/targets.sh
source "$ROOT/scripts/bench/targets.sh"
mode_attaches auto
DEFAULT_MODE=$(probe_mode_of "$TMP/mode.auto.out")
BT_SCRIPT=$(bt_script "$DEFAULT_MODE")

START=$(date +%s)
echo "kvmmmu benchmark: $(uname -r), $(nproc) CPUs, $(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo | sed 's/^ *//')"
[ -n "${BENCH_GUEST:-}" ] && echo "in $BENCH_GUEST: under TCG absolute times mean nothing, only ratios do"
echo "kvmmmu's probe mode here: $DEFAULT_MODE; bpftrace's script in it: $BT_SCRIPT"
echo "workload: ${LOAD[*]}"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ---- phase 1: throughput ----
# tput_phase FILE CONFIGS...: ROUNDS rounds of the workload under each of
# CONFIGS (in PROBE_MODE), the order rotated per round, bpf_stats off; one
# line a run into FILE: cfg faults seconds dirty_faults dirty_seconds round.
tput_phase() {
	local file=$1 r cfg tag
	shift
	sysctl -qw kernel.bpf_stats_enabled=0
	run_load warmup
	: >"$file"
	for ((r = 0; r < ROUNDS; r++)); do
		for cfg in $(rotate "$r" "$@"); do
			tag=t$(basename "$file")$r.$cfg
			quiesce
			start_tracer "$cfg" "$tag"
			run_load "$tag"
			stop_tracer
			echo "$cfg $f $t $df $dt $r" >>"$file"
			printf '  round %d %-13s %8d faults in %6.3f s: %8.0f faults/s (dirty-log passes %8.0f/s)\n' \
				$((r + 1)) "$cfg" "$f" "$t" "$(awk -v f="$f" -v t="$t" 'BEGIN { print f / t }')" \
				"$(awk -v f="$df" -v t="$dt" 'BEGIN { print (t > 0) ? f / t : 0 }')"
		done
	done
}
if has_phase throughput; then
	echo "Phase 1: fault throughput, $ROUNDS rounds x {none, kvmmmu, kvmmmu-base, kvmmmu-s16, bpftrace}, order rotated per round"
	tput_phase "$TMP/tput" none kvmmmu kvmmmu-base kvmmmu-s16 bpftrace
	echo
else
	echo "Phase 1: not run (BENCH_PHASES)"
	echo
fi

# ---- phase 2: BPF cost per event ----
# cost_phase SUFFIX CONFIGS...: COST_ROUNDS rounds of CONFIGS in kvmmmu's
# PROBE_MODE against BT_SCRIPT, with the baselines alongside, into
# $TMP/cost$SUFFIX (cfg round owner name type run_time_ns run_cnt),
# cost_faults$SUFFIX (cfg pf_taken pf_fixed) and mem$SUFFIX (cfg rss_kib
# maps_kib, after each workload run).
cost_phase() {
	local sfx=$1 r cfg tag
	shift
	sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
	WITH_BASELINES=1
	: >"$TMP/cost$sfx"
	: >"$TMP/cost_faults$sfx"
	: >"$TMP/mem$sfx"
	for ((r = 0; r < COST_ROUNDS; r++)); do
		for cfg in $(rotate "$r" "$@"); do
			tag=c$sfx$r.$cfg
			quiesce
			start_tracer "$cfg" "$tag"
			mapfile -t ids < <(progs_of "${TRACER_PIDS[@]}")
			mapfile -t bids < <(progs_of "${BASE_PIDS[@]}")
			prog_stats "${ids[@]}" | sed 's/^/tracer /' >"$TMP/$tag.before"
			prog_stats "${bids[@]}" | sed 's/^/base /' >>"$TMP/$tag.before"
			run_load "$tag"
			echo "$cfg $(mem_of "${TRACER_PIDS[0]}")" >>"$TMP/mem$sfx"
			prog_stats "${ids[@]}" | sed 's/^/tracer /' >"$TMP/$tag.after"
			prog_stats "${bids[@]}" | sed 's/^/base /' >>"$TMP/$tag.after"
			stop_tracer
			echo "$cfg $f $fx" >>"$TMP/cost_faults$sfx"
			# Programs that ran: the delta of their statistics over the workload.
			awk -v cfg="$cfg" -v r="$r" 'NR == FNR { rt[$2] = $5; rc[$2] = $6; next }
				$6 - rc[$2] > 0 { print cfg, r, $1, $4, $3, $5 - rt[$2], $6 - rc[$2] }' \
				"$TMP/$tag.before" "$TMP/$tag.after" >>"$TMP/cost$sfx"
			printf '  round %d %-13s %d programs (+%d baseline), %d faults\n' $((r + 1)) "$cfg" \
				"${#ids[@]}" "${#bids[@]}" "$f"
		done
	done
	WITH_BASELINES=0
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
}
echo "Phase 2: BPF run time per event (kernel.bpf_stats_enabled=1), $COST_ROUNDS rounds x {kvmmmu, kvmmmu-base, kvmmmu-s16, kvmmmu-phases, bpftrace},"
echo "  in kvmmmu's own mode here ($DEFAULT_MODE), each with the baseline programs attached alongside (same events, same conditions)"
cost_phase "" kvmmmu kvmmmu-base kvmmmu-s16 kvmmmu-phases bpftrace
echo

# ---- phase 6 (run here, reported with phase 2): the other probe modes (scripts/bench/modes.sh) ----
modes_run
# ---- phase 7: the modes this host cannot attach, in a guest (scripts/bench/modes.sh) ----
guest_run

# ---- phase 3: attach time ----
if has_phase attach; then
	echo "Phase 3: attach time, $ATTACH_RUNS starts of kvmmmu-hist (exec to its \"Tracing\" line)"
	: >"$TMP/attach"
	for ((r = 0; r < ATTACH_RUNS; r++)); do
		out=$TMP/attach$r.out
		t0=$(date +%s%N)
		"$BUILD/kvmmmu-hist" >"$out" 2>&1 &
		TRACER_PIDS=($!)
		while ! grep -q '^Tracing' "$out" 2>/dev/null; do
			kill -0 "${TRACER_PIDS[0]}" 2>/dev/null || die "kvmmmu-hist did not start: $(tail -1 "$out")"
			sleep 0.005
		done
		t1=$(date +%s%N)
		stop_tracer
		echo $(((t1 - t0) / 1000)) >>"$TMP/attach"
		printf '  start %d: %.1f ms\n' $((r + 1)) "$(awk -v u=$(((t1 - t0) / 1000)) 'BEGIN { print u / 1000 }')"
	done
	ATTACH_MS=$(sort -n "$TMP/attach" | awk '{ v[++n] = $1 } END { printf "%.1f", (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) / 1000 }')
	echo
else
	ATTACH_MS=n/a
	echo "Phase 3: not run (BENCH_PHASES)"
	echo
fi

# ---- phase 4: kvmmmu-hist's own CPU, 64 vCPUs over 8 VMs, 1 s intervals (scripts/bench/cpu.sh) ----
cpu_phase

# ---- phase 5: contention_begin on other locks ----
if has_phase contention; then
	echo "Phase 5: contention on the host's own locks (threadstorm) while a small VM runs, bpf_stats on"
	sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
	WITH_BASELINES=1
	BASELINES="triv_empty triv_empty_lock" # an empty program on contention_begin itself
	start_tracer kvmmmu lk
	mapfile -t ids < <(progs_of "${TRACER_PIDS[@]}")
	mapfile -t bids < <(progs_of "${BASE_PIDS[@]}")
	{ prog_stats "${ids[@]}"; prog_stats "${bids[@]}"; } >"$TMP/lk.before"
	"$BUILD/kvmmmu-load" --vcpus 1 --mem 8M --dirty-log 1 --duration 6 >"$TMP/lk.load.out" 2>&1 &
	lp=$!
	"$BUILD/tests/tools/threadstorm" 20000 64 >/dev/null 2>&1
	wait "$lp"
	{ prog_stats "${ids[@]}"; prog_stats "${bids[@]}"; } >"$TMP/lk.after"
	stop_tracer
	WITH_BASELINES=0
	BASELINES="triv_empty triv_pcpu_inc"
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	awk 'NR == FNR { rt[$1] = $4; rc[$1] = $5; next } $5 - rc[$1] > 0 { print $3, ($4 - rt[$1]) / ($5 - rc[$1]), $5 - rc[$1] }' \
		"$TMP/lk.before" "$TMP/lk.after" >"$TMP/lk"
	awk '$1 ~ /^contention_|^triv_empty/ { printf "  %-28s %10d runs %9.1f ns/run\n", $1, $3, $2 }' "$TMP/lk"
	LK_BEGIN=$(awk '$1 ~ /^contention_begin/ { print $2 }' "$TMP/lk")
	LK_EMPTY=$(awk '$1 == "triv_empty_lock" { print $2 }' "$TMP/lk")
	echo
else
	LK_BEGIN=n/a LK_EMPTY=n/a
	echo "Phase 5: not run (BENCH_PHASES)"
	echo
fi

# ---- report ----
[ -f "$TMP/tput" ] || : >"$TMP/tput"
COST=$TMP/cost COSTF=$TMP/cost_faults # the mode reported: phase 2's
# summarize: per configuration, the median of faults/s and its ratio to
# "none"; the paired ratio (each round against the "none" run of the same
# round, which drift on a shared machine affects less): median, min, max; the
# best run (background load only ever slows a run down) and its ratio to the
# best "none" run; the paired median for the dirty-log passes alone.
# One line each: cfg median ratio paired_med paired_lo paired_hi best best_ratio dirty_paired
# summarize FILE: of FILE's runs (tput_phase's)
summarize() {
	awk 'function med(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		$3 > 0 { R[$1, $6] = $2 / $3; D[$1, $6] = ($5 > 0) ? $4 / $5 : 0; rounds[$6] = 1; cfgs[$1] = 1 }
		END {
			split("none kvmmmu kvmmmu-base kvmmmu-s16 bpftrace", order, " ")
			for (k = 1; k <= 5; k++) {
				c = order[k]; if (!(c in cfgs)) continue
				n = np = 0; best[c] = 0; delete v; delete pr; delete pd
				for (r in rounds) {
					if (!((c, r) in R)) continue
					v[++n] = R[c, r]; if (R[c, r] > best[c]) best[c] = R[c, r]
					if ((("none", r) in R)) { pr[++np] = R[c, r] / R["none", r]; pd[np] = (D["none", r] > 0) ? D[c, r] / D["none", r] : 0 }
				}
				m[c] = med(v, n)
				plo = phi = ""; for (i = 1; i <= np; i++) {
					if (plo == "" || pr[i] < plo) plo = pr[i]; if (phi == "" || pr[i] > phi) phi = pr[i] }
				printf "%s %.0f %.4f %.4f %.4f %.4f %.0f %.4f %.4f\n", c, m[c], m[c] / m["none"],
					med(pr, np), plo, phi, best[c], best[c] / best["none"], med(pd, np)
			}
		}' "$1"
}
summarize "$TMP/tput" >"$TMP/summary"
echo "Fault throughput: faults/s = KVM pf_taken / (populate + dirty-memory time), $ROUNDS runs each"
printf '  %-9s %9s %8s  %-26s %9s %8s  %s\n' tracer median "vs none" "paired vs none [min..max]" \
	best "vs none" "dirty-log passes, paired"
while read -r c m ratio pm plo phi b br pdm; do
	printf '  %-9s %9s %8s  %-26s %9s %8s  %s\n' "$c" "$m" "$ratio" "$pm [$plo..$phi]" "$b" "$br" "$pdm"
done <"$TMP/summary"
NONE=$(awk '$1 == "none" { print $2 }' "$TMP/summary")
SPREAD=$(awk '$1 == "none" && $3 > 0 { v = $2 / $3; if (!n++ || v < lo) lo = v; if (v > hi) hi = v }
	END { printf "%.1f", (n > 0) ? 100 * (hi - lo) / hi : 0 }' "$TMP/tput")
echo "  without a tracer, the slowest run is ${SPREAD}% slower than the fastest"
echo

echo "BPF run time per program run (sums over $COST_ROUNDS rounds; bpf_stats adds its own clock reads to each run)"
printf '  %-9s %-8s %-28s %-10s %10s %9s %8s\n' "run with" owner program type events ns/event ev/fault
awk 'NR == FNR { F[$1] += $2; next }
	{ k = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5; rt[k] += $6; rc[k] += $7; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
	END { for (i = 1; i <= n; i++) { split(order[i], a, SUBSEP)
		printf "  %-9s %-8s %-28s %-10s %10d %9.1f %8.2f\n", a[1], a[2], a[3], a[4], rc[order[i]],
			rt[order[i]] / rc[order[i]], rc[order[i]] / F[a[1]] } }' "$COSTF" "$COST" |
	sort -s -k1,1r -k2,2r
echo

# BPF ns per fault: the tracer's run time over the faults of the workload. A
# program runs for every VM's events, so if another VM ran at the same time
# (more kvm_mmu_set_spte events than the workload's pf_fixed) the total is
# scaled by pf_fixed / set_spte events, assuming the other VM's events cost
# the same, and a warning says so. Prints: ns/fault, unscaled, set_spte
# events, pf_fixed, program runs per fault.
per_fault() {
	awk -v c="$1" 'NR == FNR { if ($1 == c) { F += $2; FX += $3 } next }
		$1 == c && $3 == "tracer" { s += $6; n += $7; if ($4 ~ /^kvm_mmu_set_sp/) E += $7 }
		END { k = (E > FX && FX > 0) ? FX / E : 1
			printf "%.1f %.1f %d %d %.3f\n", (F > 0) ? s * k / F : 0, (F > 0) ? s / F : 0, E, FX,
				(F > 0) ? n * k / F : 0 }' "$COSTF" "$COST"
}
# ns_event CFG OWNER PROGRAM: ns per run of PROGRAM in CFG's runs.
ns_event() {
	awk -v c="$1" -v o="$2" -v p="$3" '$1 == c && $3 == o && $4 == p { s += $6; n += $7 }
		END { printf "%.1f", (n > 0) ? s / n : 0 }' "$COST"
}
read -r KV_PF KV_RAW KV_E KV_FX KV_N < <(per_fault kvmmmu)
read -r BT_PF BT_RAW BT_E BT_FX BT_N < <(per_fault bpftrace)
read -r KB_PF _ _ _ KB_N < <(per_fault kvmmmu-base)
read -r KS_PF _ _ _ KS_N < <(per_fault kvmmmu-s16)
read -r KP_PF _ _ _ KP_N < <(per_fault kvmmmu-phases)
echo "BPF run time per fault ($DEFAULT_MODE): kvmmmu ${KV_PF} ns ($KV_N program runs), bpftrace $(basename "$BT_SCRIPT") ${BT_PF} ns ($BT_N runs)"
echo "  kvmmmu without the mmu_lock/lifecycle/timeline probes (--metric outcomes,paths,walk_to_spte_ns): ${KB_PF} ns ($KB_N runs)"
echo "  kvmmmu --sample 16 (default metrics, 1 fault in 16 timed): ${KS_PF} ns ($KS_N runs)"
echo "  kvmmmu --metric default,phases (the phases, opt-in): ${KP_PF} ns ($KP_N runs), $(awk -v p="$KP_PF" -v d="$KV_PF" 'BEGIN { printf "%+.0f%%", (d > 0) ? 100 * (p - d) / d : 0 }') over the default"
for c in kvmmmu bpftrace; do
	if [ "$c" = kvmmmu ]; then e=$KV_E fx=$KV_FX raw=$KV_RAW; else e=$BT_E fx=$BT_FX raw=$BT_RAW; fi
	if awk -v e="$e" -v f="$fx" 'BEGIN { exit !(f > 0 && (e - f) / f > 0.01) }'; then
		echo "  warning: $c saw $e kvm_mmu_set_spte events for $fx pf_fixed (another VM ran):" \
			"$raw ns/fault before scaling"
	fi
done
echo

echo "Memory after a workload run (largest of $COST_ROUNDS rounds): resident set, and BPF map memory (memlock)"
awk '{ if ($2 > rss[$1]) rss[$1] = $2; if ($3 > maps[$1]) maps[$1] = $3 }
	END { for (c in rss) printf "  %-12s RSS %7.1f MiB   BPF maps %7.1f MiB\n", c, rss[c] / 1024, maps[c] / 1024 }' \
	"$TMP/mem" | sort
echo

# ---- targets (scripts/bench/targets.sh) ----
targets_report

# ---- probe modes: this host's own (phase 2), the others (phase 6), the guest's (phase 7) ----
mode_table "$DEFAULT_MODE" ""
for m in "${MODES_RUN[@]}"; do
	mode_table "$m"
done
guest_tables
COST=$TMP/cost COSTF=$TMP/cost_faults
[ -n "${BENCH_GUEST:-}" ] && echo "(in $BENCH_GUEST: ratios only; absolute times under TCG mean nothing)"
# The summary, one line per mode measured (an interface: scripts read it):
# kvmmmu's own mode here (phase 2), then the others phase 6 measured.
: >"$TMP/modelines"
mode_line "$DEFAULT_MODE" >/dev/null
for m in "${MODES_RUN[@]}"; do
	COST=$TMP/cost.$m COSTF=$TMP/cost_faults.$m
	mode_line "$m" >/dev/null
done
cat "$TMP/modelines"
guest_lines
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); bench took $(($(date +%s) - START)) s"
echo "Reproduce: make bench   (= BENCH_ROUNDS=$ROUNDS BENCH_COST_ROUNDS=$COST_ROUNDS BENCH_VCPUS=$VCPUS BENCH_MEM=$MEM BENCH_DIRTY_LOG=$DIRTY scripts/bench.sh $BUILD)"
