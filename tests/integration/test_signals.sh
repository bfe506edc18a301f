#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# How users drive kvmmmu-hist, not how the suite does: a signal that arrives
# as a burst (timeout(1) sends its child one and its process group another; a
# Ctrl-C reaches the whole group) is one request, also in the first moment of
# `kvmmmu-hist -- CMD`; a command's VM that outlives the command (a wrapper
# that starts it in the background) is followed to its end; and kvmmmu-check
# --validate leaves a VM the user stopped stopped.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip signals/all "$why"
	exit 0
fi
HIST=$BUILD/kvmmmu-hist
LOAD=$BUILD/kvmmmu-load
CHECK=$BUILD/kvmmmu-check
CSVLINT=$BUILD/tests/tools/csvlint

# catches_int PID: PID has its SIGINT handler (SigCgt bit 2), within 10 s
catches_int() {
	local end=$((SECONDS + 10)) mask
	while [ $SECONDS -lt $end ]; do
		mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
		[ -n "$mask" ] && (((0x$mask >> 1) & 1)) && return 0
		sleep 0.01
	done
	return 1
}
# ends_within SECS PID: PID (a child of this shell) has exited within SECS
ends_within() {
	local end=$((SECONDS + $1))
	while kill -0 "$2" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.05
	done
}

# --- timeout(1) forwards one SIGINT twice (to kvmmmu-hist, then to its
# process group): one request. The summary and the CSV are whole.
# (the VM is the command's: its populate faults while traced on any MMU; a
# VM already populated takes no fault under the TDP MMU, and shows no row)
for try in 1 2 3; do
	setsid timeout 120 "$HIST" --csv "$TMP/burst$try.csv" -- "$LOAD" --vcpus 1 --mem 16M --duration 3600 \
		>"$TMP/burst$try.out" 2>"$TMP/burst$try.err" &
	sid=$!
	wait_tracing "$TMP/burst$try.out" || fail "signals/timeout-burst-$try" "kvmmmu-hist did not start"
	hist=$(pgrep -P $sid)
	vm=$(pgrep -P "${hist:-0}" -x kvmmmu-load)
	wait_vm "${vm:-0}" || fail "signals/timeout-burst-$try-vm" "kvmmmu-load did not start"
	kill -INT $sid # setsid's pid is timeout's: it execs it
	ends_within 30 $sid
	wait $sid
	rc=$?
	check "signals/timeout-burst-$try-summary" \
		"exit $rc, no summary: $(head -c 300 "$TMP/burst$try.err")" \
		eval "grep -q '^Summary:' '$TMP/burst$try.out' && ! grep -q 'second signal\|exiting now' '$TMP/burst$try.err'"
	check "signals/timeout-burst-$try-csv" "no figures of pid ${vm:-?} in the CSV" \
		eval "grep -q '^[^#][^,]*,${vm:-x},.*,bpf,faults,' '$TMP/burst$try.csv' && '$CSVLINT' '$TMP/burst$try.csv' >/dev/null"
done

# --- a burst in the first moment of `kvmmmu-hist -- CMD`, while the command
# is still held: it never runs, and is not reported as having failed
for try in 1 2 3; do
	setsid bash -c "exec '$HIST' --csv '$TMP/early$try.csv' -- '$LOAD' --vcpus 1 --mem 8M" \
		>"$TMP/early$try.out" 2>"$TMP/early$try.err" &
	sid=$!
	# once it acts on signals (before that, SIGINT's default ends it: no
	# program can do better), and long before its probes are attached
	catches_int $sid || fail "signals/early-burst-$try-handler" "no SIGINT handler within 10 s"
	kill -INT -- -$sid
	kill -INT -- -$sid
	ends_within 60 $sid
	wait $sid
	rc=$?
	check "signals/early-burst-$try" \
		"exit $rc: $(head -c 300 "$TMP/early$try.err")" \
		eval "[ $rc = 0 ] && ! grep -q 'exited with status\|killed by signal\|second signal\|exiting now' '$TMP/early$try.err' && grep -q 'was not started: tracing ended before it could run' '$TMP/early$try.err'"
done

# --- timeout's two signals often merge into one pending signal; a burst whose
# signals are delivered apart (a Ctrl-C on `sudo timeout ...` reaches sudo,
# timeout and kvmmmu-hist, and timeout forwards it again) is one request too,
# even while a command that ignores SIGTERM holds the end back 5 s
cat >"$TMP/stubborn" <<'EOF'
#!/bin/bash
trap '' TERM INT
echo "traps set" >&2
exec sleep 120 # (the command itself: no orphan that ignores both outlives the test)
EOF
chmod +x "$TMP/stubborn"
"$HIST" --csv "$TMP/spaced.csv" -- "$TMP/stubborn" >"$TMP/spaced.out" 2>"$TMP/spaced.err" &
hist=$!
wait_tracing "$TMP/spaced.out" || fail signals/spaced-burst "kvmmmu-hist did not start"
# (the command says when its traps are set: a SIGTERM before that ends it)
wait_grep "$TMP/spaced.err" '^traps set' || fail signals/spaced-burst-traps "the command did not set its traps"
kill -INT $hist
sleep 0.2
kill -INT $hist
ends_within 30 $hist
wait $hist
rc=$?
check signals/spaced-burst-one-request "exit $rc: $(head -c 300 "$TMP/spaced.err")" \
	eval "[ $rc = 0 ] && grep -q '^Summary:' '$TMP/spaced.out' && grep -q 'ignored SIGTERM for 5 s' '$TMP/spaced.err' && ! grep -q 'second signal\|exiting now' '$TMP/spaced.err'"
check signals/spaced-burst-csv "the summary's rows are not in the CSV: $("$CSVLINT" "$TMP/spaced.csv" 2>&1 | head -2)" \
	eval "'$CSVLINT' '$TMP/spaced.csv' >/dev/null && grep -q '^[^#]' '$TMP/spaced.csv'"

# --- a second request later than the burst: the command is killed at once
# (no SIGTERM grace), and the summary still comes
"$HIST" --csv "$TMP/late.csv" -- "$TMP/stubborn" >"$TMP/late.out" 2>"$TMP/late.err" &
hist=$!
wait_tracing "$TMP/late.out"
wait_grep "$TMP/late.err" '^traps set' || fail signals/second-request-traps "the command did not set its traps"
kill -INT $hist
sleep 1.5 # past the burst: a second request
kill -INT $hist
ends_within 30 $hist
wait $hist
rc=$?
check signals/second-request-summary "exit $rc: $(head -c 300 "$TMP/late.err")" \
	eval "grep -q '^Summary:' '$TMP/late.out' && grep -q 'second signal: command killed' '$TMP/late.err' && grep -q '^# ' '$TMP/late.csv'"
check signals/second-request-no-grace "waited out SIGTERM's grace" \
	eval "! grep -q 'ignored SIGTERM' '$TMP/late.err'"

# --- a wrapper that starts the VM in the background and exits: the VM is
# followed to its end, and its figures equal KVM's
"$HIST" --csv "$TMP/wrapped.csv" -- sh -c "'$LOAD' --vcpus 1 --mem 8M --csv '$TMP/wrapped-load.csv' >/dev/null & exit 0" \
	>"$TMP/wrapped.out" 2>"$TMP/wrapped.err"
rc=$?
check signals/descendant-exit "exit $rc: $(head -c 300 "$TMP/wrapped.err")" test $rc = 0
check signals/descendant-said "no word of the descendant followed" \
	grep -q "'sh' exited; tracing goes on until its descendants exit: pid [0-9]* (kvmmmu-load)" \
	"$TMP/wrapped.err"
pid=$(awk -F, '!/^#/ && $3 == "kvmmmu-load" { print $2; exit }' "$TMP/wrapped.csv")
if [ -n "$pid" ] && [ -s "$TMP/wrapped-load.csv" ]; then
	AGREE_PREFIX=signals agree descendant "$TMP/wrapped.csv" "$TMP/wrapped-load.csv" "$pid" 1
else
	fail signals/descendant-agree "no VM of the wrapped kvmmmu-load in the CSV, or no KVM counts"
fi

# ... and one still running when tracing ends (-d) is named, not followed
"$HIST" -d 2 -- sh -c "'$LOAD' --vcpus 1 --mem 8M --duration 3600 --csv '$TMP/left-load.csv' >/dev/null & exit 0" \
	>"$TMP/left.out" 2>"$TMP/left.err"
rc=$?
# (ours alone, by the path in its arguments: also when kvmmmu-hist did not name it)
trap 'pkill -f -- "--csv $TMP/left-load.csv"; rm -rf "$TMP"' EXIT
left=$(sed -n 's/.*left running, not followed past the end of tracing: pid \([0-9]*\) (kvmmmu-load).*/\1/p' "$TMP/left.err")
check signals/descendant-left-named "exit $rc: $(head -c 300 "$TMP/left.err")" \
	test $rc = 0 -a -n "$left"
check signals/descendant-left-running "pid ${left:-?} is $(proc_state "${left:-0}")" \
	test -n "$left" -a "$(proc_state "${left:-0}")" != gone
pkill -f -- "--csv $TMP/left-load.csv"

# --- a directory is no command: refused up front, before anything is traced
one_line_error signals/command-directory 1 "$HIST" -- /tmp
check signals/command-directory-says "$(cat "$TMP/bad.err")" grep -q "cannot run '/tmp': Is a directory" "$TMP/bad.err"

# --- --validate on a VM the user stopped: it stays stopped (T), and is read
"$LOAD" --vcpus 1 --mem 8M --duration 3600 >/dev/null 2>&1 &
vm=$!
wait_vm $vm
kill -STOP $vm
for _ in $(seq 100); do [ "$(proc_state $vm)" = T ] && break; sleep 0.05; done
"$CHECK" --validate $vm 1 >"$TMP/validate.out" 2>&1
rc=$?
check signals/validate-stopped-vm-left-stopped "exit $rc, VM state $(proc_state $vm) after: $(tail -1 "$TMP/validate.out")" \
	test $rc = 0 -a "$(proc_state $vm)" = T
kill $vm
kill -CONT $vm
wait $vm 2>/dev/null

n=$(leaked_progs)
check signals/no-bpf-left "$n kvmmmu programs left behind" test "$n" = 0
exit 0
