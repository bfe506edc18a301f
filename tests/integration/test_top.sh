#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-top against KVM's own counters, and as a user meets it: batch frames
# parsed, the real screen driven in tmux (keys, drill-down, a narrow
# terminal), and the terminal as it was after q and after SIGTERM.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip top/all "$why"
	exit 0
fi
TOP=$BUILD/kvmmmu-top
LOAD=$BUILD/kvmmmu-load

# row FILE NAME COLUMN: the last value of COLUMN (1-based) in rows starting with NAME
row() { awk -v n="$2" -v c="$3" '$1 == n || $1 == n "*" { v = $c } END { print v }' "$1"; }

# frames_show FILE TOP-PID ERE...: until kvmmmu-top (TOP-PID, in batch mode
# writing FILE) has printed a line matching each ERE; 2 min at most in all,
# and no longer than it runs
frames_show() {
	local f=$1 p=$2 end=$((SECONDS + 120)) e missing
	shift 2
	while [ $SECONDS -lt $end ]; do
		missing=
		for e in "$@"; do grep -qE -- "$e" "$f" 2>/dev/null || { missing=$e; break; }; done
		[ -z "$missing" ] && return 0
		kill -0 "$p" 2>/dev/null || return 1
		sleep 0.1
	done
	echo "  kvmmmu-top printed no line matching '$missing' in 2 min"
	return 1
}

echo "  $(cut -d" " -f1 /proc/uptime) s: batch"
# --- batch: since-start counts per VM and per vCPU equal KVM's pf_taken, exactly
"$TOP" -b --since-start --per-vcpu -d 0.5 -p 'top-web|top-db|top-two' >"$TMP/b.out" 2>"$TMP/b.err" &
tp=$!
frames_show "$TMP/b.out" $tp 'kvmmmu-top:'
check top/batch-first-frame "no frame within 2 min: $(head -c 300 "$TMP/b.err")" grep -q 'kvmmmu-top:' "$TMP/b.out"
"$LOAD" --name top-web --vcpus 2 --mem 16M --dirty-log 1 --csv "$TMP/web.csv" >/dev/null 2>&1 &
l1=$!
"$LOAD" --name top-db --vcpus 3 --mem 8M --csv "$TMP/db.csv" >/dev/null 2>&1
wait $l1
# two VMs of one process, made in turn: a row each (a VM is a struct kvm, not a pid)
"$LOAD" --name top-two --vms 2 --vcpus 1 --mem 8M --csv "$TMP/two.csv" >/dev/null 2>&1
# the VMs' last figures: the frames that mark them exited
frames_show "$TMP/b.out" $tp '^top-web\*' '^top-db\*' '^top-two #2\*'
kill -INT $tp
wait $tp
rc=$?
check top/batch-exit-0 "exit $rc: $(tail -2 "$TMP/b.err")" test $rc = 0
for vm in web:2 db:3; do
	name=top-${vm%:*} n=${vm#*:} sum=0
	csv=$TMP/${vm%:*}.csv
	for ((v = 0; v < n; v++)); do
		k=$(csv_value "$csv" kvm_stats pf_taken $v)
		sum=$((sum + k))
		# vCPU rows follow "vCPUs of NAME": the last one of vCPU v
		b=$(awk -v n="$name" -v v=$v '/^  vCPUs of / { inside = index($0, "vCPUs of " n " ") > 0 }
			inside && $1 == "CPU" && $4 == v { x = $5 } END { print x }' "$TMP/b.out")
		check "top/batch-$name-vcpu$v-faults" "kvmmmu-top $b, KVM pf_taken $k" test -n "$k" -a "$b" = "$k"
	done
	b=$(row "$TMP/b.out" "$name" 4)
	check "top/batch-$name-faults" "kvmmmu-top $b, KVM pf_taken (all vCPUs) $sum" test "$b" = "$sum"
	b=$(row "$TMP/b.out" "$name" 3)
	check "top/batch-$name-vcpus" "VCPU column $b, want $n" test "$b" = "$n"
done
for i in 1 2; do
	k=$(awk -F, -v i=$i '!/^#/ && $10 == i && $5 == "kvm_stats" && $6 == "pf_taken" && $4 == 0 { x = $8 }
		END { print x }' "$TMP/two.csv")
	b=$(awk -v i="#$i" '$1 == "top-two" && ($2 == i || $2 == i "*") { x = $5 } END { print x }' "$TMP/b.out")
	check "top/batch-two-vms-vm$i-faults" "kvmmmu-top's row 'top-two #$i': $b, KVM pf_taken $k" \
		test -n "$k" -a "$b" = "$k"
done
check top/batch-exited-marked "no exited VM in a frame" grep -q '^top-web\*' "$TMP/b.out"
# each frame says which latency figure its p50/p99/max columns are of (lib.sh: LAT)
check top/batch-header-names-latency "$(grep -m1 'kvmmmu-top:' "$TMP/b.out")" \
	eval '[ "$(grep -c "kvmmmu-top:" "$TMP/b.out")" = "$(grep -c "kvmmmu-top: .*; latency: $LAT$" "$TMP/b.out")" ]'

echo "  $(cut -d" " -f1 /proc/uptime) s: 8 VMs at once"
# --- 8 VMs at once: every one's since-start faults equal KVM's
"$TOP" -b --since-start -d 0.5 -p 'top-eight' >"$TMP/e.out" 2>&1 &
tp=$!
frames_show "$TMP/e.out" $tp 'kvmmmu-top:'
pids=""
for i in 1 2 3 4 5 6 7 8; do
	"$LOAD" --name top-eight-$i --vcpus 2 --mem 8M --csv "$TMP/e$i.csv" >/dev/null 2>&1 &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
echo "  $(cut -d" " -f1 /proc/uptime) s: the 8 VMs are done"
frames_show "$TMP/e.out" $tp '^top-eight-1\*' '^top-eight-2\*' '^top-eight-3\*' '^top-eight-4\*' \
	'^top-eight-5\*' '^top-eight-6\*' '^top-eight-7\*' '^top-eight-8\*' ||
	echo "  no frame marked all 8 VMs exited; the last lines: $(tail -12 "$TMP/e.out" | tr '\n' '|')"
kill -INT $tp
wait $tp
for i in 1 2 3 4 5 6 7 8; do
	# no CSV: k is "+", which fails the check (an empty operand would abort the loop)
	k=$(csv_value "$TMP/e$i.csv" kvm_stats pf_taken 0)+$(csv_value "$TMP/e$i.csv" kvm_stats pf_taken 1)
	[[ $k =~ ^[0-9]+\+[0-9]+$ ]] && k=$((k))
	b=$(row "$TMP/e.out" top-eight-$i 4)
	check "top/eight-vms-$i-faults" "kvmmmu-top $b, KVM pf_taken $k" test "$b" = "$k"
done

echo "  $(cut -d" " -f1 /proc/uptime) s: VMs coming and going"
# --- VMs coming and going: exited ones leave the session, and memory stays flat.
# TOP_CHURN VMs, then twice as many more (a setting: a TCG guest, where a VM
# takes a second, has 30 by default: a leak of 35 KiB a VM still shows).
if in_tcg_guest; then : "${TOP_CHURN:=30}"; fi
: "${TOP_CHURN:=100}"
# -v says, at each frame, what the session keeps and the heap in use (bytes
# allocated, not RSS: the allocator and the BPF rings' pages make RSS noisy).
"$TOP" -v -b -d 0.2 -p 'top-churn' >"$TMP/churn.out" 2>"$TMP/churn.err" &
tp=$!
frames_show "$TMP/churn.out" $tp 'kvmmmu-top:'
# state_after N: the last -v line once the churned VMs have all gone (quiet frames)
state_now() { grep -F ' names, ' "$TMP/churn.err" | tail -1; }
# held_names: the names the last -v frame lists (whose a leak is)
held_names() { tac "$TMP/churn.err" | sed -n '/ names, /q;s/^kvmmmu-top: state: name //p' | tr '\n' ';'; }
heap_now() { state_now | sed -n 's/.*heap in use \([0-9]*\) KiB.*/\1/p'; }
# released: the session holds nothing of the churned VMs (the last one leaves
# after its 3 marked frames; on one busy CPU that can take a while)
NOTHING_HELD="state: 0 names, 0 retired threads, 0 timeline events, 0 exited VMs shown, 0 VMs' KVM counters;"
released() { state_now | grep -qF "$NOTHING_HELD"; }
# settled: released, and the heap the same (within 64 KiB) two readings 0.4 s
# apart: the frames after the last VM left still free what the churn grew
# (the heap peaks at about 24 MiB while VMs come and go)
settled() {
	local i a b
	local end=$((SECONDS + 120))
	until released || [ $SECONDS -ge $end ]; do sleep 0.1; done
	b=$(heap_now)
	for i in $(seq 100); do
		sleep 0.4
		a=$b b=$(heap_now)
		[ -n "$a" ] && [ -n "$b" ] && [ $((a - b)) -lt 64 ] && [ $((b - a)) -lt 64 ] && break
	done
}
for i in $(seq "$TOP_CHURN"); do "$LOAD" --name "top-churn-$i" --vcpus 2 --mem 1M >/dev/null 2>&1; done
settled
h1=$(heap_now)
for i in $(seq $((TOP_CHURN + 1)) $((3 * TOP_CHURN))); do
	"$LOAD" --name "top-churn-$i" --vcpus 2 --mem 1M >/dev/null 2>&1
done
settled
s2=$(state_now) h2=$(heap_now)
kill -INT $tp
wait $tp
held=$(held_names)
check top/churn-state-released "after $((3 * TOP_CHURN)) VMs: $s2 ${held:+(held: $held)}" \
	eval 'echo "$s2" | grep -qF "$NOTHING_HELD"'
if ldd "$TOP" 2>/dev/null | grep -q libasan; then
	# ASan's allocator: mallinfo2() says nothing (the other two passes check it)
	skip top/churn-heap-flat "an ASan build: its allocator reports no heap in use"
else
	check top/churn-heap-flat "heap in use $h1 KiB after $TOP_CHURN VMs, $h2 KiB after $((3 * TOP_CHURN))" \
		eval '[ -n "$h1" ] && [ -n "$h2" ] && [ $((h2 - h1)) -lt 2048 ]'
fi
check top/churn-saw-vms "no churned VM in the frames" grep -q '^top-churn-1[0-9]*\*\? ' "$TMP/churn.out"
last=$(awk '/kvmmmu-top:/ { n = $3 } END { print n }' "$TMP/churn.out")
check top/churn-exited-dropped "the last frame shows $last VMs" test "$last" = 0

echo "  $(cut -d" " -f1 /proc/uptime) s: the screen"
# --- the screen, in tmux: a VM's row, drill-down, sort, pause, help, quit
if ! command -v tmux >/dev/null; then
	skip top/screen "no tmux (make deps installs it)"
	exit 0
fi
# a tmux server of this run's own, its socket in $TMP (gone with it): other
# runs on the host (and their sessions) untouched
tm() { tmux -S "$TMP/tmux" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
tm new-session -d -s kvmmmu-top -x 150 -y 30 "bash --norc"
sh_run() { tm send-keys -t kvmmmu-top "$1" Enter; }
screen() { tm capture-pane -p -t kvmmmu-top; }
# wait_screen PATTERN: until PATTERN is on the screen; 2 min at most (a
# kvmmmu-top starting in a TCG guest takes 8-20 s to attach)
wait_screen() {
	local end=$((SECONDS + 120))
	until screen | grep -q -- "$1"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
# screen_until CMD...: until CMD (a test of the screen) holds; 2 min at most
screen_until() {
	local end=$((SECONDS + 120))
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
# (the VMs live until the screen tests are done with them: killed below)
"$LOAD" --name top-tui --vcpus 2 --mem 16M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
l1=$!
wait_vm $l1
# the first frame, as soon as it is drawn (before any reading when the host
# is slow to attach): no "(null)" where a column's reason will be
sh_run "$TOP -p top-tui -d 30; echo FIRST-DONE"
check top/screen-first-frame-drawn "$(screen | head -3)" wait_screen '^kvmmmu-top - '
first=$(screen)
check top/screen-first-frame-no-null "$(echo "$first" | grep -n 'null' | head -3)" \
	eval '! echo "$first" | grep -q "(null)"'
tm send-keys -t kvmmmu-top q
check top/screen-first-quit "$(screen | tail -3)" wait_screen '^FIRST-DONE'
tm send-keys -t kvmmmu-top clear Enter
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
sh_run "stty -a > $TMP/stty.before; $TOP -p top-tui -d 0.5; echo rc=\$? > $TMP/tui.rc; stty -a > $TMP/stty.after; echo TOP-DONE"
check top/screen-vm-row "$(screen | head -8)" wait_screen '^top-tui  '
check top/screen-header "$(screen | head -3)" wait_screen 'sort: faults'
check top/screen-bpf-cost "$(screen | sed -n 3p)" wait_screen '^kvmmmu BPF [0-9.]* ms/s'
tm send-keys -t kvmmmu-top Enter
check top/screen-drill-down "$(screen | head -8)" wait_screen '^CPU 1/KVM'
tm send-keys -t kvmmmu-top Enter
check top/screen-vcpu-histogram "$(screen | head -14)" wait_screen "$LAT: [0-9]* samples"
check top/screen-vcpu-outcomes "$(screen | head -8)" wait_screen '^  ret_pf_fixed '
check top/screen-vcpu-access "$(screen | head -10)" wait_screen '^  access: read [0-9]*  write [0-9]*  fetch [0-9]*;  not present [0-9]*  protection [0-9]*'
check top/screen-vcpu-levels "$(screen | head -11)" wait_screen '^  levels: 4k [0-9]*  2m [0-9]*  1g [0-9]* installed;  4k not huge: dirty log [0-9]*  host [0-9]*  nx [0-9]*  gmem [0-9]*'
# l: the vCPU's slow faults, none recorded without --slower (and says how); l again: back
tm send-keys -t kvmmmu-top l
check top/screen-slow-needs-slower "$(screen | sed -n 10,14p)" \
	wait_screen '^  none recorded: start kvmmmu-top with --slower MS'
tm send-keys -t kvmmmu-top l
check top/screen-slow-back "$(screen | head -14)" wait_screen "$LAT: [0-9]* samples"
tm send-keys -t kvmmmu-top Escape
check top/screen-vcpu-back "$(screen | head -8)" wait_screen '^CPU 1/KVM'
tm send-keys -t kvmmmu-top Escape
check top/screen-back "$(screen | head -8)" wait_screen '^top-tui  '
tm send-keys -t kvmmmu-top /
check top/screen-filter-prompt "$(screen | tail -2)" wait_screen '^filter VMs by name'
tm send-keys -t kvmmmu-top 'nomatch' Enter
check top/screen-filter-hides "$(screen | head -8)" wait_screen 'filter: nomatch'
check top/screen-filter-no-rows "$(screen | head -8)" eval '! screen | grep -q "^top-tui  "'
# the VM is there, hidden, its faults in TOTAL: the notice says the filter hides it
check top/screen-filter-says-hidden "$(screen | sed -n 6,7p)" wait_screen "^  no VM matches filter 'nomatch' (1 hidden"
# Esc at the prompt cancels it: the filter stays as it was
tm send-keys -t kvmmmu-top /
check top/screen-filter-prompt-2 "$(screen | tail -2)" wait_screen '^filter VMs by name'
tm send-keys -t kvmmmu-top 'zzz' Escape
check top/screen-filter-esc-keeps "$(screen | sed -n 3p; screen | tail -1)" \
	screen_until eval 'screen | grep -q "filter: nomatch" && ! screen | grep -q "^filter VMs by name"'
tm send-keys -t kvmmmu-top /
check top/screen-filter-prompt-3 "$(screen | tail -2)" wait_screen '^filter VMs by name'
tm send-keys -t kvmmmu-top Enter
check top/screen-filter-cleared "$(screen | head -8)" wait_screen '^top-tui  '
tm send-keys -t kvmmmu-top '>'
check top/screen-sort-key "$(screen | head -3)" wait_screen 'sort: name'
tm send-keys -t kvmmmu-top ' '
check top/screen-pause "$(screen | head -2)" wait_screen 'PAUSED'
tm send-keys -t kvmmmu-top ' '
tm send-keys -t kvmmmu-top t
check top/screen-since-start "$(screen | head -6)" wait_screen 'counts since start'
tm send-keys -t kvmmmu-top h
check top/screen-help "$(screen | head -4)" wait_screen 'kvmmmu-top keys'
tm send-keys -t kvmmmu-top x q
check top/screen-quit "$(screen | tail -5)" wait_screen '^TOP-DONE'
check top/screen-quit-exit-0 "$(cat "$TMP/tui.rc" 2>/dev/null)" grep -qx rc=0 "$TMP/tui.rc"
check top/screen-terminal-restored "$(diff "$TMP/stty.before" "$TMP/stty.after")" \
	cmp -s "$TMP/stty.before" "$TMP/stty.after"
stats_after=$(cat /proc/sys/kernel/bpf_stats_enabled)
check top/bpf-stats-restored "kernel.bpf_stats_enabled was $stats_before, is $stats_after" \
	test "$stats_before" = "$stats_after"
# since-start counts read off the screen equal KVM's, per VM and per vCPU,
# while the exited VM is still marked (3 refreshes of 3 s)
sh_run "clear; $TOP -p top-exact -d 3 --since-start; echo TOP-EXACT-DONE"
check top/screen-exact-drawn "$(screen | head -3)" wait_screen 'sort: faults'
"$LOAD" --name top-exact --vcpus 2 --mem 1M --passes 2 --csv "$TMP/exact.csv" >/dev/null 2>&1
check top/screen-exact-exited "$(screen | sed -n 5,7p)" wait_screen '^top-exact .* exited'
k0=$(csv_value "$TMP/exact.csv" kvm_stats pf_taken 0)
k1=$(csv_value "$TMP/exact.csv" kvm_stats pf_taken 1)
got=$(screen | awk '$1 == "top-exact" { print $4; exit }')
check top/screen-exact-vm-faults "screen: $got, KVM pf_taken: $k0 + $k1" \
	test -n "$k0" -a -n "$k1" -a "$got" = "$((${k0:-0} + ${k1:-0}))"
tm send-keys -t kvmmmu-top Enter
# both vCPUs read off one frame: the exited VM leaves after 3 refreshes,
# which a slow host (a TCG guest) can reach between two captures
exact_frame() {
	frame=$(screen)
	grep -q '^CPU 0/KVM' <<<"$frame" && grep -q '^CPU 1/KVM' <<<"$frame"
}
screen_until exact_frame
for v in 0 1; do
	got=$(awk -v n="CPU $v/KVM" 'index($0, n) == 1 { print $5; exit }' <<<"$frame")
	k=$(csv_value "$TMP/exact.csv" kvm_stats pf_taken $v)
	check "top/screen-exact-vcpu$v-faults" "screen: $got, KVM pf_taken: $k" test -n "$k" -a "$got" = "$k"
done
tm send-keys -t kvmmmu-top q
check top/screen-exact-quit "$(screen | tail -3)" wait_screen '^TOP-EXACT-DONE'
# sort by name, inverted: the rows change order; paused, the figures stay
"$LOAD" --name top-sort-a --vcpus 1 --mem 8M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
la=$!
"$LOAD" --name top-sort-b --vcpus 1 --mem 8M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
lb=$!
wait_vm $la
wait_vm $lb
sh_run "clear; $TOP -p top-sort-a -p top-sort-b -s name --since-start -d 0.5; stty -a > $TMP/stty.after2; echo TOP-SORT-DONE"
order() { screen | awk '$1 ~ /^top-sort-/ { printf "%s ", $1 }'; }
check top/screen-sort-by-name "rows: $(order)" \
	screen_until eval '[ "$(order)" = "top-sort-a top-sort-b " ]'
tm send-keys -t kvmmmu-top i
check top/screen-sort-inverted "rows: $(order)" \
	screen_until eval '[ "$(order)" = "top-sort-b top-sort-a " ]'
tm send-keys -t kvmmmu-top ' '
check top/screen-sort-paused "$(screen | head -2)" wait_screen 'PAUSED'
p1=$(screen | awk '$1 == "top-sort-a" { print $4 }')
sleep 1.5
p2=$(screen | awk '$1 == "top-sort-a" { print $4 }')
check top/screen-paused-frozen "faults $p1, 1.5 s later $p2" test -n "$p1" -a "$p1" = "$p2"
tm send-keys -t kvmmmu-top ' '
check top/screen-unpaused-moves "faults $p1 when paused, then $(screen | awk '$1 == "top-sort-a" { print $4 }')" \
	screen_until eval '[ "$(screen | awk "\$1 == \"top-sort-a\" { print \$4 }")" != "$p1" ]'
# the same top, resized (SIGWINCH) to 80 columns: whole columns only, no
# row wraps onto the next line, and the line under the header says how many
# columns a wider terminal would show
tm resize-window -t kvmmmu-top -x 80 -y 20 2>/dev/null || tm resize-pane -t kvmmmu-top -x 80 -y 20
check top/screen-80-cols-says-cut "$(screen | sed -n 4p)" wait_screen '^[0-9]* columns past the edge ([0-9]* wide shows all)'
check top/screen-80-cols-no-wrap "$(screen | sed -n 5,9p)" \
	screen_until eval '[ "$(screen | sed -n 6p | cut -c1-9)" = "top-sort-" ] && [ "$(screen | sed -n 7p | cut -c1-9)" = "top-sort-" ] && [ -z "$(screen | sed -n 8p | tr -d " ")" ]'
# then too small for the table (20x5): it says so, whole, wrapped to its
# width, and waits; keys but q do nothing meanwhile (they would act unseen)
tm resize-window -t kvmmmu-top -x 20 -y 5 2>/dev/null || tm resize-pane -t kvmmmu-top -x 20 -y 5
check top/screen-too-small "$(screen)" \
	eval 'wait_screen "^terminal too small$" && wait_screen "^(need 60x8)$"'
tm send-keys -t kvmmmu-top t ' '
sleep 1 # (nothing to wait for: the keys must change nothing; they are read every 50 ms)
# and SIGTERM while drawing: the terminal comes back all the same
tm resize-window -t kvmmmu-top -x 150 -y 30 2>/dev/null || tm resize-pane -t kvmmmu-top -x 150 -y 30
wait_screen '^top-sort-'
check top/screen-too-small-keys-ignored "$(screen | head -2)" \
	eval 'screen | sed -n 2p | grep -q "counts since start" && ! screen | head -1 | grep -q PAUSED'
pkill -TERM -f "^$TOP -p top-sort-a -p top-sort-b"
check top/sigterm-ends "$(screen | tail -3)" wait_screen '^TOP-SORT-DONE'
check top/sigterm-terminal-restored "$(diff "$TMP/stty.before" "$TMP/stty.after2")" \
	cmp -s "$TMP/stty.before" "$TMP/stty.after2"
kill $la $lb 2>/dev/null
wait $la $lb 2>/dev/null
# a terminal ncurses knows nothing of: a note, then batch frames (it exited 1)
sh_run "clear; TERM=no-such-term $TOP -p top-tui -d 0.5 -n 2 2>$TMP/term.err; echo TERM-RC=\$?"
wait_screen '^TERM-RC='
check top/unknown-term-falls-back "$(screen | grep -c 'kvmmmu-top: 1 VM') frames, $(screen | grep TERM-RC), $(cat "$TMP/term.err")" \
	eval 'screen | grep -q "^TERM-RC=0" && [ "$(screen | grep -c "kvmmmu-top: 1 VM")" = 2 ] && grep -q "batch frames instead" "$TMP/term.err"'
# a terminal that cannot move the cursor (TERM=dumb): a note, then batch frames, not curses
sh_run "clear; TERM=dumb $TOP -p top-tui -d 0.5 -n 2 2>$TMP/dumb.err; echo DUMB-RC=\$?"
wait_screen '^DUMB-RC='
check top/dumb-term-falls-back "$(screen | grep -c 'kvmmmu-top: 1 VM') frames, $(screen | grep DUMB-RC), $(cat "$TMP/dumb.err")" \
	eval 'screen | grep -q "^DUMB-RC=0" && [ "$(screen | grep -c "kvmmmu-top: 1 VM")" = 2 ] &&
		grep -q "^kvmmmu-top: note: this terminal (TERM=dumb) cannot move the cursor: batch frames instead" "$TMP/dumb.err"'
# Ctrl-C at the / prompt quits, as Ctrl-C does elsewhere (and in htop): not a
# character of the filter (15 s: the prompt would wait for Enter for ever)
sh_run "clear; $TOP -p top-tui -d 0.5; echo CTRLC-RC=\$?"
wait_screen '^top-tui  '
tm send-keys -t kvmmmu-top /
check top/screen-filter-prompt-ctrl-c "$(screen | tail -2)" wait_screen '^filter VMs by name'
tm send-keys -t kvmmmu-top ab C-c
end=$((SECONDS + 15))
until screen | grep -q '^CTRLC-RC=' || [ $SECONDS -ge $end ]; do sleep 0.1; done
check top/screen-filter-ctrl-c-quits "$(screen | grep -v '^$' | tail -2)" eval 'screen | grep -q "^CTRLC-RC=0"'
if ! screen | grep -q '^CTRLC-RC='; then # (the code before the fix: out of the prompt, then quit)
	tm send-keys -t kvmmmu-top Enter q
	wait_screen '^CTRLC-RC='
fi
# since the start, VMs that exit leave the table, not TOTAL, and the notice says
# they exited (not that no fault was seen)
sh_run "clear; $TOP -p top-gone -d 0.5 --since-start; echo GONE-DONE"
wait_screen 'sort: faults'
"$LOAD" --name top-gone --vcpus 1 --mem 1M --csv "$TMP/gone.csv" >/dev/null 2>&1
check top/screen-exited-notice "$(screen | sed -n 5,7p)" wait_screen '^  no VM running: 1 exited since kvmmmu-top started'
k=$(csv_value "$TMP/gone.csv" kvm_stats pf_taken 0)
got=$(screen | awk '$1 == "TOTAL" { print $4; exit }')
check top/screen-exited-total-kept "TOTAL: $got, KVM pf_taken: $k" test -n "$k" -a "$got" = "$k"
check top/screen-exited-no-false-notice "$(screen | sed -n 6p)" eval '! screen | grep -q "no KVM MMU faults seen yet"'
# too small, q still quits
tm resize-window -t kvmmmu-top -x 20 -y 5 2>/dev/null || tm resize-pane -t kvmmmu-top -x 20 -y 5
check top/screen-too-small-before-q "$(screen)" wait_screen '^terminal too small$'
tm send-keys -t kvmmmu-top q
check top/screen-too-small-q-quits "$(screen)" wait_screen '^GONE-DONE'
tm resize-window -t kvmmmu-top -x 150 -y 30 2>/dev/null || tm resize-pane -t kvmmmu-top -x 150 -y 30
# --slower: l in a vCPU's view lists that vCPU's slow faults, newest first
# (at 1 us, every timed fault); outside one, l says where it works
# (with --region 4M: a VM's view lists its most faulted regions under its vCPUs)
sh_run "clear; $TOP -p top-tui --slower 0.001 --region 4M -d 0.5; echo TOP-SLOW-DONE"
wait_screen '^top-tui  '
tm send-keys -t kvmmmu-top l
check top/screen-slow-where "$(screen | sed -n 4p)" wait_screen "^l: a vCPU's slow faults, in its view"
tm send-keys -t kvmmmu-top Enter
wait_screen '^CPU 1/KVM'
check top/screen-vm-regions "$(screen | sed -n 8,14p)" \
	eval 'wait_screen "^    hot regions (4 MiB each, since the start; [0-9]* faults in all):" &&
		wait_screen "^      memslot [-0-9]*  *\[0x[0-9a-f]*, 0x[0-9a-f]*)  *[0-9]*  *[0-9.]*%"'
tm send-keys -t kvmmmu-top Enter
wait_screen '^  ret_pf_fixed '
tm send-keys -t kvmmmu-top l
check top/screen-slow-list "$(screen | sed -n 10,16p)" \
	eval 'wait_screen "^slow faults of vCPU [01], newest first (l: back to its histogram):" &&
		wait_screen "^[0-9:.]* top-tui  *[0-9]*  *[01] "'
# the vCPU's own: the VCPU column is the vCPU the view shows
v=$(screen | awk '/^slow faults of vCPU/ { sub(/,$/, "", $5); print $5; exit }')
frame=$(screen)
mine=$(awk -v v="$v" '$1 ~ /^[0-9][0-9]:/ && $2 == "top-tui" && $4 == v' <<<"$frame" | wc -l)
others=$(awk -v v="$v" '$1 ~ /^[0-9][0-9]:/ && $2 == "top-tui" && $4 != v' <<<"$frame" | wc -l)
check top/screen-slow-only-this-vcpu "vCPU $v: $mine lines of it, $others of another" \
	test -n "$v" -a "$mine" -gt 0 -a "$others" = 0
tm send-keys -t kvmmmu-top q
check top/screen-slow-quit "$(screen | tail -3)" wait_screen '^TOP-SLOW-DONE'
tm kill-session -t kvmmmu-top
kill $l1 2>/dev/null
wait $l1 2>/dev/null

# batch frames with --per-vcpu --region: each VM's hot regions under its vCPUs
# (kvmmmu-load's test memory is at 4 GiB, memslot 1; its dirty-log passes
# fault all along: through the slow path under shadow paging, the fast path,
# memslot not known, under nested paging)
"$LOAD" --name top-reg --vcpus 1 --mem 16M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
lr=$!
wait_vm $lr
"$TOP" -b -d 0.5 --per-vcpu --region 4M -p top-reg >"$TMP/top-reg.out" 2>&1 &
tp=$!
check top/batch-regions "$(grep -A5 'hot regions' "$TMP/top-reg.out" | tail -6)" \
	wait_grep "$TMP/top-reg.out" '^      memslot (1|-) +\[0x10[0-9a-f]{7}, 0x10[0-9a-f]{7}\) +[0-9]+ +[0-9.]+%'
check top/batch-regions-header "$(grep -m1 'hot regions' "$TMP/top-reg.out")" \
	grep -q '^    hot regions (4 MiB each, since the start; [0-9]* faults in all):' "$TMP/top-reg.out"
kill -INT $tp
wait $tp 2>/dev/null
# --memslot: a SLOT/F column (memslot lookups per fault), function probes
# only; never by default, for its probe's cost (two runs a lookup)
"$TOP" -b --since-start -d 0.5 -n 4 --memslot -p top-reg >"$TMP/top-ms.out" 2>&1
rc=$?
# the VM's SLOT/F in the last frame: the column under the header's SLOT/F
ms=$(awk '/ SLOT\/F/ { for (i = 1; i <= NF; i++) if ($i == "SLOT/F") c = i; next }
	c && $1 == "top-reg" && $c ~ /^[0-9.]+$/ { v = $c } END { print v }' "$TMP/top-ms.out")
if func_probes; then
	check top/batch-no-memslot-column-by-default "$(grep -m1 ' FAULTS' "$TMP/b.out")" \
		eval 'grep -q " FAULTS" "$TMP/b.out" && ! grep -q "SLOT/F" "$TMP/b.out" "$TMP/top-reg.out"'
	check top/batch-memslot-column "exit $rc, SLOT/F of top-reg: '$ms'" \
		eval '[ $rc = 0 ] && awk -v v="$ms" "BEGIN { exit !(v + 0 > 0) }"'
else
	check top/batch-no-memslot-column-with-tracepoints "exit $rc: $(grep -m1 FAULTS "$TMP/top-ms.out")" \
		eval '[ $rc = 0 ] && grep -q " FAULTS" "$TMP/top-ms.out" && ! grep -q "SLOT/F" "$TMP/top-ms.out"'
fi
kill $lr 2>/dev/null
wait $lr 2>/dev/null
one_line_error top/bad-region-size 2 "$TOP" --region 3M

# batch frames with --slower --stack: each frame's new slow faults under it,
# with where they waited: a VM whose memory arrives through userfaultfd
"$TOP" -b -d 0.5 --slower 0.001 --stack -p top-uffd >"$TMP/top-slow.out" 2>&1 &
tp=$!
wait_grep "$TMP/top-slow.out" 'kvmmmu-top: '
"$LOAD" --name top-uffd --vcpus 1 --mem 1M --uffd >"$TMP/top-uffd.out" 2>&1
lrc=$?
check top/batch-slow-load-exit-0 "exit $lrc: $(tail -2 "$TMP/top-uffd.out")" test $lrc = 0
check top/batch-slow-stacks "$(grep -m3 -A3 '^    off the CPU [0-9]' "$TMP/top-slow.out")" \
	screen_until grep -q '^        handle_userfault+0x' "$TMP/top-slow.out"
kill -INT $tp
wait $tp 2>/dev/null
check top/batch-slow-lines "$(grep -m2 -B1 ' top-uffd ' "$TMP/top-slow.out")" \
	eval 'grep -q "^TIME  *VM  *PID VCPU GPA" "$TMP/top-slow.out" && grep -q "^[0-9:.]* top-uffd  *[0-9]*  *0 0x" "$TMP/top-slow.out"'

echo "  $(cut -d" " -f1 /proc/uptime) s: bad input"
# --- bad input: one line on stderr, exit 2
bad() { one_line_error "top/bad-$1" 2 "$TOP" "${@:2}"; }
bad delay-zero -d 0
bad delay-text -d soon
bad sort-key -s bogus
bad frames-zero -b -n 0
bad extra-argument extra
bad empty-name -p ''
bad empty-name-in-list -p '1,'
bad stack-without-slower --stack
bad slower-text --slower soon
# a PID that is no process never will be one: an error (exit 1), as in kvmmmu-hist
"$TOP" -b -n 1 -p 999999 >"$TMP/nopid.out" 2>&1
rc=$?
check top/missing-pid "exit $rc: $(head -c 200 "$TMP/nopid.out")" \
	eval 'test $rc = 1 && [ "$(wc -l <"$TMP/nopid.out")" = 1 ] && grep -q "no process with PID 999999" "$TMP/nopid.out"'
# a PID that is a process but not a VM: an error, as kvmmmu-hist says it (a name is waited for)
one_line_error top/pid-not-vm 1 "$TOP" -b -n 1 -p 1
check top/pid-not-vm-says "$(cat "$TMP/bad.err")" grep -q '^kvmmmu-top: process 1 (.*) is not a VM' "$TMP/bad.err"
# frames that stdout cannot take (a full disk): exit 1 and one line, not 0 with all lost
timeout 20 "$TOP" -b -n 2 -d 0.2 >/dev/full 2>"$TMP/full.err"
rc=$?
check top/stdout-full "exit $rc: $(head -c 300 "$TMP/full.err")" \
	eval '[ $rc = 1 ] && [ "$(wc -l <"$TMP/full.err")" = 1 ] && grep -q "^kvmmmu-top: stdout: No space left on device$" "$TMP/full.err"'
# -p takes a comma list, as top and perf do: both VMs shown. They fault all
# along (dirty-log passes): under nested paging a VM that has populated its
# memory takes no fault at all, and a TCG guest's top attaches after that.
"$LOAD" --name list-a --vcpus 1 --mem 4M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
la=$!
"$LOAD" --name list-b --vcpus 1 --mem 4M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
lb=$!
wait_vm $la
wait_vm $lb
# until both show (two frames were too few where attaching takes seconds: a TCG guest)
"$TOP" -b -d 0.5 -p "$la,list-b" >"$TMP/list.out" 2>&1 &
tp=$!
check top/pid-list "$(grep -E '^list-' "$TMP/list.out" | sort -u | tr '\n' ' ')" \
	frames_show "$TMP/list.out" $tp '^list-a ' '^list-b '
kill -INT $tp
wait $tp 2>/dev/null
kill $la $lb
wait $la $lb 2>/dev/null
exit 0
