#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# Ways out: every signal at any moment ends kvmmmu-hist with its summary and
# exit code, leaves no BPF program behind, never orphans or hangs on a
# command run under it, never leaves a VM stopped; CSV files hold whole rows.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip exits/all "$why"
	exit 0
fi
HIST=$BUILD/kvmmmu-hist
LOAD=$BUILD/kvmmmu-load
CHECK=$BUILD/kvmmmu-check
CSVLINT=$BUILD/tests/tools/csvlint

# gone_within SECS PID: PID has exited (or is a zombie) within SECS seconds
gone_within() {
	local s
	for _ in $(seq $(($1 * 20))); do
		s=$(proc_state "$2")
		[ "$s" = gone ] || [ "$s" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# --- SIGINT, SIGTERM, SIGHUP while tracing: the summary, exit 0, nothing left
for sig in INT TERM HUP; do
	"$HIST" -d 60 >"$TMP/sig.out" 2>&1 &
	hist=$!
	wait_tracing "$TMP/sig.out" || fail "exits/$sig-attach" "kvmmmu-hist did not start"
	kill -$sig $hist
	gone_within 10 $hist
	wait $hist
	rc=$?
	check "exits/$sig-exit-0" "exit $rc" test $rc = 0
	check "exits/$sig-summary" "no summary: $(tail -2 "$TMP/sig.out")" grep -q '^Summary:' "$TMP/sig.out"
	n=$(leaked_progs)
	check "exits/$sig-no-bpf-left" "$n kvmmmu programs left behind" test "$n" = 0
done

# --- SIGINT during the attach itself
"$HIST" -d 60 >"$TMP/early.out" 2>&1 &
hist=$!
sleep 0.05
kill -INT $hist
gone_within 10 $hist
wait $hist
rc=$?
check exits/attach-int-exit-0 "exit $rc: $(tail -1 "$TMP/early.out")" test $rc = 0
n=$(leaked_progs)
check "exits/attach-int-no-bpf-left" "$n kvmmmu programs left behind" test "$n" = 0

# --- output into a pipe whose reader is gone: ends at once, not after -d
# (its first write after the reader left: once attached, "Tracing ...",
# which a TCG guest takes 8-20 s to reach; -d is far beyond that)
start=$SECONDS
timeout 900 "$HIST" -d 600 | head -1 >/dev/null
check exits/sigpipe-ends-early "took $((SECONDS - start)) s of -d 600" test $((SECONDS - start)) -lt 300
n=$(leaked_progs)
check "exits/sigpipe-no-bpf-left" "$n kvmmmu programs left behind" test "$n" = 0

# --- a command that ignores SIGTERM: killed after a grace period, and we say so
# (it would live past the timeout below: a tracer that waited for it hangs
# there; exec: the sleep is the command, ignoring SIGTERM, and no orphan of
# it outlives the test)
cat >"$TMP/stubborn" <<'EOF'
#!/bin/bash
trap '' TERM
exec sleep 400
EOF
chmod +x "$TMP/stubborn"
timeout 300 "$HIST" -d 1 -- "$TMP/stubborn" >"$TMP/stub.out" 2>&1
rc=$?
check exits/stubborn-child-no-hang "exit $rc" test $rc != 124
check exits/stubborn-child-said "no word of the kill" grep -q 'ignored SIGTERM for 5 s: killed' "$TMP/stub.out"

# --- a second Ctrl-C (past the first's burst) means now: the stubborn
# command is killed at once (test_signals.sh: the summary still comes)
"$HIST" -- "$TMP/stubborn" >"$TMP/stub2.out" 2>&1 &
hist=$!
wait_tracing "$TMP/stub2.out"
child=$(pgrep -P $hist | head -1)
kill -INT $hist
sleep 1.2
kill -INT $hist
gone_within 30 $hist
check exits/second-int-exits "kvmmmu-hist still runs" test "$(proc_state $hist)" = gone -o "$(proc_state $hist)" = Z
wait $hist 2>/dev/null
check exits/second-int-kills-child "child $child: $(proc_state "$child")" gone_within 30 "$child"

# --- the tracer killed outright: its command is not orphaned
"$HIST" -- "$LOAD" --vcpus 1 --mem 8M --duration 3600 >"$TMP/orphan.out" 2>&1 &
hist=$!
wait_tracing "$TMP/orphan.out"
child=$(pgrep -P $hist | head -1)
wait_vm "${child:-0}"
kill -KILL $hist
wait $hist 2>/dev/null
check exits/kill-no-orphan "child ${child:-none}: $(proc_state "${child:-0}")" \
	test -n "$child" -a "$(gone_within 30 "${child:-0}" && echo gone)" = gone
[ -n "$child" ] && kill -KILL "$child" 2>/dev/null
n=$(leaked_progs)
check "exits/kill-no-bpf-left" "$n kvmmmu programs left behind" test "$n" = 0

# --- SIGKILL mid-run leaves whole CSV rows (each report is written in one go)
"$HIST" --csv "$TMP/killed.csv" 1 -- "$LOAD" --vcpus 2 --mem 64M --dirty-log 1 --duration 3600 \
	>/dev/null 2>&1 &
hist=$!
# killed once it has written reports (every second) while the VM faults
wait_grep "$TMP/killed.csv" ',bpf,faults,'
sleep 1.5
kill -KILL $hist
wait $hist 2>/dev/null
check exits/kill-csv-while-running "kvmmmu-hist had ended before the kill" test $? = 137
check exits/kill-csv-whole "$("$CSVLINT" "$TMP/killed.csv" 2>&1 | head -2)" "$CSVLINT" "$TMP/killed.csv"
check exits/kill-csv-has-reports "no report rows" grep -q ',bpf,faults,' "$TMP/killed.csv"

# --- --csv -: stdout is CSV alone; the text report goes to stderr
"$HIST" --csv - -- "$LOAD" --vcpus 1 --mem 8M >"$TMP/stdout.csv" 2>"$TMP/stderr.txt"
check exits/csv-stdout-only-csv "$("$CSVLINT" "$TMP/stdout.csv" 2>&1 | head -2)" "$CSVLINT" "$TMP/stdout.csv"
check exits/csv-stdout-report-on-stderr "no summary on stderr" grep -q '^Summary:' "$TMP/stderr.txt"
# ... in whole lines: every write(2) of kvmmmu-hist's to stderr ends one (the
# traced command writes there too, between them: a part of a line is cut in two)
# (LeakSanitizer cannot run under ptrace: the sanitized build checks leaks everywhere else)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -qq -o "$TMP/stderr.strace" -e trace=write -e signal=none -xx -s 65536 \
	"$HIST" --csv - -- "$LOAD" --vcpus 1 --mem 8M >/dev/null 2>"$TMP/stderr-strace.txt"
rc=$?
n=$(grep -c '^write(2, ' "$TMP/stderr.strace")
cut=$(grep '^write(2, ' "$TMP/stderr.strace" | grep -vc '\\x0a", [0-9]*) *= ')
check exits/csv-stdout-stderr-whole-lines \
	"exit $rc; $cut of $n writes to stderr end inside a line; $(tail -1 "$TMP/stderr-strace.txt")" \
	eval '[ "$rc" = 0 ] && [ "$n" -gt 3 ] && [ "$cut" = 0 ]'

# --- kvmmmu-check --validate killed while the VM is stopped: the VM runs on.
# The pause lasts milliseconds, too short to catch from a polling loop on a
# busy or sanitized run; so gdb stops the checker inside its first snapshot
# (session_read runs only while the checker holds the VM stopped), records
# the VM's state there, and kills the checker with SIGKILL at that point.
"$LOAD" --vcpus 1 --mem 8M --duration 3600 >/dev/null 2>&1 &
vm=$!
wait_vm $vm
gdb -q -batch -ex 'break session_read' -ex run \
	-ex "shell cat /proc/$vm/stat >$TMP/paused.stat" -ex kill \
	--args "$CHECK" --validate $vm 2 >"$TMP/gdb.out" 2>&1
paused=$(sed 's/.*) //; s/ .*//' "$TMP/paused.stat" 2>/dev/null)
if [ "$paused" = T ]; then
	resumed=
	for _ in $(seq 100); do
		[ "$(proc_state $vm)" != T ] && resumed=1 && break
		sleep 0.05
	done
	check exits/validate-kill-resumes-vm "VM state $(proc_state $vm) 5 s after the checker died" \
		test -n "$resumed"
else
	fail exits/validate-kill-resumes-vm \
		"VM state ${paused:-unknown}, not T, in the checker's snapshot: $(tail -1 "$TMP/gdb.out")"
fi
# SIGCONT too: a stopped VM would hold SIGTERM pending and never end
kill $vm 2>/dev/null
kill -CONT $vm 2>/dev/null
wait $vm 2>/dev/null

# --- VMs killed (SIGKILL) while their vCPUs fault: every thread exits at
# once, and each that exits after the count of live threads reached 0 reads
# "last" too. kvmmmu keeps the process until /proc shows every thread gone,
# then retires whatever entries it still has: none of them stays in the maps.
# thread_entries MAP PIDS: the per-thread fault entries of those processes
# in map id MAP (our tracer's: another kvmmmu on the host has its own)
thread_entries() {
	bpftool -j map dump id "$1" 2>/dev/null | python3 -c '
import json, sys
pids = {int(p) for p in sys.argv[1].split()}
try:
    entries = json.load(sys.stdin)
except ValueError:
    print("unreadable"); sys.exit()
print(sum(1 for e in entries if e.get("formatted", e)["key"]["tgid"] in pids))' "$2"
}
"$HIST" -d 600 >"$TMP/killed.out" 2>&1 &
hist=$!
wait_tracing "$TMP/killed.out" || fail exits/killed-vms-attach "kvmmmu-hist did not start"
map=$(held_map_id $hist thread_stats) || fail exits/killed-vms-map "kvmmmu-hist holds no thread_stats map"
killed=
for _ in 1 2 3 4; do
	"$LOAD" --vcpus 4 --mem 128M --duration 3600 >/dev/null 2>&1 &
	vm=$!
	wait_vm $vm
	sleep 0.3 # mid-populate: its vCPUs are faulting
	kill -KILL $vm
	wait $vm 2>/dev/null
	killed="$killed $vm"
done
left=unreadable
for _ in $(seq 100); do
	left=$(thread_entries "${map:-0}" "$killed")
	[ "$left" = 0 ] && break
	sleep 0.1
done
check exits/killed-vms-leave-no-entries "$left entries of the killed VMs ($killed) after 10 s" \
	test "$left" = 0
kill -INT $hist
wait $hist
check exits/killed-vms-shown "no VM line for the killed VMs" grep -q '^VM pid ' "$TMP/killed.out"
exit 0
