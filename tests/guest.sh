#!/usr/bin/env bash
# Runs integration files in KVM-capable guests (scripts/kvm-guest.sh) and
# reports their checks as guest/PASS-NAME/CHECK, for what this host's KVM
# cannot show: no /dev/kvm at all on some hosts of the CI kind, and nested
# paging, the TDP MMU and fentry on none of them.
#
# Usage: tests/guest.sh [--run-only|--report-only] PASS=FILE[,FILE...] ...
#   (run.sh runs the passes after the distro-kernel harness, then reports)
#   PASS is KERNEL-nptN[-tdpY|N][-patched], e.g. 6.12-npt0 (shadow paging, as this
#   host kind's KVM) or 6.12-npt1-tdpY (an ordinary host: nested paging, the
#   TDP MMU), with -patched at the end for KVM built from kernel-patches/
#   (scripts/kvm-guest.sh --patched); FILE a tests/integration/test_*.sh.
#
# Each guest is one host thread (TCG, one vCPU), so the files of every pass
# are shared out over as many guests at once as the host has CPUs: longest
# first, each to the least loaded CPU (GUEST_SECONDS: what each file took
# in a guest), one guest per pass and CPU. The passes' results are the same
# whichever guest ran a file.
# Environment: KVMMMU_GUEST_TIMEOUT (seconds a guest may take, default 3000).
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib.sh
source tests/lib.sh

# Seconds each file took in a 6.12 guest on the CI machine kind, two guests
# at once (2026-12-03, the npt0 pass in tracepoint mode; test_hist.sh and
# test_hist_figures.sh 2026-12-05, the two side by side; test_scale.sh
# measured alone with its guest sizes of
# 2026-12-03 late; test_bpftrace.sh, since it runs each script in both
# modes, 95 s in an npt1 guest beside one other guest); a file not
# listed counts as GUEST_SECONDS_OTHER.
GUEST_SECONDS="test_top.sh=334 test_exporter.sh=316 test_scale.sh=309 test_hist.sh=231
	test_hist_figures.sh=69 test_diff.sh=125 test_mmu.sh=122 test_exits.sh=118 test_bpftrace.sh=110
	test_load.sh=42 test_kvm_stats_live.sh=5"
GUEST_SECONDS_OTHER=120

seconds_of() {
	local f
	for f in $GUEST_SECONDS; do
		[ "${f%%=*}" = "$1" ] && echo "${f#*=}" && return
	done
	echo "$GUEST_SECONDS_OTHER"
}

# run_guest NAME SHARD FILE...: one guest of pass NAME, the files in it, one after another.
run_guest() {
	local name=$1 shard=$2 kernel npt tdp dir rc start mode=auto patched=()
	shift 2
	[[ $name == *-patched ]] && patched=(--patched)
	IFS=- read -r kernel npt tdp <<<"${name%-patched}"
	npt=${npt#npt} tdp=${tdp#tdp}
	# Shadow paging (npt0) stands in for this host kind's KVM, tracepoints
	# only; the npt1 pass is an ordinary host's, with fentry. (Each tracer
	# also starts some 4 s sooner in tracepoint mode under TCG.)
	[ "$npt" = 0 ] && mode=tracepoint
	dir=$BUILD/guest/$name/$shard
	rm -rf "$dir"
	mkdir -p "$dir"
	: >"$dir/results"
	echo "$*" >"$dir/files"
	start=$(date +%s)
	# The files run as on a host with KVM (they say what they expect of its
	# MMU and probe modes themselves); no guest within the guest.
	scripts/kvm-guest.sh --kernel "$kernel" --npt "$npt" --tdp-mmu "${tdp:-Y}" "${patched[@]}" \
		--timeout "${KVMMMU_GUEST_TIMEOUT:-3000}" -- \
		env KVMMMU_GUESTS=none KVMMMU_SKIP_VM="in guest/$name" KVMMMU_RESULTS="$dir/results" \
		KVMMMU_PROBE_MODE="$mode" \
		OUTPUT="$OUTPUT" tests/run.sh integration "$@" >"$dir/log" 2>&1
	rc=$?
	echo "$rc" >"$dir/rc"
	echo "$(($(date +%s) - start))" >"$dir/seconds"
}

# report_pass NAME: each of its guests' logs, then their results under guest/NAME/.
report_pass() {
	local name=$1 dir line guests=0
	for dir in "$BUILD/guest/$name"/*/; do
		dir=${dir%/}
		[ -d "$dir" ] || continue
		guests=$((guests + 1))
		if [ ! -f "$dir/rc" ]; then
			fail "guest/$name" "a guest never ended: $(cat "$dir/files" 2>/dev/null); see $dir/log"
			continue
		fi
		echo "== guest/$name (guest ${dir##*/}, $(cat "$dir/seconds") s): $(cat "$dir/files")"
		sed 's/^/  /' "$dir/log"
		while IFS= read -r line; do
			report "${line%% *} guest/$name/${line#* }"
		done <"$dir/results"
		# A guest that died, or a run.sh that reported nothing, must not pass for clean.
		if [ "$(cat "$dir/rc")" = 125 ] || [ ! -s "$dir/results" ]; then
			fail "guest/$name" "a guest ended without results (exit $(cat "$dir/rc")): $(cat \
				"$dir/files"); see $dir/log"
		fi
	done
	[ "$guests" -gt 0 ] || fail "guest/$name" "no guest ran this pass (see $BUILD/guest/$name)"
}

phase=all
case "${1:-}" in
--run-only) phase=run && shift ;;
--report-only) phase=report && shift ;;
esac
names=()
for spec in "$@"; do
	names+=("${spec%%=*}")
done

if [ $phase != report ]; then
	# every (pass, file), longest first, each to the CPU with the least work so far
	cpus=$(nproc)
	jobs=$(for spec in "$@"; do
		for f in $(tr , ' ' <<<"${spec#*=}"); do
			echo "$(seconds_of "$f") ${spec%%=*} $f"
		done
	done | sort -rn)
	declare -a load=() plan=()
	for ((c = 0; c < cpus; c++)); do load[c]=0 plan[c]=""; done
	while read -r secs name f; do
		[ -n "$f" ] || continue
		best=0
		for ((c = 1; c < cpus; c++)); do
			[ "${load[c]}" -lt "${load[best]}" ] && best=$c
		done
		load[best]=$((load[best] + secs))
		plan[best]="${plan[best]} $name=$f"
	done <<<"$jobs"
	for n in "${names[@]}"; do rm -rf "$BUILD/guest/$n"; done
	echo "  guest: ${names[*]} over $cpus CPU(s), longest files first"
	for ((c = 0; c < cpus; c++)); do
		[ -n "${plan[c]}" ] || continue
		# one CPU's work: a guest for each pass it has files of, one after another
		(
			for n in "${names[@]}"; do
				files=$(tr ' ' '\n' <<<"${plan[c]}" | sed -n "s/^$n=//p" | tr '\n' ' ')
				# shellcheck disable=SC2086 # file names have no spaces
				[ -z "$files" ] || run_guest "$n" "$c" $files
			done
		) &
	done
	wait
fi
[ $phase = run ] && exit 0
for n in "${names[@]}"; do
	report_pass "$n"
done
exit 0
