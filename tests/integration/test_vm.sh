#!/usr/bin/env bash
# The distro-kernel VM tests (tests/vm/run.sh: Debian kernels under
# QEMU (make test: TEST_VM_KERNELS), fentry/kprobe/tracepoint modes, nested NPT, tdp_mmu=Y/N) as part of
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
rm -f "$BUILD"/vm/*/exporter-scrape.txt "$BUILD"/vm/*/exporter-replay-*.txt
bash "$(dirname "$0")/../vm/run.sh"

# The guests' exporter scrapes (function probes: the families this host
# cannot give), read by the host's two parsers.
for scrape in "$BUILD"/vm/*/exporter-scrape.txt; do
	[ -f "$scrape" ] || continue
	k=$(basename "$(dirname "$scrape")")
	if command -v promtool >/dev/null && [ -x /usr/bin/python3 ]; then
		out=$(promtool check metrics <"$scrape" 2>&1)
		rc=$?
		# an empty scrape lints clean: it must have metrics
		check "vm/$k/exporter/promtool-check-metrics" "exit $rc, $(wc -l <"$scrape") lines: $(head -3 <<<"$out")" \
			test $rc = 0 -a -z "$out" -a -s "$scrape"
		check "vm/$k/exporter/python-client-parses" "$(/usr/bin/python3 "$TOOLS/promcheck.py" parse "$scrape" 2>&1 | head -3)" \
			/usr/bin/python3 "$TOOLS/promcheck.py" parse "$scrape"
	else
		skip "vm/$k/exporter/parsers" "no promtool or /usr/bin/python3 (sudo make deps)"
	fi
done

# The guests' scrapes of a running VM, replayed to a real Prometheus one a
# second: the dashboards' and rules' queries over the families of function
# probes, which the host's own exporter test cannot run.
if command -v prometheus >/dev/null && [ -x /usr/bin/python3 ]; then
	source "$TOOLS/../prom.sh"
	for d in "$BUILD"/vm/*/; do
		k=$(basename "$d")
		set -- "$BUILD/vm/$k"/exporter-replay-*.txt
		[ -f "$1" ] || continue
		files=$(ls "$BUILD/vm/$k"/exporter-replay-*.txt | sort -t- -k3 -n)
		rport=$(free_port)
		# shellcheck disable=SC2086 # file names have no spaces
		/usr/bin/python3 "$TOOLS/promcheck.py" replay "$rport" $files &
		rpid=$!
		start_prometheus "$TMP/prom-$k" 127.0.0.1:$rport
		# every recorded scrape taken in, and then the last one a few times
		sleep "$(($(wc -w <<<"$files") + 3))"
		# the families: those of the fullest scrape (every VM running)
		# shellcheck disable=SC2086
		full=$(wc -l $files | sort -n | awk '$2 != "total" { f = $2 } END { print f }')
		run_queries "vm/$k/exporter" "$full" "not exported with these probes either"
		kill "$PROM_PID" "$rpid" 2>/dev/null
		wait "$PROM_PID" "$rpid" 2>/dev/null
	done
fi
exit 0
