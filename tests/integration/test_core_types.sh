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

# KVM as a module (split BTF over vmlinux's: bpftool -B), on the distro
# kernels the VM tests cached; this host's KVM may be built in. The kernel
# is a bzImage: its vmlinux is the first payload that decompresses to an ELF
# (as the kernel's scripts/extract-vmlinux finds it), whose .BTF bpftool reads.
vmlinux_of() {
	local m off
	for m in '\xfd7zXZ\x00:xz' '\x28\xb5\x2f\xfd:zstd' '\x1f\x8b\x08:gzip'; do
		command -v "${m##*:}" >/dev/null || continue
		for off in $(LC_ALL=C grep -obUaP "${m%:*}" "$1" | cut -d: -f1 | head -3); do
			tail -c +$((off + 1)) "$1" | "${m##*:}" -dc 2>/dev/null >"$2"
			[ "$(head -c 4 "$2" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && return 0
		done
	done
	return 1
}
cache=${KVMMMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmmmu}
n=0
for rel in "$cache"/kernels/*.release; do
	name=$(basename "$rel" .release)
	kv=$(cat "$rel" 2>/dev/null) || continue
	d=$cache/kernels/$kv
	ko=$d/modules/kernel/arch/x86/kvm/kvm.ko
	{ [ -e "$d/.complete" ] && [ -r "$ko" ]; } || continue
	n=$((n + 1))
	if ! vmlinux_of "$d/vmlinuz-$kv" "$TMP/vmlinux"; then
		skip "core-types/module-$name" "no vmlinux found in vmlinuz-$kv"
		continue
	fi
	if scripts/check-core-types.sh "$TMP/vmlinux" "$ko" >"$TMP/out" 2>&1; then
		pass "core-types/module-$name-header-matches"
	else
		fail "core-types/module-$name-header-matches" \
			"$(grep -E 'MISSING|rror|check-core-types' "$TMP/out" | head -5 | tr '\n' ' ')"
	fi
	# the module's types were read: vmlinux alone lacks them
	scripts/check-core-types.sh "$TMP/vmlinux" >"$TMP/out" 2>&1
	check "core-types/module-$name-types-from-module" "vmlinux alone has struct kvm_page_fault" \
		grep -q 'MISSING struct kvm_page_fault' "$TMP/out"
	rm -f "$TMP/vmlinux"
done
[ "$n" -gt 0 ] || skip core-types/module "no distro kernel cached in $cache (make test-vm fetches them)"
exit 0
