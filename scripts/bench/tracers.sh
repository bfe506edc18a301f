# SPDX-License-Identifier: GPL-2.0
# scripts/bench.sh's tracers and workload, sourced by it: starting and
# stopping kvmmmu-hist, bpftrace and the baseline programs, reading their
# programs' bpf_stats and memory, one run of kvmmmu-load, and which probe
# mode and bpftrace script a run is in.
# shellcheck shell=bash
# start_tracer CONFIG TAG: starts CONFIG's tracer in the background (its pid in
# TRACER_PIDS) and, when WITH_BASELINES=1, the baseline programs (pids in
# BASE_PIDS); waits until each has attached ("Tracing..." on its output).
WITH_BASELINES=0
BASELINES="triv_empty triv_pcpu_inc"
TRACER_PIDS=()
BASE_PIDS=()
start_tracer() {
	local cfg=$1 tag=$2 n=0 i p all
	TRACER_PIDS=()
	BASE_PIDS=()
	case $cfg in
	none) ;;
	kvmmmu)
		KVMMMU_PROBE_MODE=$PROBE_MODE "$BUILD/kvmmmu-hist" >"$TMP/$tag.kvmmmu.out" 2>&1 &
		TRACER_PIDS+=($!)
		;;
	kvmmmu-base)
		# fault accounting alone: no mmu_lock, lifecycle or timeline probes
		KVMMMU_PROBE_MODE=$PROBE_MODE "$BUILD/kvmmmu-hist" --metric outcomes,paths,walk_to_spte_ns \
			>"$TMP/$tag.kvmmmu.out" 2>&1 &
		TRACER_PIDS+=($!)
		;;
	kvmmmu-phases)
		# the default metrics and where each fault's time goes (opt-in: --metric phases)
		KVMMMU_PROBE_MODE=$PROBE_MODE "$BUILD/kvmmmu-hist" --metric default,phases \
			>"$TMP/$tag.kvmmmu.out" 2>&1 &
		TRACER_PIDS+=($!)
		;;
	kvmmmu-s16)
		# the default metrics, 1 fault in 16 timed (--sample 16)
		KVMMMU_PROBE_MODE=$PROBE_MODE "$BUILD/kvmmmu-hist" --sample 16 >"$TMP/$tag.kvmmmu.out" 2>&1 &
		TRACER_PIDS+=($!)
		;;
	bpftrace)
		bpftrace "$BT_SCRIPT" >"$TMP/$tag.bpftrace.out" 2>&1 &
		TRACER_PIDS+=($!)
		;;
	esac
	if [ "$WITH_BASELINES" = 1 ]; then
		if [ "$HAVE_TRIVIAL" = 1 ]; then
			# shellcheck disable=SC2086 # BASELINES: program names, split on purpose
			"$TMP/loader" "$TMP/trivial.bpf.o" $BASELINES \
				>"$TMP/$tag.trivial.out" 2>&1 &
			BASE_PIDS+=($!)
		fi
		bpftrace -e "BEGIN { printf(\"Tracing\\n\"); } $TRIVIAL_BT" >"$TMP/$tag.bt_count.out" 2>&1 &
		BASE_PIDS+=($!)
	fi
	all=$((${#TRACER_PIDS[@]} + ${#BASE_PIDS[@]}))
	[ "$all" -eq 0 ] && return 0
	for ((i = 0; i < 300; i++)); do
		n=$(grep -l '^Tracing' "$TMP/$tag".*.out 2>/dev/null | wc -l)
		[ "$n" -ge "$all" ] && break
		for p in "${TRACER_PIDS[@]}" "${BASE_PIDS[@]}"; do
			if ! kill -0 "$p" 2>/dev/null; then
				echo "bench: a tracer of configuration $cfg did not start:" >&2
				grep -hv RLIMIT_MEMLOCK "$TMP/$tag".*.out | tail -5 | sed 's/^/  /' >&2
				exit 2
			fi
		done
		sleep 0.1
	done
	[ "$n" -ge "$all" ] || die "the $cfg tracers did not attach within 30 s"
	sleep 0.3
}

stop_tracer() {
	local p i
	for p in "${TRACER_PIDS[@]}" "${BASE_PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null
		# a tracer that does not end on SIGINT within 60 s is said and killed, not waited for
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$p" 2>/dev/null; then
			echo "bench: warning: a tracer (pid $p, $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)) did not end on SIGINT in 60 s: killed" >&2
			kill -KILL "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
	TRACER_PIDS=()
	BASE_PIDS=()
}

# mem_of PID: "RSS_KiB MAPS_KiB": the process's resident memory and the
# kernel memory of the BPF maps it holds (bpftool's bytes_memlock).
mem_of() {
	local rss maps
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status 2>/dev/null)
	maps=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "map_id:" { print $2 }' | sort -un |
		while read -r id; do bpftool map show id "$id" -j 2>/dev/null; echo; done |
		awk -F'"bytes_memlock":' 'NF > 1 { split($2, a, /[,}]/); s += a[1] } END { print int(s / 1024) }')
	echo "${rss:-0} ${maps:-0}"
}

# progs_of PID...: the ids of the BPF programs these processes hold.
progs_of() {
	local p
	for p in "$@"; do
		cat /proc/"$p"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }'
	done | sort -un
}

# prog_stats IDS...: "id type name run_time_ns run_cnt" per program.
prog_stats() {
	local id
	for id in "$@"; do
		bpftool prog show id "$id" 2>/dev/null | awk -v id="$id" 'NR == 1 {
			type = $2; name = "?"; rt = 0; rc = 0
			for (i = 3; i < NF; i++) {
				if ($i == "name") name = $(i + 1)
				if ($i == "run_time_ns") rt = $(i + 1)
				if ($i == "run_cnt") rc = $(i + 1)
			}
			print id, type, name, rt, rc }'
	done
}

# other_vms: how many other processes hold a KVM VM (fd on anon_inode:kvm-vm).
other_vms() {
	find /proc/[0-9]*/fd -maxdepth 1 -lname 'anon_inode:kvm-vm' 2>/dev/null |
		cut -d/ -f3 | sort -u | grep -vxc "$$"
}
# quiesce: waits up to 20 s for other VMs (other users' tests) to end, so they
# neither take CPU from the workload nor add events to the tracers' counts.
BUSY_RUNS=0
quiesce() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(other_vms)" -eq 0 ] && return 0
		sleep 0.1
	done
	BUSY_RUNS=$((BUSY_RUNS + 1))
}

# run_load TAG: one workload run; sets f (pf_taken), t (populate + dirty-memory
# seconds), df and dt (the same for the dirty-log passes only), fx (pf_fixed).
run_load() {
	local csv=$TMP/$1.csv
	# a run that hangs (BENCH_RUN_TIMEOUT, 900 s) ends the bench with what it printed, not never
	if ! timeout -k 10 "${BENCH_RUN_TIMEOUT:-900}" "${LOAD[@]}" --csv "$csv" >"$TMP/$1.load.out" 2>&1; then
		echo "bench: kvmmmu-load failed or took over ${BENCH_RUN_TIMEOUT:-900} s (run $1):" >&2
		tail -5 "$TMP/$1.load.out" | sed 's/^/  /' >&2
		exit 2
	fi
	awk -F, '/^#/ { next }
		$5 == "load" && $6 == "populate_s" { t += $8 }
		$5 == "load" && $6 ~ /^iteration_[0-9]+_dirty_memory_s$/ { t += $8; dt += $8 }
		$5 == "load" && $6 ~ /^iteration_[0-9]+_pf_taken$/ { df += $8 }
		$5 == "kvm_stats" && $4 != "" && $7 == "" && $6 == "pf_taken" { f += $8 }
		$5 == "kvm_stats" && $4 != "" && $7 == "" && $6 == "pf_fixed" { fx += $8 }
		END { printf "%d %.9f %d %.9f %d\n", f, t, df, dt, fx }' "$csv" >"$TMP/$1.res"
	read -r f t df dt fx <"$TMP/$1.res"
	if [ "${f:-0}" -le 0 ] || [ -z "${t:-}" ]; then
		die "no pf_taken/timings in kvmmmu-load's CSV ($csv)"
	fi
}

rotate() { # rotate N WORDS...: the words rotated left by N
	local n=$1
	shift
	local a=("$@") i
	for ((i = 0; i < ${#a[@]}; i++)); do
		printf '%s ' "${a[$(((i + n) % ${#a[@]}))]}"
	done
}

# probe_mode_of OUT: the mode kvmmmu-hist's header in OUT names (its Probes: block).
probe_mode_of() {
	if grep -A20 '^Probes:' "$1" | grep -q '(fsession)'; then
		echo fsession
	elif grep -A20 '^Probes:' "$1" | grep -q '(fentry)'; then
		echo fentry
	elif grep -A20 '^Probes:' "$1" | grep -q '(kprobe)'; then
		echo kprobe
	else
		echo tracepoint
	fi
}
# mode_attaches MODE: whether kvmmmu-hist forced into MODE attaches here
# (its output in $TMP/mode.MODE.out); mode_why MODE: why not, in one line.
mode_attaches() {
	KVMMMU_PROBE_MODE=$1 timeout 120 "$BUILD/kvmmmu-hist" --metric outcomes -- true \
		>"$TMP/mode.$1.out" 2>&1 && [ "$(probe_mode_of "$TMP/mode.$1.out")" = "$1" ]
}
mode_why() {
	grep -m1 -i 'kvmmmu-hist: \|error\|cannot\|refused' "$TMP/mode.$1.out" ||
		echo "kvmmmu-hist ran in another mode: $(probe_mode_of "$TMP/mode.$1.out")"
}
# bt_script MODE: the bpftrace script that draws kvmmmu's latency histogram in MODE
bt_script() {
	case $1 in
	tracepoint) echo "$LATENCY_BT" ;;
	done-event) echo "$LATENCY_DONE_BT" ;;
	*) echo "$LATENCY_KFUNC_BT" ;;
	esac
}
