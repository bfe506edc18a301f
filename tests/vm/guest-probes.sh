# shellcheck shell=dash disable=SC2016,SC2317
# Sourced by guest-checks.sh, whose helpers it uses: the groups of kvmmmu-check
# and of kvmmmu-hist in each probe mode (check, ret-pf, hist-fsession,
# hist-fentry, hist-kprobe, hist-tracepoint, dirty-log, hist-all).
# ---- check: kvmmmu-check's report against the guest itself
if want check || want ret-pf; then
	kvmmmu-check ${kvmmmu_verbose:+-v} >$T/check-auto.out 2>&1
	echo "rc=$?" >>$T/check-auto.out
	emit $T/check-auto.out
fi
if want check; then
	check check/exit-0 "$(tail -2 $T/check-auto.out)" grep -qx rc=0 $T/check-auto.out
	quiet check/no-libbpf-log $T/check-auto.out v
	# every tracepoint that can take a tp_btf program gets one: none falls back to raw_tp
	# (6.12 marks tp_btf pointer arguments maybe-NULL; the programs test them)
	check check/tp_btf-where-possible "$(grep 'tp_btf possible: yes; kvmmmu: raw_tp' $T/check-auto.out)" \
		eval '! grep -q "tp_btf possible: yes; kvmmmu: raw_tp" $T/check-auto.out'
	check check/tp_btf-spte_requested "$(line_of $T/check-auto.out kvmmmu:kvm_mmu_spte_requested)" \
		eval 'line_of $T/check-auto.out kvmmmu:kvm_mmu_spte_requested | grep -q "kvmmmu: tp_btf$"'
	# the other commands load the same objects: as quiet. kvmmmu-top (batch
	# frames) on this kernel: a VM's since-start faults equal KVM's pf_taken.
	kvmmmu-top -b --since-start -d 0.5 -p top-vm >$T/check-top.out 2>$T/check-top.err &
	tp=$!
	wait_for $T/check-top.out 'kvmmmu-top:'
	kvmmmu-load --name top-vm --vcpus 2 --mem 8M --csv $T/check-top-load.csv >/dev/null 2>&1
	# two more frames: the VM's last figures
	n=$(grep -c 'kvmmmu-top:' $T/check-top.out)
	i=0
	while [ "$(grep -c 'kvmmmu-top:' $T/check-top.out)" -lt $((n + 2)) ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -INT $tp
	wait $tp
	echo "rc=$?" >>$T/check-top.out
	cat $T/check-top.err >>$T/check-top.out
	check check/top-exit-0 "$(tail -2 $T/check-top.out)" grep -qx rc=0 $T/check-top.out
	quiet check/top-no-libbpf-log $T/check-top.out
	k=$(($(val $T/check-top-load.csv kvm_stats pf_taken 0) + $(val $T/check-top-load.csv kvm_stats pf_taken 1)))
	b=$(awk '$1 == "top-vm" || $1 == "top-vm*" { v = $4 } END { print v }' $T/check-top.out)
	# runs the kernel skipped (7.x): the frame's "lost:" line says how many
	m=$(awk '/^lost: / { v = $7 } END { print v + 0 }' $T/check-top.out)
	if [ "$m" = 0 ]; then
		check check/top-vm-faults-equal-kvm "kvmmmu-top $b, KVM pf_taken $k" test "$b" = "$k"
	else
		check check/top-vm-faults-within-skipped-runs "kvmmmu-top $b, KVM pf_taken $k, runs skipped $m" \
			within "$b" "$k" "$m"
	fi
	emit $T/check-top.out
	kvmmmu-exporter --web.listen-address=127.0.0.1:9486 >$T/check-exporter.out 2>&1 &
	ep=$!
	i=0
	while ! grep -q 'listening on' $T/check-exporter.out && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check check/exporter-listening "$(tail -2 $T/check-exporter.out)" grep -q 'listening on' $T/check-exporter.out
	kill -TERM $ep
	wait $ep
	quiet check/exporter-no-libbpf-log $T/check-exporter.out
	emit $T/check-exporter.out
	check check/kvm-module "$(line_of $T/check-auto.out KVM)" \
		eval 'line_of $T/check-auto.out KVM | grep -qE "^  KVM +module$"'
	check check/module-btf "$(line_of $T/check-auto.out 'kvm module BTF')" \
		eval 'line_of $T/check-auto.out "kvm module BTF" | grep -qE " yes"'
	# 6.1 and 6.12 zap collapsible SPTEs when dirty logging is turned off (kernel-patches/
	# 0002 recovers them in place); 6.13 and later do so upstream
	if [ "$HUGE_PAGE_RECOVERY" = upstream ]; then r=yes; else r=no; fi
	check check/carried-huge-page-recovery-$r "$(line_of $T/check-auto.out 'huge pages recovered in place')" \
		eval 'line_of $T/check-auto.out "huge pages recovered in place" | grep -qE " $r "'
	check check/carried-mmu-roots-kept-no "$(line_of $T/check-auto.out 'MMU roots kept on role changes')" \
		eval 'line_of $T/check-auto.out "MMU roots kept on role changes" | grep -qE " no "'
	check check/carried-page-fault-done-event-no "$(line_of $T/check-auto.out 'kvm_mmu_page_fault_done event')" \
		eval 'line_of $T/check-auto.out "kvm_mmu_page_fault_done event" | grep -qE " no "'
	check check/carried-enum-export-yes "$(line_of $T/check-auto.out 'RET_PF_\* enum export')" \
		eval 'line_of $T/check-auto.out "RET_PF_\* enum export" | grep -qE " yes "'
	for mode in fentry kprobe; do
		kvmmmu-check --probe-mode $mode >$T/check-$mode.out 2>&1
		echo "rc=$?" >>$T/check-$mode.out
		emit $T/check-$mode.out
		quiet check/$mode/no-libbpf-log $T/check-$mode.out
		for f in $FUNCS; do
			l=$(line_of $T/check-$mode.out $f)
			if in_kallsyms $f; then
				check "check/$mode/$f" "$l" eval 'echo "$l" | grep -qE "^  $f +$mode "'
			else
				check "check/$mode/$f-not-in-kallsyms" "$l" \
					eval 'echo "$l" | grep -qE "^  $f +unavailable +kallsyms: (absent|not)"'
			fi
		done
		l=$(line_of $T/check-$mode.out fast_page_fault)
		if in_kallsyms fast_page_fault; then
			check "check/$mode/fast_page_fault-not-used" "$l" \
				eval 'echo "$l" | grep -qE "^  fast_page_fault +not used "'
		else
			check "check/$mode/fast_page_fault-not-attachable" "$l" \
				eval 'echo "$l" | grep -qE "^  fast_page_fault +unavailable +not attachable"'
		fi
	done
	# fsession (7.0, FSESSION in kernel.conf): one program for a function's entry and
	# exit, chosen before fentry (auto too); a function probed at one end keeps fentry
	kvmmmu-check --probe-mode fsession >$T/check-fsession.out 2>&1
	echo "rc=$?" >>$T/check-fsession.out
	emit $T/check-fsession.out
	l=$(line_of $T/check-auto.out kvm_mmu_page_fault)
	if [ "$FSESSION" = yes ]; then
		check check/fsession/exit-0 "$(tail -2 $T/check-fsession.out)" grep -qx rc=0 $T/check-fsession.out
		quiet check/fsession/no-libbpf-log $T/check-fsession.out
		for f in kvm_mmu_page_fault kvm_tdp_page_fault kvm_vcpu_gfn_to_memslot; do
			l=$(line_of $T/check-fsession.out $f)
			check "check/fsession/$f" "$l" eval 'echo "$l" | grep -qE "^  $f +fsession "'
		done
		l=$(line_of $T/check-fsession.out direct_page_fault)
		check check/fsession/direct_page_fault-fentry "$l" \
			eval 'echo "$l" | grep -qE "^  direct_page_fault +fentry "'
		l=$(line_of $T/check-auto.out kvm_mmu_page_fault)
		check check/auto-fsession-first "$l" eval 'echo "$l" | grep -qE "^  kvm_mmu_page_fault +fsession "'
	else
		check check/fsession/refused "$(grep -v '^  ' $T/check-fsession.out | head -3)" \
			eval '! grep -qx rc=0 $T/check-fsession.out &&
				grep -q "kvm_mmu_page_fault cannot be probed: fsession: not in this kernel (7.0 and later)" $T/check-fsession.out'
		check check/auto-fentry "$l" eval 'echo "$l" | grep -qE "^  kvm_mmu_page_fault +fentry "'
	fi
fi

# ---- ret-pf: RET_PF_* decoded from this kernel's BTF (expectations: kernel.conf)
if want ret-pf; then
	check ret-pf/from-btf "$(line_of $T/check-auto.out 'decoded from')" \
		eval 'line_of $T/check-auto.out "decoded from" | grep -qE " BTF +kvm module"'
	for nv in $RET_PF; do
		l=$(line_of $T/check-auto.out "RET_PF_${nv%=*}")
		check "ret-pf/${nv%=*}=${nv#*=}" "got: $l" \
			eval 'echo "$l" | grep -qE "^  RET_PF_${nv%=*} +${nv#*=}$"'
	done
	for n in $RET_PF_ABSENT; do
		check "ret-pf/no-$n" "$(line_of $T/check-auto.out "RET_PF_$n")" \
			eval '! grep -q "RET_PF_$n " $T/check-auto.out'
	done
fi

# ---- hist-MODE: outcomes per vCPU equal KVM's, in each probe mode
for mode in fsession fentry kprobe tracepoint; do
	g=hist-$mode
	want $g || continue
	if [ $mode = fsession ] && [ "$FSESSION" != yes ]; then
		kvmmmu-hist --probe-mode fsession -d 1 >$T/$g.out 2>&1
		echo "rc=$?" >>$T/$g.out
		check $g/refused-before-7.0 "$(cat $T/$g.out)" eval 'grep -qx rc=1 $T/$g.out &&
			grep -qx "kvmmmu-hist: --probe-mode fsession: kvm_mmu_page_fault cannot be probed: fsession: not in this kernel (7.0 and later)" $T/$g.out'
		continue
	fi
	# the memslot figures too: off by default, and only function probes have them
	traced $g $g --probe-mode $mode --label $mode --metric default,memslot,memslot_ns --
	probes=$(probes $T/$g.out)
	if [ $mode = tracepoint ]; then
		check $g/probes-tracepoints-only "$probes" \
			eval '! echo "$probes" | grep -q "kvm_mmu_page_fault"'
		check $g/outcomes-from-tracepoints "$(grep '^Outcomes from' $T/$g.out)" \
			grep -q '^Outcomes from: tracepoints' $T/$g.out
	else
		for f in kvm_mmu_page_fault kvm_tdp_page_fault kvm_vcpu_gfn_to_memslot; do
			check "$g/probes-$f-$mode" "$probes" \
				eval 'echo "$probes" | grep -q " $f ($mode)"'
		done
		check $g/outcomes-from-functions "$(grep '^Outcomes from' $T/$g.out)" \
			grep -q '^Outcomes from: function return values' $T/$g.out
		# the tracepoint model's own events are off without --metric events: not 0, absent
		for m in page_fault_exits tdp_mmu_spte_changes guest_walks walker_errors \
			sptes_set sptes_prefetched; do
			check "$g/no-$m-row" "$(grep -c ",$m," $T/$g.csv) rows of $m" \
				eval '! has_row $T/$g.csv $m'
		done
		# the installed levels come from the handler's return (levels_installed below)
		check "$g/no-set-spte-probe" "$probes" eval '! echo "$probes" | grep -q "kvm_mmu_set_spte ("'
		# ... and the fast path's fixes, by KVM's pf_fast (6.1 and 6.12 have it)
		check "$g/no-fast-page-fault-probe" "$probes" \
			eval '! echo "$probes" | grep -q "fast_page_fault (" && ! has_row $T/$g.csv fast_page_fault_calls'
	fi
	agree $g $T/$g.csv $T/$g-load.csv
	if [ $mode = tracepoint ]; then outcomes $g $T/$g.csv; else paths $g $T/$g.csv; path_times $g $T/$g.csv; fi
	levels_installed $g $T/$g.csv
	for n in $RET_PF_ABSENT; do
		n=$(echo "$n" | tr 'A-Z' 'a-z')
		check "$g/no-ret_pf_$n-row" "this kernel has no RET_PF_$n" eval '! has_row $T/$g.csv ret_pf_$n'
	done
	if [ $mode = fentry ]; then
		# --sample 4: every fault counted and classified, 1 in 4 timed
		traced $g/sample $g-sample --probe-mode $mode --sample 4 --
		agree $g/sample $T/$g-sample.csv $T/$g-sample-load.csv
		paths $g/sample $T/$g-sample.csv
		for v in 0 1; do
			c=$(val $T/$g-sample.csv bpf fault_ns_count $v) f=$(val $T/$g-sample.csv bpf faults $v)
			# each fault timed at random with p = 1/4: binomial, within 5 standard deviations
			check "$g/sample/vcpu$v-1-in-4-timed" "fault_ns_count=$c of $f faults" \
				awk -v n="${c:-0}" -v f="${f:-0}" \
				'BEGIN { d = n - f / 4; exit !(n > 0 && d * d <= 25 * f * 3 / 16) }'
		done
	fi
	for v in 0 1; do
		for h in fault_ns slow_path_ns memslot_ns; do
			c=$(val $T/$g.csv bpf ${h}_count $v)
			if [ $mode = tracepoint ]; then
				check "$g/vcpu$v-no-$h" "${h}_count=$c without function probes" test -z "$c"
			else
				check "$g/vcpu$v-$h-nonempty" "${h}_count=$c" gt0 "$c"
			fi
		done
	done
done


# ---- hist-kprobe: kretprobes with room for every vCPU, their misses read
# back, their probe events gone afterwards, even when the tracer is killed
# no_events: no kvmmmu probe event left in kprobe_events.
no_events() { ! grep -q ':kvmmmu_[0-9]*/' /sys/kernel/tracing/kprobe_events; }
if want hist-kprobe; then
	g=hist-kprobe
	check $g/kprobe_missed-0 "kprobe_missed=$(val $T/$g.csv bpf kprobe_missed "")" \
		eq "$(val $T/$g.csv bpf kprobe_missed "")" 0
	check $g/probe-events-removed "$(cat /sys/kernel/tracing/kprobe_events)" no_events
	# one kretprobe instance for two vCPUs: exits are missed, and the report says so
	KVMMMU_KRETPROBE_MAXACTIVE=1 traced $g/maxactive-1 kprobe-maxactive-1 --probe-mode kprobe -- \
		--dirty-log 2
	m=$(val $T/kprobe-maxactive-1.csv bpf kprobe_missed "")
	f=$(val $T/kprobe-maxactive-1.csv bpf faults "")
	k=$(( $(val $T/kprobe-maxactive-1-load.csv kvm_stats pf_taken 0) + \
		$(val $T/kprobe-maxactive-1-load.csv kvm_stats pf_taken 1) ))
	check $g/maxactive-1/misses-reported "kprobe_missed=$m, faults=$f, KVM pf_taken=$k" \
		eval 'gt0 "$m" && [ "$f" -lt "$k" ]'
	check $g/maxactive-1/incomplete-warning "$(grep WARNING $T/kprobe-maxactive-1.out)" \
		grep -q 'WARNING: the figures above are incomplete' $T/kprobe-maxactive-1.out
	# killed: the helper removes the events once the tracer's fds are closed
	kvmmmu-hist --probe-mode kprobe -p kvmmmu-load --wait >$T/kprobe-killed.out 2>&1 &
	tp=$!
	check $g/killed/attach "$(tail -2 $T/kprobe-killed.out)" wait_for $T/kprobe-killed.out '^Tracing'
	sleep 1
	check $g/killed/kretprobe-maxactive "$(cat /sys/kernel/tracing/kprobe_events)" \
		grep -qE "^r[0-9]+:kvmmmu_$tp/ret_kvm_mmu_page_fault_$tp kvm_mmu_page_fault" \
		/sys/kernel/tracing/kprobe_events
	# without --metric memslot or phases a handler is probed on its return alone
	check $g/killed/handler-return-only "$(grep kvm_tdp_page_fault /sys/kernel/tracing/kprobe_events)" \
		eval 'grep -qE "^r[0-9]+:kvmmmu_$tp/ret_kvm_tdp_page_fault_$tp kvm_tdp_page_fault" \
		/sys/kernel/tracing/kprobe_events && ! grep -q "^p:kvmmmu_$tp/kvm_tdp_page_fault_$tp " \
		/sys/kernel/tracing/kprobe_events'
	kill -KILL $tp
	wait $tp 2>/dev/null
	i=0
	while ! no_events && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	check $g/killed/probe-events-removed "$(cat /sys/kernel/tracing/kprobe_events)" no_events
	quiet $g/killed/no-libbpf-log $T/kprobe-killed.out
	emit $T/kprobe-killed.out
fi

# ---- dirty-log: refaults under dirty logging take the lockless fast path
if want dirty-log; then
	g=dirty-log
	traced $g $g --label dirty-log -- --dirty-log 2
	agree $g $T/$g.csv $T/$g-load.csv
	paths $g $T/$g.csv
	# the default: handlers probed on their return alone, both paths timed
	if has_row $T/$g.csv fault_ns_count; then path_times $g $T/$g.csv; fi
	levels_installed $g $T/$g.csv
	# (as agree: short by no more than the runs the kernel skipped, if any)
	sk=$(val $T/$g.csv bpf prog_missed "")
	for v in 0 1; do
		b=$(val $T/$g.csv bpf path_fast $v)
		k=$(val $T/$g-load.csv kvm_stats pf_fast $v)
		if [ "${sk:-0}" = 0 ]; then
			check "$g/vcpu$v-path_fast" "bpf path_fast=$b, KVM pf_fast=$k" eq "$b" "$k"
		else
			check "$g/vcpu$v-path_fast-within-skipped-runs" "bpf path_fast=$b, KVM pf_fast=$k, $sk runs skipped" \
				eval '[ -n "$b" ] && [ -n "$k" ] && [ "$b" -le "$k" ] && [ $((k - b)) -le "$sk" ]'
		fi
		check "$g/vcpu$v-pf_fast-nonzero" "KVM pf_fast=$k" gt0 "$k"
	done
fi

# ---- hist-all: every figure at once (mmu_lock, MMU lifecycle, timeline objects too)
if want hist-all; then
	g=hist-all
	traced $g $g --metric all --label all -- --dirty-log 1
	check $g/probes-lock "$(probes $T/$g.out)" eval 'probes $T/$g.out | grep -q "^Probes:.* lock:"'
	agree $g $T/$g.csv $T/$g-load.csv
	paths $g $T/$g.csv
	phases $g $T/$g.csv function none
	# --metric events (in all) attaches the tracepoint model's events in function mode too
	for v in 0 1; do
		b=$(val $T/$g.csv bpf page_fault_exits $v) f=$(val $T/$g.csv bpf faults $v)
		check $g/vcpu$v-page_fault_exits "page_fault_exits=$b, faults=$f" \
			eval 'gt0 "$b" && [ "$b" -ge "$f" ]'
		# ... kvm_mmu_set_spte among them: every installed level was an SPTE set
		n=$(val $T/$g.csv bpf sptes_set $v) i=0
		for l in 4k 2m 1g; do i=$((i + $(val $T/$g.csv bpf level_installed_$l $v))); done
		check $g/vcpu$v-sptes-set "sptes_set=$n, installed levels $i" eval 'gt0 "$n" && [ "$n" -ge "$i" ]'
	done
	levels_installed $g $T/$g.csv
	# every vCPU loads its MMU root on its first KVM_RUN (function probes on kvm_mmu_load)
	for v in 0 1; do
		b=$(val $T/$g.csv bpf root_loads $v) t=$(val $T/$g.csv bpf root_load_ns $v)
		check $g/vcpu$v-root-loads "root_loads=$b, root_load_ns=$t" eval 'gt0 "$b" && gt0 "$t"'
	done
fi
