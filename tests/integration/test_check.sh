#!/usr/bin/env bash
# kvmmmu-check on this machine: each expectation is derived from the machine
# itself (bpftool, kallsyms, sysfs, tracefs), not hard-coded.
# shellcheck source=tests/lib.sh disable=SC2317
source "$(dirname "$0")/../lib.sh"

CHECK=$BUILD/kvmmmu-check
OUT=$TMP/check.out

# has_line REGEX: the report has a line matching the extended REGEX.
has_line() { grep -Eq -- "$1" "$OUT"; }
# line_of LABEL: the report line for an item (label at column 3).
line_of() { grep -E -- "^  $1 " "$OUT" | head -1; }

# One line on stdout+stderr and exit status RC: how usage errors must look.
one_line_exit() {
	local rc=$1 out got
	shift
	out=$("$@" 2>&1)
	got=$?
	[ "$got" -eq "$rc" ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [ -n "$out" ]
}

check "check/usage: --probe-mode bogus exits 2 with one line" "wrong status or output" \
	one_line_exit 2 "$CHECK" --probe-mode bogus
check "check/usage: unknown option exits 2 with one line" "wrong status or output" \
	one_line_exit 2 "$CHECK" --no-such-option
check "check/usage: stray argument exits 2 with one line" "wrong status or output" \
	one_line_exit 2 "$CHECK" extra
out=$("$CHECK" extra 2>&1)
check "check/usage: stray argument named as such, not as a --validate duration" "$out" \
	eval 'echo "$out" | grep -q "^kvmmmu-check: unexpected argument '"'"'extra'"'"'" &&
		! echo "$out" | grep -q -- --validate'
out=$("$CHECK" 5 2>&1)
check "check/usage: a duration alone says it goes with --validate" "$out" \
	eval 'echo "$out" | grep -q "^kvmmmu-check: unexpected argument '"'"'5'"'"': a duration goes with --validate"'
# a --validate VM that cannot be one is a usage error (2), not "they disagree" (1)
for spec in '' 0 '[' -1 4294967297; do
	one_line_error "check/usage: --validate '$spec' exits 2" 2 "$CHECK" --validate "$spec"
done
check "check/usage: --validate 4294967297 says what a PID is" "$(cat "$TMP/bad.err")" \
	grep -q "^kvmmmu-check: --validate '4294967297': not a valid PID (a PID is from 1 to 2147483647)$" "$TMP/bad.err"
# getopt's messages start with the command's name, not the path it was run by
one_line_error "check/usage: unknown option named by the command's name" 2 "$CHECK" -x
# what --help prints is checked too: into a full disk it is an error
"$CHECK" --help >/dev/full 2>"$TMP/full.err"
rc=$?
check "check/help-to-full-disk" "exit $rc: $(cat "$TMP/full.err")" \
	eval '[ $rc = 1 ] && [ "$(cat "$TMP/full.err")" = "kvmmmu-check: stdout: No space left on device" ]'

# the tracepoints kvmmmu-hist's default parts attach are named as theirs, not "not used"
out=$("$CHECK" 2>&1)
check "check/mmu-part-tracepoints-not-unused" "$(echo "$out" | grep -E 'kvm_mmu_get_page|contention_begin')" \
	eval 'echo "$out" | grep -qE "kvm_mmu_get_page .*by the mmu part" &&
		echo "$out" | grep -qE "contention_begin .*by the mmu_lock part"'

# Not root: one line, exit 1. The binary is copied where the unprivileged user can run it.
if [ "$(id -u)" != 0 ]; then
	skip "check/not-root" "the test itself is not root"
else
	chmod 755 "$TMP"
	cp "$CHECK" "$TMP/kvmmmu-check"
	chmod 755 "$TMP/kvmmmu-check"
	if command -v setpriv >/dev/null; then
		drop=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	else
		drop=(su nobody -s /bin/sh -c)
	fi
	check "check/not-root: exits 1 with one line" "wrong status or output" \
		one_line_exit 1 "${drop[@]}" "$TMP/kvmmmu-check"
	# the commands that load BPF: the kernel's no, in one line (not libbpf's
	# RLIMIT_MEMLOCK hint, not a warning before it)
	for cmd in kvmmmu-hist:-d1 kvmmmu-top:-b kvmmmu-exporter:--web.listen-address=127.0.0.1:0; do
		cp "$BUILD/${cmd%%:*}" "$TMP/${cmd%%:*}"
		chmod 755 "$TMP/${cmd%%:*}"
		out=$(timeout 20 "${drop[@]}" "$TMP/${cmd%%:*}" "${cmd#*:}" 2>&1)
		rc=$?
		check "check/not-root-${cmd%%:*}: exits 1 with one line" "exit $rc: $out" \
			eval '[ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
				grep -q "^${cmd%%:*}: cannot load the BPF programs: Operation not permitted (run as root, or with CAP_BPF and CAP_PERFMON)$" <<<"$out"'
	done
fi

if [ "$(id -u)" != 0 ]; then
	skip "check/report" "not root"
	exit 0
fi

# the report into a full disk: lost, so an error in one line, not exit 0
"$CHECK" >/dev/full 2>"$TMP/full.err"
rc=$?
check "check/report-to-full-disk" "exit $rc: $(head -c 300 "$TMP/full.err")" \
	eval '[ $rc = 1 ] && [ "$(cat "$TMP/full.err")" = "kvmmmu-check: stdout: No space left on device" ]'
# into a pipe whose reader leaves, as before: SIGPIPE, no message
"$CHECK" 2>"$TMP/pipe.err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
check "check/report-into-head" "exit $rc: $(head -c 300 "$TMP/pipe.err")" \
	eval '{ [ $rc = 141 ] || [ $rc = 0 ]; } && [ ! -s "$TMP/pipe.err" ]'

"$CHECK" >"$OUT" 2>"$TMP/check.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "check/exit 0 on this machine"
else
	fail "check/exit 0 on this machine" "exit $rc: $(tail -1 "$OUT") $(head -1 "$TMP/check.err")"
fi
check "check/verdict line" "no 'kvmmmu can trace this host' line" \
	has_line '^kvmmmu can trace this host: '

# KVM built in or a module, as sysfs says.
if [ ! -d /sys/module/kvm ]; then
	want="no"
elif [ -e /sys/module/kvm/initstate ]; then
	want="module"
else
	want="built in"
fi
check "check/KVM reported as '$want'" "got: $(line_of KVM)" has_line "^  KVM +$want( |$)"

# RET_PF_*: from BTF, exactly the enumerators bpftool shows.
if ! command -v bpftool >/dev/null; then
	skip "check/RET_PF from BTF" "no bpftool"
else
	if [ -e /sys/kernel/btf/kvm ] && [ -e /sys/module/kvm/initstate ]; then
		# -B: Debian 12's bpftool 7.1 has no "base" keyword
		btf_dump=(bpftool -B /sys/kernel/btf/vmlinux btf dump file /sys/kernel/btf/kvm)
	else
		btf_dump=(bpftool btf dump file /sys/kernel/btf/vmlinux)
	fi
	"${btf_dump[@]}" | sed -n "s/^[[:space:]]*'\(RET_PF_[A-Z_]*\)' val=\([0-9]*\)$/\1 \2/p" |
		sort -u >"$TMP/ret_pf.btf"
	if [ ! -s "$TMP/ret_pf.btf" ]; then
		skip "check/RET_PF from BTF" "no RET_PF_ enumerators in BTF here"
	else
		check "check/RET_PF source is BTF" "got: $(line_of 'decoded from')" \
			has_line '^  decoded from +BTF( |$)'
		sed -n 's/^  \(RET_PF_[A-Z_]*\) *\([0-9]*\)$/\1 \2/p' "$OUT" | sort -u >"$TMP/ret_pf.got"
		check "check/RET_PF values equal BTF's ($(tr '\n' ' ' <"$TMP/ret_pf.btf"))" \
			"got: $(tr '\n' ' ' <"$TMP/ret_pf.got")" cmp -s "$TMP/ret_pf.btf" "$TMP/ret_pf.got"
		# Sorted by value, as printed.
		sed -n 's/^  RET_PF_[A-Z_]* *\([0-9]*\)$/\1/p' "$OUT" >"$TMP/ret_pf.order"
		check "check/RET_PF table sorted by value" "not sorted" sort -n -c "$TMP/ret_pf.order"
	fi
fi

# The enum-export fix, as the tracefs format shows it.
fmt=""
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -r "$d/events/kvmmmu/fast_page_fault/format" ] && fmt="$d/events/kvmmmu/fast_page_fault/format" && break
done
if [ -z "$fmt" ]; then
	skip "check/enum-export fix" "no readable kvmmmu:fast_page_fault format"
elif grep -q 'REC->ret == [0-9]' "$fmt"; then
	check "check/enum-export fix reported present" "got: $(line_of 'fast_page_fault format: enum')" \
		has_line '^  fast_page_fault format: enum-export fix +yes '
	check "check/format agrees with BTF" "got: $(line_of 'fast_page_fault format agrees')" \
		has_line '^  fast_page_fault format agrees with BTF +yes '
elif grep -q 'RET_PF_SPURIOUS' "$fmt"; then
	check "check/enum-export fix reported missing" "got: $(line_of 'fast_page_fault format: enum')" \
		has_line '^  fast_page_fault format: enum-export fix +no '
else
	skip "check/enum-export fix" "format not understood by the test"
fi

# fast_page_fault: not attachable unless kallsyms has the exact symbol.
if grep -Eq '^[0-9a-f]+ [tT] fast_page_fault(\s|$)' /proc/kallsyms; then
	check "check/fast_page_fault (exact symbol): tracepoint used instead" \
		"got: $(line_of fast_page_fault)" has_line '^  fast_page_fault +not used .*tracepoint .*instead'
else
	check "check/fast_page_fault reported not attachable" "got: $(line_of fast_page_fault)" \
		has_line '^  fast_page_fault +unavailable +not attachable: .*kvmmmu:fast_page_fault tracepoint .*instead'
fi

# kvm_mmu_page_fault: what kallsyms and the kprobe PMU allow.
l=$(line_of kvm_mmu_page_fault)
if ! grep -Eq '^[0-9a-f]+ [tT] kvm_mmu_page_fault(\s|$)' /proc/kallsyms; then
	check "check/kvm_mmu_page_fault unavailable (not in kallsyms)" "got: $l" \
		has_line '^  kvm_mmu_page_fault +unavailable +kallsyms: (absent|only a compiler clone)'
elif [ "${KVMMMU_PROBE_MODE:-}" = tracepoint ]; then
	check "check/kvm_mmu_page_fault not tried (KVMMMU_PROBE_MODE=tracepoint)" "got: $l" \
		has_line '^  kvm_mmu_page_fault +unavailable .*not tried \(KVMMMU_PROBE_MODE=tracepoint\)'
elif [ ! -e /sys/bus/event_source/devices/kprobe ]; then
	# No kprobe PMU: fentry, or nothing with both reasons.
	case "$l" in
	*" fentry "*) pass "check/kvm_mmu_page_fault via fentry (no kprobe PMU)" ;;
	*unavailable*fentry:*kprobe:*)
		pass "check/kvm_mmu_page_fault unavailable: fentry and kprobe reasons" ;;
	*) fail "check/kvm_mmu_page_fault (no kprobe PMU)" "got: $l" ;;
	esac
	if [[ $l == *unavailable* ]]; then
		check "check/tracepoint-only verdict" "got: $(tail -1 "$OUT")" \
			has_line '^kvmmmu can trace this host: tracepoint-only mode'
	fi
else
	check "check/kvm_mmu_page_fault via fentry or kprobe" "got: $l" \
		has_line '^  kvm_mmu_page_fault +(fentry|kprobe) '
fi

# /dev/kvm and a real KVM_GET_STATS_FD on a vCPU.
if [ ! -e /dev/kvm ]; then
	# Some hosts of the CI kind have none: the report must say so, not guess.
	check "check/no /dev/kvm reported" "got: $(line_of '/dev/kvm')" \
		has_line '^  /dev/kvm +no +open: No such file or directory'
elif ! why=$(need_kvm); then
	skip "check/KVM_GET_STATS_FD" "$why"
else
	check "check/KVM_GET_STATS_FD on a vCPU works" "got: $(line_of 'KVM_GET_STATS_FD on a vCPU')" \
		has_line '^  KVM_GET_STATS_FD on a vCPU +yes +[0-9]+ descriptors'
	for s in pf_taken pf_fixed pf_spurious pf_fast; do
		check "check/vCPU statistic $s" "missing" has_line "^    vCPU statistic $s +yes$"
	done
fi

# The collector attaches the core tracepoints.
for tp in kvm_mmu_spte_requested kvm_mmu_set_spte; do
	if [ -n "$fmt" ] && [ -d "${fmt%/fast_page_fault/format}/$tp" ]; then
		check "check/kvmmmu:$tp attached" "got: $(line_of "kvmmmu:$tp")" \
			has_line "^  kvmmmu:$tp +yes .*kvmmmu: (tp_btf|raw_tp)$"
	fi
done

# mmu_lock offset, as bpftool shows struct kvm (in vmlinux BTF even where KVM is a module:
# a module's split BTF holds only the types vmlinux lacks).
if command -v bpftool >/dev/null && [ -n "${btf_dump[*]:-}" ]; then
	bits=$({ "${btf_dump[@]}" format raw
		[ "${btf_dump[-1]}" = /sys/kernel/btf/vmlinux ] ||
			bpftool btf dump file /sys/kernel/btf/vmlinux format raw; } |
		awk "/STRUCT 'kvm' size=/ { s = 1; next } s && /^\[/ { exit }
		     s && /'mmu_lock'/ { sub(/.*bits_offset=/, \"\"); print; exit }")
	if [ -n "$bits" ]; then
		check "check/struct kvm mmu_lock at offset $((bits / 8))" \
			"got: $(line_of 'struct kvm: mmu_lock')" \
			has_line "^  struct kvm: mmu_lock \(BTF\) +yes .* at offset $((bits / 8)):"
	fi
fi

# The carried kernel changes, as kallsyms and tracefs show them (not the version).
"$CHECK" >"$OUT" 2>&1
if grep -q ' kvm_tdp_mmu_recover_huge_pages$' /proc/kallsyms; then want=yes; else want=no; fi
check "check/carried-huge-page-recovery-$want" "got: $(line_of 'huge pages recovered in place')" \
	has_line "^  huge pages recovered in place +$want "
want=no
[ -d /sys/kernel/tracing/events/kvmmmu/kvm_mmu_page_fault_done ] && want=yes
check "check/carried-page-fault-done-event-$want" "got: $(line_of 'kvm_mmu_page_fault_done event')" \
	has_line "^  kvm_mmu_page_fault_done event +$want "
if grep -q ' kvm_mmu_update_root$' /proc/kallsyms; then want=yes; else want=no; fi
check "check/carried-mmu-roots-kept-$want" "got: $(line_of 'MMU roots kept on role changes')" \
	has_line "^  MMU roots kept on role changes +$want "
check "check/carried-enum-export" "got: $(line_of 'RET_PF_\* enum export')" \
	has_line '^  RET_PF_\* enum export +(yes|no) '

# --probe-mode tracepoint: still exit 0, function probes not tried.
"$CHECK" --probe-mode tracepoint >"$OUT" 2>&1
rc=$?
check "check/--probe-mode tracepoint exits 0" "exit $rc" [ "$rc" -eq 0 ]
check "check/--probe-mode tracepoint skips function probes" "got: $(line_of kvm_mmu_page_fault)" \
	has_line '^  kvm_mmu_page_fault +unavailable .*--probe-mode tracepoint'
# KVMMMU_PROBE_MODE chooses where --probe-mode is not given, and says so;
# one that is no mode is refused
KVMMMU_PROBE_MODE=tracepoint "$CHECK" >"$OUT" 2>&1
check "check/KVMMMU_PROBE_MODE-tracepoint-heading" "got: $(grep '^Function probes' "$OUT")" \
	has_line '^Function probes \(KVMMMU_PROBE_MODE=tracepoint\)'
check "check/KVMMMU_PROBE_MODE-tracepoint-not-tried" "got: $(line_of kvm_mmu_page_fault)" \
	has_line '^  kvm_mmu_page_fault +unavailable .*not tried \(KVMMMU_PROBE_MODE=tracepoint\)'
KVMMMU_PROBE_MODE=kprobes "$CHECK" >"$OUT" 2>&1
rc=$?
check "check/KVMMMU_PROBE_MODE-bogus-refused" "exit $rc: $(grep KVMMMU_PROBE_MODE "$OUT")" \
	eval '[ $rc != 0 ] && grep -q "KVMMMU_PROBE_MODE '"'"'kprobes'"'"': expected auto, fsession, fentry, kprobe or tracepoint" "$OUT"'
exit 0
