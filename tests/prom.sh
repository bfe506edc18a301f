# shellcheck shell=bash
# Helpers for the tests that run a real Prometheus (sourced after lib.sh):
# test_exporter.sh against the exporter, test_vm.sh against the guests'
# scrapes replayed. Needs /usr/bin/python3 (tests/tools/promcheck.py).
PC="/usr/bin/python3 $TOOLS/promcheck.py"
DASH="/usr/bin/python3 $TOOLS/dashlint.py"
DASHBOARDS=$(cd "$TOOLS/../../dashboards" && pwd)

# free_port: a TCP port nobody listens on now
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# until_true SECS CMD...: runs CMD every 0.2 s until it succeeds, SECS at most
until_true() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

# start_prometheus DIR TARGET: Debian's Prometheus on a free loopback port,
# scraping TARGET (HOST:PORT) every second as job "kvmmmu", with the rules
# of dashboards/; sets PURL and PROM_PID. Waits (3 min at most: a TCG guest
# is slow to start it, and an exporter answers once its probes are attached)
# for the target to be up.
start_prometheus() {
	local dir=$1 port
	port=$(free_port)
	PURL=http://127.0.0.1:$port
	mkdir -p "$dir"
	cat >"$dir/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - $DASHBOARDS/kvmmmu-rules.yml
scrape_configs:
  - job_name: kvmmmu
    static_configs:
      - targets: ['$2']
EOC
	prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
		--web.listen-address=127.0.0.1:$port >"$dir/log" 2>&1 &
	# shellcheck disable=SC2034 # for the caller, to stop it
	PROM_PID=$!
	until_true 180 has_data 'up{job="kvmmmu"} == 1'
}

# value EXPR: the single value of an instant query ("" if none)
value() { $PC query "$PURL" "$1" 2>/dev/null | awk 'NR == 1 { print $NF }'; }
has_data() { $PC query "$PURL" "$1"; }

# run_queries NAME SCRAPE WHY: every dashboard panel's and rule's query, the
# variables filled in, against the Prometheus at PURL. PASS when it returns
# data, or is an alert that does not fire on families SCRAPE has; SKIP WHY when it returns nothing
# and reads a family the scrape SCRAPE does not have; else FAIL. The queries
# run in one python3 (some 100 of them: a process each is minutes under TCG).
run_queries() {
	local name=$1 scrape=$2 why=$3 src expr out rc absent fam q
	q=$TMP/queries.$(tr / _ <<<"$name")
	$DASH queries --rate-interval 1m --rules "$DASHBOARDS/kvmmmu-rules.yml" \
		"$DASHBOARDS"/kvmmmu-fleet.json "$DASHBOARDS"/kvmmmu-vm.json >"$q"
	check "$name/dashboards-have-queries" "$(wc -l <"$q") queries" test "$(wc -l <"$q")" -gt 20
	$PC queries "$PURL" "$q" >"$q.answers" 2>&1
	check "$name/dashboards-queries-answered" "$(wc -l <"$q.answers") answers to $(wc -l <"$q") queries: $(grep -v "$(printf '\t')" "$q.answers" | tail -2)" \
		test "$(wc -l <"$q.answers")" = "$(wc -l <"$q")"
	while IFS=$'\t' read -r src expr; do
		# the answer to this query (SOURCE names are unique: a panel or a rule)
		IFS=$'\t' read -r rc out < <(awk -F'\t' -v s="$src" '$1 == s { print $2 "\t" $3; exit }' "$q.answers")
		rc=${rc:-none}
		# no data: the exporter's families it reads (not the recording rules'
		# series: they have colons) that the scrape has not
		absent=""
		if [ "$rc" = 3 ]; then
			for fam in $(grep -o '[a-z_:]*kvmmmu_[a-z0-9_]*' <<<"$expr" | grep -v : |
				sed 's/_\(bucket\|sum\|count\)$//' | sort -u); do
				grep -q "^${fam}[{_ ]" "$scrape" || absent="$absent $fam"
			done
		fi
		if [ $rc = 3 ] && [ -n "$absent" ]; then
			skip "$name/query/$src" "no$absent here: $why"
		elif [ $rc = 3 ] && [[ $src == *:alert* ]]; then
			# an alert that does not fire, on families the scrape has: its expression parsed
			pass "$name/query/$src"
		elif [ $rc = 3 ] && until_true 60 has_data "$expr"; then
			# an annotation sees changes in the last minute: the next toggle
			# shows; an instant selector sees the last scrape, and one that
			# timed out (900 ms, a busy TCG guest) leaves its series stale:
			# the next scrape shows
			pass "$name/query/$src"
		else
			check "$name/query/$src" "rc $rc: $out: $expr" test $rc = 0
		fi
	done <"$q"
}
