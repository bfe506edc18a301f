#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# Beyond the handler: MMU lifecycle, the dirty-log timeline and mmu_lock
# contention, checked against KVM's own statistics and kvmmmu-load's phases.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip mmu/all "$why"
	exit 0
fi
HIST=$BUILD/kvmmmu-hist
LOAD=$BUILD/kvmmmu-load
PAGES=8192 # per vCPU: 32 MiB

# vm_value CSV SOURCE METRIC: the last VM-wide value (not a thread's "[tid N]" row)
vm_value() {
	awk -F, -v s="$2" -v m="$3" \
		'!/^#/ && $5 == s && $6 == m && $4 == "" && $7 == "" && $3 !~ /\[tid / { x = $8 } END { print x }' "$1"
}
# events CSV METRIC: every value of a timeline metric, in order, space-separated
events() {
	awk -F, -v m="$2" '!/^#/ && $5 == "bpf" && $6 == m { printf "%s ", $8 }' "$1"
}

"$HIST" --csv "$TMP/h.csv" -- "$LOAD" --vcpus 2 --mem 32M --dirty-log 2 --csv "$TMP/l.csv" \
	>"$TMP/h.out" 2>&1 || fail mmu/run "$(tail -2 "$TMP/h.out")"

# shadow pages created == KVM's mmu_cache_miss (bumped when the hash has no
# such page). The TDP MMU keeps no such hash (mmu_cache_miss stays 0) but
# reports each page-table page it allocates as created (kvm_mmu_get_page):
# at least one last-level table per 2 MiB the vCPUs map (2 x 32 MiB here).
created=$(vm_value "$TMP/h.csv" bpf shadow_pages_created)
miss=$(vm_value "$TMP/l.csv" kvm_stats mmu_cache_miss)
if [ "$(host_mmu)" = tdp_mmu ]; then
	check mmu/shadow-pages-created "created=$created (want >= $((2 * PAGES * 4 / 2048))), KVM mmu_cache_miss=$miss (want 0)" \
		test -n "$created" -a "$miss" = 0 -a "${created:-0}" -ge $((2 * PAGES * 4 / 2048))
else
	check mmu/shadow-pages-created "created=$created, KVM mmu_cache_miss=$miss" \
		test -n "$created" -a "$created" = "$miss" -a "${created:-0}" -gt 0
fi

# the dirty-log timeline: on, two fetches, off, each fetch after a storm of every page
check mmu/dirty-log-on-once "enables=$(vm_value "$TMP/h.csv" bpf dirty_log_enables)" \
	test "$(vm_value "$TMP/h.csv" bpf dirty_log_enables)" = 1
check mmu/dirty-log-off-once "disables=$(vm_value "$TMP/h.csv" bpf dirty_log_disables)" \
	test "$(vm_value "$TMP/h.csv" bpf dirty_log_disables)" = 1
on=$(events "$TMP/h.csv" event_dirty_log_on_ns)
off=$(events "$TMP/h.csv" event_dirty_log_off_ns)
check mmu/timeline-on-off "on: '$on', off: '$off'" test -n "$on" -a -n "$off"
storms=$(events "$TMP/h.csv" event_get_dirty_log_faults_before)
check mmu/timeline-storms "faults before each fetch: '$storms', expected $((2 * PAGES)) twice" \
	test "$storms" = "$((2 * PAGES)) $((2 * PAGES)) "
for i in 1 2; do
	n=$(csv_value "$TMP/l.csv" load "iteration_${i}_pf_taken" "")
	check "mmu/timeline-storm-$i-is-kvms" "KVM iteration $i: $n faults" test "$n" = $((2 * PAGES))
done
check mmu/text-timeline "no timeline in the report" grep -q '^    timeline:' "$TMP/h.out"
check mmu/text-dirty-log "no dirty-logging line" grep -q '^    dirty logging: on 1 ' "$TMP/h.out"

# each fetch's storm by region (--region 4M): the test memory, 2 x 8 MiB at
# 4 GiB, is four regions of 1,024 pages, each refaulting once a pass (4,096
# faults before each fetch); the
# regions hold every fault before the fetch (nested paging: up to 8 retried
# before their request may have none)
[ "$(host_mmu)" = shadow ] && slack=0 || slack=8
"$HIST" --metric outcomes,timeline,regions --region 4M --csv "$TMP/st.csv" -- \
	"$LOAD" --vcpus 2 --mem 8M --dirty-log 2 >"$TMP/st.out" 2>&1
rc=$?
before=$(events "$TMP/st.csv" event_get_dirty_log_faults_before)
in_regions=$(events "$TMP/st.csv" event_get_dirty_log_faults_before_regions)
# per fetch: its regions in the test memory (4 MiB index:faults)
tops=$(awk -F, '!/^#/ && $5 == "bpf" && $6 ~ /^event_get_dirty_log_faults_before_(slot_[0-9]+|fast_path)$/ {
		if ($1 != ts) { if (ts != "") printf "; "; ts = $1 }
		if ($7 >= 4294967296 && $7 < 4311744512) printf "%d:%d ", $7 / 4194304 - 1024, $8
		else printf "outside:%s ", $7 }' "$TMP/st.csv")
check mmu/storm-regions-sum "exit $rc; before each fetch: '$before', in regions: '$in_regions' (slack $slack)" \
	eval '[ $rc = 0 ] && [ "$before" = "4096 4096 " ] &&
		set -- $in_regions && [ $# = 2 ] && [ "$1" -le 4096 ] && [ "$1" -ge $((4096 - slack)) ] &&
		[ "$2" -le 4096 ] && [ "$2" -ge $((4096 - slack)) ]'
check mmu/storm-regions-top "top regions of each fetch: $tops" \
	eval 'echo "$tops" | grep -Eq "^([0-3]:10[12][0-9] ){3}; ([0-3]:10[12][0-9] ){3}$"'
check mmu/storm-regions-text "$(grep -E '^ +in memslot' "$TMP/st.out")" \
	eval '[ "$(grep -A1 "^ *+[0-9.]*s  get_dirty_log " "$TMP/st.out" |
		grep -cE "^ +in memslot [0-9-]+ \[0x10[0-9a-f]{7}, 0x10[0-9a-f]{7}\) 10[12][0-9], .*, [0-9]+ in other regions$")" = 2 ]'

# a long run's many epochs: each event's regions are taken out of the map as
# events come, so 4 KiB regions of 1,024 pages refaulting over 20 dirty-log
# passes (21,504 epoch-region keys, more than the map's 16,384) lose none
"$HIST" --metric outcomes,timeline,regions --region 4K --csv "$TMP/ep.csv" -- \
	"$LOAD" --vcpus 1 --mem 4M --dirty-log 20 >"$TMP/ep.out" 2>&1
rc=$?
lost=$(awk -F, '!/^#/ && $2 == 0 && $6 == "region_faults_lost" { x = $8 } END { print x }' "$TMP/ep.csv")
all=$(awk -F, '!/^#/ && $5 == "bpf" && $6 ~ /^region_faults_(slot_[0-9]+|fast_path)$/ { s += $8 } END { print s + 0 }' "$TMP/ep.csv")
faults=$(vm_value "$TMP/ep.csv" bpf faults)
check mmu/regions-many-epochs "exit $rc; regions lost $lost; in regions $all of $faults faults (slack $slack)" \
	eval '[ $rc = 0 ] && [ "$lost" = 0 ] && [ -n "$faults" ] && [ "$all" -le "$faults" ] &&
		[ "$all" -ge $((faults - slack)) ]'

# dirty logging turned on for a VM that ran before kvmmmu attached (a live
# migration's start): the memslot's old flags come from the kernel, so it is
# an enable and its later disable, not a memslot created
"$LOAD" --vcpus 1 --mem 8M --dirty-log 2 --dirty-log-on-signal >"$TMP/pre.load" 2>&1 &
vm=$!
wait_vm $vm
"$HIST" -p $vm --csv "$TMP/pre.csv" >"$TMP/pre.out" 2>&1 &
hist=$!
wait_tracing "$TMP/pre.out" || fail mmu/pre-attach "$(tail -2 "$TMP/pre.out")"
kill -USR1 $vm
wait $vm
wait $hist
check mmu/pre-existing-vm-dirty-log-on "enables=$(vm_value "$TMP/pre.csv" bpf dirty_log_enables), timeline: $(grep -E '^     \+' "$TMP/pre.out" | head -3 | tr -s ' ')" \
	test "$(vm_value "$TMP/pre.csv" bpf dirty_log_enables)" = 1
check mmu/pre-existing-vm-dirty-log-off "disables=$(vm_value "$TMP/pre.csv" bpf dirty_log_disables)" \
	test "$(vm_value "$TMP/pre.csv" bpf dirty_log_disables)" = 1
check mmu/pre-existing-vm-no-create "$(grep -c memslot_create "$TMP/pre.out") memslot_create events" \
	eval '! grep -q memslot_create "$TMP/pre.out"'

# mmu_lock: two vCPUs faulting at once on the shadow MMU (or the legacy
# direct one) wait for the write lock; the TDP MMU's faults take it for read,
# so they never wait for write. A one-vCPU VM running beside them has nobody
# to wait for. The tracer runs until the busy VM is done (-d would guess how
# long that takes), the idle VM as long as the tracer.
: "${MMU_LOCK_MEM:=256M}" # the busy VM's memory: its two vCPUs fault on all of it, 3 times
cp "$LOAD" "$TMP/vmm-busy"
cp "$LOAD" "$TMP/vmm-idle"
"$HIST" -p vmm-busy -p vmm-idle --wait --per-vcpu --metric mmu_lock,outcomes \
	--csv "$TMP/lock.csv" >"$TMP/lock.out" 2>&1 &
hist=$!
wait_tracing "$TMP/lock.out" || fail mmu/lock-attach "kvmmmu-hist did not start"
"$TMP/vmm-idle" --vcpus 1 --mem 4M --duration 3600 >/dev/null 2>&1 &
idle=$!
wait_vm $idle
"$TMP/vmm-busy" --vcpus 2 --mem "$MMU_LOCK_MEM" --dirty-log 2 --csv "$TMP/busy.csv" >/dev/null 2>&1
busy=$(awk -F, '!/^#/ && $5 == "kvm_stats" { print $2; exit }' "$TMP/busy.csv")
kill -INT $hist
wait $hist
kill $idle
wait $idle 2>/dev/null
# lock_waits CSV PID VCPU [MODE]: the wait count (+Inf bucket) for MODE (write)
# of the VM (VCPU "") or a vCPU
lock_waits() {
	awk -F, -v p="$2" -v v="$3" -v m="mmu_lock_${4:-write}_wait_ns" '!/^#/ && $6 == m && $7 == "+Inf" &&
		$2 == p && $4 == v && $3 !~ /\[tid / { x = $8 } END { print x }' "$1"
}
vm=$(lock_waits "$TMP/lock.csv" "$busy" "")
v0=$(lock_waits "$TMP/lock.csv" "$busy" 0)
v1=$(lock_waits "$TMP/lock.csv" "$busy" 1)
if [ "$(host_mmu)" = tdp_mmu ]; then
	# whether a fault waits for read depends on a writer (a zap, a memslot
	# change) holding the lock just then: only the mode is certain
	check mmu/lock-tdp-no-write-waits "VM $busy: '$vm' write waits in faults" test -n "$vm" -a "$vm" = 0
	check mmu/lock-tdp-no-write-waits-each-vcpu "vCPU 0: '$v0', vCPU 1: '$v1'" test "$v0" = 0 -a "$v1" = 0
	check mmu/lock-text "$(grep 'mmu_lock waits in faults' "$TMP/lock.out" | head -1)" \
		grep -q '^    mmu_lock waits in faults: read [0-9]* (.*), write 0 ' "$TMP/lock.out"
elif [ "$(nproc)" -ge 2 ]; then
	# Two vCPUs can only contend when they run at once: on one CPU the holder is
	# never preempted (a spinning lock disables preemption), so nobody waits.
	# (A TCG guest's vCPUs take turns, but TCG switches between them at any
	# instruction, a lock held or not: they contend there too.)
	check mmu/lock-write-waits-vm "VM $busy: '$vm' write waits" test "${vm:-0}" -gt 0
	check mmu/lock-write-waits-each-vcpu "vCPU 0: '$v0', vCPU 1: '$v1'" \
		test "${v0:-0}" -gt 0 -a "${v1:-0}" -gt 0
	check mmu/lock-text "$(grep 'mmu_lock waits in faults' "$TMP/lock.out" | head -1)" \
		grep -q '^    mmu_lock waits in faults: read 0 (0 ns), write [1-9]' "$TMP/lock.out"
else
	for t in lock-write-waits-vm lock-write-waits-each-vcpu lock-text; do
		skip "mmu/$t" "$(nproc) CPU available: two vCPUs cannot contend for mmu_lock"
	done
	check mmu/lock-row-1cpu "VM $busy: no write-wait row" test -n "$vm"
fi
# the idle VM's row exists and says 0: an absent row is not "no waits"
idle_waits=$(lock_waits "$TMP/lock.csv" "$idle" "")
check mmu/lock-idle-vm-none "idle VM $idle: '$idle_waits' waits" test "$idle_waits" = 0
check mmu/lock-idle-vm-traced "idle VM $idle not in the report" \
	grep -q ",$idle,vmm-idle,,bpf,faults," "$TMP/lock.csv"

# kvmmmu-check --validate: kvmmmu and KVM count the same faults over the same window
cp "$LOAD" "$TMP/vmm-validate"
"$TMP/vmm-validate" --vcpus 2 --mem 16M --dirty-log 1 --duration 3600 >/dev/null 2>&1 &
vmm=$!
wait_vm $vmm
"$BUILD/kvmmmu-check" --validate vmm-validate 2 >"$TMP/v.out" 2>&1
rc=$?
check mmu/validate-agrees "exit $rc: $(grep -m1 DISAGREE "$TMP/v.out")" \
	test $rc = 0 -a "$(grep -c ' agree$' "$TMP/v.out")" -ge 6
check mmu/validate-saw-faults "no faults in the window" \
	awk '$3 == "faults" && $4 > 0 { ok = 1 } END { exit !ok }' "$TMP/v.out"
kill $vmm 2>/dev/null
wait $vmm 2>/dev/null
# a VMM that keeps no stats fd open (QEMU between its query-stats): KVM's
# debugfs gives VM-wide sums where it is readable; where it is locked down
# (this project's CI host), one line says why and the exit code is 1
"$TMP/vmm-validate" --vcpus 2 --mem 16M --dirty-log 1 --duration 3600 --no-stats-fds >/dev/null 2>&1 &
vmm=$!
wait_vm $vmm
"$BUILD/kvmmmu-check" --validate $vmm 2 >"$TMP/v.out" 2>"$TMP/v.err"
rc=$?
if grep -q "debugfs counters are not readable here" "$TMP/v.err"; then
	check mmu/validate-no-stats-fds-says-why "exit $rc: $(cat "$TMP/v.err")" \
		test $rc = 1 -a "$(wc -l <"$TMP/v.err")" = 1
else
	check mmu/validate-no-stats-fds-vm-wide "exit $rc: $(grep -m1 'DISAGREE\|debugfs' "$TMP/v.out" "$TMP/v.err")" \
		eval 'test $rc = 0 && grep -q "VM-wide sums only" "$TMP/v.out" && [ "$(grep -c " agree$" "$TMP/v.out")" -ge 3 ]'
fi
kill $vmm 2>/dev/null
wait $vmm 2>/dev/null
"$BUILD/kvmmmu-check" --validate 999999999 >"$TMP/v.out" 2>"$TMP/v.err"
rc=$?
check mmu/validate-unknown-pid "exit $rc: $(cat "$TMP/v.err")" \
	test $rc = 1 -a "$(wc -l <"$TMP/v.err")" = 1
"$BUILD/kvmmmu-check" --validate 1 soon >"$TMP/v.out" 2>"$TMP/v.err"
rc=$?
check mmu/validate-bad-seconds "exit $rc: $(cat "$TMP/v.err")" \
	test $rc = 2 -a "$(wc -l <"$TMP/v.err")" = 1

exit 0
