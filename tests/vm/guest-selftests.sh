#!/bin/sh
# shellcheck shell=dash disable=SC2016,SC2317,SC2154
# The "selftests" group, sourced by tests/vm/guest-checks.sh in the test
# guest: its helpers (check, want, emit, reload_kvm, ...) and $T are that
# script's (SC2154: variables set there).
# ---- selftests: the kernel's own KVM selftests (this kernel's Debian source,
# scripts/build-selftests.sh) as workloads. Each runs beside two oracles:
#  - tests/vm/selftest_stats.c, linked into them: each vCPU's pf_* counters
#    (KVM_GET_STATS_FD, which only the VM's own process may issue) just
#    before each VM is freed;
#  - kvmpin (tests/tools/kvmpin.c): holds each VM by its debugfs files and
#    reads KVM's VM-wide sums when the test has exited, an independent
#    check of the first (a VM made while an earlier one is held gets no
#    debugfs directory: KVM logs "duplicate directory"; kvmpin then sees
#    only the first, see below).
# Per process and per vCPU id, kvmmmu's faults, ret_pf_fixed,
# ret_pf_spurious, ret_pf_emulate and path_fast must equal KVM's pf_taken,
# pf_fixed, pf_spurious, pf_emulate and pf_fast, summed over the process's
# VMs (dirty_log_page_splitting_test makes two in turn), per vCPU id too;
# and kvmmmu must show as many VMs (vm_index) as the test made.
# The tests run one after another under one kvmmmu-hist -- (fentry; it
# follows the commands it starts), with a kprobe and a tracepoint tracer
# beside it (-p by name), once with tdp_mmu=Y and once with N: every
# tracer start costs 9-18 s under TCG, the tests a few seconds each.
ST=/kvmmmu/selftests
# ID:TEST ARGS, the runs of each pass. The N pass leaves out what needs the
# TDP MMU (dirty_log_page_splitting_test requires tdp_mmu=Y), what skips
# on Debian's kernels (access_tracking_perf_test) and, for the group's
# time, demand paging without userfaultfd (every test populates memory so).
ST_RUNS_Y="dlperf:dirty_log_perf_test -v 2 -b 8M -i 2
pgtable:kvm_page_table_test -v 2 -b 8M
demand:demand_paging_test -v 2 -b 8M
uffd:demand_paging_test -v 2 -b 8M -u MISSING
memslot:memslot_modification_stress_test -v 2 -b 8M -i 20
split:dirty_log_page_splitting_test -b 8M
access:access_tracking_perf_test -v 2 -b 8M"
ST_RUNS_N="dlperf:dirty_log_perf_test -v 2 -b 8M -i 2
pgtable:kvm_page_table_test -v 2 -b 8M
uffd:demand_paging_test -v 2 -b 8M -u MISSING
memslot:memslot_modification_stress_test -v 2 -b 8M -i 20"
# what -p matches: the tests' process names (cut to 15 characters)
ST_NAMES='^(dirty_log_|kvm_page_table|demand_paging|memslot_modif|access_track)'
# 2 MiB pages for dirty_log_page_splitting_test's two VMs of 16 MiB each
# (the first is still held by kvmpin while the second runs), and a few more
ST_HUGEPAGES=20

# st_counts NAME CSV PID ORACLE [SKIPPED]: per vCPU id and for the whole
# process, one check each: kvmmmu's bpf rows for PID against KVM's counters
# (ORACLE: selftest_stats.c's lines, summed over the process's VMs). One awk
# pass: under TCG each awk start over a large CSV costs. SKIPPED: the program
# runs the kernel skipped in that tracer's run (prog_missed, its pid 0 row),
# which may put each count off by as many (7.x runs BPF preemptibly): then
# the check is named -within-skipped-runs and allows that, equality otherwise.
st_counts() {
	awk -v g="$1" -v p="$3" -v M="$M" -v skipped="${5:-0}" '
	FILENAME == ARGV[1] {
		if ($1 != "vcpu")
			next
		ids[$3] = 1
		vmids[$2] = 1
		for (i = 4; i < NF; i += 2) {
			k[$3, $i] += $(i + 1)
			k["", $i] += $(i + 1)
		}
		next
	}
	# the last value of each VM (vm_index, $10), summed over the VMs of the process below
	!/^#/ && $2 == p && $5 == "bpf" && $7 == "" && $3 !~ / \[tid [0-9]+\]$/ {
		last[$10, $4, $6] = $8
		kvms[$10] = 1
	}
	END {
		for (key in last) {
			split(key, kk, SUBSEP)
			b[kk[2], kk[3]] += last[key]
		}
		# a VM is a struct kvm: kvmmmu tells apart the VMs of a process as KVM made them
		nk = 0
		for (v in kvms)
			nk++
		no = 0
		for (v in vmids)
			no++
		if (nk == no)
			print M " PASS " g "/vms-told-apart"
		else
			print M " FAIL " g "/vms-told-apart: kvmmmu " nk " VMs, the test made " no
		n = split("faults:pf_taken ret_pf_fixed:pf_fixed ret_pf_spurious:pf_spurious ret_pf_emulate:pf_emulate path_fast:pf_fast", pairs, " ")
		ids[""] = 1
		for (id in ids) {
			bad = ""
			got = ""
			for (j = 1; j <= n; j++) {
				split(pairs[j], q, ":")
				bv = ((id, q[1]) in b) ? b[id, q[1]] : "none"
				kv = k[id, q[2]] + 0
				got = got " " q[1] "=" bv
				if (bv != kv && !(skipped > 0 && bv != "none" &&
						  bv - kv <= skipped && kv - bv <= skipped))
					bad = bad " " q[1] "=" bv " but " q[2] "=" kv
			}
			name = g "/" (id == "" ? "process" : "vcpu" id) (skipped > 0 ? "-within-skipped-runs" : "")
			if (skipped > 0)
				got = got "; " skipped " runs skipped"
			if (bad == "")
				print M " PASS " name
			else
				print M " FAIL " name ":" bad " (kvmmmu:" got ")"
		}
	}' "$4" FS=, "$2"
}

# st_oracles NAME PIN ORACLE: kvmpin's VM-wide sums from debugfs equal
# selftest_stats.c's sums over each VM's vCPUs, and its vCPU folders their
# number, for each VM kvmpin could hold (VMs in the order made and freed).
st_oracles() {
	awk -v g="$1" -v M="$M" '
	FILENAME == ARGV[1] {
		if ($1 == "vm") {
			held[$2] = 1
			dirs[$2] = $6
			for (i = 7; i < NF; i += 2)
				d[$2, $i] = $(i + 1)
		}
		if ($1 == "missed")
			bad = bad " debugfs " $2 " gone before kvmpin held it;"
		next
	}
	$1 == "vcpu" {
		vms[$2] = 1
		n[$2]++
		for (i = 4; i < NF; i += 2)
			s[$2, $i] += $(i + 1)
	}
	END {
		nh = 0
		for (v in held)
			nh++
		for (v in held) {
			if (!(v in vms)) {
				bad = bad " VM " v ": no vCPU counters from the test;"
				continue
			}
			if (dirs[v] != n[v])
				bad = bad " VM " v ": " dirs[v] " vCPU folders, " n[v] " vCPUs;"
			for (key in d) {
				split(key, kk, SUBSEP)
				if (kk[1] == v && d[key] != s[v, kk[2]] + 0)
					bad = bad " VM " v " " kk[2] ": debugfs " d[key] ", vCPUs " s[v, kk[2]] + 0 ";"
			}
		}
		nv = 0
		for (v in vms)
			nv++
		if (!nh)
			bad = bad " kvmpin held no VM;"
		if (bad == "")
			print M " PASS " g "/oracles-agree"
		else
			print M " FAIL " g "/oracles-agree:" bad
		print M " INFO " g ": " nv " VMs, " nh " held by kvmpin"
	}' "$2" "$3"
}

# AWK_HEX: hex(S), the value of hex digits S (busybox awk has no strtonum)
AWK_HEX='function hex(s,    v, i) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
# the bytes of the test memory the line "guest physical test memory: [0xA, 0xB)" names
function test_memory(line,    a) {
	split(line, a, /0x|[,)]/)
	return hex(a[4]) - hex(a[2])
}'

# st_dirty_log NAME CSV PID LOG: dirty_log_perf_test prints each dirty-log
# step and its time, measured around the ioctls: kvmmmu's counts of those
# ioctls are the lines' (one memslot: no -x), and its kernel time in them
# is positive and at most the test's. Its vCPUs write each 4 KiB page of
# the test memory it prints once an iteration, and after the first
# iteration each write faults (write-protected by the previous fetch or
# clear): the faults kvmmmu's timeline puts before the last fetch are
# those pages.
st_dirty_log() {
	awk -v g="$1" -v p="$3" -v M="$M" -v skipped="${5:-0}" "$AWK_HEX"'
	# "1.000123456s": busybox awk reads a number with a leading 0 as octal
	function ns(s,    a, f) {
		sub(/s\.?$/, "", s)
		split(s, a, ".")
		f = a[2]
		sub(/^0+/, "", f)
		return a[1] * 1000000000 + f
	}
	FILENAME == ARGV[1] {
		if ($0 ~ /^guest physical test memory: \[0x[0-9a-f]+, 0x[0-9a-f]+\)/)
			pages = test_memory($0) / 4096
		if ($0 ~ /^Enabling dirty logging time: /) { c["enables"]++; t["enable"] += ns($NF) }
		if ($0 ~ /^Disabling dirty logging time: /) { c["disables"]++; t["disable"] += ns($NF) }
		if ($0 ~ /^Iteration [0-9]+ get dirty log time: /) c["gets"]++
		if ($0 ~ /^Iteration [0-9]+ clear dirty log time: /) c["clears"]++
		if ($0 ~ /^Get dirty log over /) t["get"] = ns($8)
		if ($0 ~ /^Clear dirty log over /) t["clear"] = ns($8)
		next
	}
	!/^#/ && $2 == p && $5 == "bpf" && $4 == "" && $7 == "" && $3 !~ / \[tid [0-9]+\]$/ { b[$6] = $8 }
	END {
		x = b["event_get_dirty_log_faults_before"]
		if (skipped > 0) {
			# (as st_counts)
			if (pages > 0 && x != "" && x <= pages && pages - x <= skipped)
				print M " PASS " g "/last-fetch-faults-are-test-pages-within-skipped-runs"
			else
				print M " FAIL " g "/last-fetch-faults-are-test-pages-within-skipped-runs: kvmmmu " x " faults, the test memory has " pages " pages, " skipped " runs skipped"
		} else if (pages > 0 && x == pages)
			print M " PASS " g "/last-fetch-faults-are-test-pages"
		else
			print M " FAIL " g "/last-fetch-faults-are-test-pages: kvmmmu " x " faults, the test memory has " pages " pages"
		for (x in c) {
			name = g "/dirty_log_" x
			if (b["dirty_log_" x] == c[x])
				print M " PASS " name
			else
				print M " FAIL " name ": kvmmmu " b["dirty_log_" x] ", the test printed " c[x]
		}
		for (x in t) {
			m = "dirty_log_" x "_ns"
			name = g "/" m "-within-the-test-s"
			if (b[m] != "" && b[m] > 0 && b[m] <= t[x])
				print M " PASS " name
			else
				print M " FAIL " name ": kvmmmu " b[m] " ns, the test " t[x] " ns"
		}
	}' "$4" FS=, "$2"
}

# st_splits NAME CSV PID LOG [SKIPPED]: dirty_log_page_splitting_test asserts
# that its test memory (printed per VM) is all in 2 MiB pages after
# populating and that dirty logging splits them all, once a VM: kvmmmu's
# huge_page_splits is that memory's 2 MiB pages, summed over its VMs.
# SKIPPED: as st_counts (a skipped run may leave a fault's level uncounted).
st_splits() {
	awk -v g="$1" -v p="$3" -v M="$M" -v VCPUS=2 -v inplace="$HUGE_PAGE_RECOVERY" \
		-v skipped="${5:-0}" "$AWK_HEX"'
	FILENAME == ARGV[1] {
		if ($0 ~ /^guest physical test memory: \[0x[0-9a-f]+, 0x[0-9a-f]+\)/)
			pages += test_memory($0) / 2097152
		next
	}
	!/^#/ && $2 == p && $5 == "bpf" && $4 == "" && $3 !~ / \[tid [0-9]+\]$/ {
		if ($6 == "huge_page_splits")
			last[$10] = $8
		if ($6 == "level_installed_2m")
			huge[$10] = $8
	}
	END {
		for (v in last)
			s += last[v]
		if (skipped > 0) {
			if (pages > 0 && s <= pages && s >= pages - skipped)
				print M " PASS " g "/huge_page_splits-within-skipped-runs"
			else
				print M " FAIL " g "/huge_page_splits-within-skipped-runs: kvmmmu " s ", the test memory has " pages " 2 MiB pages, " skipped " runs skipped"
		} else if (pages > 0 && s == pages)
			print M " PASS " g "/huge_page_splits"
		else
			print M " FAIL " g "/huge_page_splits: kvmmmu " s ", the test memory has " pages " 2 MiB pages"
		# Each 2 MiB page mapped huge when populated, and again when the
		# vCPUs touch it after dirty logging is off; and once more where
		# both vCPUs fault on one page at once. The test does not partition
		# its memory (memstress): each vCPU writes all of it. The later
		# fault, waiting for the HugeTLB page meanwhile, replaces the SPTE
		# the earlier one set, which differs from its own by the dirty bit
		# the (here emulated) NPT walk has set since; KVM counts that fault
		# fixed, and kvmmmu the 2 MiB SPTE it sets (seen in tracefs:
		# kvm_tdp_mmu_spte_changed at level 2, old 0x3400ee7, new 0x3400ea7,
		# 6.12, 40 for 32 in that run). So at most a vCPU a page a pass.
		for (v in huge)
			h += huge[v]
		# From 6.13 the TDP MMU recovers the huge pages in place when dirty
		# logging is turned off: no fault maps them again, the populate alone
		times = inplace == "upstream" ? 1 : 2
		lo = times * pages
		hi = times * VCPUS * pages
		name = g "/level_installed_2m-" (times == 1 ? "populate-recovered-in-place" : "populate-and-repopulate")
		if (skipped > 0) {
			name = name "-within-skipped-runs"
			lo -= skipped
		}
		if (pages > 0 && h >= lo && h <= hi)
			print M " PASS " name
		else
			print M " FAIL " name ": kvmmmu " h ", expected from " lo " (" (times == 1 ? "" : "twice ") "the test memory'"'"'s 2 MiB pages" (skipped > 0 ? ", less the " skipped " runs skipped" : "") ") to " hi " (a vCPU each)"
		print M " INFO " g ": level_installed_2m " h ", 2 MiB pages of test memory " pages " (" h - times * pages " set again by the other vCPU)"
	}' "$4" FS=, "$2"
}

# st_pfn_phase NAME CSV PID [SHARE]: the share of the process's fault time
# (fault_ns) that --metric phases put in resolving the host page (pfn: the
# userfaultfd wait, under demand_paging_test -u MISSING), in percent, and
# with SHARE a check that it is at least SHARE.
st_pfn_phase() {
	awk -v g="$1" -v p="$3" -v M="$M" -v want="${4:-}" '
	!/^#/ && $2 == p && $5 == "bpf" && $4 == "" && $3 !~ / \[tid [0-9]+\]$/ {
		if ($6 == "fault_ns_sum")
			f[$10] = $8
		if ($6 == "phase_pfn_ns_sum")
			pfn[$10] = $8
	}
	END {
		for (v in f) {
			ft += f[v]
			pt += pfn[v]
		}
		share = ft > 0 ? int(100 * pt / ft) : -1
		print M " INFO " g ": pfn phase " pt " ns of " ft " ns of fault time (" share "%)"
		if (want == "")
			exit
		if (ft > 0 && share >= want)
			print M " PASS " g "/pfn-phase-at-least-" want "pct"
		else
			print M " FAIL " g "/pfn-phase-at-least-" want "pct: " pt " ns of " ft " ns (" share "%)"
	}' FS=, "$2"
}

# st_split NAME CSV: from kvmmmu-hist's CSV, CSV-rows.csv (without the
# histograms' buckets: the serial console is slow) and CSV-pick.csv (the
# rows each test's checks read), in one pass (each awk over a large CSV
# costs under TCG); then the checks of the whole CSV: nothing lost (pid 0
# rows), and the path x outcome table adds up.
st_split() {
	local bad
	bad=$(awk -F, -v rows="${2%.csv}-rows.csv" -v pick="${2%.csv}-pick.csv" '
		/^#/ || $7 == "" { print >rows }
		/^#/ || $7 != "" || $5 != "bpf" { next }
		$2 == 0 && $6 ~ /^(drops|prog_missed|exits_lost|kprobe_missed|children_untraced)$/ { x[$6] = $8 }
		$2 != 0 && $3 !~ / \[tid [0-9]+\]$/ &&
			$6 ~ /^(faults|ret_pf_(fixed|spurious|emulate)|path_fast|huge_page_splits|dirty_log_.*|event_get_dirty_log_faults_before|level_installed_2m|fault_ns_sum|phase_pfn_ns_sum)$/ {
			print >pick
		}
		END { for (m in x) if (x[m] != 0) printf " %s=%s", m, x[m] }' "$2")
	# Runs the kernel skipped (7.x: BPF preempted, the next thread on its CPU
	# skipped) are said, and bound the counts' checks (st_counts); a fault
	# entry whose exit was a skipped run counts in exits_lost, at most one each
	local skipped lost
	skipped=$(echo "$bad" | sed -n 's/.* prog_missed=\([0-9]*\).*/\1/p')
	lost=$(echo "$bad" | sed -n 's/.* exits_lost=\([0-9]*\).*/\1/p')
	if [ -n "$skipped" ]; then
		echo "$skipped" >"${2%.csv}.skipped"
		check "$1/skipped-runs-said" "prog_missed=$skipped, not in ${2%.csv}.out" \
			grep -q "BPF program runs skipped by the kernel" "${2%.csv}.out"
		[ -z "$lost" ] || [ "$lost" -gt "$skipped" ] || bad=$(echo "$bad" | sed 's/ exits_lost=[0-9]*//')
		bad=$(echo "$bad" | sed 's/ prog_missed=[0-9]*//')
		check "$1/nothing-lost-but-skipped-runs" "$bad (prog_missed=$skipped)" test -z "$bad"
	else
		rm -f "${2%.csv}.skipped"
		check "$1/nothing-lost" "$bad" test -z "$bad"
	fi
	outcomes "$1" "${2%.csv}-rows.csv"
}

# st_pass Y|N: the pass's runs under the three tracers, then their checks
st_pass() {
	local y=$1 runs line id cmd t mode rc pid start tp kp status c attached sk
	runs=$ST_RUNS_Y
	[ "$y" = N ] && runs=$ST_RUNS_N
	start=$(cut -d. -f1 /proc/uptime)
	# the batch the tracers watch: each test under kvmpin, with its oracle file
	echo "# the selftests group's tdp_mmu=$y pass" >$T/st-$y.sh
	echo "cut -d. -f1 /proc/uptime >$T/st-$y.began" >>$T/st-$y.sh
	echo "$runs" | while IFS= read -r line; do
		id=${line%%:*} cmd=${line#*:}
		[ -x "$ST/${cmd%% *}" ] || continue
		rm -f $T/st-$y-$id.*
		echo "s=\$(cut -d. -f1 /proc/uptime)"
		echo "KVMMMU_SELFTEST_STATS=$T/st-$y-$id.vcpus timeout 300 kvmpin -o $T/st-$y-$id.pin -- $ST/$cmd >$T/st-$y-$id.log 2>&1"
		echo "echo \"$id \$((\$(cut -d. -f1 /proc/uptime) - s)) s\" >>$T/st-$y.times"
	done >>$T/st-$y.sh
	echo "exit 0" >>$T/st-$y.sh
	rm -f $T/st-$y.times
	kvmmmu-hist ${kvmmmu_verbose:+-v} --probe-mode tracepoint -p "$ST_NAMES" --wait --per-vcpu \
		--metric all --csv $T/st-$y-tracepoint.csv >$T/st-$y-tracepoint.out 2>&1 &
	tp=$!
	kvmmmu-hist ${kvmmmu_verbose:+-v} --probe-mode kprobe -p "$ST_NAMES" --wait --per-vcpu \
		--metric all --csv $T/st-$y-kprobe.csv >$T/st-$y-kprobe.out 2>&1 &
	kp=$!
	check "selftests/$y/tracepoint-attach" "$(tail -2 $T/st-$y-tracepoint.out | tr '\n' ' ')" \
		wait_for $T/st-$y-tracepoint.out '^Tracing'
	check "selftests/$y/kprobe-attach" "$(tail -2 $T/st-$y-kprobe.out | tr '\n' ' ')" \
		wait_for $T/st-$y-kprobe.out '^Tracing'
	attached=$(cut -d. -f1 /proc/uptime)
	kvmmmu-hist ${kvmmmu_verbose:+-v} --probe-mode fentry --per-vcpu --metric all \
		--csv $T/st-$y-fentry.csv -- sh $T/st-$y.sh >$T/st-$y-fentry.out 2>&1
	rc=$?
	check "selftests/$y/fentry-exit-0" "exit $rc: $(tail -3 $T/st-$y-fentry.out | tr '\n' ' ')" test $rc = 0
	kill -INT $tp $kp
	wait $tp
	rc=$?
	check "selftests/$y/tracepoint-exit-0" "exit $rc: $(tail -3 $T/st-$y-tracepoint.out | tr '\n' ' ')" test $rc = 0
	wait $kp
	rc=$?
	check "selftests/$y/kprobe-exit-0" "exit $rc: $(tail -3 $T/st-$y-kprobe.out | tr '\n' ' ')" test $rc = 0
	info "selftests/$y: the runs under three tracers took $(($(cut -d. -f1 /proc/uptime) - start)) s: the kprobe and tracepoint tracers' attach $((attached - start)) s, fentry's $(($(cat $T/st-$y.began) - attached)) s, $(tr '\n' , <$T/st-$y.times | sed 's/,$//; s/,/, /g')"
	start=$(cut -d. -f1 /proc/uptime)
	for mode in fentry kprobe tracepoint; do
		if [ -s $T/st-$y-$mode.csv ]; then
			st_split selftests/$y/$mode $T/st-$y-$mode.csv
		else
			# once here; the tests' checks leave this mode out
			fail "selftests/$y/$mode/csv" "kvmmmu-hist wrote no CSV: $(tail -2 $T/st-$y-$mode.out | tr '\n' ' ')"
		fi
	done
	echo "$runs" | while IFS= read -r line; do
		id=${line%%:*} cmd=${line#*:} t=${cmd%% *}
		g=selftests/$y/$id
		if [ ! -x "$ST/$t" ]; then
			skip "$g" "$SOURCE_PACKAGE has no $t"
			continue
		fi
		for f in log pin vcpus; do emit $T/st-$y-$id.$f; done
		status=$(awk '$1 == "pid" { print $4 }' $T/st-$y-$id.pin 2>/dev/null)
		pid=$(awk '$1 == "pid" { print $2 }' $T/st-$y-$id.pin 2>/dev/null)
		if [ "$status" = 4 ]; then
			# the kselftest skip code: the test says why
			skip "$g" "$t: $(grep -m1 '# SKIP' $T/st-$y-$id.log | sed 's/.*# SKIP -* *//')"
			continue
		fi
		check "$g/exit-0" "$t exited ${status:-without a kvmpin report}: $(tail -3 $T/st-$y-$id.log | tr '\n' ' ')" \
			test "$status" = 0
		[ "$status" = 0 ] || continue
		if [ ! -s $T/st-$y-$id.vcpus ]; then
			fail "$g/oracle" "$t wrote no vCPU counters (tests/vm/selftest_stats.c: no kvm_vm_free?)"
			continue
		fi
		st_oracles "$g" $T/st-$y-$id.pin $T/st-$y-$id.vcpus
		for mode in fentry kprobe tracepoint; do
			c=$T/st-$y-$mode-pick.csv
			[ -f $T/st-$y-$mode-rows.csv ] || continue
			sk=$(cat $T/st-$y-$mode.skipped 2>/dev/null)
			st_counts "$g/$mode" $c "$pid" $T/st-$y-$id.vcpus "$sk"
			case $id in
			dlperf) st_dirty_log "$g/$mode" $c "$pid" $T/st-$y-$id.log "$sk" ;;
			split) st_splits "$g/$mode" $c "$pid" $T/st-$y-$id.log "$sk" ;;
			esac
			# where demand paging's time goes: the host page, and with
			# userfaultfd the handler thread's UFFDIO_COPY, in the pfn phase
			if [ $mode != tracepoint ]; then
				case $id in
				uffd) st_pfn_phase "$g/$mode" $c "$pid" 50 ;;
				demand) st_pfn_phase "$g/$mode" $c "$pid" ;;
				esac
			fi
		done
	done
	info "selftests/$y: the checks took $(($(cut -d. -f1 /proc/uptime) - start)) s"
	start=$(cut -d. -f1 /proc/uptime)
	for mode in fentry kprobe tracepoint; do
		emit $T/st-$y-$mode.out
		emit $T/st-$y-$mode-rows.csv st-$y-$mode.csv
	done
	info "selftests/$y: the artifacts took $(($(cut -d. -f1 /proc/uptime) - start)) s"
}

if want selftests; then
	if [ -f $ST/BUILD-FAILED ]; then
		fail selftests/build "$(cat $ST/BUILD-FAILED)"
	elif [ ! -d $ST ]; then
		fail selftests/build "no selftests in the initramfs (tests/vm/run.sh builds them)"
	else
		was=$(cat /sys/module/kvm/parameters/tdp_mmu)
		hp=$(cat /proc/sys/vm/nr_hugepages)
		echo $ST_HUGEPAGES >/proc/sys/vm/nr_hugepages
		if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt $ST_HUGEPAGES ]; then
			# without them dirty_log_page_splitting_test would fail, not skip: leave it out
			skip selftests/split "only $(cat /proc/sys/vm/nr_hugepages) of $ST_HUGEPAGES 2 MiB HugeTLB pages could be reserved"
			ST_RUNS_Y=$(echo "$ST_RUNS_Y" | grep -v '^split:')
		fi
		for y in Y N; do
			if ! grep -qx $y /sys/module/kvm/parameters/tdp_mmu; then
				check selftests/$y/reload-tdp_mmu-$y "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu)" \
					reload_kvm $y
			fi
			st_pass $y
		done
		echo "$hp" >/proc/sys/vm/nr_hugepages
		if ! grep -qx "$was" /sys/module/kvm/parameters/tdp_mmu; then
			check selftests/tdp_mmu-restored "tdp_mmu=$(cat /sys/module/kvm/parameters/tdp_mmu), was $was" \
				reload_kvm "$was"
		fi
	fi
fi
