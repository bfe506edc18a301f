#!/usr/bin/env bash
# The layers of src/ (docs/architecture.md): each file includes only its own
# layer and those below (tests/tools/layers.py), no two modules include each
# other, even through others; kvmmmu-diff and the unit tests of pure logic
# link no libbpf (only the tests of what talks to the kernel through it do).
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.." || exit 1

# the unit tests whose code under test calls libbpf: BTF parsing, kprobe
# attach, map walks, the final read, the thread-news ring
LIBBPF_TESTS="test_kernel_btf test_kprobes test_map_iter test_ret_pf test_settle test_threads"

while IFS= read -r line; do
	case $line in
	"ok "*) name=${line#ok }; pass "unit/test_layers/${name%% *}" ;;
	"not ok "*) name=${line#not ok }; fail "unit/test_layers/${name%%:*}" "${name#*: }" ;;
	esac
done < <(python3 tests/tools/layers.py src 2>&1 || echo "not ok layers.py: exited non-zero")

links_libbpf() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libbpf'; }
check unit/test_layers/diff-links-no-libbpf "$BUILD/kvmmmu-diff links libbpf" \
	eval "[ -x '$BUILD/kvmmmu-diff' ] && ! links_libbpf '$BUILD/kvmmmu-diff'"
check unit/test_layers/hist-links-libbpf "the check above could not see a NEEDED libbpf" \
	links_libbpf "$BUILD/kvmmmu-hist"
wrong=""
n=0
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$((n + 1))
	name=${t##*/}
	case " $LIBBPF_TESTS " in
	*" $name "*) links_libbpf "$t" || wrong="$wrong $name(no longer needs it: take it off LIBBPF_TESTS)" ;;
	*) links_libbpf "$t" && wrong="$wrong $name" ;;
	esac
done
check unit/test_layers/unit-tests-link-no-libbpf "links libbpf:$wrong" \
	test -z "$wrong" -a "$n" -gt 10
