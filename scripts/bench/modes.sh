# shellcheck shell=bash disable=SC2034 # it sets bench.sh's globals (COST, PROBE_MODE, ...)
# SPDX-License-Identifier: GPL-2.0
#
# Phase 6 of scripts/bench.sh, which sources this: kvmmmu's cost in each
# probe mode it attaches besides its own (issue 25). For each, phase 2's BPF
# cost configurations and, with phase 1, its throughput (none, kvmmmu,
# bpftrace), kvmmmu-hist forced into the mode (KVMMMU_PROBE_MODE) against the
# bpftrace script of that mode. Uses bench.sh's helpers and variables.
#
# The done-event mode (kernel-patches' 0001: kvmmmu:kvm_mmu_page_fault_done,
# one event a fault) needs KVM's patched modules: with BENCH_PATCHED (a
# folder of kvm.ko and kvm-amd.ko that scripts/kernel-patches.sh built for
# this kernel) they replace the stock ones for that mode, which come back
# after it. That reloads KVM: only where no other VM runs (bench.sh's guest
# passes its cache's build when there is one). Only when BENCH_MODES names
# done-event: its first run hung (not diagnosed yet; docs/performance.md).
#
# Phase 7, the guest: on a host with KVM, the modes it cannot attach (this
# machine kind's KVM has tracepoints only) are measured in a KVM-capable
# guest, scripts/kvm-guest.sh, whose bench runs phases 1, 2 and 6 there:
# its kvmmmu's own mode (fentry) in phase 2, the rest in phase 6. Its tables
# and summary lines follow the host's, marked as the guest's: under TCG
# only their ratios mean anything.

MODES_RUN=()
# modes_run: phase 6, for BENCH_MODES (default: every mode but kvmmmu's own)
modes_run() {
	local m
	has_phase modes || return 0
	for m in ${BENCH_MODES:-tracepoint fsession fentry kprobe}; do
		[ "$m" = "$DEFAULT_MODE" ] || [ "$m" = done-event ] && continue
		if ! mode_attaches "$m"; then
			echo "Phase 6: mode $m: not measured: $(mode_why "$m")"
			continue
		fi
		PROBE_MODE=$m BT_SCRIPT=$(bt_script "$m")
		echo "Phase 6: mode $m (KVMMMU_PROBE_MODE=$m, against $BT_SCRIPT), $COST_ROUNDS rounds"
		cost_phase ".$m" kvmmmu kvmmmu-base kvmmmu-s16 kvmmmu-phases bpftrace
		if has_phase throughput; then
			echo "Phase 6: mode $m: fault throughput, $ROUNDS rounds x {none, kvmmmu, bpftrace}"
			tput_phase "$TMP/tput.$m" none kvmmmu bpftrace
		fi
		MODES_RUN+=("$m")
		echo
	done
	done_event_run
	PROBE_MODE=auto BT_SCRIPT=$(bt_script "$DEFAULT_MODE")
}

# kvm_reload DIR|stock: KVM's modules again, DIR's or the stock ones, with the
# tdp_mmu and npt the running ones have (AMD's: the guest's kind)
kvm_reload() {
	local tdp npt
	tdp=$(cat /sys/module/kvm/parameters/tdp_mmu 2>/dev/null || echo Y)
	npt=$(cat /sys/module/kvm_amd/parameters/npt 2>/dev/null || echo 1)
	case $npt in Y | 1) npt=1 ;; *) npt=0 ;; esac
	rmmod kvm_amd kvm || return 1
	if [ "$1" = stock ]; then
		modprobe kvm tdp_mmu="$tdp" && modprobe kvm_amd npt="$npt"
	else
		insmod "$1/kvm.ko" tdp_mmu="$tdp" && insmod "$1/kvm-amd.ko" npt="$npt"
	fi
}

# done_event_why: why the done-event mode cannot be measured here, or nothing
done_event_why() {
	if [ -z "${BENCH_PATCHED:-}" ]; then
		echo "no patched modules (BENCH_PATCHED: scripts/kernel-patches.sh build)"
	elif [ ! -f "$BENCH_PATCHED/kvm.ko" ] || [ ! -f "$BENCH_PATCHED/kvm-amd.ko" ]; then
		echo "no kvm.ko and kvm-amd.ko in $BENCH_PATCHED"
	elif [ ! -d /sys/module/kvm_amd ]; then
		echo "the patched modules are reloaded for AMD (kvm_amd) only"
	elif [ "$(modinfo -F vermagic "$BENCH_PATCHED/kvm.ko" | cut -d' ' -f1)" != "$(uname -r)" ]; then
		echo "the patched modules are for $(modinfo -F vermagic "$BENCH_PATCHED/kvm.ko" | cut -d' ' -f1), this is $(uname -r)"
	fi
}

# done_event_run: phase 6 in the done-event mode (tracepoints, with the
# patched modules' kvm_mmu_page_fault_done), against the tracepoint script
done_event_run() {
	local why
	# opt-in: its first run (npt=1 guest, 2026-12-03) hung at the phases configuration
	[[ " ${BENCH_MODES:-} " == *" done-event "* ]] || return 0
	why=$(done_event_why)
	if [ -n "$why" ]; then
		echo "Phase 6: mode done-event: not measured: $why"
		return 0
	fi
	if ! kvm_reload "$BENCH_PATCHED"; then
		echo "Phase 6: mode done-event: not measured: the patched modules did not load"
		kvm_reload stock
		return 0
	fi
	if mode_attaches tracepoint && grep -q 'kvm_mmu_page_fault_done' "$TMP/mode.tracepoint.out"; then
		PROBE_MODE=tracepoint BT_SCRIPT=$(bt_script done-event)
		echo "Phase 6: mode done-event (the patched modules of $BENCH_PATCHED, KVMMMU_PROBE_MODE=tracepoint, against $BT_SCRIPT), $COST_ROUNDS rounds"
		cost_phase ".done-event" kvmmmu kvmmmu-base kvmmmu-s16 kvmmmu-phases bpftrace
		if has_phase throughput; then
			echo "Phase 6: mode done-event: fault throughput, $ROUNDS rounds x {none, kvmmmu, bpftrace}"
			tput_phase "$TMP/tput.done-event" none kvmmmu bpftrace
		fi
		MODES_RUN+=(done-event)
	else
		echo "Phase 6: mode done-event: not measured: kvmmmu-hist did not attach kvm_mmu_page_fault_done"
	fi
	kvm_reload stock || echo "bench: warning: the stock KVM modules did not load again" >&2
	echo
}

# mode_line MODE: the summary line of the mode whose figures COST and COSTF
# hold (an interface: scripts read it); also into $TMP/modelines.
mode_line() {
	read -r KV_PF _ _ _ KV_N < <(per_fault kvmmmu)
	read -r KB_PF _ _ _ KB_N < <(per_fault kvmmmu-base)
	read -r BT_PF _ _ _ BT_N < <(per_fault bpftrace)
	local fv fb
	fv=$(floor_line kvmmmu default ns)
	fb=$(floor_line kvmmmu-base accounting-only ns)
	awk -v kv="$KV_PF" -v kb="$KB_PF" -v bt="$BT_PF" -v fv="${fv:-0}" -v fb="${fb:-0}" -v m="$1" 'BEGIN {
		if (fv > 0 && fb > 0 && bt > 0)
			printf "mode %s: default %.2fx floor, accounting %.2fx floor, %.2f of bpftrace\n", m, kv / fv, kb / fb, kv / bt
		else
			printf "mode %s: not measured (no floor or no bpftrace figure in this run)\n", m }' |
		tee -a "$TMP/modelines"
}

# mode_throughput FILE: "kvmmmu X%, bpftrace Y% (paired medians)" of FILE's runs
mode_throughput() {
	summarize "$1" | awk '$1 == "kvmmmu" { k = 100 * (1 - $4); kl = 100 * (1 - $6); kh = 100 * (1 - $5) }
		$1 == "bpftrace" { b = 100 * (1 - $4) }
		END { printf "kvmmmu %.1f%% (rounds %.1f%%..%.1f%%), bpftrace %.1f%%: %.2f of bpftrace\n",
			k, kl, kh, b, (b > 0) ? k / b : 0 }'
}

# mode_table MODE [SUFFIX]: the figures of MODE, against its floor and
# bpftrace, and its targets: phase 6's (SUFFIX .MODE, the default), or with
# SUFFIX "" phase 2's and phase 1's (kvmmmu's own mode here).
mode_table() {
	local m=$1 bt sfx=${2-.$1}
	COST=$TMP/cost$sfx COSTF=$TMP/cost_faults$sfx
	bt=$(bt_script "$m")
	read -r KV_PF _ _ _ KV_N < <(per_fault kvmmmu)
	read -r KB_PF _ _ _ KB_N < <(per_fault kvmmmu-base)
	read -r KS_PF _ _ _ KS_N < <(per_fault kvmmmu-s16)
	read -r KP_PF _ _ _ KP_N < <(per_fault kvmmmu-phases)
	read -r BT_PF _ _ _ BT_N < <(per_fault bpftrace)
	echo "Mode $m (KVMMMU_PROBE_MODE=${m/done-event/tracepoint with the patched modules}): BPF ns per fault, program runs per fault"
	floor_line kvmmmu default
	floor_line kvmmmu-base accounting-only
	printf '  %-40s %9s ns %7s runs\n' "default" "$KV_PF" "$KV_N" "accounting (outcomes,paths,walk_to_spte_ns)" \
		"$KB_PF" "$KB_N" "--sample 16" "$KS_PF" "$KS_N" "--metric default,phases" "$KP_PF" "$KP_N" \
		"bpftrace $(basename "$bt")" "$BT_PF" "$BT_N"
	local fv fb r1 r2 r3
	fv=$(floor_line kvmmmu default ns)
	fb=$(floor_line kvmmmu-base accounting-only ns)
	r1=$(awk -v a="$KV_PF" -v b="${fv:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	r2=$(awk -v a="$KB_PF" -v b="${fb:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	r3=$(awk -v a="$KV_PF" -v b="$BT_PF" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
	printf '  targets (issue 25): default <= 1.25x floor: %sx  %s; accounting <= 1.2x: %sx  %s;' \
		"$r1" "$(verdict "$r1" 1.25)" "$r2" "$(verdict "$r2" 1.2)"
	if [ "$m" = tracepoint ]; then
		printf ' default %s of bpftrace\n' "$r3"
		# its script times the walk to the SPTE: with no guest walk (TDP) it has no yardstick
		awk -v n="$BT_N" 'BEGIN { exit !(n < 0.99) }' &&
			printf '  (%s ran %s programs a fault: without a guest walk to start it (TDP faults) it draws no whole fault, so that ratio is no yardstick)\n' \
				"$(basename "$bt")" "$BT_N"
	elif [ "$m" = done-event ]; then
		r3=$(awk -v a="$KB_PF" -v b="$BT_PF" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
		printf ' accounting <= 0.25 of bpftrace: %s  %s\n' "$r3" "$(verdict "$r3" 0.25)"
	else
		printf ' default <= 0.33 of bpftrace: %s  %s\n' "$r3" "$(verdict "$r3" 0.33)"
	fi
	if [ -s "$TMP/tput$sfx" ]; then
		echo "  throughput cost (paired medians against no tracer): $(mode_throughput "$TMP/tput$sfx")"
	else
		echo "  throughput cost in this mode: not measured (phase 1 not run: BENCH_PHASES)"
	fi
	echo
}

# guest_run: phase 7. The modes of BENCH_MODES (default fentry and kprobe,
# and done-event where its patched modules are built) that this host did
# not measure, in a KVM-capable guest; its report into $TMP/guest.out.
GUEST_MODES=()
guest_run() {
	local m mods missing=() npt=${BENCH_NPT:-1} mmu
	has_phase guest && [ -z "${BENCH_GUEST:-}" ] || return 0
	mods=$(scripts/kernel-patches.sh built "$GUEST_KERNEL" 2>/dev/null)
	for m in ${BENCH_MODES:-fsession fentry kprobe${mods:+ done-event}}; do
		[ "$m" = "$DEFAULT_MODE" ] || [[ " ${MODES_RUN[*]} " == *" $m "* ]] || missing+=("$m")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "Phase 7: not run: every mode asked for was measured here"
		return 0
	fi
	mmu=$(guest_mmu "$npt" "$BENCH_TDP_MMU") || die "$mmu"
	echo "Phase 7: modes ${missing[*]} in a KVM-capable guest (Debian $GUEST_KERNEL under QEMU/TCG, $mmu): ratios only"
	GUEST_MMU=$mmu
	# the guest's kvmmmu attaches fsession (7.x) or fentry: its phase 2 is that mode, phase 6 the others
	scripts/kvm-guest.sh --kernel "$GUEST_KERNEL" --npt "$npt" --tdp-mmu "$BENCH_TDP_MMU" --timeout "${BENCH_GUEST_TIMEOUT:-3600}" -- env \
		BENCH_GUEST="a TCG guest (Debian $GUEST_KERNEL, $mmu)" BENCH_PATCHED="${BENCH_PATCHED:-$mods}" \
		BENCH_ROUNDS="${BENCH_GUEST_ROUNDS:-3}" BENCH_COST_ROUNDS=2 BENCH_MEM=32M BENCH_DIRTY_LOG=1 \
		BENCH_MODES="${missing[*]}" BENCH_PHASES="throughput cost modes" \
		scripts/bench.sh "$BUILD" >"$TMP/guest.out" 2>&1
	echo "  the guest's bench exited $?; its summary:"
	grep '^mode [a-z-]*: ' "$TMP/guest.out" | sed 's/^/  /'
	for m in "${missing[@]}"; do
		if grep -q "^mode $m: default" "$TMP/guest.out"; then
			GUEST_MODES+=("$m")
		else
			echo "  mode $m: not measured in the guest: $(grep -m1 -e "mode $m: not measured" -e '^bench: ' \
				-e '^kvm-guest: ' "$TMP/guest.out" || tail -1 "$TMP/guest.out")"
		fi
	done
	echo
}

# guest_tables: phase 7's tables, as the guest's bench printed them
guest_tables() {
	[ ${#GUEST_MODES[@]} -gt 0 ] || return 0
	echo "In a KVM-capable guest (Debian $GUEST_KERNEL under QEMU/TCG, $GUEST_MMU): absolute times mean nothing, ratios do"
	awk -v modes=" ${GUEST_MODES[*]} " '
		/^Mode [a-z-]+ \(/ { m = $2; on = index(modes, " " m " ") > 0 }
		on { print } on && /^$/ { on = 0 }' "$TMP/guest.out"
}

# guest_lines: phase 7's summary lines (an interface, as the host's), then
# where they were measured
guest_lines() {
	local m
	[ ${#GUEST_MODES[@]} -gt 0 ] || return 0
	for m in "${GUEST_MODES[@]}"; do
		grep -m1 "^mode $m: " "$TMP/guest.out"
	done
	echo "(modes ${GUEST_MODES[*]}: in the guest above, $GUEST_MMU, where absolute times mean nothing)"
}
