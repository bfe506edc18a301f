#!/usr/bin/env bash
# kvmmmu-exporter as an HTTP server, which needs no VM (so it runs natively
# on every host, with /dev/kvm or without): the wire format; hostile clients
# while Debian's Prometheus scrapes it every second; listen addresses and
# the connection limit; bad input as a one-line error; TLS and basic auth;
# the dashboards' and rules' own checks; nothing left behind. Its figures
# against KVM's own, with VMs, are test_exporter.sh's.
source "$(dirname "$0")/../lib.sh"
source "$TOOLS/../exporter.sh"
exporter_tools exporter-web

# --- the exporter (default collectors) and Prometheus, every second
start_exporter "$TMP/exp.log"
check exporter/web-starts "$(tail -3 "$TMP/exp.log")" test -n "$EPORT"
# plain HTTP is said, as node_exporter says "TLS is disabled"
check exporter/plain-http-says-so "$(grep 'listening on' "$TMP/exp.log")" \
	grep -q 'listening on .*, TLS is off (plain HTTP), no authentication,' "$TMP/exp.log"
URL=http://127.0.0.1:$EPORT
EPORT1=$EPORT
EPID1=$EPID
if [ -z "$noprom" ]; then
	start_prometheus "$TMP/prom" 127.0.0.1:$EPORT
	pids+=("$PROM_PID")
fi
needs "$noprom" exporter/web-prometheus-target-up "$(value 'up{job="kvmmmu"}'); $(tail -2 "$TMP/prom/log")" \
	test "$(value 'up{job="kvmmmu"}')" = 1

# --- the wire format: headers, the landing page, 404 and 405
curl -s -D "$TMP/h" -o "$TMP/scrape0" "$URL/metrics"
check exporter/content-type "$(grep -i '^content-type' "$TMP/h")" \
	grep -qx $'Content-Type: text/plain; version=0.0.4; charset=utf-8\r' "$TMP/h"
check exporter/landing-page "$(curl -s "$URL/")" eval 'curl -s "$URL/" | grep -q "href=\"/metrics\""'
check exporter/404-elsewhere "got $(code "$URL/nope")" test "$(code "$URL/nope")" = 404
check exporter/405-post "got $(code -X POST -d x "$URL/metrics")" test "$(code -X POST -d x "$URL/metrics")" = 405
check exporter/405-put "got $(code -X PUT "$URL/metrics")" test "$(code -X PUT "$URL/metrics")" = 405
# RFC 9112 3.2: HTTP/1.1 without Host, or two Hosts, is a 400; HTTP/1.0 needs none
c=$(code -H 'Host:' "$URL/metrics")
check exporter/http11-no-host-400 "got $c" test "$c" = 400
c=$(code -0 -H 'Host:' "$URL/metrics")
check exporter/http10-no-host-200 "got $c" test "$c" = 200
exec 3<>/dev/tcp/127.0.0.1/$EPORT && printf 'GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n' >&3
c=$(timeout 10 head -1 <&3 | tr -d '\r')
exec 3>&-
check exporter/two-hosts-400 "got '$c'" test "$c" = "HTTP/1.1 400 Bad Request"
# gzip when the client asks, as node_exporter; the same families inside
curl -s -H 'Accept-Encoding: gzip' -D "$TMP/hz" -o "$TMP/scrape0.gz" "$URL/metrics"
check exporter/gzip-when-asked "$(grep -i '^content-encoding\|^vary' "$TMP/hz" | tr -d '\r' | tr '\n' ' ')" \
	eval 'grep -qix $'"'"'Content-Encoding: gzip\r'"'"' "$TMP/hz" && gunzip -c "$TMP/scrape0.gz" | grep -q "^# TYPE kvmmmu_page_faults_total counter"'
# whole (its CRC and length hold), and every family of the plain scrape in it
check exporter/gzip-whole "$(gunzip -t "$TMP/scrape0.gz" 2>&1)" \
	eval 'gunzip -t "$TMP/scrape0.gz" && cmp -s <(grep "^# TYPE" "$TMP/scrape0") <(gunzip -c "$TMP/scrape0.gz" | grep "^# TYPE")'
check exporter/no-gzip-unasked "$(grep -i '^content-encoding\|^vary' "$TMP/h" | tr -d '\r' | tr '\n' ' ')" \
	eval '! grep -qi "^content-encoding" "$TMP/h" && grep -qix $'"'"'Vary: Accept-Encoding\r'"'"' "$TMP/h"'
c=$(curl -s -H 'Accept-Encoding: gzip;Q=0, identity' -D - -o /dev/null "$URL/metrics" | grep -ci '^content-encoding')
check exporter/no-gzip-at-q0 "$c Content-Encoding headers" test "$c" = 0
# the exporter's own process_* families, as every client library's
start=$(awk '/^process_start_time_seconds / { printf "%d", $2 }' "$TMP/scrape0")
check exporter/process-metrics "$(grep '^process_' "$TMP/scrape0" | tr '\n' ' ')" \
	eval 'for f in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes process_open_fds process_max_fds; do
		grep -qE "^$f [0-9.e+]+$" "$TMP/scrape0" || exit 1; done
		[ -n "$start" ] && [ "$start" -le "$(date +%s)" ] && [ "$start" -ge $(($(date +%s) - 600)) ]'

# --- hostile clients, while Prometheus keeps scraping
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$EPID1/status"; }
rss0=$(rss)
printf 'NOT HTTP AT ALL\r\n\r\n' | timeout 5 curl -s telnet://127.0.0.1:$EPORT >/dev/null 2>&1
exec 3<>/dev/tcp/127.0.0.1/$EPORT && printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nBad header line\r\n\r\n' >&3
exec 3>&-
big=$(head -c 10000 /dev/zero | tr '\0' a)
c=$(code -H "X-Big: $big" "$URL/metrics")
check exporter/10000-header-bytes-answered "got $c" eval '[ "$c" = 200 ] || [ "$c" = 431 ] || [ "$c" = 413 ]'
(ulimit -n 4096 && exec $PC idle 127.0.0.1 $EPORT 1000 6) >"$TMP/idle.out" 2>&1 &
idle=$!
$PC slowread 127.0.0.1 $EPORT /metrics 6 >"$TMP/slow.out" 2>&1 &
slow=$!
until_true 30 grep -q 'connections open' "$TMP/idle.out"
t0=$(date +%s.%N)
c=$(code --max-time 5 "$URL/metrics")
t1=$(date +%s.%N)
check exporter/scrape-with-1000-idle-and-a-slow-reader "got $c in $(echo "$t1 - $t0" | bc 2>/dev/null)s; $(cat "$TMP/idle.out")" test "$c" = 200
wait $idle $slow
sleep 2
# the hostile clients' 8 s and what followed
needs "$noprom" exporter/prometheus-never-lost-it "min up over the last 12 s: $(value 'min_over_time(up{job="kvmmmu"}[12s])')" \
	test "$(value 'min_over_time(up{job="kvmmmu"}[12s])')" = 1
for _ in $(seq 20); do curl -s "$URL/metrics" >/dev/null; done
rss1=$(rss)
if ldd "$EXP" 2>/dev/null | grep -q libasan; then
	# ASan keeps freed memory in quarantine; LeakSanitizer checks the exits here
	skip exporter/memory-flat "an ASan build: its quarantine holds what was freed (the other two passes check it)"
else
	check exporter/memory-flat "VmRSS $rss0 KiB before the hostile clients, $rss1 KiB after" test $((rss1 - rss0)) -lt 8192
fi

# --- a second listen address, and the connection limit
start_exporter "$TMP/exp2.log" --web.listen-address=127.0.0.2:0 --web.max-connections=40
p2=$EPID
# a second --web.listen-address: both served
port2=$(sed -n 's/.*listening on 127.0.0.2:0 (port \([0-9]*\)).*/\1/p' "$TMP/exp2.log")
check exporter/second-listen-address "$(grep 'listening on' "$TMP/exp2.log" | tr '\n' ' ')" \
	eval '[ -n "$port2" ] && [ "$(code "http://127.0.0.2:$port2/metrics")" = 200 ]'
# past --web.max-connections a client is closed at once, not left in the backlog
# (where it looked like a hung exporter); the others are kept
$PC crowd 127.0.0.1 $EPORT 60 >"$TMP/crowd.out" 2>&1
check exporter/refuses-past-max-connections "$(cat "$TMP/crowd.out")" \
	grep -qx '60 connections, 20 closed by the server, 40 open' "$TMP/crowd.out"
kill -TERM $p2
wait $p2
rc=$?
check exporter/web-second-sigterm-exit-0 "exit $rc" test $rc = 0

# --- slowloris: clients trickling a header a byte at a time held every slot
# (a per-read timeout never fired) and valid scrapes were refused. A header
# must be whole within --web.timeout; at the limit a new connection takes the
# slot of the one that has waited longest for its header.
start_exporter "$TMP/exp5.log" --web.max-connections=50 --web.timeout=3
p5=$EPID
$PC trickle 127.0.0.1 $EPORT 50 6 >"$TMP/trickle.out" 2>&1 &
tr=$!
until_true 30 grep -q 'connections trickling' "$TMP/trickle.out"
got=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "http://127.0.0.1:$EPORT/metrics")
check exporter/scrape-while-50-trickle-at-the-limit "code, seconds: $got; $(cat "$TMP/trickle.out")" test "${got% *}" = 200
wait $tr
# all closed by the deadline (3 s; the bytes come every 0.25 s), with time to spare
check exporter/trickling-headers-closed-at-deadline "$(tail -1 "$TMP/trickle.out")" \
	eval 'grep -qE "^50 trickling, 50 closed by the server, first after [0-9.]+ s, last after [0-4]\.[0-9] s$" "$TMP/trickle.out"'
kill -TERM $p5
wait $p5

# --- bad input: one line, non-zero
bad() { # NAME WANT-RC ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 20 "$EXP" "$@" 2>&1)
	rc=$?
	check "exporter/bad-$name" "rc $rc (want $want), $(wc -l <<<"$out") lines: $out" \
		eval '[ $rc = $want ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "kvmmmu-exporter: " <<<"$out"'
}
printf 'tls_server_config:\n  cert_file: [oops\n' >"$TMP/bad.yml"
printf 'basic_auth_users:\n  alice: plaintext\n' >"$TMP/plain.yml"
printf 'tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n' >"$TMP/unsup.yml"
printf 'no_such_field: 1\n' >"$TMP/unknown.yml"
bad config-missing 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/none.yml"
bad config-not-yaml 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/bad.yml"
bad config-plain-password 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/plain.yml"
bad config-unsupported 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/unsup.yml"
bad config-unknown-field 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/unknown.yml"
# a config that cannot be read whole is fatal, never plain HTTP without its users
mkdir -p "$TMP/config-dir.yml"
bad config-is-a-directory 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/config-dir.yml"
bad listen-port-range 2 --web.listen-address=127.0.0.1:99999
bad listen-no-port 2 --web.listen-address=localhost
bad listen-in-use 1 --web.listen-address=127.0.0.1:$EPORT1
bad listen-not-mine 1 --web.listen-address=192.0.2.1:9486
bad telemetry-path 2 --web.telemetry-path=metrics
# a path no request can name as written (a query, a fragment, an escape, a
# space, a control byte): it once started and 404'd every scrape
bad telemetry-path-query 2 --web.telemetry-path='/metrics?x'
bad telemetry-path-fragment 2 --web.telemetry-path='/metrics#x'
bad telemetry-path-escape 2 --web.telemetry-path='/metrics%20x'
bad telemetry-path-space 2 --web.telemetry-path='/metrics x'
bad telemetry-path-newline 2 --web.telemetry-path="$(printf '/metrics\nx')"
# ... or that a browser or curl resolves to another (the landing page links
# to it): an empty segment ("//h/x" is another host), ".", "..", and "&"
bad telemetry-path-other-host 2 --web.telemetry-path=//example.org/metrics
bad telemetry-path-empty-segment 2 --web.telemetry-path=/a//metrics
bad telemetry-path-dot 2 --web.telemetry-path=/./metrics
bad telemetry-path-dot-dot 2 --web.telemetry-path=/a/../metrics
bad telemetry-path-ampersand 2 --web.telemetry-path='/m&amp;x'
bad unknown-collector 2 --collector.nope
bad no-collector-on 2 --collector.disable-defaults
bad no-collector-on-but-per-vcpu 2 --collector.disable-defaults --collector.per_vcpu
bad too-many-listen-addresses 2 $(for i in 1 2 3 4 5 6 7 8 9; do echo --web.listen-address=127.0.0.1:0; done)
bad second-listen-address-bad 2 --web.listen-address=127.0.0.1:0 --web.listen-address=nope
# a host name that does not resolve: the resolver's reason, not "expected [HOST]:PORT"
bad listen-unresolvable 2 --web.listen-address=nosuchhost.invalid:9100
out=$(timeout 20 "$EXP" --web.listen-address=nosuchhost.invalid:9100 2>&1)
check exporter/listen-unresolvable-says-why "$out" \
	eval 'grep -q "cannot resolve '"'"'nosuchhost.invalid'"'"': ." <<<"$out" && ! grep -q expected <<<"$out"'
out=$(timeout 20 "$EXP" --web.listen-address='[nosuchhost]:9100' 2>&1)
check exporter/listen-bracketed-not-v6-says-so "$out" grep -q "'nosuchhost' is not an IPv6 address" <<<"$out"

# --- basic auth and TLS (exporter-toolkit's web config)
# cost 12, as people deploy it (about 0.25 s a check here)
hash=$($PY -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=4096)))')
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -keyout "$TMP/key.pem" \
	-out "$TMP/cert.pem" >/dev/null 2>&1
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$TMP/auth.yml"
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  alice: %s\n' \
	"$hash" >"$TMP/tls.yml"
# a second tls_server_config once replaced the first (whose PEMs leaked): a
# key twice is refused, at any level
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\ntls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n' \
	>"$TMP/tls-twice.yml"
bad config-tls-twice 1 --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/tls-twice.yml"
out=$(timeout 20 "$EXP" --web.listen-address=127.0.0.1:0 --web.config.file="$TMP/tls-twice.yml" 2>&1)
check exporter/config-tls-twice-names-the-line "$out" \
	grep -q "line 4: 'tls_server_config' twice (first on line 1)" <<<"$out"
start_exporter "$TMP/exp3.log" --web.config.file="$TMP/auth.yml"
p3=$EPID
A=http://127.0.0.1:$EPORT/metrics
check exporter/auth-none-401 "got $(code "$A")" test "$(code "$A")" = 401
check exporter/auth-wrong-401 "got $(code -u alice:wrong "$A")" test "$(code -u alice:wrong "$A")" = 401
check exporter/auth-unknown-user-401 "got $(code -u bob:s3cret "$A")" test "$(code -u bob:s3cret "$A")" = 401
check exporter/auth-right-200 "got $(code -u alice:s3cret "$A")" test "$(code -u alice:s3cret "$A")" = 200
# an unknown user is refused in the time of a known one's wrong password (the
# dummy hash had cost 10 against alice's 12: 0.05 s against 0.19 s told which
# names exist); the fastest of 3 tries each, within a factor of 2
fastest() { for _ in 1 2 3; do curl -s -o /dev/null -w '%{time_total}\n' -u "$1" "$A"; done | sort -n | head -1; }
tu=$(fastest bob:s3cret)
tk=$(fastest alice:wrong)
check exporter/auth-unknown-user-same-time "unknown user ${tu}s, known user's wrong password ${tk}s" \
	eval '[ "$(echo "$tu * 2 >= $tk && $tu <= $tk * 2" | bc)" = 1 ]'
# 50 clients retrying wrong passwords: bcrypt runs on workers, and the
# scraper's known-good password is not checked again, so its scrapes do not
# wait behind them (they took 5.9 s with 20 such clients, bcrypt on the HTTP thread)
wrong=()
for i in $(seq 50); do
	(end=$((SECONDS + 8)); while [ $SECONDS -lt $end ]; do code --max-time 20 -u "alice:wrong$i" "$A" >/dev/null; done) &
	wrong+=($!)
done
sleep 2
got=""
for i in 1 2 3 4 5; do
	got="$got $(curl -s -o /dev/null --max-time 2 -w '%{http_code}:%{time_total}' -u alice:s3cret "$A")"
	sleep 0.3
done
check exporter/auth-scrapes-under-wrong-password-storm "code:seconds of 5 scrapes (2 s at most each):$got" \
	eval '[ "$(echo $got | tr " " "\n" | grep -c "^200:")" = 5 ]'
wait "${wrong[@]}"
# and a wrong password is still refused (or told to come back), once the
# checks queued by the storm have drained: under TCG bcrypt takes seconds
c=$(code --max-time 180 -u alice:still-wrong "$A")
check exporter/auth-wrong-still-401-after-storm "got $c" eval '[ "$c" = 401 ] || [ "$c" = 503 ]'
check exporter/no-tls-unless-configured "https answered" eval '! curl -sk --max-time 5 "https://127.0.0.1:$EPORT/metrics" >/dev/null'
kill $p3
start_exporter "$TMP/exp4.log" --web.config.file="$TMP/tls.yml" --collector.disable-defaults \
	--collector.faults
p4=$EPID
check exporter/tls-says-so "$(tail -1 "$TMP/exp4.log")" grep -q ', TLS, basic auth,' "$TMP/exp4.log"
c=$(code -k -u alice:s3cret "https://127.0.0.1:$EPORT/metrics")
check exporter/tls-scrape-200 "got $c" test "$c" = 200
# --collector.disable-defaults: only the collectors named
curl -sk -u alice:s3cret "https://127.0.0.1:$EPORT/metrics" >"$TMP/scrape4"
check exporter/disable-defaults-only-named "$(grep '^kvmmmu_scrape_collector_success' "$TMP/scrape4" | tr '\n' ' ')" \
	eval '[ "$(grep -c "^kvmmmu_scrape_collector_success{" "$TMP/scrape4")" = 1 ] &&
		grep -q "^kvmmmu_scrape_collector_success{collector=\"faults\"}" "$TMP/scrape4" &&
		! grep -q "^# TYPE kvmmmu_mmu_lock\|^# TYPE kvmmmu_kvm_stat" "$TMP/scrape4"'
c=$(code --cacert "$TMP/cert.pem" -u alice:wrong "https://127.0.0.1:$EPORT/metrics")
check exporter/tls-wrong-password-401 "got $c" test "$c" = 401
c=$(code --max-time 5 -u alice:s3cret "http://127.0.0.1:$EPORT/metrics")
check exporter/tls-refuses-plain-http "plain HTTP got $c" test "$c" != 200
kill $p4
wait $p4 2>/dev/null

# --- the dashboards and rules, as their own tools check them
check exporter/dashlint "$($DASH lint "$ROOT"/dashboards/*.json 2>&1 | head -5)" $DASH lint "$ROOT"/dashboards/kvmmmu-fleet.json "$ROOT"/dashboards/kvmmmu-vm.json
check exporter/dashlint-catches-mistakes "$($DASH selftest 2>&1 | tail -3)" $DASH selftest
needs "$nopromtool" exporter/promtool-check-rules "$(promtool check rules "$ROOT/dashboards/kvmmmu-rules.yml" 2>&1 | tail -2)" \
	promtool check rules "$ROOT/dashboards/kvmmmu-rules.yml"
needs "$nopromtool" exporter/promtool-test-rules "$(cd "$ROOT/dashboards" && promtool test rules kvmmmu-rules.test.yml 2>&1 | tail -3)" \
	eval '(cd "$ROOT/dashboards" && promtool test rules kvmmmu-rules.test.yml)'


# --- the first exporter, stopped: nothing left behind
kill -TERM "${pids[0]}"
wait "${pids[0]}"
rc=$?
check exporter/web-first-sigterm-exit-0 "exit $rc" test $rc = 0
n=$(leaked_progs)
check exporter/web-no-bpf-left "$n kvmmmu programs left behind" test "$n" = 0
