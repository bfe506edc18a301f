# shellcheck shell=dash
# Sourced by guest-checks.sh: the "exporter" group. kvmmmu-exporter with
# function probes (fentry here), which the development host cannot attach:
# a scrape after a VM ran has the handler and whole-fault durations and
# memslot lookup times, one sample per fault, and its faults equal KVM's
# pf_taken. The scrape goes to the host, where promtool and
# python3-prometheus-client read it, and scrapes of a running VM, which the
# host replays to a Prometheus for the dashboards' queries (test_vm.sh).
if want exporter; then
	g=exporter
	ip link set lo up 2>/dev/null
	kvmmmu-exporter --web.listen-address=127.0.0.1:9486 --collector.per_vcpu --collector.memslot \
		>$T/exporter.log 2>&1 &
	ep=$!
	i=0
	while [ $i -lt 300 ] && ! grep -q 'listening on' $T/exporter.log; do
		sleep 0.1
		i=$((i + 1))
	done
	check $g/listening "$(tail -3 $T/exporter.log)" grep -q 'listening on' $T/exporter.log
	kvmmmu-load --name exp-vm --vcpus 2 --mem 8M --dirty-log 1 --csv $T/exporter-load.csv \
		>/dev/null 2>&1
	wget -q -O $T/exporter-scrape.txt http://127.0.0.1:9486/metrics
	emit $T/exporter-scrape.txt
	S=$T/exporter-scrape.txt
	# sum FAMILY: the sum of FAMILY's samples of the VM exp-vm in the scrape
	sum() { awk -v f="$1" 'index($0, f "{vm=\"exp-vm\"") == 1 { s += $NF } END { print s + 0 }' $S; }
	# auto: fsession where the kernel has it (7.x), else fentry
	mode=fentry
	[ "$FSESSION" = yes ] && mode=fsession
	check $g/probe-mode-$mode "$(grep '^kvmmmu_exporter_build_info' $S)" \
		grep -q "probe_mode=\"$mode\"" $S
	k=$(($(val $T/exporter-load.csv kvm_stats pf_taken 0) + $(val $T/exporter-load.csv kvm_stats pf_taken 1)))
	# equal, or short by no more than the program runs the kernel skipped,
	# which the scrape says (7.x: BPF preempted, its CPU skips it for the next thread)
	m=$(awk '/^kvmmmu_events_dropped_total\{reason="prog_missed"\}/ { print $NF }' $S)
	if [ "${m:-0}" = 0 ]; then
		same() { eq "$1" "$2"; }
		w=""
	else
		same() { [ -n "$1" ] && [ "$1" -le "$2" ] && [ $(($2 - $1)) -le "$m" ]; }
		w=-within-skipped-runs
		info "$g: $m program runs skipped by the kernel (kvmmmu_events_dropped_total{reason=\"prog_missed\"})"
	fi
	b=$(sum kvmmmu_page_faults_total)
	check $g/faults-equal-pf_taken$w "exporter $b, KVM pf_taken $k, runs skipped ${m:-0}" same "$b" "$k"
	b=$(sum kvmmmu_vcpu_page_faults_total)
	check $g/vcpu-faults-equal-pf_taken$w "per vCPU $b, KVM pf_taken $k, runs skipped ${m:-0}" same "$b" "$k"
	# every fault timed once: on the fast path or the slow one, and whole
	d=$(sum kvmmmu_page_fault_duration_seconds_count)
	check $g/handler-durations-one-per-fault$w "fast + slow samples $d, faults $k, runs skipped ${m:-0}" same "$d" "$k"
	d=$(sum kvmmmu_mmu_page_fault_duration_seconds_count)
	check $g/whole-fault-durations "kvm_mmu_page_fault samples $d, faults $k" gt0 "$d"
	d=$(sum kvmmmu_memslot_lookup_duration_seconds_count)
	check $g/memslot-lookup-durations "samples $d" gt0 "$d"
	check $g/collectors-all-succeed "$(grep '^kvmmmu_scrape_collector_success' $S | tr '\n' ' ')" \
		eval '! grep -q "^kvmmmu_scrape_collector_success.* 0$" $S'
	# scrapes a second apart while a VM runs (rates), and another turns dirty
	# logging on and off between them (annotations): the host replays them
	# to a Prometheus and runs the dashboards' queries over these families
	# (exp-live runs until the last scrape: with --duration 12 it had exited
	# by the eighth when emitting the scrapes to the console was slow, and a
	# last scrape with no VM left the dashboards' instant queries empty)
	kvmmmu-load --name exp-live --vcpus 2 --mem 16M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
	lp=$!
	for i in 1 2 3 4 5 6 7 8; do
		sleep 1
		wget -q -O $T/exporter-replay-$i.txt http://127.0.0.1:9486/metrics
		emit $T/exporter-replay-$i.txt
		[ $i = 2 ] && kvmmmu-load --name exp-toggle --vcpus 1 --mem 64M --dirty-log 4 >/dev/null 2>&1 &
	done
	check $g/replays-show-the-live-vm "$(grep -c '^kvmmmu_vm_info{vm="exp-live"' $T/exporter-replay-8.txt) in the last" \
		eval 'grep -q "^kvmmmu_vm_info{vm=\"exp-live\"" $T/exporter-replay-1.txt &&
			grep -q "^kvmmmu_vm_info{vm=\"exp-live\"" $T/exporter-replay-8.txt'
	kill $lp
	wait $lp
	kill $ep
	wait $ep
	check $g/sigterm-exit-0 "exit $?, $(tail -2 $T/exporter.log)" test $? = 0
fi
