# shellcheck shell=bash
# Helpers sourced by the integration tests. Each check reports one line,
# PASS/FAIL/SKIP NAME[: reason], to stdout and to $RESULTS for the summary.
: "${OUTPUT:=build}"
: "${RESULTS:=/dev/null}"
# shellcheck disable=SC2034 # for the scripts that source this
BUILD=$(cd "$OUTPUT" && pwd)
TMP=$(mktemp -d /tmp/kvmmmu-test.XXXXXX)
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

# wait_tracing FILE: waits (10 s at most) for a tracer's "Tracing ..." line,
# printed once its probes are attached.
wait_tracing() {
	local _
	for _ in $(seq 100); do
		grep -q '^Tracing' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
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
