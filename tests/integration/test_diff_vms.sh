#!/usr/bin/env bash
# kvmmmu-diff on hand-written runs (no KVM needed, so every host runs it):
# which VM is which. Two VMs of one name in a run (QEMU without -name is
# named after its process) keep their own figures as NAME and NAME #2; a VM
# on one side only is shown, "-" on the other, compared with nothing; and
# names, whoever chose them, reach a terminal or a CSV reader as text: UTF-8
# as such where the locale writes it, control characters and invalid bytes
# as \xNN, in text and CSV alike (issue 45).
source "$(dirname "$0")/../lib.sh"

DIFF=$BUILD/kvmmmu-diff
FIX=$(cd "$(dirname "$0")/../hostile/fixtures" && pwd)
A=$FIX/diff-same-name-a.csv B=$FIX/diff-same-name-b.csv
# vm_faults OUT NAME: the faults row of VM NAME's VM-wide section
vm_faults() { awk -v vm="VM $2" '$0 == vm { v = 1; next } /^VM / { v = 0 } v && $1 == "faults" { print; exit }' "$1"; }

# --- same name: A's qemu of 1025 and 2049 faults (pids 200, 201: written in
# the file the other way round), B's of 1100 and 2200; each meets its own
"$DIFF" "$A" "$B" >"$TMP/same.out" 2>"$TMP/same.err"
rc=$?
check diff-vms/same-name-exit-0 "exit $rc: $(head -c 300 "$TMP/same.err")" test $rc = 0
check diff-vms/same-name-first "$(vm_faults "$TMP/same.out" qemu)" \
	eval 'vm_faults "$TMP/same.out" qemu | grep -qE "^  faults +1.02k ± +∞ +1.1k ± +∞ +\+7\.3%$"'
check diff-vms/same-name-second "$(vm_faults "$TMP/same.out" 'qemu #2')" \
	eval 'vm_faults "$TMP/same.out" "qemu #2" | grep -qE "^  faults +2.05k ± +∞ +2.2k ± +∞ +\+7\.4%$"'
check diff-vms/same-name-vcpu-too "$(grep -A1 '^VM qemu #2 vCPU 0$' "$TMP/same.out")" \
	eval 'grep -A1 "^VM qemu #2 vCPU 0$" "$TMP/same.out" | grep -qE "^  faults +2.05k"'
"$DIFF" --format csv "$A" "$B" >"$TMP/same.csv" 2>&1
check diff-vms/same-name-csv "$(grep -E '^"?qemu' "$TMP/same.csv" | cut -d, -f1-5,7 | tr '\n' ' ')" \
	eval 'grep -q "^qemu,,faults,1025,inf,1,1100," "$TMP/same.csv" &&
		grep -q "^qemu #2,,faults,2049,inf,1,2200," "$TMP/same.csv" &&
		grep -q "^qemu #2,0,faults,2049," "$TMP/same.csv"'
# a VM named "qemu #2" beside two qemu, and two long names cut alike: five
# VMs, five sections, no figure merged into another's
cp "$FIX/diff-name-clash.csv" "$TMP/clash2.csv"
"$DIFF" --all --format csv "$FIX/diff-name-clash.csv" "$TMP/clash2.csv" >"$TMP/clash.csv" 2>&1
check diff-vms/name-clash-kept-apart "$(cut -d, -f1,3,4 "$TMP/clash.csv" | tr '\n' ' ')" \
	eval '[ "$(grep -c ",,faults," "$TMP/clash.csv")" = 5 ] &&
		[ "$(cut -d, -f1 "$TMP/clash.csv" | sort -u | wc -l)" = 6 ] &&
		[ "$(grep ",,faults," "$TMP/clash.csv" | cut -d, -f4 | sort -n | tr "\n" " ")" = "10 20 30 40 50 " ]'

# --- a VM on one side only: db on A's, web on B's; shown, its other side
# "-", said in the header, no change (it was dropped without a word)
check diff-vms/one-side-first "$(vm_faults "$TMP/same.out" db)" \
	eval 'vm_faults "$TMP/same.out" db | grep -qE "^  faults +9 ± +∞ +- *$"'
check diff-vms/one-side-later "$(vm_faults "$TMP/same.out" web)" \
	eval 'vm_faults "$TMP/same.out" web | grep -qE "^  faults +- +5 ± +∞$"'
check diff-vms/one-side-said "$(grep 'is not in' "$TMP/same.out")" \
	eval 'grep -qx "VM db is not in diff-same-name-b: its figures show \"-\" there, compared with nothing" "$TMP/same.out" &&
		grep -qx "VM web is not in diff-same-name-a: its figures show \"-\" there, compared with nothing" "$TMP/same.out"'
"$DIFF" --all "$A" "$B" >"$TMP/all.out" 2>&1
check diff-vms/one-side-all "$(vm_faults "$TMP/all.out" web)" \
	eval 'vm_faults "$TMP/all.out" db | grep -q "9 ± " && vm_faults "$TMP/all.out" web | grep -q "5 ± "'
# CSV: its other side's columns empty, n 0; no delta, p or verdict
check diff-vms/one-side-csv "$(grep -E '^(db|web),' "$TMP/same.csv" | tr '\n' ' ')" \
	eval 'grep -qx "db,,faults,9,inf,1,,,0,,," "$TMP/same.csv" && grep -qx "web,,faults,,,0,5,inf,1,,," "$TMP/same.csv"'
# three sides: the middle one lacks web, the last has it
"$DIFF" "$A" "$B" "C=$TMP/clash2.csv" >"$TMP/three.out" 2>&1
check diff-vms/one-side-three-said "$(grep 'is not in' "$TMP/three.out" | tr '\n' ' ')" \
	eval 'grep -q "^VM web is not in diff-same-name-a, C: " "$TMP/three.out" &&
		grep -q "^VM db is not in diff-same-name-b, C: " "$TMP/three.out"'
# a gate judges what was compared: web's 5 faults from none is no rise
"$DIFF" --fail-on '^faults$:+50%' "$A" "$B" >/dev/null 2>"$TMP/gate.err"
rc=$?
check diff-vms/one-side-no-gate "exit $rc: $(cat "$TMP/gate.err")" eval '[ $rc = 0 ] && [ ! -s "$TMP/gate.err" ]'

# --- names: UTF-8, CR and LF, ESC and BEL and DEL, invalid UTF-8, C1 and a
# bidi override, a backslash and a comma
N=$FIX/diff-names.csv
cp "$N" "$TMP/names2.csv"
esc=$(printf '\033') bel=$(printf '\007') cr=$(printf '\r')
LC_ALL=C.UTF-8 "$DIFF" "$N" "$TMP/names2.csv" >"$TMP/utf8.out" 2>&1
check diff-vms/utf8-shown-as-utf8 "$(grep '^VM w' "$TMP/utf8.out")" \
	grep -qx "VM w$(printf '\303\251')b-$(printf '\344\270\255')" "$TMP/utf8.out"
check diff-vms/utf8-controls-escaped "$(grep '^VM ' "$TMP/utf8.out" | od -c | grep -cE '033|007|\\r|177') raw controls" \
	eval 'grep -qx "VM cr\\\\x0dlf\\\\x0aend" "$TMP/utf8.out" &&
		grep -qx "VM esc\\\\x1b\[31mbel\\\\x07del\\\\x7f" "$TMP/utf8.out" &&
		grep -qx "VM bad\\\\xff\\\\xc3" "$TMP/utf8.out" &&
		grep -qx "VM c1\\\\xc2\\\\x9bx\\\\xe2\\\\x80\\\\xaey" "$TMP/utf8.out" &&
		grep -qxF "VM back\\\\\\\\slash,comma \"q\"" "$TMP/utf8.out"'
LC_ALL=C "$DIFF" "$N" "$TMP/names2.csv" >"$TMP/c.out" 2>&1
check diff-vms/c-locale-escapes-utf8 "$(grep '^VM w' "$TMP/c.out")" \
	grep -qx 'VM w\\xc3\\xa9b-\\xe4\\xb8\\xad' "$TMP/c.out"
LC_ALL=C "$DIFF" --format csv "$N" "$TMP/names2.csv" >"$TMP/names.csv" 2>&1
check diff-vms/csv-no-raw-controls "$(od -c "$TMP/names.csv" | grep -E '033|007|\\r' | head -2)" \
	eval '! grep -q "[$esc$bel$cr]" "$TMP/names.csv" && ! LC_ALL=C grep -q "$(printf "\177")" "$TMP/names.csv"'
# one line a row: the header and the six VMs (a CR or LF in a name once
# made a row two lines); UTF-8 as written, whatever the locale
check diff-vms/csv-one-line-a-row "$(wc -l <"$TMP/names.csv") lines" \
	eval '[ "$(wc -l <"$TMP/names.csv")" = 7 ] && grep -q "^cr\\\\x0dlf\\\\x0aend,,faults,12," "$TMP/names.csv" &&
		grep -q "^w$(printf "\303\251")b-$(printf "\344\270\255"),,faults,11," "$TMP/names.csv"'
check diff-vms/csv-quoted-as-rfc4180 "$(grep '^"back' "$TMP/names.csv")" \
	grep -qxF '"back\\\\slash,comma ""q""",,faults,16,inf,1,16,inf,1,0,,0' "$TMP/names.csv"
exit 0
