#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# kvmmmu-hist's figures beyond the counts, on real faults from kvmmmu-load:
# access kinds, mapping levels, the phases of a fault, slow-fault records,
# where slow faults wait (--stack) and demand paging's time (--uffd), hot
# regions; each against KVM's own statistics or what the load must give.
# The counts themselves, exact against KVM in many scenarios, and bad input
# are test_hist.sh's.
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip hist/figures-all "$why"
	exit 0
fi
HIST=$BUILD/kvmmmu-hist
LOAD=$BUILD/kvmmmu-load
CSVLINT=$BUILD/tests/tools/csvlint

# --- access kinds: a guest that only writes, only reads, or only jumps into
# its pages takes faults of that kind alone (and one fetch a vCPU, its code
# page's); the kinds add up to the faults, which are KVM's own; with dirty
# logging the writes after the first pass are protection faults (present
# SPTEs, write-protected), not faults on absent ones. Under nested paging
# the CPU's own walk of the guest's page tables faults too, on the few pages
# that hold them (reads, or writes of their A/D bits): SLACK of other kinds
# a vCPU; shadow paging walks them in software, and takes none.
[ "$(host_mmu)" = shadow ] && slack=0 || slack=8
# Intel's PML logs dirty pages without write-protecting them: no faults at all
pml=$(cat /sys/module/kvm_intel/parameters/pml 2>/dev/null)
for access in write read exec dirty; do
	case $access in
	dirty) largs=(--access write --dirty-log 1) want=write ;;
	*) largs=(--access $access) want=$access ;;
	esac
	"$HIST" --per-vcpu --csv "$TMP/acc-$access.csv" -- "$LOAD" --vcpus 2 --mem 4M "${largs[@]}" \
		--csv "$TMP/acc-$access-load.csv" >"$TMP/acc-$access.out" 2>&1
	pid=$(awk -F, '!/^#/ && $5 == "kvm_stats" { print $2; exit }' "$TMP/acc-$access-load.csv")
	for v in 0 1; do
		declare -A n=()
		for m in faults access_read access_write access_fetch access_present access_not_present access_unknown; do
			n[$m]=$(bpf_value "$TMP/acc-$access.csv" $m "$pid" $v "")
		done
		kvm=$(csv_value "$TMP/acc-$access-load.csv" kvm_stats pf_taken $v)
		got="faults ${n[faults]} (KVM $kvm): read ${n[access_read]} write ${n[access_write]} fetch ${n[access_fetch]}; present ${n[access_present]} not ${n[access_not_present]} unknown ${n[access_unknown]}"
		check "hist/access-$access-vcpu$v-adds-up" "$got" \
			eval '[ -n "${n[faults]}" ] && [ "${n[faults]}" = "$kvm" ] &&
				[ $((n[access_read] + n[access_write] + n[access_fetch] + n[access_unknown])) = "${n[faults]}" ] &&
				[ $((n[access_present] + n[access_not_present] + n[access_unknown])) = "${n[faults]}" ]'
		# exec: each fault maps a page the host wrote, whose neighbours the
		# legacy MMUs map along with it (prefetch): at least one fetch, no more
		case $want in
		write) ok='[ "${n[access_write]}" -ge 1024 ] && [ $((n[access_read] + n[access_fetch])) -le $((1 + slack)) ]' ;;
		read) ok='[ "${n[access_read]}" -ge 1024 ] && [ $((n[access_write] + n[access_fetch])) -le $((1 + slack)) ]' ;;
		exec) ok='[ "${n[access_fetch]}" -ge 1 ] && [ $((n[access_read] + n[access_write] + n[access_unknown])) -le $slack ]' ;;
		esac
		check "hist/access-$access-vcpu$v-kind" "$got (slack $slack)" eval "$ok"
		if [ $access = dirty ] && [ "$pml" = Y ]; then
			check "hist/access-dirty-vcpu$v-no-protection-with-pml" "$got (slack $slack)" \
				eval '[ "${n[access_present]}" -le $slack ]'
		elif [ $access = dirty ]; then
			check "hist/access-dirty-vcpu$v-protection" "$got" eval '[ "${n[access_present]}" -ge 1 ]'
		else
			check "hist/access-$access-vcpu$v-not-present" "$got (slack $slack)" eval '[ "${n[access_present]}" -le $slack ]'
		fi
	done
done
check hist/access-line "$(grep -m1 'access:' "$TMP/acc-read.out")" \
	grep -q '^    access: read [1-9][0-9]* (.*%) write [0-9]* (.*%) fetch [0-9]* (.*%); not present [0-9]* (.*%) protection [0-9]* (.*%)' "$TMP/acc-read.out"

# --- mapping levels: the levels the faults' SPTEs were set at are what KVM
# maps (its pages_4k/2m/1g, VM-wide; prefetched SPTEs are 4 KiB ones), with
# transparent huge pages or without; a request is at most one SPTE; with
# dirty logging on, 4 KiB requests where the guest's mapping allowed huge
# ones say why: dirty logging
vm_bpf() { awk -F, -v m="$2" '!/^#/ && $5 == "bpf" && $4 == "" && $6 == m && $3 !~ /\[tid / { x = $8 } END { print x }' "$1"; }
for thp in thp 4k dirty; do
	case $thp in
	thp) largs=(--thp) ;;
	4k) largs=() ;;
	dirty) largs=(--thp --dirty-log 1) ;;
	esac
	# (events: sptes_prefetched, which function probes attach nothing for otherwise)
	"$HIST" --metric default,events --csv "$TMP/lv-$thp.csv" -- "$LOAD" --vcpus 2 --mem 4M "${largs[@]}" \
		--csv "$TMP/lv-$thp-load.csv" >"$TMP/lv-$thp.out" 2>&1
	declare -A n=()
	for m in faults sptes_prefetched level_requested_4k level_requested_2m level_requested_1g \
		level_installed_4k level_installed_2m level_installed_1g level_not_huge_dirty_log; do
		n[$m]=$(vm_bpf "$TMP/lv-$thp.csv" $m)
	done
	for m in pages_4k pages_2m pages_1g; do
		n[$m]=$(csv_value "$TMP/lv-$thp-load.csv" kvm_stats $m "")
	done
	got=$(for m in "${!n[@]}"; do echo "$m=${n[$m]}"; done | sort | tr '\n' ' ')
	req=$((n[level_requested_4k] + n[level_requested_2m] + n[level_requested_1g]))
	inst=$((n[level_installed_4k] + n[level_installed_2m] + n[level_installed_1g]))
	check "hist/levels-$thp-installed-at-most-requested" "$got" \
		eval '[ -n "${n[faults]}" ] && [ "$inst" -le "$req" ] && [ "$req" -le "${n[faults]}" ] && [ "$inst" -ge 1 ]'
	# (under nested paging the dirty pass's writes regain write access on the
	# fast path, or take no fault with PML: no request, no level)
	if [ $thp = dirty ] && [ "$(host_mmu)" = shadow ]; then
		# shadow paging write-protects the guest's pages: every dirty-pass write requests a 4 KiB SPTE
		check "hist/levels-dirty-says-dirty-logging" "$got" \
			eval '[ "${n[level_not_huge_dirty_log]}" -ge 2048 ]'
	elif [ $thp != dirty ]; then
		# KVM's pages_* are the SPTEs mapped now, kvmmmu counts each fault's
		# setting: under nested paging a page-table page the CPU's walk read
		# and then wrote (its A/D bits) is set twice, one mapping (SLACK more)
		check "hist/levels-$thp-equal-kvm-pages" "$got (slack $slack)" \
			eval '[ -n "${n[pages_4k]}" ] && k=$((n[level_installed_4k] + n[sptes_prefetched])) &&
				[ "$k" -ge "${n[pages_4k]}" ] && [ "$k" -le $((n[pages_4k] + slack)) ] &&
				[ "${n[level_installed_2m]}" = "${n[pages_2m]}" ] && [ "${n[level_installed_1g]}" = "${n[pages_1g]}" ]'
	fi
done
# the report's lines, the reasons' only where there are some (the guest's
# page-table and code pages are 4 KiB host pages under either MMU; no
# guest_memfd here)
check hist/levels-line "$(grep -m2 -A1 'levels:' "$TMP/lv-4k.out")" \
	eval 'grep -q "^    levels: requested 4k [1-9][0-9]* 2m [0-9]* 1g [0-9]*; installed 4k [1-9][0-9]* 2m [0-9]* 1g [0-9]*$" "$TMP/lv-4k.out" &&
		grep -q "^    4k, not huge: dirty logging [0-9]*, host mapping [1-9][0-9]*, NX huge pages [0-9]*, guest_memfd 0$" "$TMP/lv-4k.out"'

# --- phases (--metric phases): where a fault's time goes. Each timed fault's
# phases are parts of its time ($LAT): walk, pfn, mmu_lock and map as
# measured, other the rest, so they add up to it exactly and never to more.
# The guest walk is shadow paging's alone; only function probes see the host
# page (pfn: kvm_faultin_pfn), tracepoints say they cannot.
"$HIST" --metric outcomes,phases --csv "$TMP/ph.csv" -- "$LOAD" --vcpus 2 --mem 16M \
	--csv "$TMP/ph-load.csv" >"$TMP/ph.out" 2>&1
declare -A n=()
for m in faults ${LAT}_count ${LAT}_sum phase_walk_ns_count phase_walk_ns_sum phase_pfn_ns_count \
	phase_pfn_ns_sum phase_lock_ns_sum phase_map_ns_count phase_map_ns_sum phase_other_ns_count \
	phase_other_ns_sum; do
	n[$m]=$(vm_bpf "$TMP/ph.csv" $m)
done
got=$(for m in "${!n[@]}"; do echo "$m=${n[$m]}"; done | sort | tr '\n' ' ')
parts=$((n[phase_walk_ns_sum] + n[phase_pfn_ns_sum] + n[phase_lock_ns_sum] + n[phase_map_ns_sum] + n[phase_other_ns_sum]))
check hist/phases-add-up-to-fault-time "$got; parts $parts" \
	eval '[ -n "${n[${LAT}_sum]}" ] && [ "${n[${LAT}_sum]}" -gt 0 ] && [ "$parts" = "${n[${LAT}_sum]}" ]'
check hist/phases-every-timed-fault "$got" \
	eval '[ -n "${n[phase_other_ns_count]}" ] && [ "${n[phase_other_ns_count]}" = "${n[${LAT}_count]}" ] &&
		[ "${n[phase_map_ns_count]}" -ge 8192 ] && [ "${n[phase_map_ns_count]}" -le "${n[${LAT}_count]}" ]'
if [ "$(host_mmu)" = shadow ]; then
	# shadow paging walks the guest's tables in every fault (no fast path there)
	check hist/phases-walk-under-shadow "$got" \
		eval '[ "${n[phase_walk_ns_count]}" = "${n[${LAT}_count]}" ] && [ "${n[phase_walk_ns_sum]}" -gt 0 ]'
else
	check hist/phases-no-walk-under-tdp "$got" eval '[ "${n[phase_walk_ns_count]:-0}" = 0 ]'
fi
if func_probes; then
	# every slow-path fault resolves its host page; the fast path's none
	check hist/phases-pfn-measured "$got" \
		eval '[ "${n[phase_pfn_ns_count]}" -ge 8192 ] && [ "${n[phase_pfn_ns_count]}" -le "${n[${LAT}_count]}" ]'
else
	check hist/phases-pfn-says-not-measured "$(grep -A8 '^Phases of a fault' "$TMP/ph.out")" \
		eval 'grep -q "^    not measured: pfn (no tracepoint shows it" "$TMP/ph.out" && [ -z "${n[phase_pfn_ns_count]}" ]'
fi
check hist/phases-header-says-how "$(grep -A8 '^Phases of a fault' "$TMP/ph.out")" \
	grep -q '^    map       kvm_mmu_spte_requested to the fault.s kvm_mmu_set_spte$' "$TMP/ph.out"
check hist/phases-table "$(grep -A7 'phases of' "$TMP/ph.out" | head -8)" \
	eval 'grep -q "^    phases of [1-9][0-9]* timed faults (.* of .* time):$" "$TMP/ph.out" &&
		grep -q "^      other  *[1-9][0-9]*  *[0-9.]*%" "$TMP/ph.out"'

# --- slow-fault records (--slower MS): at 1 us every timed fault is slower,
# so records and the ones the ring buffer had no room for (counted, as
# slow_faults_lost) are the timed faults, exactly; each record's phases add
# up to its time; at an hour, none is
"$HIST" --slower 0.001 --csv "$TMP/sl.csv" -- "$LOAD" --vcpus 2 --mem 16M >"$TMP/sl.out" 2>&1
rc=$?
timed=$(vm_bpf "$TMP/sl.csv" ${LAT}_count)
lost=$(awk -F, '!/^#/ && $2 == 0 && $6 == "slow_faults_lost" { x = $8 } END { print x + 0 }' "$TMP/sl.csv")
records=$(awk -F, '!/^#/ && $5 == "slow" && $6 == "slow_fault_ns"' "$TMP/sl.csv" | wc -l)
lines=$(grep -c '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]* ' "$TMP/sl.out")
check hist/slower-every-timed-fault "exit $rc; $LAT count $timed, records $records (lines $lines), lost $lost" \
	eval '[ $rc = 0 ] && [ -n "$timed" ] && [ "$timed" -ge 8192 ] && [ $((records + lost)) = "$timed" ] && [ "$lines" = "$records" ]'
# per record (rows of one ts, pid and vCPU): walk + pfn + lock + map + other == its time
bad_sums=$(awk -F, '!/^#/ && $5 == "slow" { k = $1 "," $2 "," $4 }
	$6 == "slow_fault_ns" { ns[k] = $8 } $6 ~ /^slow_fault_phase_/ { sum[k] += $8 }
	END { n = 0; for (k in ns) if (sum[k] != ns[k]) n++; print n }' "$TMP/sl.csv")
check hist/slower-phases-add-up "$bad_sums of $records records whose phases do not add up to their time" \
	eval '[ "$records" -ge 1 ] && [ "$bad_sums" = 0 ]'
check hist/slower-line "$(grep -m1 -B1 '^[0-9][0-9]:[0-9][0-9]:' "$TMP/sl.out")" \
	eval 'grep -q "^TIME  *VM  *PID VCPU GPA  *GVA  *ACCESS  *LEVEL PATH  *OUTCOME  *LAT  *walk  *pfn  *mmu_lock  *map  *other$" "$TMP/sl.out" &&
		grep -Eq "^[0-9:.]+ kvmmmu-load +[0-9]+ +[01] 0x[0-9a-f]+ +(0x[0-9a-f]+|-) +write +4k/4k +(shadow|tdp_mmu|direct|fast) +fixed +[0-9.]+ " "$TMP/sl.out"'
"$HIST" --slower 3600000 -- "$LOAD" --vcpus 1 --mem 4M >"$TMP/sl-none.out" 2>&1
check hist/slower-none-past-threshold "$(tail -3 "$TMP/sl-none.out")" \
	eval '[ "$(grep -c "^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]* " "$TMP/sl-none.out")" = 0 ] && grep -q "^Faults of 3600000.000 ms or more" "$TMP/sl-none.out"'

# --- where slow faults wait (--stack) and demand paging's time (--uffd): the
# test memory supplied page by page through userfaultfd (1024 pages), each
# first touch sleeps in KVM's look-up of the host page until kvmmmu-load's
# thread copies the page in. Every timed fault of those is slower than 1 us
# and left the CPU in handle_userfault; with function probes the pfn phase
# holds most of the fault time (the tracepoint model's walk-to-SPTE time
# holds it too, as "other")
"$HIST" --metric outcomes,phases,fault_ns,walk_to_spte_ns --slower 0.001 --stack --csv "$TMP/uf.csv" \
	-- "$LOAD" --vcpus 2 --mem 2M --uffd --csv "$TMP/uf-load.csv" >"$TMP/uf.out" 2>&1
rc=$?
if grep -q 'uffd: userfaultfd: Function not implemented' "$TMP/uf.out"; then
	skip hist/uffd "this kernel has no userfaultfd (CONFIG_USERFAULTFD)"
else
copies=$(csv_value "$TMP/uf-load.csv" load uffd_copies "")
check hist/uffd-pages-supplied "exit $rc; uffd_copies=$copies" eval '[ $rc = 0 ] && [ "$copies" = 1024 ]'
# records whose longest wait off the CPU was in handle_userfault (ts, pid, vCPU: one
# record): nine in ten at least (a vCPU thread preempted for longer elsewhere in its
# fault, on a busy host, shows that wait's stack instead)
in_uffd=$(awk -F, '!/^#/ && $5 == "slow" && $6 == "slow_fault_stack" && $7 ~ /^handle_userfault\+/ { n[$1 "," $2 "," $4] = 1 }
	END { k = 0; for (r in n) k++; print k }' "$TMP/uf.csv")
records=$(awk -F, '!/^#/ && $5 == "slow" && $6 == "slow_fault_ns"' "$TMP/uf.csv" | wc -l)
lost=$(awk -F, '!/^#/ && $2 == 0 && $6 == "slow_faults_lost" { x = $8 } END { print x + 0 }' "$TMP/uf.csv")
check hist/stack-uffd-waits "records $records (lost $lost), $in_uffd waited in handle_userfault" \
	eval '[ "$in_uffd" -ge $(((1024 - lost) * 9 / 10)) ] && [ "$in_uffd" -le "$records" ]'
# a record's longest wait is one of its waits; one with a stack has its time off the
# CPU, and one that left the CPU has its stack (each thread keeps its own copy)
bad=$(awk -F, '!/^#/ && $5 == "slow" { k = $1 "," $2 "," $4 }
	$6 == "slow_fault_offcpu_ns" { off[k] = $8 } $6 == "slow_fault_offcpu_max_ns" { mx[k] = $8 }
	$6 == "slow_fault_ns" { ns[k] = $8 } $6 == "slow_fault_stack" { st[k] = 1 }
	END { n = 0; for (k in ns) if (!(k in off) || mx[k] > off[k] || off[k] > ns[k] || ((k in st) != (mx[k] > 0))) n++; print n }' "$TMP/uf.csv")
check hist/stack-offcpu-within-fault "$bad records whose time off the CPU is not within their time, or without the stack of their longest wait" \
	eval '[ "$records" -ge 1 ] && [ "$bad" = 0 ]'
# the frames are text in the le column: kvmmmu's reader takes them there alone
check hist/stack-csv-valid "$("$CSVLINT" "$TMP/uf.csv" 2>&1 | head -3)" "$CSVLINT" "$TMP/uf.csv"
check hist/stack-lines "$(grep -m1 -A6 '^    off the CPU [0-9]' "$TMP/uf.out")" \
	eval 'grep -q "^    off the CPU [0-9.]* ms, the longest wait [0-9.]* ms, in:$" "$TMP/uf.out" &&
		grep -q "^        handle_userfault+0x[0-9a-f]*$" "$TMP/uf.out" && ! grep -q "bpf_trampoline" "$TMP/uf.out" &&
		grep -Eq "^        kvm_mmu_page_fault\+0x[0-9a-f]+( \[kvm\])?$" "$TMP/uf.out" &&
		! grep -q "its stack was not kept" "$TMP/uf.out"'
if func_probes; then
	pfn=$(vm_bpf "$TMP/uf.csv" phase_pfn_ns_sum) all=$(vm_bpf "$TMP/uf.csv" fault_ns_sum)
	check hist/uffd-time-in-pfn-phase "pfn phase $pfn ns of $all ns of fault time" \
		eval '[ -n "$pfn" ] && [ -n "$all" ] && [ $((pfn * 2)) -ge "$all" ]'
fi
fi
one_line_error hist/stack-needs-slower 2 "$HIST" --stack

# --- hot regions (--region 4M): kvmmmu-load's test memory (2 x 16 MiB at
# 4 GiB, one memslot) is eight 4 MiB regions; every page of it takes a fault
# (at least one: nested paging may take two), and the regions' faults are the
# faults that requested an SPTE or ended on the fast path (all, under shadow paging)
"$HIST" --metric outcomes,regions --region 4M --csv "$TMP/rg.csv" -- "$LOAD" --vcpus 2 --mem 16M \
	>"$TMP/rg.out" 2>&1
rc=$?
regions=$(awk -F, '!/^#/ && $5 == "bpf" && $6 ~ /^region_faults_slot_/ && $7 >= 4294967296 && $7 < 4328521728 { n[$7] = $8 }
	END { for (b in n) printf "%d:%d ", b / 4194304 - 1024, n[b] }' "$TMP/rg.csv")
in_test=$(awk -F, '!/^#/ && $5 == "bpf" && $6 ~ /^region_faults_slot_/ && $7 >= 4294967296 && $7 < 4328521728 { k++; if ($8 < 1024 || $8 > 1024 + slack) bad++ }
	END { print k + 0, bad + 0 }' slack=$slack "$TMP/rg.csv")
all=$(awk -F, '!/^#/ && $5 == "bpf" && $6 ~ /^region_faults_/ { s += $8 } END { print s + 0 }' "$TMP/rg.csv")
faults=$(vm_bpf "$TMP/rg.csv" faults)
check hist/regions-test-memory "exit $rc; regions (4 MiB index:faults) $regions; count, off: $in_test (slack $slack)" \
	eval '[ $rc = 0 ] && [ "$in_test" = "8 0" ]'
# (nested paging: a fault retried before its request, after an MMU-notifier race, has none)
check hist/regions-sum-to-faults "regions $all, faults $faults (slack $slack)" \
	eval '[ -n "$faults" ] && [ "$all" -le "$faults" ] && [ "$all" -ge $((faults - slack)) ]'
check hist/regions-report "$(grep -A3 'hot regions' "$TMP/rg.out")" \
	eval 'grep -q "^    hot regions (4 MiB each, since the start; [0-9]* faults in all):$" "$TMP/rg.out" &&
		[ "$(grep -c "^      memslot [0-9]*  *\[0x10[01][048c]00000, 0x10[012][048c]00000)  *10[23][0-9]  *12\.[0-9]%$" "$TMP/rg.out")" = 8 ]'
exit 0
