#!/usr/bin/env bash
# Checks every struct member that bpf/kvmmmu_core.h declares against a
# kernel's BTF, so a kernel that renamed or dropped one is caught before the
# BPF programs fail to load. The header is written by hand (only the members
# we read, all CO-RE relocated); this is what keeps it honest.
#
# Usage: scripts/check-core-types.sh [VMLINUX_BTF [MODULE_BTF]]
#   defaults: /sys/kernel/btf/vmlinux, and /sys/kernel/btf/kvm when KVM is a
#   module (only with the running kernel's vmlinux: another kernel's vmlinux
#   is checked alone unless its own module is given)
set -euo pipefail
cd "$(dirname "$0")/.."
vmlinux=${1:-/sys/kernel/btf/vmlinux}
module=${2:-}
header=${KVMMMU_CORE_HEADER:-bpf/kvmmmu_core.h} # the tests point this elsewhere
[ -z "$module" ] && [ -z "${1:-}" ] && [ -e /sys/kernel/btf/kvm ] && module=/sys/kernel/btf/kvm
command -v bpftool >/dev/null || { echo "check-core-types: bpftool not found" >&2; exit 2; }
[ -r "$vmlinux" ] || { echo "check-core-types: $vmlinux: no BTF to check against" >&2; exit 2; }

dump=$(mktemp)
trap 'rm -f "$dump"' EXIT
bpftool btf dump file "$vmlinux" >"$dump"
# split BTF over its base: -B, which every bpftool has (7.1, Debian 12's, has no "base" keyword)
[ -n "$module" ] && bpftool -B "$vmlinux" btf dump file "$module" >>"$dump"

# "struct member" pairs from the CO-RE section of the header
pairs=$(awk '
	/#pragma clang attribute push/ { on = 1; next }
	/#pragma clang attribute pop/ { on = 0 }
	!on { next }
	/^struct [a-z_0-9]+ \{/ { s = $2; depth = 1; next }
	s == "" { next }
	# a nested anonymous type: its own members are not the kernel struct'"'"'s
	/\{/ { depth++; next }
	/\}/ {
		depth--
		if (depth == 0) { s = ""; next }
		if (depth == 1) { line = $0; sub(/.*\}[ \t]*/, "", line); sub(/;.*/, "", line); print s, line }
		next
	}
	depth == 1 && /;/ {
		line = $0; sub(/;.*/, "", line); sub(/\[.*/, "", line)
		n = split(line, w, /[ \t*]+/); print s, w[n]
	}' "$header")

missing=0
while read -r s m; do
	if awk -v s="$s" -v m="$m" '
		/^\[[0-9]+\] (STRUCT|UNION) / { in_s = ($3 == "\x27" s "\x27"); next }
		/^\[/ { in_s = 0 }
		in_s && $1 == "\x27" m "\x27" { found = 1 }
		END { exit !found }' "$dump"; then
		echo "ok      struct $s.$m"
	else
		echo "MISSING struct $s.$m"
		missing=$((missing + 1))
	fi
done <<<"$pairs"
[ "$missing" -eq 0 ] || { echo "check-core-types: $missing member(s) missing in $vmlinux${module:+ + $module}" >&2; exit 1; }
