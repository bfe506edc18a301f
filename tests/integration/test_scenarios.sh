#!/usr/bin/env bash
# What a live kernel shows only by chance, driven with BPF_PROG_TEST_RUN
# through kvmmmu's own BPF programs (tests/tools/bpfscenarios*.c): no KVM
# needed, so every host runs them. An mmu_lock wait ends at its own
# contention_end, not at a nested wait's for another lock (the qrwlock slow
# path's wait_lock); which waits are a fault's (--sample, the emulator's
# walks, function probes' bounds); an emulator's guest walk after a
# page-fault exit does not make that exit's fault a shadow-paging one; the
# tracepoint model's rules where no machine here has the kernel's case
# (VMX's EPT exits, async-PF completions, a TDP MMU's huge leaf over a page
# table or write-protected page, a handler's error return).
source "$(dirname "$0")/../lib.sh"

CASES=26 # bpfscenarios' PASS/FAIL lines: a case that did not run fails below

"$BUILD/tests/tools/bpfscenarios" >"$TMP/scenarios.out" 2>&1
rc=$?
while read -r verdict name what; do
	case $verdict in
	PASS) pass "scenarios/${name%:}" ;;
	FAIL) fail "scenarios/${name%:}" "$what" ;;
	esac
done <"$TMP/scenarios.out"
check scenarios/all-ran "exit $rc, $(grep -c '^PASS ' "$TMP/scenarios.out") of $CASES passed: $(tail -2 "$TMP/scenarios.out")" \
	eval 'test $rc = 0 && [ "$(grep -c "^PASS " "$TMP/scenarios.out")" = $CASES ]'
exit 0
