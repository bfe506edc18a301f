#!/usr/bin/env bash
# Runs the unit tests (cmocka, TAP output) and the integration tests, then
# prints "N passed, N failed, N skipped" and exits non-zero on any failure.
# Usage: tests/run.sh [unit|integration|vm]
set -u
cd "$(dirname "$0")/.." || exit 1
export OUTPUT=${OUTPUT:-build}
export RESULTS
RESULTS=$(mktemp /tmp/kvmmmu-results.XXXXXX)
what=${1:-all}
report() { echo "$*"; echo "$*" >>"$RESULTS"; }

run_unit() {
	local t out rc line name
	for t in "$OUTPUT"/tests/test_*; do
		[ -x "$t" ] || continue
		name=unit/${t##*/}
		out=$(CMOCKA_MESSAGE_OUTPUT=tap "$t" 2>&1)
		rc=$?
		# tests/tools/tap.awk: result lines, and the rest (details) indented
		while IFS= read -r line; do
			case "$line" in
			PASS\ * | FAIL\ * | SKIP\ *) report "$line" ;;
			*) echo "$line" ;;
			esac
		done < <(awk -v name="$name" -f tests/tools/tap.awk <<<"$out")
		# A crash before the TAP summary must still count as a failure.
		if [ "$rc" -ne 0 ] && ! grep -q "^FAIL $name/" "$RESULTS"; then
			report "FAIL $name: exited with status $rc"
		fi
	done
	# shell-level unit tests (the TAP parser's, on recorded streams)
	for t in tests/unit/test_*.sh; do
		[ -f "$t" ] || continue
		bash "$t" || report "FAIL unit/${t##*/}: script exited non-zero"
	done
}

run_integration() {
	local t rc before got p f s
	for t in tests/integration/test_*.sh; do
		[ -f "$t" ] || continue
		echo "== ${t##*/}"
		before=$(wc -l <"$RESULTS")
		bash "$t"
		rc=$?
		# what this file reported: none at all means it checked nothing
		got=$(tail -n +$((before + 1)) "$RESULTS")
		p=$(grep -c '^PASS' <<<"$got")
		f=$(grep -c '^FAIL' <<<"$got")
		s=$(grep -c '^SKIP' <<<"$got")
		echo "== ${t##*/}: $((p + f + s)) checks ($p passed, $f failed, $s skipped)"
		if [ $((p + f + s)) -eq 0 ]; then
			report "FAIL ${t##*/}: reported no checks"
		fi
		if [ $rc -ne 0 ]; then
			report "FAIL ${t##*/}: script exited with status $rc"
		fi
	done
}

run_vm() {
	echo "== tests/vm/run.sh"
	if ! bash tests/vm/run.sh; then
		report "FAIL tests/vm/run.sh: script exited non-zero"
	fi
}

case "$what" in
unit) run_unit ;;
integration) run_integration ;;
vm) run_vm ;;
all) run_unit; run_integration ;;
*) echo "usage: tests/run.sh [unit|integration|vm]" >&2; exit 2 ;;
esac

passed=$(grep -c '^PASS' "$RESULTS")
failed=$(grep -c '^FAIL' "$RESULTS")
skipped=$(grep -c '^SKIP' "$RESULTS")
if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:"
	grep '^FAIL' "$RESULTS"
fi
echo "$passed passed, $failed failed, $skipped skipped"
rm -f "$RESULTS"
[ "$failed" -eq 0 ]
