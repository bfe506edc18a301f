#!/usr/bin/env bash
# Runs integration files in KVM-capable guests (scripts/kvm-guest.sh) and
# reports their checks as guest/PASS-NAME/CHECK, for what this host's KVM
# cannot show: no /dev/kvm at all on some hosts of the CI kind, and nested
# paging, the TDP MMU and fentry on none of them.
#
# Usage: tests/guest.sh [--run-only|--report-only] PASS=FILE[,FILE...] ...
#   (run.sh runs the passes beside the distro-kernel harness, then reports)
#   PASS is KERNEL-nptN[-tdpY|N], e.g. 6.12-npt0 (shadow paging, as this
#   host kind's KVM) or 6.12-npt1-tdpY (an ordinary host: nested paging, the
#   TDP MMU); FILE a tests/integration/test_*.sh. Passes run side by side
#   when there is a CPU for each (each guest is one host thread).
# Environment: KVMMMU_GUEST_TIMEOUT (seconds a pass may take, default 3000).
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib.sh
source tests/lib.sh

# run_pass NAME FILE...: one guest, the files in it, one after another.
run_pass() {
	local name=$1 kernel npt tdp dir rc start
	shift
	IFS=- read -r kernel npt tdp <<<"$name"
	npt=${npt#npt} tdp=${tdp#tdp}
	dir=$BUILD/guest/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	: >"$dir/results"
	start=$(date +%s)
	# The files run as on a host with KVM (they say what they expect of its
	# MMU and probe modes themselves); no guest within the guest.
	scripts/kvm-guest.sh --kernel "$kernel" --npt "$npt" --tdp-mmu "${tdp:-Y}" \
		--timeout "${KVMMMU_GUEST_TIMEOUT:-3000}" -- \
		env KVMMMU_GUESTS=none KVMMMU_SKIP_VM="in guest/$name" KVMMMU_RESULTS="$dir/results" \
		OUTPUT="$OUTPUT" tests/run.sh integration "$@" >"$dir/log" 2>&1
	rc=$?
	echo "$rc" >"$dir/rc"
	echo "$(($(date +%s) - start))" >"$dir/seconds"
}

# report_pass NAME: the pass's log, then its results under guest/NAME/.
report_pass() {
	local name=$1 dir=$BUILD/guest/$1 line
	shift
	echo "== guest/$name ($(cat "$dir/seconds") s): $*"
	sed 's/^/  /' "$dir/log"
	while IFS= read -r line; do
		report "${line%% *} guest/$name/${line#* }"
	done <"$dir/results"
	# A guest that died, or a run.sh that reported nothing, must not pass for clean.
	if [ "$(cat "$dir/rc")" = 125 ] || [ ! -s "$dir/results" ]; then
		fail "guest/$name" "the guest ended without results (exit $(cat "$dir/rc")); see $dir/log"
	fi
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
# files NAME: the pass's files, as run.sh takes them
files() {
	local spec
	for spec in "${specs[@]}"; do
		[ "${spec%%=*}" = "$1" ] && tr , ' ' <<<"${spec#*=}"
	done
}
specs=("$@")
if [ $phase = report ]; then
	:
elif [ $# -gt 1 ] && [ "$(nproc)" -ge $# ]; then
	echo "  guest: ${names[*]} side by side ($(nproc) CPUs)"
	for n in "${names[@]}"; do
		# shellcheck disable=SC2046 # file names have no spaces
		run_pass "$n" $(files "$n") &
	done
	wait
else
	for n in "${names[@]}"; do
		# shellcheck disable=SC2046
		run_pass "$n" $(files "$n")
	done
fi
[ $phase = run ] && exit 0
for n in "${names[@]}"; do
	# shellcheck disable=SC2046
	report_pass "$n" $(files "$n")
done
exit 0
