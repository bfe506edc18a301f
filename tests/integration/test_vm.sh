#!/usr/bin/env bash
# The distro-kernel VM tests (tests/vm/run.sh: Debian 6.1 and 6.12 under
# QEMU, fentry/kprobe/tracepoint modes, nested NPT, tdp_mmu=Y/N) as part of
# make test, when QEMU is installed. KVMMMU_SKIP_VM=1 leaves them out (any
# other value is the reason given).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"

if [ -n "${KVMMMU_SKIP_VM:-}" ]; then
	[ "$KVMMMU_SKIP_VM" = 1 ] && KVMMMU_SKIP_VM="KVMMMU_SKIP_VM is set"
	skip vm "$KVMMMU_SKIP_VM"
	exit 0
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
	skip vm "no qemu-system-x86_64 (sudo make deps installs it)"
	exit 0
fi
rm -f "$BUILD"/vm/*/exporter-scrape.txt
bash "$(dirname "$0")/../vm/run.sh"

# The guests' exporter scrapes (function probes: the families this host
# cannot give), read by the host's two parsers.
for scrape in "$BUILD"/vm/*/exporter-scrape.txt; do
	[ -f "$scrape" ] || continue
	k=$(basename "$(dirname "$scrape")")
	if command -v promtool >/dev/null && [ -x /usr/bin/python3 ]; then
		out=$(promtool check metrics <"$scrape" 2>&1)
		check "vm/$k/exporter/promtool-check-metrics" "$(head -3 <<<"$out")" test -z "$out"
		check "vm/$k/exporter/python-client-parses" "$(/usr/bin/python3 "$TOOLS/promcheck.py" parse "$scrape" 2>&1 | head -3)" \
			/usr/bin/python3 "$TOOLS/promcheck.py" parse "$scrape"
	else
		skip "vm/$k/exporter/parsers" "no promtool or /usr/bin/python3 (sudo make deps)"
	fi
done
