#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-diff on real runs: a change it must flag (twice the dirty-log
# passes: twice the faults), an A/A comparison where the counts must not
# move, one run a side (deltas only), CSV output, kvmmmu-load's own CSVs,
# and bad input (one line, exit 1 or 2).
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip diff/all "$why"
	exit 0
fi
HIST=$BUILD/kvmmmu-hist
LOAD=$BUILD/kvmmmu-load
DIFF=$BUILD/kvmmmu-diff

a="" b="" a2=""
for i in 1 2 3 4 5 6 7 8; do
	"$HIST" --csv "$TMP/a$i.csv" --label one-pass -- "$LOAD" --name vm1 --vcpus 2 --mem 8M \
		--dirty-log 1 --csv "$TMP/la$i.csv" >/dev/null 2>&1 || fail diff/run-a$i "kvmmmu-hist failed"
	if [ $i -le 4 ]; then
		a="$a,$TMP/a$i.csv"
		"$HIST" --csv "$TMP/b$i.csv" --label three-passes -- "$LOAD" --name vm1 --vcpus 2 \
			--mem 8M --dirty-log 3 --csv "$TMP/lb$i.csv" >/dev/null 2>&1 ||
			fail diff/run-b$i "kvmmmu-hist failed"
		b="$b,$TMP/b$i.csv"
	else
		a2="$a2,$TMP/a$i.csv"
	fi
done
a=${a#,} b=${b#,} a2=${a2#,}

# What kvmmmu-diff must say follows from KVM's own counts (kvmmmu-load's
# CSVs; kvmmmu counts them exactly, as test_hist checks): the shadow MMU
# makes every run's faults the same, nested paging moves them by a few.
# kvm_faults VCPU CSV...: each run's pf_taken, of VCPU ("": all), one a line
kvm_faults() {
	local v=$1 f
	shift
	for f in "$@"; do
		awk -F, -v v="$v" '!/^#/ && $5 == "kvm_stats" && $6 == "pf_taken" && $4 != "" && $7 == "" &&
			(v == "" || $4 == v) { n += $8; seen = 1 } END { if (seen) print n }' "$f"
	done
}
# median: of the numbers on stdin (kvmmmu-diff's statistic a side)
median() { sort -n | awk '{ x[NR] = $1 } END { if (NR) printf "%.1f\n", (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2) }'; }
# want_delta VCPU A-CSVS B-CSVS: the delta kvmmmu-diff prints, as it prints it
want_delta() {
	local ma mb
	# shellcheck disable=SC2086 # lists of files
	ma=$(kvm_faults "$1" $2 | median) mb=$(kvm_faults "$1" $3 | median)
	[ -n "$ma" ] && [ -n "$mb" ] && awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%+.1f%%", 100 * (b - a) / a }'
}
LA="$TMP/la1.csv $TMP/la2.csv $TMP/la3.csv $TMP/la4.csv"
LB="$TMP/lb1.csv $TMP/lb2.csv $TMP/lb3.csv $TMP/lb4.csv"
LA2="$TMP/la5.csv $TMP/la6.csv $TMP/la7.csv $TMP/la8.csv"
# esc: an ERE matching its argument literally
esc() { sed 's/[.+*?()|^$[\]/\\&/g' <<<"$1"; }

# a real change: faults double (two more passes over every page), per VM and per vCPU
"$DIFF" "N=$a" "Y=$b" >"$TMP/ab.out" 2>&1
rc=$?
check diff/ab-exit-0 "exit $rc: $(head -3 "$TMP/ab.out")" test $rc = 0
check diff/ab-header "$(head -3 "$TMP/ab.out")" grep -q '^N: 4 runs; .*label .one-pass.' "$TMP/ab.out"
check diff/ab-tested "$(sed -n 3p "$TMP/ab.out")" grep -q 'rows tested (Mann-Whitney U, alpha 0.05)' "$TMP/ab.out"
# (faults about double: +100.0% where every run is the same, +99.9% where
# nested paging adds a few faults to the populate pass)
want=$(want_delta "" "$LA" "$LB")
l=$(awk '/^VM vm1$/ { v = 1; next } /^VM / { v = 0 } v && $1 == "faults" { print; exit }' "$TMP/ab.out")
check diff/ab-faults-significant "$l (KVM's medians: ${want:-no KVM counts})" \
	eval '[ -n "$want" ] && echo "$l" | grep -qE "$(esc "$want")  \(p=0\.0[0-4][0-9] n=4\+4\)"'
want=$(want_delta 1 "$LA" "$LB")
l=$(awk '/^VM vm1 vCPU 1$/ { v = 1; next } /^VM / { v = 0 } v && $1 == "faults" { print; exit }' "$TMP/ab.out")
check diff/ab-vcpu-faults-significant "$l (KVM's medians: ${want:-no KVM counts})" \
	eval '[ -n "$want" ] && echo "$l" | grep -qE "$(esc "$want")  \(p=0\.0[0-4][0-9]"'
# the latency figure of this probe mode (lib.sh: LAT), its whole distribution
check diff/ab-distribution-shift "no Wasserstein line for $LAT: $(grep -m1 'shifted by' "$TMP/ab.out")" \
	grep -q "$LAT: Y shifted by [0-9.]* doublings from N" "$TMP/ab.out"
# the rate over the traced window (traced_ns), a key row: shown and tested
l=$(awk '/^VM vm1$/ { v = 1; next } /^VM / { v = 0 } v && $1 == "faults/s" { print; exit }' "$TMP/ab.out")
check diff/ab-fault-rate-row "$l" eval 'echo "$l" | grep -qE "\(p=[0-9.]+ n=4\+4\)$"'
# the sides ran different kvmmmu-load options: said, with both
check diff/ab-warns-different-workloads "$(sed -n 3p "$TMP/ab.out")" \
	grep -q "^warning: the sides measured different workloads (N '$LOAD --name vm1 --vcpus 2 --mem 8M --dirty-log 1', Y '$LOAD --name vm1 --vcpus 2 --mem 8M --dirty-log 3')" "$TMP/ab.out"
# Holm across every row: 4 runs a side cannot beat it, and the header says what it would take
"$DIFF" --holm "N=$a" "Y=$b" >"$TMP/holm.out" 2>&1
l=$(awk '/^VM vm1$/ { v = 1; next } v && $1 == "faults" { print; exit }' "$TMP/holm.out")
check diff/holm-hides-4-runs "$l" eval 'echo "$l" | grep -qE "~  \(p="'

# A/A: the same workload both sides: not flagged; where KVM counted the same
# faults in every run (the shadow MMU) the counts do not move at all (p=1)
"$DIFF" "A=$a" "B=$a2" >"$TMP/aa.out" 2>&1
l=$(awk '/^VM vm1$/ { v = 1; next } v && $1 == "faults" { print; exit }' "$TMP/aa.out")
# shellcheck disable=SC2086 # lists of files
distinct=$(kvm_faults "" $LA $LA2 | sort -u | wc -l)
if [ "$distinct" = 1 ]; then
	check diff/aa-faults-not-flagged "$l (KVM: the same faults in all 8 runs)" \
		eval 'echo "$l" | grep -qE "~  \(p=1\.000 n=4\+4\)"'
else
	# shellcheck disable=SC2086
	check diff/aa-faults-not-flagged "$l (KVM: $distinct different counts in 8 runs: $(kvm_faults "" $LA $LA2 | sort -u | tr '\n' ' '))" \
		eval '[ "$distinct" -gt 1 ] && echo "$l" | grep -qE "~  \(p=(0\.0[5-9][0-9]|0\.[1-9][0-9]*|1\.000) n=4\+4\)"'
fi
check diff/aa-same-workload "$(grep warning "$TMP/aa.out")" eval '! grep -q "different workloads" "$TMP/aa.out"'

# one run a side: deltas only, and the header says why
"$DIFF" "$TMP/a1.csv" "$TMP/b1.csv" >"$TMP/one.out" 2>&1
check diff/one-run-says-so "$(sed -n 3p "$TMP/one.out")" grep -q 'significance needs at least 4 runs a side' "$TMP/one.out"
l=$(awk '/^VM vm1$/ { v = 1; next } v && $1 == "faults" { print; exit }' "$TMP/one.out")
want=$(want_delta "" "$TMP/la1.csv" "$TMP/lb1.csv")
check diff/one-run-delta "$l (KVM: ${want:-no KVM counts})" eval '[ -n "$want" ] && echo "$l" | grep -qE "$(esc "$want")$"'

# CSV output; kvmmmu-load's own CSVs (phase times and counts)
"$DIFF" --format csv "N=$a" "Y=$b" >"$TMP/ab.csv"
l=$(grep '^vm1,,faults,' "$TMP/ab.csv")
check diff/csv-row "$l" eval 'echo "$l" | awk -F, "{ exit !(\$4 > 0 && \$7 > \$4 && \$10 > 99 && \$10 < 101 && \$12 == 1) }"'
"$DIFF" "$TMP/la1.csv" "$TMP/lb1.csv" >"$TMP/load.out" 2>&1
check diff/load-phase-rows "$(head -8 "$TMP/load.out")" grep -q 'load iteration_1_dirty_memory_s' "$TMP/load.out"

# --plot: the distributions and shares, drawn by gnuplot
if command -v gnuplot >/dev/null; then
	"$DIFF" --plot "$TMP/ab.png" "N=$a" "Y=$b" >/dev/null 2>"$TMP/plot.err"
	# 360 pixels a panel: the outcomes, and each VM-wide latency histogram the
	# probe mode has (the ones kvmmmu-diff compared above: walk_to_spte_ns
	# from tracepoints; fault_ns, slow_path_ns, ... with function probes)
	h=$((360 * (1 + $(grep -c '^  vm1 [a-z_]*: Y shifted' "$TMP/ab.out"))))
	check diff/plot-png "$(cat "$TMP/plot.err") $(file "$TMP/ab.png"), want 1100 x $h" \
		eval 'file "$TMP/ab.png" | grep -q "PNG image data, 1100 x $h,"'
	"$DIFF" --plot "$TMP/ab.svg" "N=$a" "Y=$b" >/dev/null 2>&1
	check diff/plot-svg "no svg" grep -q '<svg' "$TMP/ab.svg"
	check diff/plot-titles "no VM panel title for $LAT" grep -q "VM vm1: $LAT" "$TMP/ab.svg"
	check diff/plot-no-temp-files "$(ls -d /tmp/kvmmmu-plot.* 2>/dev/null)" \
		eval '! ls -d /tmp/kvmmmu-plot.* >/dev/null 2>&1'
else
	skip diff/plot "no gnuplot (make deps installs gnuplot-nox)"
fi

# bad input: one line on stderr, exit 1 (files) or 2 (usage)
bad() { one_line_error "diff/bad-$1" "$2" "$DIFF" "${@:3}"; }
printf 'ts,pid\n1,2\n' >"$TMP/not.csv"
printf '# kvmmmu-csv 9\n' >"$TMP/v9.csv"
head -c 2000 "$TMP/a1.csv" | head -n -1 >"$TMP/cut.csv"
printf '1.0,7,x,,bpf,faults\n' >>"$TMP/cut.csv"
bad missing-file 1 "$TMP/nonexistent.csv" "$TMP/a1.csv"
bad not-kvmmmu-csv 1 "$TMP/not.csv" "$TMP/a1.csv"
bad version 1 "$TMP/v9.csv" "$TMP/a1.csv"
bad truncated-row 1 "$TMP/cut.csv" "$TMP/a1.csv"
bad nothing-in-common 1 "$TMP/a1.csv" "$TMP/la1.csv"
bad same-side-twice 2 "$TMP/a1.csv" "$TMP/a1.csv"
bad empty-name 2 "=$TMP/a1.csv" "$TMP/b1.csv"
bad one-side 2 "$TMP/a1.csv"
bad bad-alpha 2 --alpha 2 "$TMP/a1.csv" "$TMP/b1.csv"
# --plot is checked before anything is read (exit 2); gnuplot's own failure is one line
bad plot-extension 2 --plot "$TMP/x.jpg" "$TMP/a1.csv" "$TMP/b1.csv"
bad plot-missing-folder 2 --plot /nonexistent/dir/x.png "$TMP/a1.csv" "$TMP/b1.csv"
if command -v gnuplot >/dev/null; then
	mkdir -p "$TMP/folder.png"
	bad plot-gnuplot-fails 1 --plot "$TMP/folder.png" "$TMP/a1.csv" "$TMP/b1.csv"
fi
# a VM name is the VMM's to choose: escape codes and newlines reach no terminal
for side in ea eb; do
	printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,%s,"ev\033[31mil\nvm"\n' \
		"$([ $side = ea ] && echo 10 || echo 20)" >"$TMP/$side.csv"
done
"$DIFF" "$TMP/ea.csv" "$TMP/eb.csv" >"$TMP/escape.out" 2>&1
check diff/vm-name-escaped "$(grep '^VM' "$TMP/escape.out" | od -c | head -3 | tr -s ' ')" \
	eval '! grep -q "$(printf "\033")" "$TMP/escape.out" && grep -q "^VM ev\\\\x1b\[31mil\\\\x0avm$" "$TMP/escape.out"'
bad filter-matches-nothing 1 --filter zzz "$TMP/a1.csv" "$TMP/b1.csv"
check diff/filter-matches-nothing-says-so "$(cat "$TMP/bad.err")" \
	grep -q "no figure matches --filter 'zzz'" "$TMP/bad.err"
# a count kvmmmu never writes (what pandas or a hand edit makes of one): refused,
# with its line, not read as a number (4103.0 was once 94 T faults)
for v in 4103.0 -5 0x10 5.5 1e3 +16; do
	printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,%s,vm1\n' \
		"$v" >"$TMP/count.csv"
	bad "count-$v" 1 "$TMP/count.csv" "$TMP/a1.csv"
	check "diff/count-$v-says-line" "$(cat "$TMP/bad.err")" \
		grep -q "count.csv: line 3: faults is a count" "$TMP/bad.err"
done
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qe\0mu,,bpf,faults,,7,vm1\n' \
	>"$TMP/nul.csv"
bad nul-byte 1 "$TMP/nul.csv" "$TMP/a1.csv"
# cumulative buckets that drop: no histogram kvmmmu writes (p50 once read 0.02 ns)
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,9,vm1\n1.0,100,qemu,,bpf,fault_ns,2047,9,vm1\n1.0,100,qemu,,bpf,fault_ns,4095,3,vm1\n1.0,100,qemu,,bpf,fault_ns,+Inf,9,vm1\n1.0,100,qemu,,bpf,fault_ns_count,,9,vm1\n' \
	>"$TMP/drop.csv"
bad buckets-drop 1 "$TMP/drop.csv" "$TMP/a1.csv"
check diff/buckets-drop-says-line "$(cat "$TMP/bad.err")" grep -q 'line 5: fault_ns le 4095 is below' "$TMP/bad.err"
# one report with a figure twice, two values: neither holds (a later report may repeat it)
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,7,vm1\n1.0,100,qemu,,bpf,faults,,9,vm1\n' \
	>"$TMP/twice.csv"
bad figure-twice 1 "$TMP/twice.csv" "$TMP/a1.csv"
check diff/figure-twice-says-lines "$(cat "$TMP/bad.err")" \
	grep -q 'line 4: faults is 9, and 7 on line 3 of the same report' "$TMP/bad.err"
printf '# kvmmmu-csv 2\nts,pid,comm,vcpu,source,metric,le,value,vm\n1.0,100,qemu,,bpf,faults,,7,vm1\n2.0,100,qemu,,bpf,faults,,9,vm1\n' \
	>"$TMP/reports.csv"
"$DIFF" "$TMP/reports.csv" "$TMP/twice.csv" >/dev/null 2>"$TMP/reports.err"
check diff/later-report-holds "$(cat "$TMP/reports.err")" \
	eval '! grep -q "reports.csv" "$TMP/reports.err"'
bad directory 1 "$TMP" "$TMP/a1.csv"
check diff/directory-says-so "$(cat "$TMP/bad.err")" grep -q 'Is a directory' "$TMP/bad.err"
# endless input is refused at once, not read until memory runs out: /dev/zero
# (a NUL byte), and a line that never ends
timeout 20 "$DIFF" /dev/zero "$TMP/a1.csv" >"$TMP/zero.out" 2>&1
rc=$?
check diff/dev-zero-refused "exit $rc: $(head -c 200 "$TMP/zero.out")" \
	eval 'test $rc = 1 && grep -q "line 1: a NUL byte" "$TMP/zero.out"'
timeout 20 "$DIFF" <(yes | tr -d '\n') "$TMP/a1.csv" >"$TMP/endless.out" 2>&1
rc=$?
check diff/endless-line-refused "exit $rc: $(head -c 200 "$TMP/endless.out")" \
	eval 'test $rc = 1 && grep -q "line 1: longer than 65536 bytes" "$TMP/endless.out"'
"$DIFF" "$TMP/cut.csv" "$TMP/a1.csv" 2>&1 | grep -q 'line [0-9]*: expected 10 fields' &&
	pass diff/truncated-row-line-number || fail diff/truncated-row-line-number "$("$DIFF" "$TMP/cut.csv" "$TMP/a1.csv" 2>&1)"

# two VMs of one name in one run (QEMU without -name is named after its
# process): each keeps its own figures, the second as "NAME #2", numbered by
# pid (the order the processes started in). One of them was kept, 1.02k
# faults of 1025 and 2049, merged without a word (issue 45)
"$HIST" --csv "$TMP/two.csv" -- sh -c "'$LOAD' --mem 4M >/dev/null & '$LOAD' --mem 8M >/dev/null; wait" \
	>/dev/null 2>&1 || fail diff/two-of-one-name-run "kvmmmu-hist failed"
cp "$TMP/two.csv" "$TMP/two-again.csv"
"$DIFF" --all --format csv "$TMP/two.csv" "$TMP/two-again.csv" >"$TMP/two.out" 2>&1
# each VM's faults, as its one vCPU's row has them, by pid: "PID FAULTS" a line
per_pid=$(awk -F, '$4 == "0" && $5 == "bpf" && $6 == "faults" { print $2, $8 }' "$TMP/two.csv" | sort -n)
want=$(echo "$per_pid" | awk 'NR == 1 { printf "kvmmmu-load,,faults,%s\n", $2 } NR == 2 { printf "kvmmmu-load #2,,faults,%s\n", $2 }')
got=$(grep -E '^kvmmmu-load( #2)?,,faults,' "$TMP/two.out" | cut -d, -f1-4)
check diff/two-of-one-name-kept-apart "want '$want', got '$got' (per pid: $per_pid)" \
	eval '[ "$(echo "$per_pid" | wc -l)" = 2 ] && [ -n "$want" ] && [ "$got" = "$want" ]'

# --- generated runs: the geomean is of latency figures only (one unit: a
# count or a share is no time), and the header's tested rows are those with
# two runs a side (ret_pf_emulate is in one of A's runs only): faults and
# ret_pf_fixed %; no path's share, the runs having no path counter (8706350:
# they once read 0 % each, and made 6 rows)
synth() { # synth FILE FAULTS [EMULATE]
	{
		printf '# kvmmmu-csv 2\n# tool=kvmmmu-hist\n# version=0.1.0\n'
		printf 'ts,pid,comm,vcpu,source,metric,le,value,vm\n'
		printf '1.0,100,qemu,,bpf,faults,,%s,vm1\n' "$2"
		printf '1.0,100,qemu,,bpf,ret_pf_fixed,,%s,vm1\n' "$2"
		[ -z "${3:-}" ] || printf '1.0,100,qemu,,bpf,ret_pf_emulate,,%s,vm1\n' "$3"
	} >"$1"
}
synth "$TMP/ga1.csv" 100 1
for i in 2 3 4; do synth "$TMP/ga$i.csv" $((100 + i)); done
for i in 1 2 3 4; do synth "$TMP/gb$i.csv" $((150 + i)) 1; done
"$DIFF" "A=$TMP/ga1.csv,$TMP/ga2.csv,$TMP/ga3.csv,$TMP/ga4.csv" \
	"B=$TMP/gb1.csv,$TMP/gb2.csv,$TMP/gb3.csv,$TMP/gb4.csv" >"$TMP/geo.out" 2>&1
check diff/geomean-of-latency-only "$(grep geomean "$TMP/geo.out")" \
	grep -q 'geomean .* n/a  (no latency figure on both sides)' "$TMP/geo.out"
check diff/header-counts-tested-rows "$(grep 'rows tested' "$TMP/geo.out")" \
	grep -q '^2 rows tested' "$TMP/geo.out"

# what the header promises holds row by row: no p-value below the smallest 4
# and 4 runs can give (ties: the approximation went to 0.013), none at all
# with 3 and 3 ("only deltas"), no spread from one run (benchstat's ±∞), and
# no p in CSV where no test ran
for i in 1 2 3 4; do synth "$TMP/ta$i.csv" 100; synth "$TMP/tb$i.csv" 200; done
"$DIFF" "A=$TMP/ta1.csv,$TMP/ta2.csv,$TMP/ta3.csv,$TMP/ta4.csv" \
	"B=$TMP/tb1.csv,$TMP/tb2.csv,$TMP/tb3.csv,$TMP/tb4.csv" >"$TMP/ties.out" 2>&1
check diff/ties-p-not-below-exact-minimum "$(grep -o 'p=[0-9.]*' "$TMP/ties.out" | sort -u | tr '\n' ' ')" \
	eval 'grep -q "p=" "$TMP/ties.out" && ! grep -o "p=[0-9.]*" "$TMP/ties.out" | awk -F= "\$2 < 0.0285 { bad = 1 } END { exit !bad }"'
"$DIFF" "A=$TMP/ta1.csv,$TMP/ta2.csv,$TMP/ta3.csv" "B=$TMP/tb1.csv,$TMP/tb2.csv,$TMP/tb3.csv" \
	>"$TMP/three.out" 2>&1
check diff/three-runs-no-p "$(grep 'p=' "$TMP/three.out" | head -2)" \
	eval 'grep -q "only deltas are shown" "$TMP/three.out" && ! grep -q "p=" "$TMP/three.out"'
"$DIFF" "$TMP/ta1.csv" "$TMP/tb1.csv" >"$TMP/one.out" 2>&1
check diff/one-run-spread-infinite "$(grep '  faults ' "$TMP/one.out")" grep -q '^  faults .*±   ∞' "$TMP/one.out"
"$DIFF" --format csv "$TMP/ta1.csv" "$TMP/tb1.csv" >"$TMP/one.csv" 2>&1
check diff/csv-no-p-untested "$(grep ',faults,' "$TMP/one.csv")" \
	awk -F, '$3 == "faults" { f = 1; if ($(NF - 1) != "" || $5 != "inf") bad = 1 } END { exit !(f && !bad) }' "$TMP/one.csv"

# many VMs a side: every one compared (lookups by hash and tree, not by walks:
# 8,000 VMs a side took 95 s, 0.5 s now; timed in no test, only counted here)
for side in A B; do
	awk -v base=$([ $side = A ] && echo 100 || echo 120) 'BEGIN {
		print "# kvmmmu-csv 2"; print "ts,pid,comm,vcpu,source,metric,le,value,vm"
		for (i = 0; i < 2000; i++)
			printf "1.0,%d,qemu,,bpf,faults,,%d,vm%d\n", 1000 + i, base + i, i }' >"$TMP/many$side.csv"
done
"$DIFF" "$TMP/manyA.csv" "$TMP/manyB.csv" >"$TMP/many.out" 2>&1
check diff/many-vms-all-compared "$(grep -c '^VM vm' "$TMP/many.out") VM sections" \
	eval '[ "$(grep -c "^VM vm" "$TMP/many.out")" = 2000 ] && grep -q "^VM vm1999$" "$TMP/many.out"'

# the statistics against an independent implementation: scipy, as a test
# oracle only (Debian's python3-scipy; /usr/bin/python3, whatever else is first on PATH):
# U and Holm on generated runs, percentiles and Wasserstein on the real ones above
if /usr/bin/python3 -c 'import scipy' 2>/dev/null; then
	mkdir -p "$TMP/oracle"
	while IFS= read -r line; do
		case $line in PASS* | FAIL*) report "$line" ;; *) echo "  $line" ;; esac
	done < <(/usr/bin/python3 "$(dirname "$0")/../tools/diff_oracle.py" "$DIFF" "$TMP/oracle" \
		"N=$a" "Y=$b" 2>&1)
else
	fail diff/scipy-oracle "no scipy for /usr/bin/python3 (sudo make deps installs python3-scipy)"
fi
exit 0
