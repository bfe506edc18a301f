#!/usr/bin/env bash
# tests/tools/outcomes.awk, the check that a CSV's path x outcome table adds
# up, on small CSVs: two VMs of one process are two tables (a cell of the
# first is not the second's), and a table that does not add up is caught.
source "$(dirname "$0")/../lib.sh"

header='# kvmmmu-csv 3
ts,pid,comm,vcpu,source,metric,le,value,vm,vm_index'
# row VM_INDEX METRIC VALUE: vCPU 0 of process 5
row() { echo "1,5,t,0,bpf,$2,,$3,t,$1"; }
vm() { # VM_INDEX FIXED RETRY: a VM whose table adds up
	row "$1" faults $(($2 + $3))
	row "$1" ret_pf_fixed "$2"
	row "$1" ret_pf_retry "$3"
	row "$1" path_tdp_mmu $(($2 + $3))
	row "$1" outcome_tdp_mmu_fixed "$2"
	[ "$3" = 0 ] || row "$1" outcome_tdp_mmu_retry "$3"
}
{ echo "$header"; vm 1 2 1; vm 2 4 0; } >"$TMP/two-vms.csv"
out=$(awk -F, -f "$TOOLS/outcomes.awk" "$TMP/two-vms.csv")
check unit/test_outcomes/two-vms-of-one-process-apart "$out" test $? = 0
{ echo "$header"; vm 1 2 1; row 1 outcome_fast_fixed 1; } >"$TMP/bad.csv"
out=$(awk -F, -f "$TOOLS/outcomes.awk" "$TMP/bad.csv")
rc=$?
check unit/test_outcomes/extra-cell-caught "exit $rc: $out" \
	eval "[ $rc = 1 ] && grep -q 'faults 3, table sums to 4' <<<\"\$out\""
