#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-exporter's exited VMs: a VM's final figures are in every scrape,
# from every client, for --exited-vm-retention after the first scrape that
# showed them (the two Prometheus of an HA pair each see them; they were
# once in a single scrape, whoever made it), and gone after it.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip exporter-retention/all "$why"
	exit 0
fi
source "$TOOLS/../exporter.sh"
exporter_tools exporter-retention
LOAD=$BUILD/kvmmmu-load
WINDOW=4

start_exporter "$TMP/exp.log" --exited-vm-retention=${WINDOW}s --collector.disable-defaults --collector.faults
check exporter-retention/starts "$(tail -3 "$TMP/exp.log")" test -n "$EPORT"
URL=http://127.0.0.1:$EPORT/metrics
# (a name of this run's own: other kvmmmu tests may run VMs at the same time)
name=exp-ret-$$
"$LOAD" --name "$name" --vcpus 2 --mem 16M --csv "$TMP/load.csv" >/dev/null 2>&1
k=0
for v in 0 1; do
	kv=$(csv_value "$TMP/load.csv" kvm_stats pf_taken $v)
	[ -n "$kv" ] && [ "$k" != none ] && k=$((k + kv)) || k=none
done
# faults FILE: the VM's kvmmmu_page_faults_total, summed, in scrape FILE ("" when absent)
faults() {
	awk -v n="{vm=\"$name\"," 'index($0, "kvmmmu_page_faults_total" n) == 1 { s += $NF; f = 1 }
		END { if (f) print s }' "$1"
}
# the first scrape with its final figures (it has exited: they change no more)
got() { curl -s --max-time 5 "$URL" >"$TMP/first" && [ "$(faults "$TMP/first")" = "$k" ]; }
until_true 60 got
t0=$(date +%s.%N)
check exporter-retention/first-scrape-final-figures "scrape has $(faults "$TMP/first"), KVM pf_taken $k" \
	test "$(faults "$TMP/first")" = "$k"
# two scrapers, as an HA pair, 3 scrapes each within the window
scraper() {
	for i in 1 2 3; do
		curl -s --max-time 5 "$URL" >"$TMP/s$1-$i"
		sleep 0.3
	done
}
scraper a &
a=$!
scraper b &
b=$!
wait $a $b
for s in a b; do
	seen=""
	for i in 1 2 3; do seen="$seen $(faults "$TMP/s$s-$i")"; done
	check "exporter-retention/scraper-$s-sees-final-figures" "its 3 scrapes had:$seen (want $k each)" \
		test "$seen" = " $k $k $k"
done
# and after the window, gone (not before: the scrapes above saw it whole)
gone() { curl -s --max-time 5 "$URL" >"$TMP/last" && grep -q '^kvmmmu_' "$TMP/last" && [ -z "$(faults "$TMP/last")" ]; }
until_true 60 gone
t1=$(date +%s.%N)
check exporter-retention/gone-after-window "still in the scrape, or no scrape" gone
held=$(echo "$t1 - $t0" | bc)
check exporter-retention/kept-for-the-window "gone ${held}s after the first scrape showed it (window ${WINDOW}s)" \
	eval '[ "$(echo "$held >= $WINDOW - 0.5 && $held < $WINDOW + 30" | bc)" = 1 ]'

# --exited-vm-retention refuses what is not a duration
one_line_error exporter-retention/bad-duration 2 "$BUILD/kvmmmu-exporter" --exited-vm-retention=5x
one_line_error exporter-retention/too-long 2 "$BUILD/kvmmmu-exporter" --exited-vm-retention=2d
