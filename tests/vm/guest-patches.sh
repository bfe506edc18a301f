# shellcheck shell=dash
# Sourced by guest-checks.sh: the "patches" group. KVM's modules built from
# kernel-patches/ for this kernel (scripts/kernel-patches.sh build), loaded
# in place of the stock ones: the kernel takes them (unsigned, out of tree:
# a taint), kvmmmu-check sees what they add, and kvmmmu:kvm_mmu_page_fault_done
# gives one event per fault KVM counts, with its outcome: per vCPU, events
# equal pf_taken, their "fixed" and "spurious" pf_fixed and pf_spurious;
# kvmmmu-hist in tracepoint mode counts from it, exactly, and times every
# fault. Then the stock modules go back.
if want patches; then
	g=patches
	if [ ! -f /kvmmmu/patched/kvm.ko ]; then
		skip $g/all "no patched modules for this kernel in the cache (make test-patches builds them)"
	elif [ "$(modinfo -F vermagic /kvmmmu/patched/kvm.ko | cut -d' ' -f1)" != "$(uname -r)" ]; then
		skip $g/all "the patched modules are for $(modinfo -F vermagic /kvmmmu/patched/kvm.ko | cut -d' ' -f1), this is $K"
	else
		rmmod kvm_amd kvm 2>/dev/null
		modprobe irqbypass 2>/dev/null
		modprobe ccp 2>/dev/null # kvm-amd needs it (SEV)
		taint0=$(cat /proc/sys/kernel/tainted)
		insmod /kvmmmu/patched/kvm.ko >$T/insmod.out 2>&1 &&
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
		rmmod kvm_amd kvm
		modprobe kvm_amd
		check $g/stock-modules-back "$(modinfo -F filename kvm 2>&1)" test -c /dev/kvm
	fi
fi
