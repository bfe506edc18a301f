# shellcheck shell=bash
# Helpers sourced by the integration tests. Each check reports one line,
# PASS/FAIL/SKIP NAME[: reason], to stdout and to $RESULTS for the summary.
: "${OUTPUT:=build}"
: "${RESULTS:=/dev/null}"
# shellcheck disable=SC2034 # for the scripts that source this
BUILD=$(cd "$OUTPUT" && pwd)
# (under tests/run.sh's directory for this run, which checks what is left there)
TMP=$(mktemp -d "${KVMMMU_TEST_TMP:-/tmp}/kvmmmu-test.XXXXXX")
# shellcheck disable=SC2034 # for the scripts that source this
TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")/tools" && pwd)
trap 'rm -rf "$TMP"' EXIT

report() { echo "$*"; echo "$*" >>"$RESULTS"; }
pass() { report "PASS $1"; }
fail() { report "FAIL $1: $2"; }
skip() { report "SKIP $1: $2"; }

# check NAME COND-DESCRIPTION CMD...: PASS when CMD succeeds.
check() {
	local name=$1 what=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$what"; fi
}

# need_kvm: returns 1 (and the caller skips) when KVM cannot be used here.
# probes FILE: kvmmmu-hist's Probes: block (wrapped at 100 columns) as one line
probes() { awk '/^Probes:/ { p = 1; printf "%s", $0; next } p && /^        / { printf " %s", substr($0, 9); next } { p = 0 } END { print "" }' "$1"; }
# one_line_error CHECK WANT-EXIT PROGRAM ARGS...: PROGRAM refuses ARGS the
# way every kvmmmu command refuses bad input: exit WANT-EXIT, one line on
# stderr, "name: why". Its stderr stays in $TMP/bad.err for what it says.
one_line_error() {
	local name=$1 want=$2 prog=$3 rc lines
	shift 3
	timeout 20 "$prog" "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	lines=$(wc -l <"$TMP/bad.err")
	if [ $rc = "$want" ] && [ "$lines" = 1 ] && grep -q "^${prog##*/}: " "$TMP/bad.err"; then
		pass "$name"
	else
		fail "$name" "exit $rc (want $want), $lines lines: $(head -c 300 "$TMP/bad.err")"
	fi
}
# held_map_id PID NAME: the id of the BPF map NAME that process PID holds
# open (by id, not by name: another kvmmmu on the host has maps of that name)
held_map_id() {
	local id
	for id in $(awk '$1 == "map_id:" { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un); do
		if bpftool -j map show id "$id" 2>/dev/null | grep -q "\"name\":\"$2\""; then
			echo "$id"
			return 0
		fi
	done
	return 1
}
# proc_state PID: the process state letter (R, S, T, Z, ...), or "gone"
proc_state() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || { echo gone; return; }
	line=${line#*) }
	echo "${line%% *}"
}
need_kvm() {
	if [ "$(id -u)" != 0 ]; then echo "not root"; return 1; fi
	if [ ! -c /dev/kvm ]; then echo "no /dev/kvm"; return 1; fi
	return 0
}

# csv_value FILE SOURCE METRIC VCPU: the value column of the matching row
# (VCPU empty for VM-wide rows). Fields here never need quoting.
csv_value() {
	awk -F, -v s="$2" -v m="$3" -v v="$4" \
		'!/^#/ && $5 == s && $6 == m && $4 == v && $7 == "" { print $8; exit }' "$1"
}

# wait_tracing FILE: waits for a tracer's "Tracing ..." line, printed once its
# probes are attached: 2 min at most (a TCG guest takes 8-20 s to attach).
wait_tracing() { wait_grep "$1" '^Tracing'; }

# wait_for_row CSV METRIC PID: until a tracer's CSV (--csv, a row set each
# interval) has a non-zero METRIC for PID; 2 min at most, by the clock.
wait_for_row() {
	local end=$((SECONDS + 120))
	until awk -F, -v m="$2" -v p="$3" '!/^#/ && $2 == p && $6 == m && $8 > 0 { f = 1 } END { exit !f }' \
		"$1" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# bpf_value CSV METRIC PID V LE: kvmmmu-hist's CSV's last BPF value of METRIC
# for PID, vCPU V (empty V: the VM, not a thread without a vCPU, whose comm
# says "[tid N]"), bucket LE
bpf_value() {
	awk -F, -v m="$2" -v v="$4" -v p="$3" -v le="$5" \
		'!/^#/ && $5 == "bpf" && $6 == m && $4 == v && $2 == p && $7 == le && $3 !~ /\[tid / { x = $8 } END { print x }' "$1"
}

# agree NAME HIST_CSV LOAD_CSV PID VCPUS: kvmmmu-hist's figures for PID equal KVM's
# (kvmmmu-load's CSV) for every vCPU
agree() {
	local name=$1 h=$2 l=$3 pid=$4 vcpus=$5 v bpf kvm pair
	for v in $(seq 0 $((vcpus - 1))); do
		for pair in faults:pf_taken ret_pf_fixed:pf_fixed ret_pf_spurious:pf_spurious; do
			bpf=$(awk -F, -v m="${pair%%:*}" -v v=$v -v p=$pid \
				'!/^#/ && $5 == "bpf" && $6 == m && $4 == v && $2 == p && $7 == "" { x = $8 } END { print x }' "$h")
			kvm=$(csv_value "$l" kvm_stats "${pair#*:}" $v)
			check "${AGREE_PREFIX:-hist}/$name-vcpu$v-${pair%%:*}" "bpf ${pair%%:*}=$bpf, KVM ${pair#*:}=$kvm" \
				test -n "$bpf" -a "$bpf" = "$kvm"
		done
	done
}

# leaked_progs: kvmmmu's BPF programs (by their names) that no process holds
# any more, neither as a program fd nor through a link; other tracers running
# at the same time hold theirs. The kernel frees programs a moment after the
# last fd closes, so this waits up to 3 s for the count to reach 0.
leaked_progs() {
	local held n
	for _ in $(seq 30); do
		held=" $(cat /proc/[0-9]*/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { printf "%s ", $2 }')"
		n=$(bpftool prog show 2>/dev/null | awk -v held="$held" '
			/^[0-9]+:/ {
				id = $1; sub(":", "", id)
				for (i = 1; i < NF; i++)
					if ($i == "name") name = $(i + 1)
				if (name ~ /_(btf|raw|fentry|fexit|kprobe|kretprobe)$|^sys_(enter|exit)_ioctl$/ &&
				    index(held, " " id " ") == 0)
					n++
			}
			END { print n + 0 }')
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	echo "$n"
}

# What the host under test makes of a fault, so that each test states what it
# expects of this host rather than of the one it was written on.
# host_mmu: shadow (no nested paging, or npt/ept off: this CI kind's KVM),
# tdp_mmu, or direct (nested paging on the legacy MMU, tdp_mmu=N).
host_mmu() {
	local tdp=N p
	for p in /sys/module/kvm_amd/parameters/npt /sys/module/kvm_intel/parameters/ept; do
		[ -r $p ] && tdp=$(cat $p)
	done
	case $tdp in
	Y | 1) [ "$(cat /sys/module/kvm/parameters/tdp_mmu 2>/dev/null)" = Y ] && echo tdp_mmu || echo direct ;;
	*) echo shadow ;;
	esac
}
# func_probes: whether kvmmmu's default mode has function probes (fentry or
# kprobes: a kernel with a kprobe PMU lets both attach here) or tracepoints
# only (no kprobe PMU, or KVMMMU_PROBE_MODE=tracepoint: tests/run.sh's npt0
# guest pass runs as this host kind does).
func_probes() { [ "${KVMMMU_PROBE_MODE:-auto}" != tracepoint ] && [ -e /sys/bus/event_source/devices/kprobe ]; }
# LAT, LAT_PER: the whole-fault latency figure of that mode, and the counter
# it has one sample of: fault_ns times every fault (function probes);
# walk_to_spte_ns, from tracepoints, each fault whose SPTE was set.
# shellcheck disable=SC2034 # for the scripts that source this
if func_probes; then
	LAT=fault_ns LAT_PER=faults
else
	LAT=walk_to_spte_ns LAT_PER=ret_pf_fixed
fi
# in_tcg_guest: in scripts/kvm-guest.sh's guest, whose vCPUs are one host
# thread (QEMU's TCG): a VM's two vCPUs there take turns, and their faults
# collide only by chance.
in_tcg_guest() { [ -e /run/kvm-guest/cmd ]; }

# wait_grep FILE ERE [SECS]: until FILE has a line matching ERE; SECS (120)
# at most, by the clock (under TCG a grep alone can take 50 ms). For a
# tool's output: what it prints once it is up or done.
wait_grep() {
	local end=$((SECONDS + ${3:-120}))
	until grep -qE -- "$2" "$1" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
# wait_vm PID: until PID has a vCPU fd open (its VM is made and runs); 2 min
# at most (a TCG guest takes seconds where a host takes milliseconds)
wait_vm() {
	local end=$((SECONDS + 120)) fd
	while [ $SECONDS -lt $end ]; do
		for fd in /proc/"$1"/fd/*; do
			case $(readlink "$fd" 2>/dev/null) in anon_inode:kvm-vcpu:*) return 0 ;; esac
		done
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
