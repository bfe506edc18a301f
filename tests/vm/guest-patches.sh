# shellcheck shell=dash
# Sourced by guest-checks.sh: the "patches" group. KVM's modules built from
# kernel-patches/ for this kernel (scripts/kernel-patches.sh build), loaded
# in place of the stock ones: the kernel takes them (unsigned, out of tree:
# a taint), kvmmmu-check sees what they add, and kvmmmu:kvm_mmu_page_fault_done
# gives one event per fault KVM counts, with its outcome: per vCPU, events
# equal pf_taken, their "fixed" and "spurious" pf_fixed and pf_spurious;
# kvmmmu-hist in tracepoint mode counts from it, exactly, and times every
# fault. Then the stock modules go back.
# has_patch NAME: the patched modules' series carries a patch named NAME
has_patch() { grep -q "$1" /kvmmmu/patched/series 2>/dev/null; }
# Runs a side of each patch's measurement: 1 in the suite (each run checks
# the patch's signature), 4 with make test-patches (kvmmmu_patch_runs=4 on
# the kernel command line), which kvmmmu-diff needs to tell change from noise.
PATCH_RUNS=${kvmmmu_patch_runs:-1}
# runs SIDE NAME LOAD-ARGS...: $RUNS (default PATCH_RUNS) runs of kvmmmu-hist
# over kvmmmu-load, as $T/NAME-SIDE-I.csv (-load.csv, .out)
runs() {
	local side=$1 name=$2 i
	shift 2
	for i in $(seq "${RUNS:-$PATCH_RUNS}"); do
		traced $g/$name-$side-$i $name-$side-$i --label "$name-$side" -- "$@"
	done
}
# diff_runs NAME: kvmmmu-diff, stock against patched, into $T/NAME-diff.txt
# (with 4 runs a side or more: fewer give deltas without significance)
diff_runs() {
	local a="" b="" i
	if [ "$PATCH_RUNS" -lt 4 ]; then
		info "$g/$1: no kvmmmu-diff with $PATCH_RUNS run a side (make test-patches runs 4)"
		return 0
	fi
	for i in $(seq "$PATCH_RUNS"); do
		a="$a,$T/$1-stock-$i.csv"
		b="$b,$T/$1-patched-$i.csv"
	done
	kvmmmu-diff --all "stock=${a#,}" "patched=${b#,}" >$T/$1-diff.txt 2>&1
	emit $T/$1-diff.txt
}
# reload_amd ARGS...: kvm_amd again (the stock one, or patched/kvm-amd.ko), with ARGS
reload_amd() {
	local ko=$1
	shift
	rmmod kvm_amd 2>/dev/null
	if [ "$ko" = stock ]; then modprobe kvm_amd "$@"; else insmod "$ko" "$@"; fi
}
# the roots patch's workload: CR0.WP off and on around each of 2 x 256
# stores per vCPU; under shadow paging (npt=0) CR0.WP is in the MMU role
WP="--guest-mode cr0wp --mem 1M --passes 2"

if want patches; then
	g=patches
	# the huge-page recovery's workload: THP-backed memory whose dirty log
	# splits its huge pages, then a pass after turning it off, on the TDP MMU
	case $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null) in
	*"[always]"* | *"[madvise]"*) hp="--mem 8M --thp --dirty-log 2 --passes-after 1" ;;
	*) hp="" && skip $g/huge-pages "no transparent huge pages in this kernel" ;;
	esac
	# From 6.13 (kvm_tdp_mmu_recover_huge_pages) the stock modules do what
	# 0002 does for 6.1 and 6.12, which kernel-patches/ therefore does not
	# carry for this kernel: the faults after the disable only restore
	# write access, locklessly, and none maps a page again
	if [ "$HUGE_PAGE_RECOVERY" = upstream ] && [ -n "$hp" ]; then
		g=patches/upstream-recovery
		check $g/tdp_mmu-Y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" reload_kvm Y
		kvmmmu-check >$T/upstream-check.out 2>&1
		check $g/check-says-upstream "$(line_of $T/upstream-check.out 'huge pages recovered in place')" \
			eval 'line_of $T/upstream-check.out "huge pages recovered in place" | grep -qE " yes "'
		# shellcheck disable=SC2086
		RUNS=1 runs stock hp $hp
		f=$T/hp-stock-1
		n=$(val $f-load.csv load after_pass_1_pf_taken "")
		k=$(val $f-load.csv load after_pass_1_pf_fast "")
		info "$g: disabling dirty logging $(val $f-load.csv load disable_dirty_logging_s "") s, then $n faults, $k of them fast"
		check $g/kept-mapped-after-disable "after_pass_1_pf_taken=$n, pf_fast=$k" \
			eval 'gt0 "$n" && eq "$k" "$n"'
		n=$(val $f.csv bpf level_installed_2m "")
		check $g/populated-at-2m "level_installed_2m=$n" gt0 "$n"
		g=patches
	fi
	if [ ! -f /kvmmmu/patched/kvm.ko ]; then
		skip $g/all "no patched modules for this kernel in the cache (make test-patches builds them for kernel-patches/' targets, where this Debian has the kernel's compiler)"
	elif [ "$(modinfo -F vermagic /kvmmmu/patched/kvm.ko | cut -d' ' -f1)" != "$(uname -r)" ]; then
		# Debian moved on: kernel-patches/*/target.conf names the kernel before this one
		skip $g/all "the patched modules are for $(modinfo -F vermagic /kvmmmu/patched/kvm.ko | cut -d' ' -f1), this is $K (retarget kernel-patches/ to it)"
	else
		# the huge-page recovery patch: 4 runs of hp on the stock modules
		# here, 4 on the patched
		check $g/stock-tdp_mmu-Y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" reload_kvm Y
		# shellcheck disable=SC2086
		[ -n "$hp" ] && has_patch Recover-TDP-MMU-huge-pages && runs stock hp $hp
		if has_patch Keep-the-MMU-roots; then
			# shellcheck disable=SC2086
			RUNS=1 runs stock roots-npt $WP
			reload_amd stock npt=0
			check $g/stock-npt-0 "npt=$(cat /sys/module/kvm_amd/parameters/npt)" \
				grep -qx N /sys/module/kvm_amd/parameters/npt
			# shellcheck disable=SC2086
			runs stock roots-shadow $WP
			reload_amd stock
		fi
		rmmod kvm_amd kvm 2>/dev/null
		modprobe irqbypass 2>/dev/null
		modprobe ccp 2>/dev/null # kvm-amd needs it (SEV)
		taint0=$(cat /proc/sys/kernel/tainted)
		insmod /kvmmmu/patched/kvm.ko tdp_mmu=Y >$T/insmod.out 2>&1 &&
			insmod /kvmmmu/patched/kvm-amd.ko >>$T/insmod.out 2>&1
		check $g/loaded "$(cat $T/insmod.out)" test -c /dev/kvm
		taint=$(cat /proc/sys/kernel/tainted)
		# bit 12: an out-of-tree module; bit 13: an unsigned one
		info "$g: kernel taint $taint0 -> $taint (out of tree: $(((taint >> 12) & 1)), unsigned: $(((taint >> 13) & 1)))"
		check $g/taint-says-out-of-tree "tainted=$taint" test $(((taint >> 12) & 1)) = 1
		E=/sys/kernel/tracing/events/kvmmmu/kvm_mmu_page_fault_done
		check $g/event-in-tracefs "no $E" test -d $E
		kvmmmu-check >$T/patches-check.out 2>&1
		check $g/check-sees-event "$(line_of $T/patches-check.out 'kvm_mmu_page_fault_done event')" \
			eval 'line_of $T/patches-check.out "kvm_mmu_page_fault_done event" | grep -qE " yes "'
		TR=/sys/kernel/tracing
		echo 16384 >$TR/buffer_size_kb
		echo >$TR/trace
		echo 1 >$E/enable
		kvmmmu-load --vcpus 2 --mem 8M --shared --dirty-log 1 --csv $T/patches-load.csv >/dev/null 2>&1
		echo 0 >$E/enable
		grep -F 'kvm_mmu_page_fault_done:' $TR/trace >$T/patches-events.txt
		emit $T/patches-events.txt
		check $g/no-events-lost "$(grep -i 'lost' $TR/per_cpu/cpu*/stats 2>/dev/null | grep -v ': 0$' | head -2)" \
			eval '! grep -qs "^overrun: [1-9]" $TR/per_cpu/cpu*/stats'
		for v in 0 1; do
			for pair in all:pf_taken fixed:pf_fixed spurious:pf_spurious; do
				r=${pair%%:*}
				n=$(awk -v v=$v -v r=$r '{ for (i = 1; i < NF; i++) { if ($i == "vcpu") c = $(i + 1); if ($i == "ret") o = $(i + 1) } }
					c == v && (r == "all" || o == r) { n++ } END { print n + 0 }' $T/patches-events.txt)
				k=$(val $T/patches-load.csv kvm_stats "${pair#*:}" $v)
				check "$g/vcpu$v-events-$r-equal-${pair#*:}" "events $n, KVM ${pair#*:} $k" eq "$n" "$k"
			done
			# the event says which faults the lockless fast path resolved: KVM's pf_fast
			n=$(awk -v v=$v '{ for (i = 1; i < NF; i++) { if ($i == "vcpu") c = $(i + 1); if ($i == "fast") f = $(i + 1) } }
				c == v && f == 1 { n++ } END { print n + 0 }' $T/patches-events.txt)
			k=$(val $T/patches-load.csv kvm_stats pf_fast $v)
			check "$g/vcpu$v-events-fast-equal-pf_fast" "events with fast 1: $n, KVM pf_fast $k" \
				eval 'eq "$n" "$k" && gt0 "$n"'
			# ... and the goal level of each fault fixed off it: 4 KiB, 2 MiB or 1 GiB, never none
			n=$(awk -v v=$v '{ for (i = 1; i < NF; i++) { if ($i == "vcpu") c = $(i + 1); if ($i == "ret") o = $(i + 1); if ($i == "goal_level") l = $(i + 1); if ($i == "fast") f = $(i + 1) } }
				c == v && o == "fixed" && f == 0 && (l < 1 || l > 3) { n++ } END { print n + 0 }' $T/patches-events.txt)
			check "$g/vcpu$v-events-slow-fixed-goal_level" "faults fixed off the fast path with no goal level: $n" is0 "$n"
		done
		d=$(awk '{ for (i = 1; i < NF; i++) if ($i == "duration") { s += $(i + 1); n++ } } END { print (n ? int(s / n) : 0) }' \
			$T/patches-events.txt)
		info "$g: mean fault duration from kvm_mmu_page_fault_done: $d ns"
		check $g/durations "mean $d ns" gt0 "$d"
		# kvmmmu in tracepoint mode counts with the event: exact outcomes, whole faults timed
		traced $g/hist-tracepoint patches-hist --probe-mode tracepoint -- --shared --dirty-log 1
		check $g/hist-tracepoint/outcomes-from-event "$(grep '^Outcomes from' $T/patches-hist.out)" \
			grep -q '^Outcomes from: the kvm_mmu_page_fault_done tracepoint' $T/patches-hist.out
		agree $g/hist-tracepoint $T/patches-hist.csv $T/patches-hist-load.csv
		outcomes $g/hist-tracepoint $T/patches-hist.csv
		for v in 0 1; do
			f=$(val $T/patches-hist.csv bpf faults $v)
			n=$(val $T/patches-hist.csv bpf fault_ns_count $v)
			check "$g/hist-tracepoint/vcpu$v-fault_ns-one-per-fault" "fault_ns samples $n, faults $f" eq "$n" "$f"
		done
		# as a typed tp_btf program, not its raw_tp twin (the fallback is quiet)
		check $g/hist-tracepoint/done-event-tp_btf "$(grep -A8 '^Probes:' $T/patches-hist.out | tr '\n' ' ')" \
			grep -q 'kvmmmu:kvm_mmu_page_fault_done (tp_btf)' $T/patches-hist.out
		paths $g/hist-tracepoint $T/patches-hist.csv
		# colliding faults: the TDP MMU's spurious ones set no level; the done event says which
		levels_installed $g/hist-tracepoint $T/patches-hist.csv
		# the fast path's fixes by the event, and the levels at 4 KiB
		for v in 0 1; do
			n=$(val $T/patches-hist.csv bpf path_fast $v)
			k=$(val $T/patches-hist-load.csv kvm_stats pf_fast $v)
			check "$g/hist-tracepoint/vcpu$v-path_fast-equal-pf_fast" "bpf path_fast=$n, KVM pf_fast=$k" \
				eval 'eq "$n" "$k" && gt0 "$n"'
		done
		# the done event carries the level and the fast path: one program a fault
		# besides the slow path's SPTE request, no kvm_mmu_set_spte, no fast_page_fault
		probes=$(probes $T/patches-hist.out)
		check $g/hist-tracepoint/no-set-spte-probe "$probes" eval '! echo "$probes" | grep -q "kvm_mmu_set_spte ("'
		check $g/hist-tracepoint/no-fast-page-fault-probe "$probes" \
			eval '! echo "$probes" | grep -q "fast_page_fault ("'
		# the tracepoint model's events the done event makes needless are off: absent, not 0
		for m in page_fault_exits tdp_mmu_spte_changes mmio_faults sptes_set sptes_prefetched \
			fast_page_fault_calls; do
			check "$g/hist-tracepoint/no-$m-row" "$(grep -c ",$m," $T/patches-hist.csv) rows of $m" \
				eval '! has_row $T/patches-hist.csv $m'
		done
		# fault accounting alone (outcomes and paths): the done event is the one program
		# a fault; the slow path's MMU is the vCPU's (TDP MMU here), not a request's
		g2=$g/hist-accounting
		traced $g2 patches-acct --probe-mode tracepoint --metric outcomes,paths -- --shared --dirty-log 1
		agree $g2 $T/patches-acct.csv $T/patches-acct-load.csv
		paths $g2 $T/patches-acct.csv
		probes=$(probes $T/patches-acct.out)
		check $g2/no-spte-requested-probe "$probes" \
			eval '! echo "$probes" | grep -q "kvm_mmu_spte_requested ("'
		for v in 0 1; do
			n=$(val $T/patches-acct.csv bpf path_fast $v)
			k=$(val $T/patches-acct-load.csv kvm_stats pf_fast $v)
			check "$g2/vcpu$v-path_fast-equal-pf_fast" "bpf path_fast=$n, KVM pf_fast=$k" eq "$n" "$k"
			n=$(val $T/patches-acct.csv bpf path_tdp_mmu $v)
			k=$(val $T/patches-acct.csv bpf path_direct $v)
			check "$g2/vcpu$v-slow-path-tdp-mmu" "path_tdp_mmu=$n, path_direct=${k:-0}" \
				eval 'gt0 "$n" && is0 "${k:-0}"'
		done
		if [ -n "$hp" ] && has_patch Recover-TDP-MMU-huge-pages; then
			check $g/check-sees-huge-page-recovery "$(line_of $T/patches-check.out 'huge pages recovered in place')" \
				eval 'line_of $T/patches-check.out "huge pages recovered in place" | grep -qE " yes "'
			# shellcheck disable=SC2086
			runs patched hp $hp
			for i in $(seq "$PATCH_RUNS"); do
				for side in stock patched; do
					f=$T/hp-$side-$i-load.csv
					info "$g/hp-$side-$i: disabling dirty logging $(val $f load disable_dirty_logging_s "") s," \
						"then $(val $f load after_pass_1_pf_taken "") faults," \
						"$(val $f load after_pass_1_pf_fast "") of them fast"
				done
				# stock: the huge pages were zapped, and refault through the slow path
				n=$(val $T/hp-stock-$i-load.csv load after_pass_1_pf_taken "")
				k=$(val $T/hp-stock-$i-load.csv load after_pass_1_pf_fast "")
				check $g/hp-stock-$i/refaults-after-disable "after_pass_1_pf_taken=$n, pf_fast=$k" \
					eval 'gt0 "$n" && eq "$k" 0'
				# patched: they stayed mapped, huge and write-protected (by the last
				# clear): each fault after only restores write access, locklessly
				n=$(val $T/hp-patched-$i-load.csv load after_pass_1_pf_taken "")
				k=$(val $T/hp-patched-$i-load.csv load after_pass_1_pf_fast "")
				check $g/hp-patched-$i/kept-mapped-after-disable "after_pass_1_pf_taken=$n, pf_fast=$k" \
					eval 'gt0 "$n" && eq "$k" "$n"'
				# kvmmmu's levels say the same: both sides populate at 2 MiB; the
				# stock side maps those pages at 2 MiB again after the disable,
				# the patched side has no such faults (its huge pages were recovered)
				n=$(val $T/hp-stock-$i.csv bpf level_installed_2m "")
				k=$(val $T/hp-patched-$i.csv bpf level_installed_2m "")
				check $g/hp-$i/levels-stock-remaps-2m-patched-recovered \
					"level_installed_2m: stock $n, patched $k" eval 'gt0 "$k" && [ "$n" -gt "$k" ]'
			done
			diff_runs hp
		fi
		if has_patch Keep-the-MMU-roots; then
			check $g/check-sees-roots-kept "$(line_of $T/patches-check.out 'MMU roots kept on role changes')" \
				eval 'line_of $T/patches-check.out "MMU roots kept on role changes" | grep -qE " yes "'
			# shellcheck disable=SC2086
			RUNS=1 runs patched roots-npt $WP
			reload_amd /kvmmmu/patched/kvm-amd.ko npt=0
			check $g/patched-npt-0 "npt=$(cat /sys/module/kvm_amd/parameters/npt)" \
				grep -qx N /sys/module/kvm_amd/parameters/npt
			# shellcheck disable=SC2086
			runs patched roots-shadow $WP
			# (guest-checks.sh runs with set -f: the glob is expanded in a subshell)
			for f in $(set +f; echo $T/roots-*-[0-9].csv); do
				n=${f%.csv}
				info "$g/${n##*/}: $(val $n-load.csv load cr0_wp_writes "") CR0 writes," \
					"root unloads $(val $f bpf root_unloads 0) + $(val $f bpf root_unloads 1)," \
					"loads $(val $f bpf root_loads 0) + $(val $f bpf root_loads 1)"
			done
			# with NPT, 6.1 already keeps the root on a CR0.WP toggle (01b31714bd90):
			# one load per vCPU either way (one run a side: the suite's time)
			for side in stock patched; do
				n=$(val $T/roots-npt-$side-1.csv bpf root_loads 0)
				check $g/roots-npt-$side/one-root-load "vCPU 0 root_loads=$n" eval '[ -n "$n" ] && [ "$n" -le 2 ]'
			done
			for i in $(seq "$PATCH_RUNS"); do
				# each vCPU wrote CR0 512 times a pass: under shadow paging the stock
				# modules unload its roots at each, and the next entry loads a root
				# again (kvm_mmu_load); the patched ones switch between two cached
				# roots. Both ends are counted: kvm_mmu_unload is inlined into
				# kvm_mmu_reset_context, so its unloads are seen in
				# kvm_mmu_free_roots (every root of the vCPU's MMU at once).
				for v in 0 1; do
					n=$(val $T/roots-shadow-stock-$i.csv bpf root_loads $v)
					check $g/roots-shadow-stock-$i/vcpu$v-reload-per-cr0-write "root_loads=$n, CR0 writes 1024" \
						eval '[ "${n:-0}" -ge 1024 ]'
					n=$(val $T/roots-shadow-stock-$i.csv bpf root_unloads $v)
					check $g/roots-shadow-stock-$i/vcpu$v-unload-per-cr0-write "root_unloads=$n, CR0 writes 1024" \
						eval '[ "${n:-0}" -ge 1024 ]'
					n=$(val $T/roots-shadow-patched-$i.csv bpf root_loads $v)
					check $g/roots-shadow-patched-$i/vcpu$v-roots-kept "root_loads=$n, CR0 writes 1024" \
						eval '[ -n "$n" ] && [ "$n" -le 4 ]'
					n=$(val $T/roots-shadow-patched-$i.csv bpf root_unloads $v)
					check $g/roots-shadow-patched-$i/vcpu$v-no-unloads "root_unloads=$n, CR0 writes 1024" \
						eval '[ -n "$n" ] && [ "$n" -le 4 ]'
				done
				# and the guest runs as before: every fault counted, as KVM counts it
				agree $g/roots-shadow-patched-$i $T/roots-shadow-patched-$i.csv $T/roots-shadow-patched-$i-load.csv
			done
			diff_runs roots-shadow
		fi
		# shadow paging (npt=0): the done event's slow faults are shadow paging's,
		# the vCPU's MMU says so with or without the guest walk's events
		grep -qx N /sys/module/kvm_amd/parameters/npt || reload_amd /kvmmmu/patched/kvm-amd.ko npt=0
		check $g/patched-npt-0-shadow "npt=$(cat /sys/module/kvm_amd/parameters/npt)" \
			grep -qx N /sys/module/kvm_amd/parameters/npt
		for m in default acct; do
			g2=$g/hist-shadow-$m
			if [ $m = default ]; then
				traced $g2 patches-shadow-$m --probe-mode tracepoint -- --dirty-log 1
				levels_installed $g2 $T/patches-shadow-$m.csv
			else
				traced $g2 patches-shadow-$m --probe-mode tracepoint --metric outcomes,paths -- --dirty-log 1
				probes=$(probes $T/patches-shadow-$m.out)
				check $g2/no-walk-or-request-probe "$probes" \
					eval '! echo "$probes" | grep -qE "kvm_mmu_pagetable_walk \(|kvm_mmu_spte_requested \("'
			fi
			agree $g2 $T/patches-shadow-$m.csv $T/patches-shadow-$m-load.csv
			paths $g2 $T/patches-shadow-$m.csv
			for v in 0 1; do
				f=$(val $T/patches-shadow-$m.csv bpf faults $v)
				n=$(val $T/patches-shadow-$m.csv bpf path_shadow $v)
				check "$g2/vcpu$v-path_shadow" "path_shadow=$n of $f faults" eval 'gt0 "$n" && eq "$n" "$f"'
			done
		done
		rmmod kvm_amd kvm
		modprobe kvm_amd
		check $g/stock-modules-back "$(modinfo -F filename kvm 2>&1)" test -c /dev/kvm
	fi
fi
