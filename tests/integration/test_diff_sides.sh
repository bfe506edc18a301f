#!/usr/bin/env bash
# kvmmmu-diff on generated runs (no KVM needed, so every host runs it): the
# sides' names (the user's, else their files', else letters), more than two
# sides (each against the first, as benchstat's columns), and --fail-on, the
# exit status CI gates on: it trips past its threshold only, only on a
# significant change where the rows were tested, and a gate that matches
# nothing is an error, not a pass.
source "$(dirname "$0")/../lib.sh"

DIFF=$BUILD/kvmmmu-diff
# synth FILE FAULTS [FAULT_NS_BUCKET]: one run of VM vm1, its faults, and
# (with a bucket) a fault_ns histogram of FAULTS faults all in that bucket
synth() {
	{
		printf '# kvmmmu-csv 2\n# tool=kvmmmu-hist\n# version=0.1.0\n# label=%s\n' "${1##*/}"
		printf 'ts,pid,comm,vcpu,source,metric,le,value,vm\n'
		printf '1.0,100,qemu,,bpf,faults,,%s,vm1\n' "$2"
		printf '1.0,100,qemu,,bpf,ret_pf_fixed,,%s,vm1\n' "$2"
		if [ -n "${3:-}" ]; then
			printf '1.0,100,qemu,,bpf,fault_ns,%s,%s,vm1\n' "$3" "$2"
			printf '1.0,100,qemu,,bpf,fault_ns,+Inf,%s,vm1\n' "$2"
			printf '1.0,100,qemu,,bpf,fault_ns_count,,%s,vm1\n' "$2"
			printf '1.0,100,qemu,,bpf,fault_ns_sum,,%s,vm1\n' "$(($2 * $3 / 2))"
		fi
	} >"$1"
}
# N: 100 faults at about 1 us; Y: 150 at about 4 us; Z: N again
for i in 1 2 3 4; do
	synth "$TMP/n$i.csv" $((100 + i)) 1023
	synth "$TMP/y$i.csv" $((150 + i)) 4095
	synth "$TMP/z$i.csv" $((100 + i)) 1023
done
N="N=$TMP/n1.csv,$TMP/n2.csv,$TMP/n3.csv,$TMP/n4.csv"
Y="Y=$TMP/y1.csv,$TMP/y2.csv,$TMP/y3.csv,$TMP/y4.csv"
Z="Z=$TMP/z1.csv,$TMP/z2.csv,$TMP/z3.csv,$TMP/z4.csv"
# faults_line OUT: the VM-wide faults row
faults_line() { awk '/^VM vm1$/ { v = 1; next } /^VM / { v = 0 } v && $1 == "faults" { print; exit }' "$1"; }

# names: a file's, as benchstat labels its columns; letters where files
# would not tell the sides apart; the user's where given
"$DIFF" "$TMP/n1.csv" "$TMP/y1.csv" >"$TMP/files.out" 2>&1
check diff-sides/named-after-files "$(head -2 "$TMP/files.out" | tr '\n' ' ') $(grep -m1 'delta' "$TMP/files.out")" \
	eval 'grep -q "^n1: 1 run;" "$TMP/files.out" && grep -q "^y1: 1 run;" "$TMP/files.out" &&
		grep -qE "^ +n1 +y1 +delta$" "$TMP/files.out"'
mkdir -p "$TMP/other"
cp "$TMP/y1.csv" "$TMP/other/n1.csv"
"$DIFF" "$TMP/n1.csv" "$TMP/other/n1.csv" >"$TMP/same.out" 2>&1
check diff-sides/same-file-names-get-letters "$(head -2 "$TMP/same.out" | tr '\n' ' ')" \
	eval 'grep -q "^A: 1 run;" "$TMP/same.out" && grep -q "^B: 1 run;" "$TMP/same.out"'
"$DIFF" "$TMP/n1.csv,$TMP/n2.csv" "$TMP/y1.csv" >"$TMP/list.out" 2>&1
check diff-sides/a-list-gets-letters "$(head -2 "$TMP/list.out" | tr '\n' ' ')" \
	eval 'grep -q "^A: 2 runs;" "$TMP/list.out" && grep -q "^B: 1 run;" "$TMP/list.out"'
"$DIFF" --format csv "$TMP/n1.csv" "$TMP/y1.csv" >"$TMP/files.csv" 2>&1
check diff-sides/csv-columns-named "$(head -1 "$TMP/files.csv")" \
	grep -qx 'vm,vcpu,metric,n1_median,n1_spread_pct,n1_n,y1_median,y1_spread_pct,y1_n,delta_pct,p,significant' "$TMP/files.csv"

# bad input: one line on stderr, exit 1 (files) or 2 (usage)
bad() { one_line_error "diff-sides/bad-$1" "$2" "$DIFF" "${@:3}"; }
bad same-name-twice 2 "N=$TMP/n1.csv" "N=$TMP/y1.csv"
bad name-with-comma-quote 2 "a\"b=$TMP/n1.csv" "$TMP/y1.csv"
bad name-too-long 2 "$(printf 'x%.0s' $(seq 40))=$TMP/n1.csv" "$TMP/y1.csv"
bad name-with-space 2 "bad name=$TMP/n1.csv" "$TMP/y1.csv"
bad name-empty 2 "=$TMP/n1.csv" "$TMP/y1.csv"
bad side-without-files 2 "N=" "$TMP/y1.csv"
# an empty name in a side's list is a slip, not a run fewer (it was skipped)
bad side-empty-file-between 2 "N=$TMP/n1.csv,,$TMP/n2.csv" "$TMP/y1.csv"
bad side-empty-file-after 2 "N=$TMP/n1.csv," "$TMP/y1.csv"
check diff-sides/side-empty-file-says-so "$(cat "$TMP/bad.err")" grep -q 'side N: an empty file name in its list' "$TMP/bad.err"
many=()
for i in 1 2 3 4 5 6 7 8 9; do many+=("S$i=$TMP/n1.csv"); done
bad nine-sides 2 "${many[@]}"
bad same-argument-twice 2 "$TMP/n1.csv" "$TMP/y1.csv" "$TMP/n1.csv"
# one file twice is one run counted twice: its copies agreeing made p=0.029 of one
# run a side. Told by the file, not by its path's spelling
bad same-file-in-a-side 2 "N=$TMP/n1.csv,$TMP/n1.csv,$TMP/n1.csv,$TMP/n1.csv" "$Y"
check diff-sides/same-file-says-which "$(cat "$TMP/bad.err")" \
	grep -q "'$TMP/n1.csv' and '$TMP/n1.csv' are the same file" "$TMP/bad.err"
bad same-file-two-sides 2 "N=$TMP/n1.csv,$TMP/n2.csv" "Y=$TMP/y1.csv,$TMP/../${TMP##*/}/n2.csv"
ln -s "$TMP/y1.csv" "$TMP/link.csv"
bad same-file-through-a-link 2 "$TMP/y1.csv" "$TMP/link.csv"

# a bad number is quoted as written, not as read: '1e3' was 'not 1000'; two
# values of a figure told apart, not both 1.23457e+07
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,1e3,vm1\n' >"$TMP/exp.csv"
bad count-as-written 1 "$TMP/exp.csv" "$TMP/y1.csv"
check diff-sides/count-as-written-says-so "$(cat "$TMP/bad.err")" grep -qF "line 3: faults is a count, not '1e3' (" "$TMP/bad.err"
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,12345678,vm1\n1.0,100,qemu,,bpf,faults,,12345679,vm1\n' >"$TMP/twice.csv"
bad figure-twice-as-written 1 "$TMP/twice.csv" "$TMP/y1.csv"
check diff-sides/figure-twice-as-written-says-so "$(cat "$TMP/bad.err")" \
	grep -qF "line 4: faults is 12345679, and 12345678 on line 3 of the same report" "$TMP/bad.err"
# ... and two counts past 2^53, which are one double, are still two values
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,9007199254740993,vm1\n1.0,100,qemu,,bpf,faults,,9007199254740992,vm1\n' >"$TMP/twice53.csv"
bad figure-twice-past-2-53 1 "$TMP/twice53.csv" "$TMP/y1.csv"

# metadata is whoever recorded the file's (a label, a command line): escaped
# like VM names, no escape sequence reaches the terminal
{
	printf '# kvmmmu-csv 2\n# label=red\033[31m\n# command=kvmmmu-hist -- evil\033]0;title\007\n'
	printf 'ts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,9,vm1\n'
} >"$TMP/esc.csv"
"$DIFF" "$TMP/esc.csv" "$TMP/y1.csv" >"$TMP/esc.out" 2>&1
check diff-sides/metadata-escaped "$(head -3 "$TMP/esc.out" | od -c | grep -c 033) escape bytes; $(head -1 "$TMP/esc.out")" \
	eval '! grep -q "$(printf "\033")" "$TMP/esc.out" && grep -q "label .red\\\\x1b\[31m." "$TMP/esc.out"'

# three sides: Y's and Z's columns beside N's, each tested against N
"$DIFF" "$N" "$Y" "$Z" >"$TMP/three.out" 2>&1
rc=$?
l=$(faults_line "$TMP/three.out")
check diff-sides/three-exit-0 "exit $rc: $(head -c 300 "$TMP/three.out")" test $rc = 0
check diff-sides/three-header-each-against-first "$(grep 'rows tested' "$TMP/three.out")" \
	grep -q 'each side against the first' "$TMP/three.out"
check diff-sides/three-columns "$(grep -E '^ +N +Y' "$TMP/three.out")" \
	grep -qE '^ +N +Y +delta +Z +delta$' "$TMP/three.out"
check diff-sides/three-y-flagged-z-not "$l" \
	eval 'echo "$l" | grep -qE "^  faults +102 ±  1% +152 ±  1% +\+48\.8%  \(p=0\.029 n=4\+4\) +102 ±  1% +~  \(p=1\.000 n=4\+4\)$"'
check diff-sides/three-shift-lines "$(grep shifted "$TMP/three.out")" \
	eval 'grep -q "vm1 fault_ns: Y shifted by 2.00 doublings from N" "$TMP/three.out" &&
		grep -q "vm1 fault_ns: Z shifted by 0.00 doublings from N" "$TMP/three.out"'
# a side with fewer runs: its deltas only, said so, and the others still tested
"$DIFF" "$N" "$Y" "Z=$TMP/z1.csv" >"$TMP/mixed.out" 2>&1
check diff-sides/mixed-runs-header "$(sed -n 4,5p "$TMP/mixed.out")" \
	eval 'grep -q "^[0-9]* rows tested .*each side against the first" "$TMP/mixed.out" &&
		grep -q "^Z: fewer than 4 runs, only deltas are shown" "$TMP/mixed.out" &&
		[ "$(faults_line "$TMP/mixed.out" | grep -c "(p=0.029 n=4+4)")" = 1 ]'
"$DIFF" --format csv "$N" "$Y" "$Z" >"$TMP/three.csv" 2>&1
check diff-sides/three-csv-header "$(head -1 "$TMP/three.csv")" \
	grep -qx 'vm,vcpu,metric,N_median,N_spread_pct,N_n,Y_median,Y_spread_pct,Y_n,Y_delta_pct,Y_p,Y_significant,Z_median,Z_spread_pct,Z_n,Z_delta_pct,Z_p,Z_significant' "$TMP/three.csv"
l=$(grep '^vm1,,faults,' "$TMP/three.csv")
check diff-sides/three-csv-row "$l" eval '[ "$l" = "vm1,,faults,102.5,1.46,4,152.5,0.984,4,48.7805,0.02857,1,102.5,1.46,4,0,1,0" ]'
# a run without faults rows did not count them: no faults, faults/s or share
# of the faults is derived from it (they once read faults 0, -100%, shares 0)
for i in 1 2 3 4; do
	for s in n y; do
		{
			grep -v ',bpf,faults,' "$TMP/$s$i.csv"
			printf '1.0,0,kvmmmu,,bpf,traced_ns,,1000000000,\n1.0,100,qemu,,bpf,path_tdp_mmu,,50,vm1\n'
		} >"$TMP/nf$s$i.csv"
	done
done
NF="N=$TMP/nfn1.csv,$TMP/nfn2.csv,$TMP/nfn3.csv,$TMP/nfn4.csv"
"$DIFF" --all "$NF" "Y=$TMP/nfy1.csv,$TMP/nfy2.csv,$TMP/nfy3.csv,$TMP/nfy4.csv" >"$TMP/nofaults.out" 2>&1
rc=$?
check diff-sides/no-faults-rows-no-derived-figures "exit $rc: $(grep -E '^  (faults|ret_pf|path)' "$TMP/nofaults.out" | head -3)" \
	eval '[ $rc = 0 ] && grep -q "^  fault_ns p99 " "$TMP/nofaults.out" &&
		! grep -qE "^  (faults|ret_pf_fixed %|path_tdp_mmu %)" "$TMP/nofaults.out"'
# a later side without them: its column shows none ("-"), as for any figure it lacks
"$DIFF" --all "$N" "Y=$TMP/nfy1.csv,$TMP/nfy2.csv,$TMP/nfy3.csv,$TMP/nfy4.csv" "$Z" >"$TMP/nofaults.out" 2>&1
l=$(faults_line "$TMP/nofaults.out")
check diff-sides/no-faults-rows-side-shows-none "$l" \
	eval 'echo "$l" | grep -qE "^  faults +102 ±  1% +- +102 ±  1% +~  \(p=1\.000 n=4\+4\)$"'
# a histogram without its _max row has no max (it once read "fault_ns max 0");
# with the row, the max as written
"$DIFF" --all "$N" "$Y" >"$TMP/nomax.out" 2>&1
for i in 1 2 3 4; do
	sed 's/^\(.*\),fault_ns_count,,\([0-9]*\),vm1$/&\n\1,fault_ns_max,,1000,vm1/' "$TMP/n$i.csv" >"$TMP/mn$i.csv"
	sed 's/^\(.*\),fault_ns_count,,\([0-9]*\),vm1$/&\n\1,fault_ns_max,,4000,vm1/' "$TMP/y$i.csv" >"$TMP/my$i.csv"
done
"$DIFF" --all "N=$TMP/mn1.csv,$TMP/mn2.csv,$TMP/mn3.csv,$TMP/mn4.csv" \
	"Y=$TMP/my1.csv,$TMP/my2.csv,$TMP/my3.csv,$TMP/my4.csv" >"$TMP/max.out" 2>&1
l=$(grep '^  fault_ns max' "$TMP/nomax.out" "$TMP/max.out" | head -2)
check diff-sides/hist-max-only-where-written "$l" \
	eval 'grep -q "^  fault_ns p99 " "$TMP/nomax.out" && ! grep -q "^  fault_ns max" "$TMP/nomax.out" &&
		grep -qE "^  fault_ns max +1k ± +0% +4k ± +0% +\+300\.0%" "$TMP/max.out"'
if command -v gnuplot >/dev/null; then
	"$DIFF" --plot "$TMP/three.svg" "$N" "$Y" "$Z" >/dev/null 2>"$TMP/plot.err"
	check diff-sides/three-plot-every-side "$(cat "$TMP/plot.err") $(grep -o 'kvmmmu-diff: [^<]*' "$TMP/three.svg" | head -1)" \
		eval 'grep -q "N (n1.csv, 4 runs) vs Y (y1.csv, 4 runs) vs Z (z1.csv, 4 runs)" "$TMP/three.svg" &&
			grep -q "doublings shifted from N: Y 2.00, Z 0.00" "$TMP/three.svg"'
	# a side without samples keeps its place: the blocks after it are not shifted
	# (its blank lines once merged with the next separator: C's curve came
	# under B's name, and C had none); in the SVG, B's group holds its key
	# line alone, C's its key line and its curve
	synth_hist() { # FILE FAULTS [BUCKET]: two buckets, half the faults in each
		{
			printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n'
			printf '1.0,100,qemu,,bpf,faults,,%s,vm1\n1.0,100,qemu,,bpf,ret_pf_fixed,,%s,vm1\n' "$2" "$2"
			[ -z "${3:-}" ] || printf '1.0,100,qemu,,bpf,fault_ns,%s,%s,vm1\n1.0,100,qemu,,bpf,fault_ns,%s,%s,vm1\n1.0,100,qemu,,bpf,fault_ns,+Inf,%s,vm1\n1.0,100,qemu,,bpf,fault_ns_count,,%s,vm1\n1.0,100,qemu,,bpf,fault_ns_sum,,%s,vm1\n' \
				"$3" $(($2 / 2)) $(($3 * 4 + 3)) "$2" "$2" "$2" $(($2 * $3))
		} >"$1"
	}
	synth_hist "$TMP/pn.csv" 100 1023
	synth_hist "$TMP/pb.csv" 120
	synth_hist "$TMP/pc.csv" 140 16383
	"$DIFF" --plot "$TMP/empty.svg" "N=$TMP/pn.csv" "B=$TMP/pb.csv" "C=$TMP/pc.csv" >/dev/null 2>"$TMP/plot.err"
	# moves of the last panel's group of side K: 1 (the key's line), 2 with a curve
	moves() { awk -v id="gnuplot_plot_$1b" 'index($0, "id=\"" id "\"") { p = 1; n = 0; next } p && /<path stroke=/ { n = gsub(/M/, "M"); p = 0 } END { print n }' "$TMP/empty.svg"; }
	check diff-sides/plot-empty-side-keeps-its-place "B's group $(moves 2) moves, C's $(moves 3); $(cat "$TMP/plot.err")" \
		eval '[ "$(moves 2)" = 1 ] && [ "$(moves 3)" -ge 2 ] && grep -q "shifted from N: B -, C 4.00" "$TMP/empty.svg"'
	# a VM name or label is whoever recorded the CSV's to choose: never gnuplot
	# commands (a quote once ended the title string and system() ran). The
	# command's path is relative, run in $TMP: a VM name is kept to 63 bytes,
	# and $TMP's own path is as long as the run's directory makes it.
	for side in qa qb; do
		evil="x'; system('touch pwned'); print '"
		{
			printf "# kvmmmu-csv 2\n# label=%s\nts,pid,comm,vcpu,source,metric,le,value,vm\n" "$evil"
			printf '1.0,100,qemu,,bpf,faults,,9,"%s"\n1.0,100,qemu,,bpf,ret_pf_fixed,,9,"%s"\n' "$evil" "$evil"
		} >"$TMP/$side.csv"
	done
	(cd "$TMP" && "$DIFF" --plot evil.svg qa.csv qb.csv >/dev/null 2>&1)
	check diff-sides/plot-runs-no-command-from-csv "$(ls "$TMP/pwned" 2>&1); $(grep -o 'VM x[^<]*' "$TMP/evil.svg" | head -1)" \
		eval '[ ! -e "$TMP/pwned" ] && grep -qF "VM $evil: outcomes" "$TMP/evil.svg"'
	# kvmmmu-load's own rows alone: nothing to plot, and the message names the
	# file (its path was read after the side's argument list was freed)
	for side in la lb; do
		printf '# kvmmmu-csv 3\nts,pid,comm,vcpu,source,metric,le,value,vm,vm_index\n1.0,100,load,,load,populate_s,,0.5,vm1,1\n' \
			>"$TMP/$side.csv"
	done
	bad plot-nothing 1 --plot "$TMP/load.svg" "$TMP/la.csv" "$TMP/lb.csv"
	check diff-sides/plot-nothing-names-the-file "$(cat "$TMP/bad.err")" \
		grep -qF "no VM figures in $TMP/la.csv)" "$TMP/bad.err"
else
	skip diff-sides/three-plot "no gnuplot (make deps installs gnuplot-nox)"
fi

# --fail-on: Y's faults rose 48.8% (significant), its fault_ns p99 about 4x
gate() { # gate NAME WANT-EXIT GREP-STDERR ARGS...
	local name=$1 want=$2 line=$3
	shift 3
	"$DIFF" "$@" >"$TMP/gate.out" 2>"$TMP/gate.err"
	local rc=$?
	check "diff-sides/fail-on-$name" "exit $rc (want $want): $(head -c 300 "$TMP/gate.err")" \
		eval '[ $rc = "$want" ] && { [ -z "$line" ] && [ ! -s "$TMP/gate.err" ] || grep -q "$line" "$TMP/gate.err"; }'
}
gate rise-trips 3 "^kvmmmu-diff: --fail-on '^faults\$:+10%': VM vm1 faults: Y +48.8% from N (p=0.029 n=4+4)$" \
	--fail-on '^faults$:+10%' "$N" "$Y"
gate rise-below-threshold 0 "" --fail-on '^faults$:+50%' "$N" "$Y"
gate fall-not-a-rise 0 "" --fail-on '^faults$:-10%' "$N" "$Y"
gate either-way 3 "Y +48.8% from N" --fail-on '^faults$:10%' "$N" "$Y"
gate default-any-rise 3 "fault_ns p99: Y" --fail-on 'fault_ns p99' "$N" "$Y"
gate unchanged-side-passes 0 "" --fail-on '^faults$' "$N" "$Z"
gate only-the-side-that-moved 3 "VM vm1 faults: Y" --fail-on '^faults$:+10%' "$N" "$Z" "$Y"
check diff-sides/fail-on-names-no-unmoved-side "$(cat "$TMP/gate.err")" eval '! grep -q ": Z " "$TMP/gate.err"'
# still the report on stdout, whatever the gate said
check diff-sides/fail-on-report-still-printed "$(head -3 "$TMP/gate.out")" grep -q '^VM vm1$' "$TMP/gate.out"
# tested rows count only when significant: 4 runs that overlap move the median, not p
for i in 1 2 3 4; do synth "$TMP/o$i.csv" $((100 + i * 3)); done
gate tested-not-significant 0 "" --fail-on '^faults$' "$N" "O=$TMP/o1.csv,$TMP/o2.csv,$TMP/o3.csv,$TMP/o4.csv"
# one run a side: the change of the medians alone, as the report shows it
gate one-run-delta-alone 3 "VM vm1 faults: y1 +49.5% from n1$" --fail-on '^faults$:+10%' "$TMP/n1.csv" "$TMP/y1.csv"
bad fail-on-matches-nothing 1 --fail-on zzz "$N" "$Y"
check diff-sides/fail-on-matches-nothing-says-so "$(cat "$TMP/bad.err")" \
	grep -q "fail-on 'zzz': no figure compared matches it" "$TMP/bad.err"
# a later side with none of the figures a gate matches cannot be judged by it:
# an error naming the side, as two sides' "matches nothing" (it once passed)
bad fail-on-side-lacks-it 1 --fail-on '^faults$' "$N" "Y=$TMP/nfy1.csv,$TMP/nfy2.csv,$TMP/nfy3.csv,$TMP/nfy4.csv" "$Z"
check diff-sides/fail-on-side-lacks-it-says-which "$(cat "$TMP/bad.err")" \
	grep -q "fail-on '^faults\$': Y has no figure it matches (nothing to compare with N)" "$TMP/bad.err"
bad fail-on-bad-threshold 2 --fail-on 'faults:+10' "$N" "$Y"
bad fail-on-bad-regex 2 --fail-on '(faults' "$N" "$Y"
bad fail-on-no-metric 2 --fail-on ':+10%' "$N" "$Y"

# CSV v3: a process's two VMs (vm_index 1 and 2, as KVM's selftests make
# them) are compared each with its own: VM 2 moved, VM 1 did not
synth3() {
	{
		printf '# kvmmmu-csv 3\n# tool=kvmmmu-hist\n# version=0.1.0\n'
		printf 'ts,pid,comm,vcpu,source,metric,le,value,vm,vm_index\n'
		printf '1.0,%s,dirty_log_page_,,bpf,faults,,%s,dirty_log_page_,1\n' "$2" "$3"
		printf '1.0,%s,dirty_log_page_,,bpf,faults,,%s,dirty_log_page_,2\n' "$2" "$4"
		printf '1.0,0,kvmmmu,,bpf,drops,,0,,\n'
	} >"$1"
}
for i in 1 2 3 4; do
	synth3 "$TMP/p$i.csv" $((200 + i)) $((1000 + i)) $((2000 + i))
	synth3 "$TMP/q$i.csv" $((300 + i)) $((1000 + i)) $((3000 + i))
done
"$DIFF" "P=$TMP/p1.csv,$TMP/p2.csv,$TMP/p3.csv,$TMP/p4.csv" \
	"Q=$TMP/q1.csv,$TMP/q2.csv,$TMP/q3.csv,$TMP/q4.csv" >"$TMP/v3.out" 2>"$TMP/v3.err"
rc=$?
check diff-sides/v3-two-vms-exit-0 "exit $rc: $(head -c 200 "$TMP/v3.err")" test $rc = 0
vmfaults() { awk -v vm="VM $2" '$0 == vm { v = 1; next } /^VM / { v = 0 } v && $1 == "faults" { print; exit }' "$1"; }
check diff-sides/v3-first-vm-unchanged "$(vmfaults "$TMP/v3.out" dirty_log_page_)" \
	eval 'vmfaults "$TMP/v3.out" dirty_log_page_ | grep -q "~"'
check diff-sides/v3-second-vm-its-own "$(vmfaults "$TMP/v3.out" 'dirty_log_page_ #2')" \
	eval 'vmfaults "$TMP/v3.out" "dirty_log_page_ #2" | grep -q "+49\.9"'
exit 0
