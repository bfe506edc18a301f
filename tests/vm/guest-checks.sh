#!/bin/sh
# shellcheck shell=dash disable=SC2016,SC2317
# (busybox ash has "local"; check's conditions are eval'd strings: SC2016;
# helpers called through check look unreachable: SC2317)
# The checks run inside the test guest (busybox sh) on a Debian kernel, with
# KVM as modules and SVM with nested paging: KVM's own statistics
# (KVM_GET_STATS_FD, in kvmmmu-load's CSV) are the oracle, as in
# tests/integration. Results go to the console as "@@KVMMMU@@ PASS|FAIL|SKIP
# GROUP/CHECK[: reason]"; files as FILE-BEGIN/F/FILE-END lines.
# Groups (kvmmmu_checks selects them, comma-separated shell patterns):
#   modprobe (always), check, ret-pf, hist-fentry, hist-kprobe,
#   hist-tracepoint, dirty-log, hist-all, tdp-mmu, non-vmm, tdp-ab, qemu,
#   exporter, selftests, shadow, patches
set -f # kvmmmu_checks holds patterns, not file names
M=@@KVMMMU@@
T=/tmp
. /kvmmmu/kernel.conf

pass() { echo "$M PASS $1"; }
fail() { echo "$M FAIL $1: $2"; }
skip() { echo "$M SKIP $1: $2"; }
info() { echo "$M INFO $*"; }
# check NAME WHAT CMD...: PASS when CMD succeeds, else FAIL with WHAT.
check() {
	local name=$1 what
	what=$(printf %s "$2" | tr '\n' ' ')
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$what"; fi
}
# want GROUP: whether kvmmmu_checks selects it.
want() {
	local p
	if [ -n "$kvmmmu_checks" ]; then
		for p in $(echo "$kvmmmu_checks" | tr , ' '); do
			# shellcheck disable=SC2254
			case $1 in $p) break ;; esac
			p=
		done
		[ -n "$p" ] || return 1
	fi
	started "$1"
	return 0
}
# started GROUP: the first time GROUP is wanted, say when (where the guest's
# time goes, group by group: the suite's budget is mostly the guests')
groups_started=
started() {
	case " $groups_started " in *" $1 "*) return 0 ;; esac
	groups_started="$groups_started $1"
	info "group $1 starts at $(cut -d' ' -f1 /proc/uptime) s of uptime"
}
# emit FILE [NAME]: FILE to the host, which writes it to build/vm/KERNEL/NAME.
emit() {
	local f=${2:-${1##*/}}
	[ -f "$1" ] || return 0
	# a last line without its newline (a stalled L2's console) would run into FILE-END's
	[ -z "$(tail -c1 "$1")" ] || echo >>"$1"
	echo "$M FILE-BEGIN $f"
	sed "s/^/$M F $f /" "$1"
	echo "$M FILE-END $f $(md5sum <"$1" | cut -d' ' -f1)"
}
# val FILE SOURCE METRIC VCPU [LE]: the last value of a CSV row (VCPU empty:
# the VM, not a thread tied to no vCPU, whose comm is "NAME [tid N]").
val() {
	awk -F, -v s="$2" -v m="$3" -v v="$4" -v le="${5:-}" \
		'!/^#/ && $5 == s && $6 == m && $4 == v && $7 "" == le "" && $3 !~ / \[tid [0-9]+\]$/ { x = $8 }
		END { print x }' "$1"
}
# wait_for FILE PATTERN: up to 60 s for a line matching PATTERN in FILE.
wait_for() {
	local i=0
	while [ $i -lt 600 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# has_row FILE METRIC: any bpf row for METRIC.
has_row() { awk -F, -v m="$2" '!/^#/ && $5 == "bpf" && $6 == m { f = 1 } END { exit !f }' "$1"; }
eq() { [ -n "$1" ] && [ "$1" = "$2" ]; }
gt0() { [ -n "$1" ] && [ "$1" -gt 0 ]; }
is0() { [ "$1" = 0 ]; }

K=$(uname -r)
check "boot/release-$K" "expected a $KERNEL_RELEASE_PREFIX* kernel" \
	eval 'case $K in "$KERNEL_RELEASE_PREFIX"*) true ;; *) false ;; esac'

# ---- modprobe: KVM as modules, SVM with nested paging, TDP MMU on
modprobe kvm_amd >$T/modprobe.out 2>&1
check modprobe/kvm_amd "$(cat $T/modprobe.out)" test -c /dev/kvm
check modprobe/npt "npt=$(cat /sys/module/kvm_amd/parameters/npt 2>&1)" \
	grep -qx Y /sys/module/kvm_amd/parameters/npt
check modprobe/tdp_mmu-Y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu 2>&1)" \
	grep -qx Y /sys/module/kvm/parameters/tdp_mmu
if [ ! -c /dev/kvm ]; then
	info "no /dev/kvm: nothing else can run"
	exit 0
fi

# The functions kvmmmu probes: exact names in kallsyms (text symbols), one pass.
FUNCS="kvm_mmu_page_fault kvm_tdp_page_fault paging64_page_fault paging32_page_fault ept_page_fault
nonpaging_page_fault direct_page_fault kvm_vcpu_gfn_to_memslot"
awk '$2 ~ /^[tT]$/ { print $3 }' /proc/kallsyms |
	grep -xE "$(echo $FUNCS fast_page_fault | tr ' ' '|')" >$T/ksyms
# probes FILE: kvmmmu-hist's Probes: block (wrapped at 100 columns) as one line
probes() { awk '/^Probes:/ { p = 1; printf "%s", $0; next } p && /^        / { printf " %s", substr($0, 9); next } { p = 0 } END { print "" }' "$1"; }
in_kallsyms() { grep -qx "$1" $T/ksyms; }
info "in kallsyms: $(tr '\n' ' ' <$T/ksyms)"

# line_of FILE LABEL: kvmmmu-check's report line for an item (label at column 3).
line_of() { grep -E "^  $2 " "$1" | head -1; }

# libbpf's and the verifier's words, and kvmmmu's notes about a program loaded another way
LIBBPF_RE='libbpf: |PROG LOAD LOG|^processed [0-9]+ insns|invalid mem access|^[0-9]+: \([0-9a-f]{2}\) |does not load here'
no_libbpf() { ! grep -qE "$LIBBPF_RE" "$1"; }
# quiet NAME FILE [v]: a run without -v printed none of them (a tp_btf program
# that falls back to raw_tp is no error: 6.12's verifier refused one); "v":
# the run had -v when kvmmmu_verbose is set, then there is nothing to check.
quiet() {
	if [ "${3:-}" = v ] && [ -n "$kvmmmu_verbose" ]; then
		skip "$1" "run with -v (KVMMMU_VM_VERBOSE)"
	else
		check "$1" "$(grep -m3 -E "$LIBBPF_RE" "$2")" no_libbpf "$2"
	fi
}

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
	check check/top-vm-faults-equal-kvm "kvmmmu-top $b, KVM pf_taken $k" test "$b" = "$k"
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
	# 6.1 and 6.12 zap collapsible SPTEs when dirty logging is turned off (6.13 recovers in place)
	check check/carried-huge-page-recovery-no "$(line_of $T/check-auto.out 'huge pages recovered in place')" \
		eval 'line_of $T/check-auto.out "huge pages recovered in place" | grep -qE " no "'
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

# agree GROUP HIST_CSV LOAD_CSV: per vCPU, kvmmmu's counts equal KVM's, and faults were fixed.
agree() {
	local v pair b k
	for v in 0 1; do
		for pair in faults:pf_taken ret_pf_fixed:pf_fixed ret_pf_spurious:pf_spurious; do
			b=$(val "$2" bpf "${pair%%:*}" $v)
			k=$(val "$3" kvm_stats "${pair#*:}" $v)
			check "$1/vcpu$v-${pair%%:*}" "bpf ${pair%%:*}=$b, KVM ${pair#*:}=$k" eq "$b" "$k"
		done
		k=$(val "$3" kvm_stats pf_fixed $v)
		check "$1/vcpu$v-fixed-nonzero" "KVM pf_fixed=$k" gt0 "$k"
	done
}

# paths GROUP HIST_CSV [VCPUS]: with function probes, every fault took exactly one path.
paths() {
	local v f p n sum
	for v in ${3:-0 1}; do
		f=$(val "$2" bpf faults $v) sum=0
		for p in fast tdp_mmu shadow direct; do
			n=$(val "$2" bpf path_$p $v)
			sum=$((sum + ${n:-0}))
		done
		check "$1/vcpu$v-paths-add-up" "faults=$f, sum of path_*=$sum" eq "$f" "$sum"
	done
	outcomes "$1" "$2"
}

# outcomes GROUP HIST_CSV: the path x outcome table adds up, to faults, ret_pf_* and path_*.
outcomes() {
	check "$1/outcome-table-adds-up" "$(awk -F, -f /kvmmmu/outcomes.awk "$2")" \
		awk -F, -f /kvmmmu/outcomes.awk "$2"
}

# phases GROUP HIST_CSV MODE WALK [VCPUS]: --metric phases, per vCPU. Each
# timed fault's phases are parts of its time (fault_ns with function probes,
# walk_to_spte_ns with tracepoints), "other" the rest: their sums add up to
# it exactly, never to more. WALK: "every" (shadow paging walks the guest's
# tables in each fault), "none" (TDP, or a guest without paging). Only
# function probes see the host page (pfn); every slow-path fault resolves one.
# (busybox sh: the phases' values in variables named walk_n, walk_s, ...)
phases() {
	local g=$1 c=$2 mode=$3 walk=$4 v lat n s parts got ph
	lat=fault_ns
	[ "$mode" = tracepoint ] && lat=walk_to_spte_ns
	for v in ${5:-0 1}; do
		n=$(val "$c" bpf ${lat}_count $v) s=$(val "$c" bpf ${lat}_sum $v) parts=0 got=""
		for ph in walk pfn lock map other; do
			eval "${ph}_n=\$(val \"\$c\" bpf phase_${ph}_ns_count \$v)"
			eval "${ph}_s=\$(val \"\$c\" bpf phase_${ph}_ns_sum \$v)"
			eval "parts=\$((parts + \${${ph}_s:-0})); got=\"\$got \$ph=\${${ph}_n:-none}/\${${ph}_s:-none}\""
		done
		got="${lat}=${n:-none}/${s:-none}; phases (count/sum):$got"
		if [ "$mode" = tracepoint ] && [ "$walk" = none ]; then
			# tracepoints time a fault from its guest walk: without one, nothing to split
			check "$g/phases/vcpu$v-untimed-without-a-walk" "$got" eval '[ "${n:-0}" = 0 ] && [ "${other_n:-0}" = 0 ]'
			continue
		fi
		check "$g/phases/vcpu$v-add-up-to-$lat" "$got; parts $parts" \
			eval 'gt0 "$s" && [ "$parts" = "$s" ]'
		check "$g/phases/vcpu$v-other-every-timed-fault" "$got" eq "$other_n" "$n"
		if [ "$walk" = every ]; then
			check "$g/phases/vcpu$v-walk-every-fault" "$got" eval 'eq "$walk_n" "$n" && gt0 "$walk_s"'
		else
			check "$g/phases/vcpu$v-no-walk" "$got" eval '[ "${walk_n:-0}" = 0 ]'
		fi
		if [ "$mode" = tracepoint ]; then
			check "$g/phases/vcpu$v-pfn-not-measured" "$got" test -z "$pfn_n"
		else
			check "$g/phases/vcpu$v-pfn-measured" "$got" eval 'gt0 "$pfn_n" && [ "$pfn_n" -le "$n" ]'
		fi
	done
}

# traced GROUP NAME HIST-ARGS... -- LOAD-ARGS...: kvmmmu-hist over kvmmmu-load,
# files $T/NAME.{csv,out} and $T/NAME-load.csv, emitted to the host.
traced() {
	local g=$1 n=$2 hargs="" rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		hargs="$hargs $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	kvmmmu-hist ${kvmmmu_verbose:+-v} --per-vcpu --csv $T/$n.csv $hargs -- \
		kvmmmu-load --vcpus 2 --mem 8M --csv $T/$n-load.csv "$@" >$T/$n.out 2>&1
	rc=$?
	check "$g/exit-0" "exit $rc: $(tail -3 $T/$n.out | tr '\n' ' ')" test $rc = 0
	case $g in hist-*) quiet "$g/no-libbpf-log" $T/$n.out v ;; esac
	emit $T/$n.out
	emit $T/$n.csv
	emit $T/$n-load.csv
}

# ---- hist-MODE: outcomes per vCPU equal KVM's, in each probe mode
for mode in fentry kprobe tracepoint; do
	g=hist-$mode
	want $g || continue
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
	fi
	agree $g $T/$g.csv $T/$g-load.csv
	if [ $mode = tracepoint ]; then outcomes $g $T/$g.csv; else paths $g $T/$g.csv; fi
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
	for v in 0 1; do
		b=$(val $T/$g.csv bpf path_fast $v)
		k=$(val $T/$g-load.csv kvm_stats pf_fast $v)
		check "$g/vcpu$v-path_fast" "bpf path_fast=$b, KVM pf_fast=$k" eq "$b" "$k"
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
	# every vCPU loads its MMU root on its first KVM_RUN (function probes on kvm_mmu_load)
	for v in 0 1; do
		b=$(val $T/$g.csv bpf root_loads $v) t=$(val $T/$g.csv bpf root_load_ns $v)
		check $g/vcpu$v-root-loads "root_loads=$b, root_load_ns=$t" eval 'gt0 "$b" && gt0 "$t"'
	done
fi

# shared GROUP NAME [collide]: kvmmmu-load --shared (both vCPUs write the same pages at
# once, so faults collide: spurious faults, lost cmpxchgs) traced twice at
# the same time, from the first fault: in tracepoint mode and with fentry.
# Each must equal KVM's counts, per vCPU, and so each other. With "collide",
# KVM must have seen spurious faults (with NPT under TCG it always has; shadow
# paging serialises whole faults under mmu_lock, and collisions are rare).
shared() {
	local g=$1 n=$2 collide=${3:-} tp v s k rc
	kvmmmu-hist ${kvmmmu_verbose:+-v} --probe-mode tracepoint -p kvmmmu-load --wait --per-vcpu \
		--csv $T/$n-tp.csv >$T/$n-tp.out 2>&1 &
	tp=$!
	check "$g/tracepoint-attach" "$(tail -2 $T/$n-tp.out | tr '\n' ' ')" wait_for $T/$n-tp.out '^Tracing'
	kvmmmu-hist ${kvmmmu_verbose:+-v} --probe-mode fentry --per-vcpu --csv $T/$n-fentry.csv -- \
		kvmmmu-load --vcpus 2 --mem 8M --shared --dirty-log 2 --csv $T/$n-load.csv \
		>$T/$n-fentry.out 2>&1
	rc=$?
	check "$g/fentry-exit-0" "exit $rc: $(tail -3 $T/$n-fentry.out | tr '\n' ' ')" test $rc = 0
	kill -INT $tp
	wait $tp
	rc=$?
	check "$g/tracepoint-exit-0" "exit $rc: $(tail -3 $T/$n-tp.out | tr '\n' ' ')" test $rc = 0
	for f in $n-tp.out $n-tp.csv $n-fentry.out $n-fentry.csv $n-load.csv; do emit $T/$f; done
	agree "$g/tracepoint" $T/$n-tp.csv $T/$n-load.csv
	agree "$g/fentry" $T/$n-fentry.csv $T/$n-load.csv
	s=0
	for v in 0 1; do
		k=$(val $T/$n-load.csv kvm_stats pf_spurious $v)
		s=$((s + ${k:-0}))
	done
	# without collisions the run would prove nothing about them
	[ -n "$collide" ] && check "$g/faults-collided" "KVM pf_spurious=$s over both vCPUs" gt0 "$s"
	info "$g: KVM pf_spurious $s; tracepoint-mode retries $(val $T/$n-tp.csv bpf ret_pf_retry ""), fentry-mode retries $(val $T/$n-fentry.csv bpf ret_pf_retry "")"
}

# reload_kvm Y|N: KVM reloaded with tdp_mmu=Y|N. kvmmmu-hist has exited, but
# its trampolines may hold kvm.ko a little longer (freed after RCU grace
# periods): retry rmmod for a few seconds.
reload_kvm() {
	local tries=10
	while [ -d /sys/module/kvm ] && [ $tries -gt 0 ]; do
		[ -d /sys/module/kvm_amd ] && rmmod kvm_amd
		rmmod kvm 2>/dev/null || sleep 1
		tries=$((tries - 1))
	done
	[ ! -d /sys/module/kvm ] && modprobe kvm tdp_mmu="$1" && modprobe kvm_amd &&
		grep -qx "$1" /sys/module/kvm/parameters/tdp_mmu
}

# ---- tdp-mmu: the same workload with the TDP MMU and with the legacy MMU
if want tdp-mmu; then
	g=tdp-mmu
	for y in Y N; do
		if [ $y = N ]; then
			check $g/reload-tdp_mmu-N "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" reload_kvm N
		fi
		traced $g/$y tdp_mmu-$y --label tdp_mmu=$y --metric default,memslot --
		agree $g/$y $T/tdp_mmu-$y.csv $T/tdp_mmu-$y-load.csv
		shared $g/$y/shared shared-$y collide
		# host reclaim while the vCPUs write: MMU-notifier zaps hold mmu_lock
		# for write, and faults that race with them are retried before they
		# request an SPTE (seen from their page-fault exits in tracepoint mode)
		for mode in tracepoint fentry; do
			n=reclaim-$y-$mode
			traced $g/$y/reclaim/$mode $n --probe-mode $mode -- --reclaim 1 --dirty-log 2
			agree $g/$y/reclaim/$mode $T/$n.csv $T/$n-load.csv
			info "$g/$y/reclaim/$mode: faults $(val $T/$n.csv bpf faults ""), retried $(val $T/$n.csv bpf ret_pf_retry ""), KVM pf_taken - pf_fixed - pf_spurious over vCPU 0: $(( $(val $T/$n-load.csv kvm_stats pf_taken 0) - $(val $T/$n-load.csv kvm_stats pf_fixed 0) - $(val $T/$n-load.csv kvm_stats pf_spurious 0) ))"
		done
		if [ $y = Y ]; then
			# MMIO: each read is an exit KVM emulates, reading guest memory
			# through memslot lookups; those are no fault's, and lookups per
			# fault stay what the plain run has (an MMIO page's first fault,
			# which creates its MMIO SPTE, is a fault like any other)
			n=tdp_mmu-Y-mmio
			traced $g/Y/mmio $n --probe-mode fentry --metric default,memslot -- --mmio 200
			agree $g/Y/mmio $T/$n.csv $T/$n-load.csv
			ly=$(val $T/tdp_mmu-Y.csv bpf memslot_lookups "") fy=$(val $T/tdp_mmu-Y.csv bpf faults "")
			lm=$(val $T/$n.csv bpf memslot_lookups "") fm=$(val $T/$n.csv bpf faults "")
			om=$(val $T/$n.csv bpf memslot_lookups_outside_faults "")
			check $g/Y/mmio/lookups-per-fault-unchanged "plain: $ly/$fy, with 400 MMIO reads: $lm/$fm (other lookups $om)" \
				eval 'gt0 "$fy" && gt0 "$fm" && gt0 "$lm" && [ $((lm * fy * 100)) -le $((ly * fm * 105)) ]'
			check $g/Y/mmio/emulation-lookups-are-other "memslot_lookups_outside_faults=$om for 400 emulated reads" \
				eval 'gt0 "$om" && [ "$om" -ge 400 ]'
		fi
		if [ $y = N ]; then
			# a kernel where direct_page_fault cannot be probed (inlined):
			# the legacy MMU's faults are still not the TDP MMU's
			export KVMMMU_UNPROBED=direct_page_fault
			traced $g/N/unprobed-direct tdp_mmu-N-unprobed --probe-mode fentry --
			unset KVMMMU_UNPROBED
			n=$T/tdp_mmu-N-unprobed.csv
			agree $g/N/unprobed-direct $n $T/tdp_mmu-N-unprobed-load.csv
			b=$(val $n bpf path_direct "") t=$(val $n bpf path_tdp_mmu "")
			f=$(val $n bpf faults "") p=$(val $n bpf path_fast "")
			check $g/N/unprobed-direct/path_direct "path_direct=$b, path_tdp_mmu=$t, path_fast=$p of $f faults" \
				eval 'gt0 "$b" && is0 "$t" && [ $((b + ${p:-0})) = "$f" ]'
		fi
		n=$T/reclaim-$y-tracepoint.csv
		r=$(val $n bpf ret_pf_retry "")
		check $g/$y/reclaim/retries-seen "ret_pf_retry=$r in tracepoint mode" gt0 "$r"
	done
	Y=$T/tdp_mmu-Y.csv N=$T/tdp_mmu-N.csv
	b=$(val $Y bpf path_tdp_mmu "") f=$(val $Y bpf faults "") p=$(val $Y bpf path_fast "")
	check $g/Y-path_tdp_mmu "path_tdp_mmu=$b, path_fast=$p of $f faults" \
		eval 'gt0 "$b" && [ $((b + ${p:-0})) = "$f" ]'
	b=$(val $Y bpf tdp_mmu_spte_changes "")
	check $g/Y-tdp_mmu_spte_changes "tdp_mmu_spte_changes=$b" gt0 "$b"
	b=$(val $N bpf path_tdp_mmu "")
	check $g/N-no-path_tdp_mmu "path_tdp_mmu=$b" is0 "$b"
	b=$(val $N bpf tdp_mmu_spte_changes "")
	check $g/N-no-tdp_mmu_spte_changes "tdp_mmu_spte_changes=$b" is0 "$b"
	b=$(val $N bpf path_direct "") f=$(val $N bpf faults "") p=$(val $N bpf path_fast "")
	check $g/N-path_direct "path_direct=$b, path_fast=$p of $f faults" \
		eval 'gt0 "$b" && [ $((b + ${p:-0})) = "$f" ]'
	# memslot lookups per fault: N > Y, compared as ly/fy < ln/fn
	ly=$(val $Y bpf memslot_lookups "") fy=$(val $Y bpf faults "")
	ln=$(val $N bpf memslot_lookups "") fn=$(val $N bpf faults "")
	check $g/N-more-memslot-lookups-per-fault "Y: $ly/$fy, N: $ln/$fn" \
		eval 'gt0 "$fy" && gt0 "$fn" && [ $((${ly:-0} * fn)) -lt $((${ln:-0} * fy)) ]'
	info "tdp_mmu=Y: faults $fy memslot_lookups $ly; tdp_mmu=N: faults $fn memslot_lookups $ln"
	# mmu_lock, on the colliding (--shared) runs: the legacy MMU's faults take
	# it for write, so its vCPUs wait for it, in faults, for write only. TDP
	# MMU faults take it for read, and readers do not wait for readers: they
	# wait only when a writer (a zap, a root load) holds it, which a plain run may
	# never meet; --reclaim gives them one (MMU-notifier zaps take it for write).
	Y=$T/reclaim-Y-fentry.csv N=$T/shared-N-fentry.csv
	for v in 0 1; do
		wy=$(val $Y bpf mmu_lock_write_wait_ns $v +Inf) ry=$(val $Y bpf mmu_lock_read_wait_ns $v +Inf)
		wn=$(val $N bpf mmu_lock_write_wait_ns $v +Inf) rn=$(val $N bpf mmu_lock_read_wait_ns $v +Inf)
		check $g/N-vcpu$v-mmu_lock-fault-waits-are-writes "read '$rn', write '$wn'" \
			eval 'gt0 "$wn" && is0 "$rn"'
		check $g/Y-vcpu$v-mmu_lock-fault-waits-are-reads "read '$ry', write '$wy' (with --reclaim)" \
			eval 'gt0 "$ry" && is0 "$wy"'
		info "vCPU $v mmu_lock waits in faults: tdp_mmu=Y read $ry write $wy; tdp_mmu=N read $rn write $wn"
	done
fi

# ---- non-vmm: every VM shown while another process zaps a VM's SPTEs:
# soft-dirty clear_refs write-protects the VMM's memory, and the MMU notifier
# zaps in the writer's context (the TDP MMU traces each SPTE change there).
# The writer (a shell) is no VM; the VM refaults and is shown.
if want non-vmm; then
	g=non-vmm
	# the TDP MMU traces each SPTE change in the zapping context (the legacy MMU
	# traces none there): after tdp-mmu, which leaves tdp_mmu=N, load it again
	if ! grep -qx Y /sys/module/kvm/parameters/tdp_mmu; then
		check $g/reload-tdp_mmu-Y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" reload_kvm Y
	fi
	n=clear-refs
	kvmmmu-load --vcpus 1 --mem 16M --duration 3600 --csv $T/$n-load.csv >$T/$n-load.out 2>&1 &
	lp=$!
	# its memory is mapped before the tracer starts: what follows is the zaps'
	wait_for $T/$n-load.out '^Populate memory faults'
	kvmmmu-hist -v --per-vcpu -d 10 --csv $T/$n.csv >$T/$n.out 2>&1 &
	hp=$!
	wait_for $T/$n.out '^Tracing'
	sh -c "echo 4 >/proc/$lp/clear_refs; sleep 1; echo 4 >/proc/$lp/clear_refs" &
	cp=$!
	wait $cp
	wait $hp
	kill -INT $lp
	wait $lp 2>/dev/null
	emit $T/$n.out
	emit $T/$n.csv
	emit $T/$n-load.out
	shown=$(awk -F, '!/^#/ && $5 == "bpf" && $2 != 0 { print $2 }' $T/$n.csv | sort -u | tr '\n' ' ')
	check $g/writer-named "the writer, pid $cp, as no VM (-v): $(grep -c 'no VM open' $T/$n.out) notes" \
		grep -q "note: pid $cp .* has no VM open" $T/$n.out
	check $g/only-the-vm-shown "VMs shown: $shown; the VM is $lp, the writer $cp" \
		test "$shown" = "$lp "
	f=$(val $T/$n.csv bpf faults "")
	check $g/vm-refaults "faults after the zaps: $f" gt0 "$f"
fi

# ---- tdp-ab: scripts/tdp-ab.sh, N against Y interleaved (kvm reloaded each run),
# then kvmmmu-diff: what really differs between the MMUs must be flagged, and
# an A/A comparison (N against N) must flag no more than alpha allows
if want tdp-ab; then
	g=tdp-ab
	start=$(cut -d. -f1 /proc/uptime)
	was=$(cat /sys/module/kvm/parameters/tdp_mmu)
	sh /kvmmmu/tdp-ab.sh --runs 8 --bin /kvmmmu --out $T/ab --metric default,memslot,memslot_ns,phases \
		-- --vcpus 2 --mem 4M --dirty-log 1 >$T/ab.out 2>&1
	rc=$?
	info "$g: 16 runs and the diff in $(($(cut -d. -f1 /proc/uptime) - start)) s"
	check $g/exit-0 "exit $rc: $(tail -3 $T/ab.out | tr '\n' ' ')" test $rc = 0
	check $g/tdp_mmu-restored "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu), was $was" \
		grep -qx "$was" /sys/module/kvm/parameters/tdp_mmu
	emit $T/ab/diff.txt ab-diff.txt
	# significant: "... +12.3%  (p=0.000 n=8+8)" on the VM-wide row
	sig() { awk -v m="$1" '/^VM tdp-ab$/ { v = 1; next } /^VM / { v = 0 }
		v && index($0, "  " m " ") == 1 && / \(p=0\.0[0-4][0-9]* n=8\+8\)/ { f = 1 } END { exit !f }' $T/ab/diff.txt; }
	for m in "path_tdp_mmu %" "path_direct %" "memslot lookups per fault"; do
		check "$g/flags-$(echo "$m" | tr ' %' '_p')" "$(grep -F "  $m " $T/ab/diff.txt | head -1)" sig "$m"
	done
	# Where the time goes, compared (issue 24): every row of both sides, in CSV.
	# The guest's accesses and the sizes it is mapped at are the workload's,
	# not the MMU's: those shares must not move by 1% or more. The phases are
	# the MMU's: each side has a pfn, map and other share; neither has a guest
	# walk (the legacy MMU's direct faults walk no guest tables either).
	n="" m=""
	for i in 1 2 3 4 5 6 7 8; do n="$n,$T/ab/N-$i.csv" m="$m,$T/ab/Y-$i.csv"; done
	kvmmmu-diff --all --format csv "N=${n#,}" "Y=${m#,}" >$T/ab-all.csv 2>$T/ab-all.err
	check $g/diff-all-exit-0 "$(head -3 $T/ab-all.err | tr '\n' ' ')" test -s $T/ab-all.csv
	emit $T/ab-all.csv ab-all.csv
	# row METRIC: "N-median Y-median delta% p" of the VM-wide row, or nothing
	row() { awk -F, -v m="$1" '$1 == "tdp-ab" && $2 == "" && $3 == m { print $4, $7, $10, $11 }' $T/ab-all.csv; }
	# steady METRIC: present, and not moved by 1% or more at p < 0.05
	steady() { row "$1" | awk 'NF >= 3 { ok = !($4 != "" && $4 < 0.05 && ($3 >= 1 || $3 <= -1)) } END { exit !ok }'; }
	for m in access_read access_write access_fetch access_not_present access_present \
		level_installed_4k level_installed_2m level_not_huge_host level_not_huge_dirty_log; do
		check "$g/steady-$m" "N, Y, delta%, p: $(row "$m %")" steady "$m %"
	done
	for ph in pfn map other; do
		check "$g/phase-$ph-both-sides" "N, Y: $(row "phase_${ph}_ns % of fault time")" \
			eval 'row "phase_${ph}_ns % of fault time" | awk "\$1 > 0 && \$2 > 0 { f = 1 } END { exit !f }"'
	done
	check $g/no-walk-phase "N, Y: $(row "phase_walk_ns % of fault time")" \
		eval 'row "phase_walk_ns % of fault time" | awk "\$1 > 0 || \$2 > 0 { f = 1 } END { exit f }"'
	info "$g: mmu_lock phase (N, Y, delta%, p): $(row "phase_lock_ns % of fault time"); map phase p50: $(row "phase_map_ns p50")"
	n=""
	# runs 1 2 5 6 against 3 4 7 8: each half has as many runs from early and
	# late in the sequence (the machine's load drifts over 16 runs: another
	# guest beside this one ends its heavy groups) and as many first runs
	# after a module reload. tdp-ab runs N Y, Y N, N Y, ... and reloads KVM
	# only when the side changes, so N-2, N-4, N-6, N-8 each follow a reload
	# and N-3, N-5, N-7 do not: the first run on a freshly loaded module is
	# slower (root loads, fault latency), and odd against even runs, used
	# before, flagged that real difference in CI (9 rows of 74 on 6.12).
	for i in 1 2 3 4 5 6 7 8; do
		info "$g: N-$i: root_load_ns $(val $T/ab/N-$i.csv bpf root_load_ns ""), fault_ns $(val $T/ab/N-$i.csv bpf fault_ns_sum "") ns over $(val $T/ab/N-$i.csv bpf fault_ns_count "") faults"
	done
	for i in 1 2 5 6; do n="$n,$T/ab/N-$i.csv"; done
	m=""
	for i in 3 4 7 8; do m="$m,$T/ab/N-$i.csv"; done
	kvmmmu-diff "N1=${n#,}" "N2=${m#,}" >$T/aa-diff.txt 2>&1
	emit $T/aa-diff.txt aa-diff.txt
	tested=$(sed -n 's/^\([0-9]*\) rows tested.*/\1/p' $T/aa-diff.txt)
	# flagged rows that matter: p < 0.05 and a change of 1% or more. Fault
	# counts are nearly fixed (pages + 1 per vCPU, give or take the odd
	# prefetch): two faults moving between vCPUs in every odd run and none
	# of the even ones is a real, consistent difference the U test rightly
	# calls, 0.1% of the count, and it drags every row derived from those
	# counts with it (seen once in CI, about 3% likely by chance).
	# big_flags FILE: the rows flagged with a change of 1% or more
	big_flags() {
		awk '/ \(p=0\.0[0-4][0-9]* n=4\+4\)/ {
			for (i = 2; i <= NF; i++) if ($i ~ /^\(p=/) { c = $(i - 1); break }
			gsub(/[+%-]/, "", c)
			if (c + 0 >= 1) print }' "$1"
	}
	# Rows of one histogram (its mean, p50, p90, p99, max) are one measurement,
	# not five tests: a drift in fault latency between the halves (TCG, a
	# guest beside) flags them together, 13 rows of 3 histograms once in CI
	# on 6.1. So the budget counts the metrics flagged, not their rows.
	flagged=$(big_flags $T/aa-diff.txt | awk '{ print $1 }' | sort -u | wc -l)
	check $g/aa-faults-not-flagged "$(awk '/^VM tdp-ab$/ { v = 1; next } v && $1 == "faults" { print; exit }' $T/aa-diff.txt)" \
		eval '! big_flags $T/aa-diff.txt | grep -q "^  faults "'
	check $g/aa-flags-at-most-alpha "$flagged metrics (of $tested rows) flagged by 1% or more: $(big_flags $T/aa-diff.txt | head -5 | tr -s ' ')" \
		eval '[ -n "$tested" ] && [ "$flagged" -le $((tested / 20 + 2)) ]'
	info "$g: N vs N flagged $(grep -c ' (p=0\.0[0-4][0-9]* n=4+4)' $T/aa-diff.txt) of $tested rows, $flagged metrics by 1% or more"
fi

# ---- qemu: a real QEMU guest, traced as the README shows (tests/vm/guest-qemu.sh)
. /kvmmmu/guest-qemu.sh

# ---- exporter: kvmmmu-exporter with function probes (tests/vm/guest-exporter.sh)
. /kvmmmu/guest-exporter.sh

# ---- selftests: the kernel's own KVM selftests as workloads, with NPT
# (before shadow, which leaves kvm_amd at npt=0) (tests/vm/guest-selftests.sh)
. /kvmmmu/guest-selftests.sh

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

# ---- patches: KVM built from kernel-patches/ (tests/vm/guest-patches.sh)
. /kvmmmu/guest-patches.sh
# every group has run (init passes the exit status on: 42 means this line ran)
exit 42
