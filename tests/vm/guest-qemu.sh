#!/bin/sh
# shellcheck shell=dash disable=SC2016,SC2317,SC2154
# The "qemu" check group, sourced by tests/vm/guest-checks.sh in the test
# guest: its helpers (check, val, emit, paths, reload_kvm, ...) and $T are
# that script's (SC2154: variables set there).
# ---- qemu: Debian's QEMU boots a real Linux guest (this kernel, a busybox
# initramfs that writes 32 MiB and powers off: tests/vm/l2-init), named as
# libvirt names guests, traced as the README shows (kvmmmu-hist --pid qemu)
# in the three probe modes at once, with tdp_mmu=Y and N. The oracle is KVM's
# own per-vCPU counters as QEMU reports them (QMP query-stats), read with the
# VM stopped at both ends: before "cont" (started with -S) and after the
# guest's poweroff (-no-shutdown keeps the stopped VM and its counters).
QMP=$T/qmp.sock
# One vCPU: with two, the nested guest hung in its initcalls more often.
L2_VCPUS=1
# No PV EOI: the nested guest's EOIs exit to KVM at the top of its interrupt
# handlers. The outer QEMU (Debian's 7.2, TCG) delivers an interrupt that a
# VMRUN injects (EVENTINJ) and leaves its vector in exception_index; when
# its round-robin kick between the test guest's two vCPUs next ends a TB
# loop before any exit, it delivers that vector once more as an exception,
# IF=0 or not. Inside the first run of the handler, holding its lock
# (desc->lock, timekeeper_lock), the second spins for good: seen as
# "kvm_exit: reason msr ... intr_info 0x3ec" (0xec again, as an exception)
# and two EOIs for one injection. An exit resets exception_index, so the
# sooner the handler exits the smaller that window: with PV EOI it first
# exits at the clockevent's MSR write, after the tick's work and its locks.
L2_CPU=host,-kvm-pv-eoi
# No PIT and no HPET: the timer is the LAPIC's (TSC deadline, on kvmclock),
# whose handler EOIs first. IRQ0's edge handler takes desc->lock before its
# EOI, and the PIT injects it in bursts: with it, 1 boot in 5 still stalled.
L2_MACHINE=q35,pit=off,hpet=off
qmp() { /kvmmmu/qmp $QMP "$@"; }
# kvm_pf CPUS STATS: "VCPU NAME VALUE" lines for the vCPUs' pf_* counters, from
# QEMU's query-cpus-fast and query-stats replies (one JSON line each). In
# both, an object's qom-path follows the fields it names (cpu-index, stats).
kvm_pf() {
	tr -d ' "' <"$1" | tr '{},' '\n\n\n' | awk -F: '
		$1 == "cpu-index" && path != "" { print path ":" $2; path = "" }
		$1 == "qom-path" { path = $2 }' >"$1.map"
	tr -d ' "' <"$2" | tr '{},' '\n\n\n' | awk -F: '
		FILENAME != "-" { cpu[$1] = $2; next }
		$1 == "name" { name = $2 }
		$1 == "value" { got[name] = $2 }
		$1 == "qom-path" { for (n in got) print cpu[$2], n, got[n]; delete got }' "$1.map" -
}
# pf_at FILE VCPU NAME: one counter from kvm_pf's output
pf_at() { awk -v v="$2" -v n="$3" '$1 == v && $2 == n { print $3 }' "$1"; }
stats_args='{"target": "vcpu", "providers": [{"provider": "kvm", "names": ["pf_taken", "pf_fixed", "pf_spurious", "pf_emulate"]}]}'
# elapsed START: whole seconds of uptime since START
elapsed() { awk -v s="$1" '{ print int($1 - s) }' /proc/uptime; }
# qemu_run NAME: boot, trace, compare; files $T/NAME-*
qemu_run() {
	local g=$1 n=$1 mode pids="" p rc start booted i c v pair b k f
	n=$(echo "$n" | tr / -)
	rm -f $QMP
	start=$(cut -d' ' -f1 /proc/uptime)
	/usr/bin/qemu-system-x86_64 -name guest=web-1,debug-threads=on -accel kvm -machine $L2_MACHINE -cpu $L2_CPU \
		-smp $L2_VCPUS -m 256M -nodefaults -display none -no-reboot -no-shutdown -S \
		-kernel /kvmmmu/l2/vmlinuz -initrd /kvmmmu/l2/initrd.gz \
		-append "console=ttyS0 quiet panic=-1${L2_CMDLINE:+ $L2_CMDLINE}" -serial file:$T/$n-console.log \
		-qmp unix:$QMP,server=on,wait=off -daemonize -pidfile $T/$n-qemu.pid \
		>$T/$n-qemu.err 2>&1
	rc=$?
	check "$g/qemu-started" "exit $rc: $(tail -3 $T/$n-qemu.err | tr '\n' ' ')" test $rc = 0
	[ $rc = 0 ] || return
	for mode in fentry kprobe tracepoint; do
		kvmmmu-hist ${kvmmmu_verbose:+-v} --pid qemu --per-vcpu --csv $T/$n-$mode.csv \
			--probe-mode $mode >$T/$n-$mode.out 2>&1 &
		pids="$pids $mode:$!"
	done
	for mode in fentry kprobe tracepoint; do
		check "$g/$mode-attach" "$(tail -2 $T/$n-$mode.out | tr '\n' ' ')" \
			wait_for $T/$n-$mode.out '^Tracing'
	done
	qmp query-cpus-fast >$T/$n-cpus.json
	qmp query-stats "$stats_args" >$T/$n-before.json
	kvm_pf $T/$n-cpus.json $T/$n-before.json >$T/$n-before.pf
	check "$g/stats-before" "$(cat $T/$n-before.json)" \
		eval '[ "$(grep -c " pf_taken " $T/$n-before.pf)" = $L2_VCPUS ]'
	qmp cont >/dev/null
	# kvmmmu-check --validate on the booting guest: QEMU keeps no stats fd
	# open, so KVM's debugfs gives the VM-wide sums it compares. With
	# tracepoints: its fentry programs would replace the trampolines of the
	# functions the tracers above probe, and the kernel skips the fexit
	# programs of calls in flight then (the tracers count that, exits_lost).
	kvmmmu-check --probe-mode tracepoint --validate qemu 3 >$T/$n-validate.out 2>&1 &
	p=$!
	# Until it powers off; or it stalls (an interrupt delivered twice, see
	# L2_CPU: rarer now, not gone): then it spins at one RIP for good. No new
	# fault for 15 s after 100 is a stall. A boot that ends takes 27 to 42 s
	# alone, and over 120 s while other TCG guests share the host's CPUs (the
	# guest passes of make test): it may go on while it faults, up to 600 s.
	booted='' last=-1 still=0
	while [ "$(elapsed $start)" -lt 600 ] && [ $still -lt 15 ]; do
		qmp query-status 2>/dev/null | grep -q '"status": "shutdown"' && booted=1 && break
		sleep 1
		qmp query-stats "$stats_args" >$T/$n-now.json
		f=$(kvm_pf $T/$n-cpus.json $T/$n-now.json | awk '$2 == "pf_taken" { n += $3 } END { print n + 0 }')
		if [ "$f" = "$last" ] && [ "$f" -ge 100 ]; then still=$((still + 1)); else still=0; fi
		last=$f
	done
	# the same instant for both sides: the VM stopped (it is, once powered off)
	qmp stop >/dev/null
	if [ -n "$booted" ] && grep -q 'Kernel panic' $T/$n-console.log; then
		# panic=-1 with -no-reboot: a crash ends as a poweroff does. The
		# same double delivery as a stall (L2_CPU), met in an exception
		# handler's entry: a fault on the entry stack, seen once in CI
		skip "$g/guest-ran" "the nested guest's kernel crashed after $(elapsed $start) s (TCG's nested SVM, not kvmmmu): $(tr -d '\r' <$T/$n-console.log | grep -m2 -e 'BUG: ' -e 'Kernel panic' | cut -c1-100 | tr '\n' ' '); the checks below cover its run up to there"
	elif [ -n "$booted" ]; then
		info "$g: the nested guest booted, wrote 32 MiB and powered off in $(elapsed $start) s"
		check "$g/guest-ran" "$(tail -3 $T/$n-console.log | tr '\n' ' ')" \
			grep -q "kvmmmu-l2: touched 32 MiB" $T/$n-console.log
	else
		skip "$g/guest-ran" "the nested guest stalled after $(elapsed $start) s and $last faults at $(qmp human-monitor-command '{"command-line": "info registers"}' | grep -o 'RIP=[0-9a-f]*') (TCG's nested SVM, not kvmmmu), console '$(tail -1 $T/$n-console.log | tr -d '\r' | cut -c1-80)'; the checks below cover its boot up to there"
	fi
	wait $p
	rc=$?
	check "$g/validate-agrees" "exit $rc: $(grep -m1 'DISAGREE\|validate' $T/$n-validate.out)" \
		eval '[ $rc = 0 ] && grep -q "VM-wide sums only" $T/$n-validate.out &&
			[ "$(grep -c " agree$" $T/$n-validate.out)" -ge 3 ]'
	qmp query-stats "$stats_args" >$T/$n-after.json
	kvm_pf $T/$n-cpus.json $T/$n-after.json >$T/$n-after.pf
	for p in $pids; do kill -INT "${p#*:}"; done
	for p in $pids; do
		wait "${p#*:}"
		rc=$?
		check "$g/${p%:*}-exit-0" "exit $rc: $(tail -2 $T/$n-${p%:*}.out | tr '\n' ' ')" test $rc = 0
	done
	qmp quit >/dev/null 2>&1
	i=0
	while [ -e "/proc/$(cat $T/$n-qemu.pid)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	tr -d '\r' <$T/$n-console.log >$T/$n-l2-console.log
	for f in l2-console.log before.json after.json validate.out fentry.out fentry.csv kprobe.out kprobe.csv \
		tracepoint.out tracepoint.csv; do
		emit $T/$n-$f
	done
	for mode in fentry kprobe tracepoint; do
		c=$T/$n-$mode.csv
		# runs the kernel skipped (7.x: BPF preempted): each count within
		# them, and said, as agree() allows; none skipped: exact
		sk=$(val $c bpf prog_missed "")
		w=""
		[ "${sk:-0}" = 0 ] || w=-within-skipped-runs
		check "$g/$mode/vm-named-web-1" "vm column: $(awk -F, '!/^#/ && NR > 1 { print $9; exit }' $c)" \
			eval 'awk -F, "!/^#/ && \$5 == \"bpf\"" $c | grep -q ",web-1,1$"'
		for v in $(seq 0 $((L2_VCPUS - 1))); do
			for pair in faults:pf_taken ret_pf_fixed:pf_fixed ret_pf_spurious:pf_spurious \
				ret_pf_emulate:pf_emulate; do
				b=$(val $c bpf "${pair%%:*}" $v)
				k=$(( $(pf_at $T/$n-after.pf $v "${pair#*:}") - $(pf_at $T/$n-before.pf $v "${pair#*:}") ))
				if [ -z "$w" ]; then
					check "$g/$mode/vcpu$v-${pair%%:*}" "bpf ${pair%%:*}=${b:-none}, KVM ${pair#*:}=$k" \
						eq "${b:-0}" "$k"
				else
					check "$g/$mode/vcpu$v-${pair%%:*}$w" "bpf ${pair%%:*}=${b:-none}, KVM ${pair#*:}=$k, $sk runs skipped" \
						eval '[ $((${b:-0} - k)) -le "$sk" ] && [ $((k - ${b:-0})) -le "$sk" ]'
				fi
			done
		done
		if [ $mode != tracepoint ]; then
			paths "$g/$mode" $c "$(seq 0 $((L2_VCPUS - 1)))"
			# whole-fault latency for the faults counted, not for MMIO-SPTE exits too
			b=$(val $c bpf fault_ns_count "") f=$(val $c bpf faults "")
			check "$g/$mode/fault_ns-samples-are-faults" "fault_ns_count=$b, faults=$f" eq "$b" "$f"
		fi
		for m in prog_missed exits_lost kprobe_missed drops; do
			b=$(val $c bpf $m "")
			if [ -n "$w" ] && [ $m = prog_missed ]; then
				check "$g/$mode/skipped-runs-said" "$sk runs skipped, not in $T/$n-$mode.out" \
					grep -q "BPF program runs skipped by the kernel" $T/$n-$mode.out
			elif [ -n "$w" ] && [ $m = exits_lost ]; then
				# a fault entry whose exit run was skipped, at most one each
				check "$g/$mode/exits_lost$w" "exits_lost=${b:-none}, $sk runs skipped" \
					eval '[ -n "$b" ] && [ "$b" -le "$sk" ]'
			else
				check "$g/$mode/no-$m" "$m=${b:-none}" eq "$b" 0
			fi
		done
		# kvmmmu-hist's own KVM rows, from debugfs: VM-wide sums
		b=$(val $c kvm_stats pf_taken "")
		k=$(awk '$2 == "pf_taken" { k += FILENAME ~ /after/ ? $3 : -$3 } END { print k + 0 }' \
			$T/$n-after.pf $T/$n-before.pf)
		check "$g/$mode/kvm_stats-vm-pf_taken" "kvmmmu-hist's kvm_stats pf_taken=${b:-none}, QMP's sum=$k" \
			eq "$b" "$k"
	done
	for pair in pf_taken pf_fixed pf_emulate; do
		k=$(awk -v n=$pair '$2 == n { k += $3 } END { print k + 0 }' $T/$n-after.pf)
		check "$g/kvm-$pair-nonzero" "KVM $pair=$k" gt0 "$k"
	done
	# what a real boot has and kvmmmu-load has not: MMU role changes (roots
	# loaded as paging modes change), MMIO SPTEs, fast zaps of memslot updates
	for m in root_loads mmio_sptes_created zap_all_fast; do
		b=$(val $T/$n-fentry.csv bpf $m "")
		check "$g/boot-has-$m" "$m=${b:-none}" gt0 "$b"
	done
	info "$g: KVM per vCPU: $(sort $T/$n-after.pf | tr '\n' ' ')"
}
if want qemu; then
	for y in Y N; do
		if ! grep -qx $y /sys/module/kvm/parameters/tdp_mmu; then
			check qemu/$y/reload-tdp_mmu-$y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" \
				reload_kvm $y
		fi
		qemu_run qemu/$y
	done
fi
