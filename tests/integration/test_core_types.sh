#!/usr/bin/env bash
# The committed CO-RE header matches this kernel's BTF, and the checker would
# notice a member that the kernel does not have.
source "$(dirname "$0")/../lib.sh"

if [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip core-types/all "no /sys/kernel/btf/vmlinux"
	exit 0
fi
if scripts/check-core-types.sh >"$TMP/out" 2>&1; then
	pass core-types/header-matches-kernel
else
	fail core-types/header-matches-kernel "$(grep MISSING "$TMP/out" | tr '\n' ' ')"
fi
sed 's/^\tint vcpu_id;$/\tint vcpu_id;\n\tint no_such_member_here;/' bpf/kvmmmu_core.h >"$TMP/core.h"
if KVMMMU_CORE_HEADER=$TMP/core.h scripts/check-core-types.sh >"$TMP/out" 2>&1; then
	fail core-types/detects-missing "a bogus member passed the check"
else
	check core-types/detects-missing "$(tail -1 "$TMP/out")" \
		grep -q 'MISSING struct kvm_vcpu.no_such_member_here' "$TMP/out"
fi
exit 0
