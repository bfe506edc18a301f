# outcomes.awk: in a kvmmmu CSV file, every VM's, vCPU's and thread's table of
# faults by path and outcome (outcome_PATH_RET, last values) adds up: the
# whole table to `faults`, each outcome's column to ret_pf_RET, each path's
# row to path_PATH. Prints each row that does not, and exits 1 then; exits 2
# when no row has faults in the table at all (nothing was checked).
# Usage: awk -F, -f outcomes.awk FILE
function path_of(m) {
	for (p = 1; p <= n_paths; p++)
		if (index(m, "outcome_" paths[p] "_") == 1)
			return paths[p]
	return ""
}
BEGIN {
	n_paths = split("fast tdp_mmu shadow direct", paths, " ")
}
!/^#/ && $5 == "bpf" && $7 == "" {
	# a process's VMs apart (CSV v3's vm_index; older files: one VM a process)
	key = $2 ($10 > 1 ? " #" $10 : "") " " ($4 == "" ? $3 : "vcpu" $4)
	keys[key] = 1
	last[key SUBSEP $6] = $8
	if ($6 ~ /^outcome_/)
		cells[key SUBSEP $6] = 1
}
END {
	bad = 0
	checked = 0
	for (c in last) {
		split(c, kc, SUBSEP)
		k = kc[1]
		m = kc[2]
		if (m ~ /^outcome_/) {
			p = path_of(m)
			r = substr(m, length("outcome_" p "_") + 1)
			total[k] += last[c]
			by_ret[k SUBSEP r] += last[c]
			by_path[k SUBSEP p] += last[c]
		}
	}
	for (k in keys) {
		f = last[k SUBSEP "faults"] + 0
		if (f == 0 && total[k] == 0)
			continue
		checked++
		if (total[k] != f) {
			printf "%s: faults %d, table sums to %d\n", k, f, total[k]
			bad = 1
		}
		for (c in last) {
			split(c, kc, SUBSEP)
			if (kc[1] != k)
				continue
			if (kc[2] ~ /^ret_pf_/) {
				r = substr(kc[2], 8)
				if (last[c] != by_ret[k SUBSEP r] + 0) {
					printf "%s: %s %d, its column sums to %d\n", k, kc[2], last[c], by_ret[k SUBSEP r]
					bad = 1
				}
			} else if (kc[2] ~ /^path_/) {
				p = substr(kc[2], 6)
				if (last[c] != by_path[k SUBSEP p] + 0) {
					printf "%s: %s %d, its row sums to %d\n", k, kc[2], last[c], by_path[k SUBSEP p]
					bad = 1
				}
			}
		}
	}
	if (bad)
		exit 1
	if (!checked) {
		print "no faults in any outcome table"
		exit 2
	}
}
