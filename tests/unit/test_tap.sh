#!/usr/bin/env bash
# tests/tools/tap.awk, which turns the unit tests' TAP into PASS/FAIL/SKIP
# lines, on recorded streams (tests/unit/tap/NAME.tap): its result lines must
# be NAME.expected's. cmocka-kvm-stats-skip and cmocka-csv-corpus are this
# repo's tests as cmocka 1.1.5 prints them; cmocka-fail and cmocka-died its
# output for a scratch group (a pass, an assert_int_equal failure, a skip
# with its "SKIP:" line, a test that calls _exit(1) in the died one); the
# rest are the other TAP forms, written by hand.
source "$(dirname "$0")/../lib.sh"

dir=$(cd "$(dirname "$0")/tap" && pwd)
n=0
for tap in "$dir"/*.tap; do
	[ -f "$tap" ] || continue
	t=${tap##*/}
	t=${t%.tap}
	got=$(awk -v name=t -f "$TOOLS/tap.awk" <"$tap" | grep -E '^(PASS|FAIL|SKIP) ')
	check "unit/test_tap/$t" "$(diff <(echo "$got") "${tap%.tap}.expected" | grep '^[<>]' | head -4 | tr '\n' ' ')" \
		test "$got" = "$(cat "${tap%.tap}.expected")"
	n=$((n + 1))
done
check unit/test_tap/streams-found "no recorded streams in $dir" test "$n" -gt 0
