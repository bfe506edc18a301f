#!/usr/bin/env bash
# What the exporter's test files share (sourced after lib.sh): the tools
# they need, Prometheus' helpers, and starting an exporter.
# shellcheck source=tests/prom.sh
source "$TOOLS/../prom.sh"

# exporter_tools FILE: SKIP FILE/all and exit where a tool it needs is missing
exporter_tools() {
	local tool
	for tool in curl openssl /usr/bin/python3; do
		if ! command -v $tool >/dev/null; then
			skip "$1/all" "$tool is not installed (sudo make deps)"
			exit 0
		fi
	done
}
# Without Prometheus or promtool, each check that needs one is a SKIP that
# says so, and the rest still runs.
noprom=$(command -v prometheus >/dev/null || echo "prometheus is not installed (sudo make deps)")
nopromtool=$(command -v promtool >/dev/null || echo "promtool is not installed (sudo make deps)")
# needs WHY NAME DESCRIPTION CMD...: check, or SKIP NAME: WHY when WHY is set
needs() {
	local why=$1
	shift
	if [ -n "$why" ]; then skip "$1" "$why"; else check "$@"; fi
}
EXP=$BUILD/kvmmmu-exporter
PY=/usr/bin/python3
ROOT=$(cd "$TOOLS/../.." && pwd)
pids=()
# (in place of lib.sh's trap, whose $TMP holds a TLS key: removed here too)
exporter_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap exporter_cleanup EXIT

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# answers: the exporter at EPORT answers HTTP or HTTPS (any status)
answers() {
	[ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$EPORT/")" != 000 ] ||
		[ "$(curl -sk -o /dev/null --max-time 5 -w '%{http_code}' "https://127.0.0.1:$EPORT/")" != 000 ]
}
# start_exporter LOG ARGS...: starts kvmmmu-exporter on a free loopback port; sets EPID, EPORT.
# It listens at once and answers once its probes are attached (8-20 s in a
# TCG guest): this waits for that, 3 min at most.
start_exporter() {
	local log=$1
	shift
	"$EXP" --web.listen-address=127.0.0.1:0 "$@" >"$log" 2>&1 &
	EPID=$!
	pids+=("$EPID")
	EPORT=
	local end=$((SECONDS + 120))
	while [ $SECONDS -lt $end ]; do
		EPORT=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$log" 2>/dev/null | head -1)
		[ -n "$EPORT" ] && break
		kill -0 $EPID 2>/dev/null || return 1
		sleep 0.1
	done
	[ -n "$EPORT" ] && until_true 180 answers
}
capeff() { awk '/^CapEff:/ { print $2 }' "/proc/$1/status"; }
