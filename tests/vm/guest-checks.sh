#!/bin/sh
# shellcheck shell=dash disable=SC2016,SC2317
# (busybox ash has "local"; check's conditions are eval'd strings: SC2016;
# helpers called through check look unreachable: SC2317)
# The checks run inside the test guest (busybox sh) on a Debian kernel, with
# KVM as modules and SVM with nested paging: KVM's own statistics
# (KVM_GET_STATS_FD, in kvmmmu-load's CSV) are the oracle, as in
# tests/integration. Results go to the console as "@@KVMMMU@@ PASS|FAIL|SKIP
# GROUP/CHECK[: reason]"; files as FILE-BEGIN/F/FILE-END lines.
# Groups (kvmmmu_checks selects them, comma-separated shell patterns), in
# this order, each in the file sourced below with the helpers here:
#   modprobe (always, here); check, ret-pf, hist-fsession, hist-fentry, hist-kprobe,
#   hist-tracepoint, dirty-log, hist-all (guest-probes.sh); tdp-mmu,
#   non-vmm, tdp-ab, gmem (guest-mmu.sh); qemu; exporter; selftests; shadow;
#   patches (guest-NAME.sh)
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
# within A B N: A and B are numbers at most N apart
within() { [ -n "$1" ] && [ -n "$2" ] && [ "$(($1 > $2 ? $1 - $2 : $2 - $1))" -le "$3" ]; }
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

# ---- helpers the groups share
# agree GROUP HIST_CSV LOAD_CSV: per vCPU, kvmmmu's counts equal KVM's, and faults were fixed.
# Unless the kernel skipped runs of kvmmmu's programs (prog_missed: from 7.x
# tracepoints and trampolines run BPF preemptibly, and under PREEMPT_LAZY a
# program preempted on a CPU makes that CPU skip it for the next thread):
# then each count is off by no more than the runs skipped over both vCPUs,
# and kvmmmu's summary says runs were skipped.
agree() {
	local v pair b k m d
	m=$(val "$2" bpf prog_missed "")
	for pair in faults:pf_taken ret_pf_fixed:pf_fixed ret_pf_spurious:pf_spurious; do
		d=0
		for v in 0 1; do
			b=$(val "$2" bpf "${pair%%:*}" $v)
			k=$(val "$3" kvm_stats "${pair#*:}" $v)
			if [ "${m:-0}" = 0 ]; then
				check "$1/vcpu$v-${pair%%:*}" "bpf ${pair%%:*}=$b, KVM ${pair#*:}=$k" eq "$b" "$k"
			elif [ -n "$b" ] && [ -n "$k" ]; then
				d=$((d + (b > k ? b - k : k - b)))
				info "$1/vcpu$v-${pair%%:*}: bpf $b, KVM $k, with $m program runs skipped by the kernel"
			else
				fail "$1/vcpu$v-${pair%%:*}" "bpf ${pair%%:*}=$b, KVM ${pair#*:}=$k"
			fi
		done
		[ "${m:-0}" = 0 ] ||
			check "$1/${pair%%:*}-off-by-skipped-runs-only" "|bpf - KVM| over both vCPUs $d, runs skipped $m" \
				test "$d" -le "$m"
	done
	for v in 0 1; do
		k=$(val "$3" kvm_stats pf_fixed $v)
		check "$1/vcpu$v-fixed-nonzero" "KVM pf_fixed=$k" gt0 "$k"
	done
	# (the summary's health lines: traced() and shared() keep kvmmmu-hist's output next to its CSV)
	[ "${m:-0}" = 0 ] || check "$1/says-runs-skipped" "$m runs skipped, not in ${2%.csv}.out" \
		grep -q "BPF program runs skipped by the kernel" "${2%.csv}.out"
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

# levels_installed GROUP HIST_CSV: each fixed fault's SPTE level is counted
# once, the fast path's aside (it sets no SPTE of its own), a spurious or
# retried fault's never: installed levels + fast-path fixes = ret_pf_fixed
# (for kvmmmu-load, whose faults KVM never emulates). Whichever model counts
# them: the tracepoints' guess, the handler's return, the done event's.
levels_installed() {
	local v l i n ff r
	for v in 0 1; do
		i=0
		for l in 4k 2m 1g; do
			n=$(val "$2" bpf level_installed_$l $v)
			i=$((i + ${n:-0}))
		done
		ff=$(val "$2" bpf outcome_fast_fixed $v) r=$(val "$2" bpf ret_pf_fixed $v)
		check "$1/vcpu$v-levels-installed" "installed levels $i, fast-path fixes ${ff:-0}, ret_pf_fixed $r" \
			eq "$((i + ${ff:-0}))" "$r"
	done
}

# path_times GROUP HIST_CSV: with function probes and every fault timed, each
# fault handled is timed once on its path, from its start: fast_path_ns (to
# the fast path's fix) or slow_path_ns (to its handler's return), and their
# counts add up to fault_ns's and to faults, whether the handlers' entries are
# probed (--metric memslot, phases) or not (the default).
# A fault is counted at its handler's exit and timed at kvm_mmu_page_fault's,
# two programs: where the kernel skipped runs (prog_missed, 7.x), the counts
# may differ by as many, no more, and the check's name says so.
path_times() {
	local v f t fa sl m
	m=$(val "$2" bpf prog_missed "")
	for v in 0 1; do
		f=$(val "$2" bpf faults $v) t=$(val "$2" bpf fault_ns_count $v)
		fa=$(val "$2" bpf fast_path_ns_count $v) sl=$(val "$2" bpf slow_path_ns_count $v)
		if [ "${m:-0}" = 0 ]; then
			check "$1/vcpu$v-path-times" "faults $f, fault_ns $t, fast_path_ns ${fa:-0}, slow_path_ns $sl" \
				eval 'gt0 "$sl" && [ "$t" = "$f" ] && [ "$((${fa:-0} + sl))" = "$f" ]'
		else
			check "$1/vcpu$v-path-times-within-skipped-runs" \
				"faults $f, fault_ns $t, fast_path_ns ${fa:-0}, slow_path_ns $sl, runs skipped $m" \
				eval 'gt0 "$sl" && within "$t" "$f" "$m" && within "$((${fa:-0} + sl))" "$f" "$m"'
		fi
	done
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
	local g=$1 c=$2 mode=$3 walk=$4 v lat n s parts got ph m
	# the walk is timed by its own function's programs: where the kernel skipped
	# runs (prog_missed, 7.x), its count may fall short of the faults' by as many
	m=$(val "$c" bpf prog_missed "")
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
		if [ "$walk" = every ] && [ "${m:-0}" = 0 ]; then
			check "$g/phases/vcpu$v-walk-every-fault" "$got" eval 'eq "$walk_n" "$n" && gt0 "$walk_s"'
		elif [ "$walk" = every ]; then
			check "$g/phases/vcpu$v-walk-every-fault-within-skipped-runs" "$got; runs skipped $m" \
				eval 'within "$walk_n" "$n" "$m" && gt0 "$walk_s"'
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

# ---- check, ret-pf, hist-MODE, hist-kprobe, dirty-log, hist-all (tests/vm/guest-probes.sh)
. /kvmmmu/guest-probes.sh

# ---- tdp-mmu, non-vmm, tdp-ab, gmem (tests/vm/guest-mmu.sh)
. /kvmmmu/guest-mmu.sh

# ---- qemu: a real QEMU guest, traced as the README shows (tests/vm/guest-qemu.sh)
. /kvmmmu/guest-qemu.sh

# ---- exporter: kvmmmu-exporter with function probes (tests/vm/guest-exporter.sh)
. /kvmmmu/guest-exporter.sh

# ---- selftests: the kernel's own KVM selftests as workloads, with NPT
# (before shadow, which leaves kvm_amd at npt=0) (tests/vm/guest-selftests.sh)
. /kvmmmu/guest-selftests.sh

# ---- shadow: shadow paging proper (tests/vm/guest-shadow.sh)
. /kvmmmu/guest-shadow.sh

# ---- patches: KVM built from kernel-patches/ (tests/vm/guest-patches.sh)
. /kvmmmu/guest-patches.sh
# every group has run (init passes the exit status on: 42 means this line ran)
exit 42
