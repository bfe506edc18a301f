#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-load against KVM's own statistics: every touched page faults exactly
# once per write pass that needs it, plus one fault for each vCPU's code page.
source "$(dirname "$0")/../lib.sh"

# Faults per vCPU beyond the pages it writes: its code page (each vCPU has a
# code page of its own, 64 KiB apart, so that KVM's 8-page prefetch never
# maps one for another vCPU).
K=1
# With nested paging the CPU also reads guest memory itself, and each page it
# reads faults once, on whichever vCPU gets there first: the TSS (the I/O
# bitmap of the port that ends a pass), the PML4, the PDPT and the test
# memory's PD, and in some runs one more descriptor table or two (measured
# on 6.12 with NPT: 4 or 5 a VM, and 6 in a CI run of 2026-12-03; 8 allowed,
# as test_hist_figures allows). The shadow MMU takes no fault for them (it
# write-protects guest tables instead): there every vCPU's count is exact.
case $(host_mmu) in
shadow) S=0 S_MIN=0 ;;
*) S=8 S_MIN=4 ;;
esac

if ! why=$(need_kvm); then
	skip load/all "$why"
	exit 0
fi
LOAD=$BUILD/kvmmmu-load
CSVLINT=$BUILD/tests/tools/csvlint

# expect_faults NAME CSV STAT PAGES VCPUS: KVM's STAT for a run whose vCPUs
# each wrote PAGES pages: PAGES + K on every vCPU, exactly; with nested paging
# S_MIN to S more in all, each on one vCPU or another.
expect_faults() {
	local name=$1 csv=$2 stat=$3 pages=$4 vcpus=$5 v n sum=0
	for v in $(seq 0 $((vcpus - 1))); do
		n=$(csv_value "$csv" kvm_stats "$stat" $v)
		sum=$((sum + ${n:-0}))
		if [ $S = 0 ]; then
			check "load/$name-vcpu$v-$stat" "$stat=$n, expected $((pages + K))" test "$n" = $((pages + K))
		else
			check "load/$name-vcpu$v-$stat" "$stat=$n, expected $((pages + K)) to $((pages + K + S))" \
				test -n "$n" -a "${n:-0}" -ge $((pages + K)) -a "${n:-0}" -le $((pages + K + S))
		fi
	done
	if [ $S != 0 ]; then
		check "load/$name-vm-$stat" "$stat=$sum over $vcpus vCPUs, expected $((vcpus * (pages + K) + S_MIN)) to $((vcpus * (pages + K) + S))" \
			test $sum -ge $((vcpus * (pages + K) + S_MIN)) -a $sum -le $((vcpus * (pages + K) + S))
	fi
}

# --- populate: 2 vCPUs x 128 MiB = 32768 pages each
if "$LOAD" --vcpus 2 --mem 128M --csv "$TMP/pop.csv" --label populate >"$TMP/pop.out" 2>&1; then
	pass load/populate-runs
else
	fail load/populate-runs "exit $?: $(tail -1 "$TMP/pop.out")"
fi
expect_faults populate "$TMP/pop.csv" pf_taken 32768 2
expect_faults populate "$TMP/pop.csv" pf_fixed 32768 2
check load/populate-timing "no 'Populate memory time' line" grep -q '^Populate memory time: [0-9.]*s$' "$TMP/pop.out"
check load/stats-table "no pf_taken row in the stats table" grep -q '^pf_taken ' "$TMP/pop.out"
check load/csv-valid "$("$CSVLINT" "$TMP/pop.csv" 2>&1)" "$CSVLINT" "$TMP/pop.csv"
check load/csv-label "label missing from CSV metadata" grep -qx '# label=populate' "$TMP/pop.csv"
check load/csv-vm-row "no VM-wide pages_4k row" test -n "$(csv_value "$TMP/pop.csv" kvm_stats pages_4k "")"
check load/csv-populate_s "no populate_s row" test -n "$(csv_value "$TMP/pop.csv" load populate_s "")"

# --- dirty logging: each of 2 iterations faults every page again
# (then 2 passes with it off: the last clear left every 4 KiB page
# write-protected, so the first refaults them all, the second none)
"$LOAD" --vcpus 2 --mem 32M --dirty-log 2 --passes-after 2 --csv "$TMP/dl.csv" >"$TMP/dl.out" 2>&1 ||
	fail load/dirty-log-runs "exit $?: $(tail -1 "$TMP/dl.out")"
expect_faults dirty-log "$TMP/dl.csv" pf_taken $((4 * 8192)) 2
n1=$(csv_value "$TMP/dl.csv" load after_pass_1_pf_taken "")
n2=$(csv_value "$TMP/dl.csv" load after_pass_2_pf_taken "")
check load/after-dirty-log-passes "after_pass_1_pf_taken=$n1 (expected 16384), after_pass_2_pf_taken=$n2 (expected 0)" \
	test "$n1" = 16384 -a "$n2" = 0
check load/after-dirty-log-pf_fast "no after_pass_1_pf_fast row" \
	test -n "$(csv_value "$TMP/dl.csv" load after_pass_1_pf_fast "")"
for i in 1 2; do
	n=$(csv_value "$TMP/dl.csv" load "iteration_${i}_pf_taken" "")
	check "load/dirty-log-iteration$i-refaults-all" "iteration $i faulted $n times, expected 16384" \
		test "$n" = 16384
	check "load/dirty-log-iteration$i-timing" "no timing line" \
		grep -q "^Iteration $i dirty memory time: " "$TMP/dl.out"
done
check load/dirty-log-disable-timing "no disable line" grep -q '^Disabling dirty logging time: ' "$TMP/dl.out"

# --- reclaim: MADV_DONTNEED slices while the vCPUs write; dropped pages
# fault again, and faults that race with the zaps are retried (counted in
# pf_taken, neither fixed nor spurious)
"$LOAD" --vcpus 2 --mem 16M --dirty-log 3 --reclaim 1 --csv "$TMP/rc.csv" >"$TMP/rc.out" 2>&1 ||
	fail load/reclaim-runs "exit $?: $(tail -1 "$TMP/rc.out")"
calls=$(csv_value "$TMP/rc.csv" load reclaim_calls "")
# CSV v2's vm column: the process name, or --name
vms=$(awk -F, '!/^#/ && $1 != "ts" { print $9 }' "$TMP/rc.csv" | sort -u | tr '\n' ' ')
check load/csv-vm-column "vm column: $vms" test "$vms" = "kvmmmu-load "
"$LOAD" --name 'db,1' --vcpus 1 --mem 4M --csv "$TMP/nm.csv" >/dev/null 2>&1
vms=$(awk -F, '!/^#/ && $1 != "ts" { print $9 $10 }' "$TMP/nm.csv" | sort -u | tr '\n' ' ')
check load/csv-vm-column-named "vm column: $vms" test "$vms" = '"db1" '
check load/reclaim-calls "reclaim_calls=$calls" test "${calls:-0}" -gt 0
# --vms: each VM made in turn has its own phases, reclaim thread and rows (vm_index)
"$LOAD" --vms 2 --vcpus 1 --mem 16M --dirty-log 3 --reclaim 1 --csv "$TMP/v2.csv" >"$TMP/v2.out" 2>&1 ||
	fail load/vms-runs "exit $?: $(tail -1 "$TMP/v2.out")"
for i in 1 2; do
	calls=$(awk -F, -v i=$i '!/^#/ && $5 == "load" && $6 == "reclaim_calls" && $10 == i { print $8 }' "$TMP/v2.csv")
	taken=$(awk -F, -v i=$i '!/^#/ && $5 == "kvm_stats" && $6 == "pf_taken" && $4 == 0 && $10 == i { x = $8 }
		END { print x }' "$TMP/v2.csv")
	check load/vms-vm$i-own-reclaim "VM $i: reclaim_calls=$calls" test "${calls:-0}" -gt 0
	# 4,096 pages written 4 times: 16,385 faults without reclaim (a few more under NPT);
	# each reclaim call drops 512 pages that fault again
	check load/vms-vm$i-reclaim-refaults "VM $i: pf_taken=$taken" test "${taken:-0}" -gt 16449
done
check load/vms-says-which "$(grep -c '^VM [12] of 2$' "$TMP/v2.out") headers" \
	test "$(grep -c '^VM [12] of 2$' "$TMP/v2.out")" = 2
taken=0 fixed=0
for v in 0 1; do
	taken=$((taken + $(csv_value "$TMP/rc.csv" kvm_stats pf_taken $v)))
	fixed=$((fixed + $(csv_value "$TMP/rc.csv" kvm_stats pf_fixed $v)))
done
check load/reclaim-refaults "pf_fixed=$fixed, at least $((4 * 8192)) (4 passes over 2 x 4096 pages)" \
	test $fixed -ge $((4 * 8192))
check load/reclaim-retries "pf_taken=$taken, pf_fixed=$fixed: no fault raced with a zap" \
	test $taken -gt $fixed

# --- thread names, as QEMU's by default and others on request
"$LOAD" --vcpus 2 --mem 8M --duration 3600 --thread-names firecracker >/dev/null 2>&1 &
pid=$!
# (until both vCPU threads are there: seconds in a TCG guest)
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ]; do
	names=$(cat /proc/$pid/task/*/comm 2>/dev/null | sort | tr '\n' ',')
	[ "${names#*fc_vcpu 0,fc_vcpu 1,}" != "$names" ] && break
	sleep 0.1
done
kill $pid
wait $pid
check load/thread-names "threads: $names" test "${names#*fc_vcpu 0,fc_vcpu 1,}" != "$names"

# --- --mmio N: N reads a pass of a page no memslot backs, each emulated by
# KVM and handed to us as KVM_EXIT_MMIO (what the harness's memslot-lookup
# checks need: lookups of MMIO emulation are no fault's)
"$LOAD" --vcpus 2 --mem 4M --passes 2 --mmio 50 --csv "$TMP/mmio.csv" >"$TMP/mmio.out" 2>&1
rc=$?
check load/mmio-runs "exit $rc: $(tail -2 "$TMP/mmio.out")" test $rc = 0
for v in 0 1; do
	n=$(csv_value "$TMP/mmio.csv" kvm_stats mmio_exits $v)
	check load/mmio-vcpu$v-exits "mmio_exits=$n, expected 100 (2 passes x 50)" test "$n" = 100
done

# --- Ctrl-C stops cleanly and still prints the statistics
"$LOAD" --vcpus 1 --mem 8M --duration 3600 >"$TMP/int.out" 2>&1 &
pid=$!
wait_vm $pid
kill -INT $pid
wait $pid
rc=$?
check load/sigint-exit-0 "exit $rc" test $rc = 0
check load/sigint-prints-stats "no pf_taken after Ctrl-C" grep -q '^pf_taken ' "$TMP/int.out"

# --- --guest-mode cr0wp: long mode at CPL0, CR0.WP off and on around each
# store; every vCPU still writes every page (here PVM emulates CPL0 code, so
# those stores take no MMU faults; the VM harness counts the root unloads)
"$LOAD" --vcpus 2 --mem 4M --passes 2 --guest-mode cr0wp --csv "$TMP/wp.csv" >"$TMP/wp.out" 2>&1
rc=$?
check load/cr0wp-runs "exit $rc: $(tail -2 "$TMP/wp.out")" test $rc = 0
n=$(csv_value "$TMP/wp.csv" load cr0_wp_writes "")
check load/cr0wp-writes "cr0_wp_writes=$n, expected $((2 * 2 * 1024 * 2))" test "$n" = $((2 * 2 * 1024 * 2))
check load/cr0wp-says-mode "no 'Guest mode: cr0wp'" grep -q '^Guest mode: cr0wp$' "$TMP/wp.out"

# --- bad input: one line on stderr, exit 2 (usage) or 1 (runtime)
bad() { one_line_error "load/bad-$1" "$2" "$LOAD" "${@:3}"; }
bad size-garbage 2 --mem 12Q
bad size-zero 2 --mem 0
bad size-unaligned 2 --mem 1000
bad vcpus-zero 2 --vcpus 0
bad vms-zero 2 --vms 0
bad vms-text 2 --vms x
bad vms-too-many 2 --vms 65
bad linger-negative 2 --linger -1
bad linger-missing 2 --linger
bad vms-with-signal 2 --vms 2 --dirty-log 1 --dirty-log-on-signal
bad access-unknown 2 --access modify
bad access-not-long-mode 2 --access read --guest-mode pae
bad access-exec-with-reclaim 2 --access exec --reclaim 10
bad vcpus-absurd 2 --vcpus 100000
bad vcpus-text 2 --vcpus two
bad memory-too-large 2 --mem 64T
bad unknown-option 2 --frobnicate
bad extra-argument 2 extra
bad thread-names 2 --thread-names qemu2
bad csv-unwritable 1 --csv /nonexistent/dir/x.csv
bad guest-mode 2 --guest-mode real
bad guest-mode-32-too-big 2 --guest-mode 32bit --vcpus 2 --mem 2G
bad duration-past-cap 2 --duration 1e9
bad csv-full 1 --csv /dev/full
bad reclaim-zero 2 --reclaim 0
bad reclaim-text 2 --reclaim often
bad passes-after-without-dirty-log 2 --passes-after 1
bad passes-after-zero 2 --dirty-log 1 --passes-after 0
bad dirty-log-on-signal-without-dirty-log 2 --dirty-log-on-signal
bad mmio-zero 2 --mmio 0
bad gmem-with-thp 2 --gmem --thp
bad gmem-with-uffd 2 --gmem --uffd
bad gmem-with-reclaim 2 --gmem --reclaim 10
bad gmem-with-dirty-log 2 --gmem --dirty-log 1
# -V and --usage, as the argp commands have them
v=$("$LOAD" -V 2>&1)
check load/short-version "$v" eval 'echo "$v" | grep -q "^kvmmmu-load [0-9]"'
u=$("$LOAD" --usage 2>&1)
check load/usage-synopsis "$(echo "$u" | head -2)" \
	eval 'echo "$u" | head -1 | grep -q "^USAGE: kvmmmu-load" && ! echo "$u" | grep -q "^OPTIONS:"'
bad mmio-not-long-mode 2 --mmio 5 --guest-mode pae
# the report into a full disk is lost: an error in one line, exit 1 (not 0)
"$LOAD" --mem 4M >/dev/full 2>"$TMP/full.err"
rc=$?
check load/report-to-full-disk "exit $rc: $(head -c 300 "$TMP/full.err")" \
	eval '[ $rc = 1 ] && [ "$(cat "$TMP/full.err")" = "kvmmmu-load: stdout: No space left on device" ]'
"$LOAD" --help >/dev/full 2>"$TMP/full.err"
rc=$?
check load/help-to-full-disk "exit $rc: $(head -c 300 "$TMP/full.err")" \
	eval '[ $rc = 1 ] && [ "$(cat "$TMP/full.err")" = "kvmmmu-load: stdout: No space left on device" ]'
# a reader that leaves early ends it as before: SIGPIPE, no message
"$LOAD" --mem 4M --passes 3 2>"$TMP/pipe.err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
check load/report-into-head "exit $rc: $(head -c 300 "$TMP/pipe.err")" \
	eval '{ [ $rc = 141 ] || [ $rc = 0 ]; } && [ ! -s "$TMP/pipe.err" ]'
# 32-bit guests: run where the host can, else one line that says what it lacks
# (PVM keeps no CR0.PG outside long mode), never a triple fault and a register dump
for mode in 32bit pae; do
	"$LOAD" --guest-mode $mode --mem 4M >"$TMP/g.out" 2>"$TMP/g.err"
	rc=$?
	if [ $rc = 0 ]; then
		check load/guest-mode-$mode-runs "$(grep -m1 'Write passes' "$TMP/g.out")" \
			grep -q '^Write passes completed: 1$' "$TMP/g.out"
	else
		check load/guest-mode-$mode-host-cannot "exit $rc: $(head -c 300 "$TMP/g.err")" \
			eval '[ $rc = 1 ] && [ "$(wc -l <"$TMP/g.err")" = 1 ] &&
				grep -q "^kvmmmu-load: --guest-mode $mode: this host'"'"'s KVM cannot run such a guest: it drops " "$TMP/g.err"'
	fi
done
# --gmem: runs where KVM maps a guest_memfd (every page a fault of its own), else one line
"$LOAD" --gmem --mem 4M >"$TMP/gm.out" 2>"$TMP/gm.err"
rc=$?
if [ $rc = 0 ]; then
	check load/gmem-runs "$(grep -m1 'Populate memory faults' "$TMP/gm.out")" \
		eval 'grep -q "host pages: guest_memfd" "$TMP/gm.out" &&
			grep -q "^Populate memory faults: 102[4-9] pf_taken" "$TMP/gm.out"'
else
	check load/gmem-host-cannot "exit $rc: $(head -c 300 "$TMP/gm.err")" \
		eval '[ $rc = 1 ] && [ "$(wc -l <"$TMP/gm.err")" = 1 ] &&
			grep -q "^kvmmmu-load: --gmem: this KVM has no guest_memfd the VMM can map " "$TMP/gm.err"'
fi
# no /dev/kvm, in a private mount namespace where it is hidden
if command -v unshare >/dev/null; then
	unshare -m sh -c "mount -t tmpfs none /dev && exec '$LOAD'" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	if [ $rc = 1 ] && grep -q '^kvmmmu-load: KVM is not available: ' "$TMP/bad.err"; then
		pass load/bad-no-dev-kvm
	else
		fail load/bad-no-dev-kvm "exit $rc: $(head -c 200 "$TMP/bad.err")"
	fi
fi
exit 0
