# SPDX-License-Identifier: GPL-2.0
# scripts/bench.sh's phase 4, sourced by it: kvmmmu-hist's, kvmmmu-top's and
# kvmmmu-exporter's own CPU over 8 VMs x 8 vCPUs faulting under dirty logging,
# at 1 s intervals; the exporter's scrape time, CPU a scrape and memory. Sets
# CPU_PCT, TOP_CPU_PCT, TOP_TUI_PCT and the EXP_* figures the targets read:
# the exporter in the VMs' cgroup, and (EXP_OWN_*) in a cgroup of its own.
# shellcheck shell=bash

# cpu_pct PID SECS: PID's utime + stime over SECS seconds, in % of one CPU
cpu_pct() {
	local c0 c1 t0 t1
	c0=$(awk '{ print $14 + $15 }' /proc/"$1"/stat)
	t0=$(date +%s%N)
	sleep "$2"
	c1=$(awk '{ print $14 + $15 }' /proc/"$1"/stat)
	t1=$(date +%s%N)
	awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v ns=$((t1 - t0)) \
		'BEGIN { printf "%.2f", 100 * c / hz / (ns / 1e9) }'
}

# tool_cpu OUT PATTERN SETTLE SECS CMD...: CMD in the background into OUT (a
# tracer, stopped after); once OUT has a PATTERN line and SETTLE seconds more,
# its CPU over SECS seconds into TOOL_CPU (cpu_pct; not a subshell: the exit
# trap must know the tracer's pid)
tool_cpu() {
	local out=$1 pattern=$2 settle=$3 secs=$4 i
	shift 4
	# the file exists before the poll reads it (the background job opens its own a moment later)
	: >"$out"
	"$@" >"$out" 2>&1 &
	TRACER_PIDS=($!)
	for ((i = 0; i < 300; i++)); do grep -q "$pattern" "$out" && break; sleep 0.1; done
	sleep "$settle"
	TOOL_CPU=$(cpu_pct "${TRACER_PIDS[0]}" "$secs")
	stop_tracer
}

# ms_median FILE, ms_p99 FILE: of FILE's times in seconds, in milliseconds
ms_median() { sort -g "$1" | awk '{ v[++n] = $1 } END { printf "%.2f", 1000 * (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }'; }
ms_p99() { sort -g "$1" | awk '{ v[++n] = $1 } END { i = int(n * 0.99); if (i < 1) i = 1; printf "%.2f", 1000 * v[i] }'; }

# cpu_cgroup_root: where this host's cpu controller makes groups (cgroup v2's
# root where it hands cpu down, else v1's cpu hierarchy); fails where neither
cpu_cgroup_root() {
	if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		echo /sys/fs/cgroup
	elif [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
		echo /sys/fs/cgroup/cpu
	else
		return 1
	fi
}

# cpu_cgroups_make: a cgroup for the VMs (VM_PIDS moved into it) and one for
# the exporter, beside each other, their path in CG_ROOT; else 1, why in CG_WHY
cpu_cgroups_make() {
	local p
	CG_WHY=
	if ! CG_ROOT=$(cpu_cgroup_root); then
		CG_WHY="no cpu controller here to make cgroups with"
	elif ! mkdir -p "$CG_ROOT/kvmmmu-bench-vms" "$CG_ROOT/kvmmmu-bench-exporter" 2>/dev/null; then
		CG_WHY="cannot make cgroups in $CG_ROOT"
	else
		for p in "${VM_PIDS[@]}"; do
			echo "$p" 2>/dev/null >"$CG_ROOT/kvmmmu-bench-vms/cgroup.procs" && continue
			CG_WHY="cannot move VM pid $p into $CG_ROOT/kvmmmu-bench-vms"
			break
		done
	fi
	[ -z "$CG_WHY" ]
}

# cpu_cgroups_remove: the bench's cgroups, once their processes are gone
cpu_cgroups_remove() {
	local root
	root=$(cpu_cgroup_root) || return 0
	rmdir "$root/kvmmmu-bench-exporter" "$root/kvmmmu-bench-vms" 2>/dev/null
	return 0
}

# exporter_scrapes CGROUP: kvmmmu-exporter over the running VMs (in CGROUP,
# a cgroup directory, when not empty), 200 scrapes gzipped as Prometheus asks
# for them (curl --compressed; not before 2026-12-05), each timed by curl and
# by the exporter itself (kvmmmu_scrape_duration_seconds); sets SCRAPE_MS,
# SCRAPE_P99, SCRAPE_CURL_MS, SCRAPE_CPU_MS (CPU a scrape), SCRAPE_VCPUS (the
# fewest vCPUs a scrape saw: every scrape must see the 64 to count),
# EXP_SERIES, and its RSS after the first 20 and after all of them (a scrape
# must free what it allocates) in EXP_RSS0 and EXP_RSS1. Returns 1, why in
# SCRAPE_WHY, when the exporter could not be moved into CGROUP.
exporter_scrapes() {
	local cpu0 i
	: >"$TMP/exp.out"
	"$BUILD/kvmmmu-exporter" --web.listen-address=127.0.0.1:0 >"$TMP/exp.out" 2>&1 &
	TRACER_PIDS=($!)
	if [ -n "$1" ] && ! echo "${TRACER_PIDS[0]}" 2>/dev/null >"$1/cgroup.procs"; then
		SCRAPE_WHY="cannot move the exporter into $1"
		stop_tracer
		return 1
	fi
	EXP_PORT=
	for ((i = 0; i < 300; i++)); do
		EXP_PORT=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$TMP/exp.out")
		[ -n "$EXP_PORT" ] && break
		sleep 0.1
	done
	[ -n "$EXP_PORT" ] || die "kvmmmu-exporter did not start: $(tail -2 "$TMP/exp.out")"
	sleep 1
	: >"$TMP/scrape.curl"
	: >"$TMP/scrape.self"
	: >"$TMP/scrape.vcpus"
	cpu0=$(awk '{ print $14 + $15 }' /proc/"${TRACER_PIDS[0]}"/stat)
	for ((i = 0; i < 200; i++)); do
		curl -s --compressed -o "$TMP/scrape.txt" -w '%{time_total}\n' "http://127.0.0.1:$EXP_PORT/metrics" >>"$TMP/scrape.curl"
		awk '$1 == "kvmmmu_scrape_duration_seconds" { print $2 }' "$TMP/scrape.txt" >>"$TMP/scrape.self"
		awk '/^kvmmmu_vm_vcpus/ { n += $2 } END { print n + 0 }' "$TMP/scrape.txt" >>"$TMP/scrape.vcpus"
		[ $i = 19 ] && EXP_RSS0=$(awk '/^VmRSS:/ { print $2 }' /proc/"${TRACER_PIDS[0]}"/status)
	done
	EXP_RSS1=$(awk '/^VmRSS:/ { print $2 }' /proc/"${TRACER_PIDS[0]}"/status)
	# CPU time per scrape: with 64 busy vCPUs on a few CPUs the wall clock mostly waits for one
	SCRAPE_CPU_MS=$(awk -v c0="$cpu0" -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", 1000 * ($14 + $15 - c0) / hz / 200 }' \
		/proc/"${TRACER_PIDS[0]}"/stat)
	EXP_SERIES=$(grep -vc '^#' "$TMP/scrape.txt")
	SCRAPE_VCPUS=$(sort -n "$TMP/scrape.vcpus" | head -1)
	stop_tracer
	SCRAPE_MS=$(ms_median "$TMP/scrape.self")
	SCRAPE_P99=$(ms_p99 "$TMP/scrape.self")
	SCRAPE_CURL_MS=$(ms_median "$TMP/scrape.curl")
}

cpu_phase() {
	if has_phase cpu; then
		echo "Phase 4: kvmmmu-hist 1 (1 s intervals) over 8 VMs x 8 vCPUs faulting under dirty logging"
		VM_PIDS=()
		for ((i = 0; i < 8; i++)); do
			# long enough to outlast every tracer below however slowly they start
			# (64 busy vCPUs on a few CPUs); stopped at the end of the phase
			"$BUILD/kvmmmu-load" --vcpus 8 --mem 4M --dirty-log 1 --duration 900 >"$TMP/vm$i.out" 2>&1 &
			VM_PIDS+=($!)
		done
		sleep 1
		tool_cpu "$TMP/cpu.out" '^Tracing' 2 10 "$BUILD/kvmmmu-hist" 1
		CPU_PCT=$TOOL_CPU
		echo "  kvmmmu-hist used ${CPU_PCT}% of a CPU (utime + stime over 10 s)"
		# the same VMs (still running) under kvmmmu-top, refreshed every second
		tool_cpu "$TMP/top.out" 'kvmmmu-top:' 1 8 "$BUILD/kvmmmu-top" -b -d 1
		TOP_CPU_PCT=$TOOL_CPU
		echo "  kvmmmu-top used ${TOP_CPU_PCT}% of a CPU (utime + stime over 8 s)"
		# and on a screen, in tmux: the ncurses redraws cost too
		TOP_TUI_PCT=n/a
		if command -v tmux >/dev/null; then
			tmux kill-session -t kvmmmu-bench 2>/dev/null
			tmux new-session -d -s kvmmmu-bench -x 160 -y 50 "$BUILD/kvmmmu-top -d 1"
			tui=
			for ((i = 0; i < 300; i++)); do
				tui=$(pgrep -f "^$BUILD/kvmmmu-top -d 1\$" | head -1)
				[ -n "$tui" ] && tmux capture-pane -p -t kvmmmu-bench | grep -q '^VM ' && break
				sleep 0.1
			done
			sleep 1
			[ -n "$tui" ] && TOP_TUI_PCT=$(cpu_pct "$tui" 8)
			tmux send-keys -t kvmmmu-bench q
			sleep 0.5
			tmux kill-session -t kvmmmu-bench 2>/dev/null
		fi
		echo "  kvmmmu-top on a 160x50 screen (tmux) used ${TOP_TUI_PCT}% of a CPU (utime + stime over 8 s)"
		# the same VMs under kvmmmu-exporter, in their cgroup (as a shell starts them)
		exporter_scrapes ""
		EXP_MS=$SCRAPE_MS EXP_P99=$SCRAPE_P99 EXP_CPU_MS=$SCRAPE_CPU_MS EXP_VCPUS=$SCRAPE_VCPUS
		echo "  kvmmmu-exporter in the VMs' cgroup: a gzipped scrape ($EXP_SERIES series, at least $EXP_VCPUS vCPUs) takes"
		echo "    ${EXP_MS} ms median, $EXP_P99 ms p99 (its own clock); curl sees $SCRAPE_CURL_MS ms median;"
		echo "    $EXP_CPU_MS ms of CPU a scrape (utime + stime, and the main loop's upkeep meanwhile);"
		echo "    RSS $EXP_RSS0 KiB after 20 scrapes, $EXP_RSS1 KiB after 200"
		# and as its systemd unit runs it: a service's cgroup beside the VMs' (machine.slice)
		EXP_OWN_MS=n/a EXP_OWN_P99=n/a EXP_OWN_CPU_MS=n/a EXP_OWN_VCPUS=0 EXP_OWN_WHY=
		if ! cpu_cgroups_make; then
			EXP_OWN_WHY=$CG_WHY
		elif ! exporter_scrapes "$CG_ROOT/kvmmmu-bench-exporter"; then
			EXP_OWN_WHY=$SCRAPE_WHY
		else
			EXP_OWN_MS=$SCRAPE_MS EXP_OWN_P99=$SCRAPE_P99 EXP_OWN_CPU_MS=$SCRAPE_CPU_MS EXP_OWN_VCPUS=$SCRAPE_VCPUS
			echo "  kvmmmu-exporter in a cgroup of its own beside the VMs' (equal CPU weights, as its systemd unit"
			echo "    and machine.slice): a scrape takes $EXP_OWN_MS ms median, $EXP_OWN_P99 ms p99; curl sees $SCRAPE_CURL_MS ms median;"
			echo "    $EXP_OWN_CPU_MS ms of CPU a scrape (at least $EXP_OWN_VCPUS vCPUs seen)"
		fi
		[ -z "$EXP_OWN_WHY" ] || echo "  kvmmmu-exporter in a cgroup of its own: not measured ($EXP_OWN_WHY)"
		for p in "${VM_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
		for p in "${VM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
		cpu_cgroups_remove
		echo
	else
		CPU_PCT=n/a TOP_CPU_PCT=n/a TOP_TUI_PCT=n/a EXP_MS=n/a EXP_P99=n/a EXP_CPU_MS=n/a EXP_VCPUS=0 EXP_RSS0=n/a EXP_RSS1=n/a
		EXP_OWN_MS=n/a EXP_OWN_P99=n/a EXP_OWN_CPU_MS=n/a EXP_OWN_VCPUS=0 EXP_OWN_WHY="phase 4 not run"
		echo "Phase 4: not run (BENCH_PHASES)"
		echo
	fi
}
