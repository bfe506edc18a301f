# shellcheck shell=dash disable=SC2016,SC2317
# Sourced by guest-checks.sh, whose helpers it uses: the shadow group, shadow
# paging proper (kvm_amd npt=0).
# ---- shadow: shadow paging proper (kvm_amd npt=0): the guest's own page
# tables are shadowed, every slow-path fault goes through paging64_page_fault
if want shadow; then
	g=shadow
	# the exporter's trampolines may hold kvm_amd a moment after it exits (as in reload_kvm)
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -d /sys/module/kvm_amd ] || break
		rmmod kvm_amd 2>/dev/null || sleep 1
	done
	modprobe kvm_amd npt=0
	check $g/npt-off "npt=$(cat /sys/module/kvm_amd/parameters/npt 2>&1)" \
		grep -qx N /sys/module/kvm_amd/parameters/npt
	shared $g shadow
	for mode in tracepoint fentry; do
		c=$T/shadow-$( [ $mode = tracepoint ] && echo tp || echo fentry).csv
		for v in 0 1; do
			f=$(val $c bpf faults $v) b=$(val $c bpf path_shadow $v) p=$(val $c bpf path_fast $v)
			check "$g/$mode/vcpu$v-path_shadow" "path_shadow=$b, path_fast=$p of $f faults" \
				eval 'gt0 "$b" && [ $((b + ${p:-0})) = "$f" ]'
		done
	done
	# mapping levels: the guest maps its memory with 2 MiB pages and the host
	# backs it with THP, so the populate maps 2 MiB SPTEs; under dirty logging
	# every write of the dirty pass (2048 pages a vCPU) is mapped at 4 KiB,
	# and kvmmmu says why: dirty logging
	if grep -qE '\[(always|madvise)\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
		traced $g/thp-dirty shadow-thp-dirty --probe-mode fentry -- --thp --dirty-log 1
		agree $g/thp-dirty $T/shadow-thp-dirty.csv $T/shadow-thp-dirty-load.csv
		# from the handlers' returns: a fixed fault's level, a write-protected one's not
		levels_installed $g/thp-dirty $T/shadow-thp-dirty.csv
		for v in 0 1; do
			h=$(val $T/shadow-thp-dirty.csv bpf level_installed_2m $v)
			d=$(val $T/shadow-thp-dirty.csv bpf level_not_huge_dirty_log $v)
			check "$g/thp-dirty/vcpu$v-populate-2m-dirty-pass-4k" \
				"level_installed_2m=$h, level_not_huge_dirty_log=$d" \
				eval 'gt0 "$h" && [ "${d:-0}" -ge 2048 ]'
		done
	else
		skip $g/thp-dirty "no transparent huge pages in this kernel"
	fi
	# the guest's paging mode picks the handler: PAE and 4-level paging go to
	# paging64_page_fault, 2-level paging to paging32_page_fault, paging off
	# to nonpaging_page_fault (the legacy direct MMU); each fault counted once
	for gm in pae 32bit nonpaging; do
		want_path=shadow
		[ $gm = nonpaging ] && want_path=direct
		for mode in fentry tracepoint; do
			traced $g/$gm/$mode shadow-$gm-$mode --probe-mode $mode \
				--metric outcomes,paths,levels,phases,fault_ns,walk_to_spte_ns -- --guest-mode $gm --dirty-log 1
			agree $g/$gm/$mode $T/shadow-$gm-$mode.csv $T/shadow-$gm-$mode-load.csv
			# seed 003's phase: the guest walk, in each fault under shadow paging
			walk=every
			[ $gm = nonpaging ] && walk=none
			phases $g/$gm/$mode $T/shadow-$gm-$mode.csv $mode $walk
			for v in 0 1; do
				c=$T/shadow-$gm-$mode.csv
				# the direct MMU's dirty-log refaults take the lockless fast path
				f=$(val $c bpf faults $v) b=$(val $c bpf path_$want_path $v)
				p=$(val $c bpf path_fast $v)
				check "$g/$gm/$mode/vcpu$v-path_$want_path" \
					"path_$want_path=$b, path_fast=$p of $f faults" \
					eval 'gt0 "$b" && [ $((b + ${p:-0})) = "$f" ]'
			done
		done
	done
fi
