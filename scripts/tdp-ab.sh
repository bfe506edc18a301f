#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tdp-ab.sh: the same workload under kvm.tdp_mmu=N and =Y, interleaved, RUNS
# runs each (one kvmmmu CSV per run), then kvmmmu-diff between them (and its
# plot, when gnuplot is there). Where KVM is a module it is reloaded with the
# parameter, and its setting is put back on exit, Ctrl-C included; where KVM
# is built in, run one side (--side N or Y), reboot with kvm.tdp_mmu=..., and
# run the other. POSIX sh: it also runs in the distro-kernel harness's guest.
#
# Usage: scripts/tdp-ab.sh [--runs N] [--out DIR] [--side N|Y] [--bin DIR] [--metric LIST]
#                          [-- LOAD-ARGS...]
#   LOAD-ARGS go to kvmmmu-load (default: --vcpus 2 --mem 64M --dirty-log 2); LIST to
#   kvmmmu-hist (default: default,memslot,memslot_ns: memslot lookups per fault are much of
#   what N and Y differ by, and kvmmmu-hist leaves them out by default for their cost).
set -u

RUNS=5 OUT=tdp-ab SIDE="" BIN="" METRIC=default,memslot,memslot_ns
usage() { echo "usage: $0 [--runs N] [--out DIR] [--side N|Y] [--bin DIR] [--metric LIST] [-- LOAD-ARGS...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--runs) [ $# -ge 2 ] || usage; RUNS=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
	--side) [ $# -ge 2 ] || usage; SIDE=$2; shift 2 ;;
	--bin) [ $# -ge 2 ] || usage; BIN=$2/; shift 2 ;;
	--metric) [ $# -ge 2 ] || usage; METRIC=$2; shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
case $RUNS in '' | *[!0-9]*) echo "tdp-ab: --runs '$RUNS': expected a number of runs" >&2; exit 2 ;; esac
case $SIDE in '' | N | Y) ;; *) echo "tdp-ab: --side '$SIDE': expected N or Y" >&2; exit 2 ;; esac
[ $# -gt 0 ] || set -- --vcpus 2 --mem 64M --dirty-log 2
[ "$(id -u)" = 0 ] || { echo "tdp-ab: must run as root (KVM modules, BPF)" >&2; exit 1; }
PARAM=/sys/module/kvm/parameters/tdp_mmu
[ -r $PARAM ] || { echo "tdp-ab: no $PARAM: this KVM has no TDP MMU switch" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

VENDOR=""
for v in kvm_amd kvm_intel; do [ -d /sys/module/$v ] && VENDOR=$v; done
ORIG=$(cat $PARAM)
# KVM is a module when it can be unloaded: it has an initstate
MODULE=0
[ -e /sys/module/kvm/initstate ] && MODULE=1

# set_tdp Y|N: KVM reloaded with that setting (its trampolines may hold it a moment)
set_tdp() {
	[ "$(cat $PARAM 2>/dev/null)" = "$1" ] && return 0
	tries=20
	while [ -d /sys/module/kvm ] && [ $tries -gt 0 ]; do
		[ -n "$VENDOR" ] && [ -d /sys/module/$VENDOR ] && rmmod $VENDOR 2>/dev/null
		rmmod kvm 2>/dev/null || sleep 0.5
		tries=$((tries - 1))
	done
	[ -d /sys/module/kvm ] && { echo "tdp-ab: cannot unload kvm (a VM still running?)" >&2; return 1; }
	modprobe kvm tdp_mmu="$1" && { [ -z "$VENDOR" ] || modprobe $VENDOR; } &&
		[ "$(cat $PARAM)" = "$1" ]
}
# shellcheck disable=SC2317 # called by the trap
restore() {
	[ "$MODULE" = 1 ] && set_tdp "$ORIG" >/dev/null 2>&1
}
trap restore EXIT
trap 'exit 130' INT TERM

if [ $MODULE = 0 ]; then
	if [ -z "$SIDE" ]; then
		echo "tdp-ab: KVM is built into this kernel (tdp_mmu=$ORIG now): run one side here with" >&2
		echo "  --side $ORIG, reboot with kvm.tdp_mmu=$([ "$ORIG" = Y ] && echo N || echo Y), and run the other" >&2
		exit 1
	fi
	[ "$ORIG" = "$SIDE" ] || { echo "tdp-ab: --side $SIDE but kvm.tdp_mmu is $ORIG (built in: reboot to change it)" >&2; exit 1; }
fi

sides=${SIDE:-N Y}
i=1
while [ $i -le "$RUNS" ]; do
	# interleaved, the order alternating: drift over time falls on both sides alike
	if [ $((i % 2)) = 0 ]; then order=$(echo "$sides" | awk '{ for (k = NF; k > 0; k--) printf "%s ", $k }'); else order=$sides; fi
	for s in $order; do
		if [ $MODULE = 1 ]; then set_tdp "$s" || exit 1; fi
		"${BIN}kvmmmu-hist" --metric "$METRIC" --csv "$OUT/$s-$i.csv" --label "tdp_mmu=$s" -- \
			"${BIN}kvmmmu-load" --name tdp-ab "$@" >"$OUT/$s-$i.out" 2>&1 ||
			{ echo "tdp-ab: run $i with tdp_mmu=$s failed: $(tail -1 "$OUT/$s-$i.out")" >&2; exit 1; }
		echo "tdp-ab: run $i, tdp_mmu=$s: $OUT/$s-$i.csv"
	done
	i=$((i + 1))
done
[ -n "$SIDE" ] && { echo "tdp-ab: side $SIDE done; run the other side, then kvmmmu-diff N=... Y=..."; exit 0; }
list() { i=1; l=""; while [ $i -le "$RUNS" ]; do l="$l,$OUT/$1-$i.csv"; i=$((i + 1)); done; echo "${l#,}"; }
plot=""
command -v gnuplot >/dev/null 2>&1 && plot="--plot $OUT/diff.png"
# shellcheck disable=SC2086 # plot: an option and its value, or nothing
"${BIN}kvmmmu-diff" $plot "N=$(list N)" "Y=$(list Y)" >"$OUT/diff.txt" || exit 1
cat "$OUT/diff.txt"
[ -n "$plot" ] && echo "tdp-ab: plot in $OUT/diff.png"
exit 0
