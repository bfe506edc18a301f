#!/usr/bin/env bash
# kernel-patches/: every target's series applies, in order, to Debian's own
# source of that kernel (scripts/kernel-patches.sh check: patch --dry-run,
# the source package downloaded once and cached under ~/.cache/kvmmmu/), and
# builds into KVM modules for it (build: against Debian's headers, cached by
# the series' content), which the VM harness then boots (group patches).
# Where the kernel's compiler is not in Debian 12 (7.3: gcc 14), build
# compiles the series with gcc 12 as a check instead (compile-check, cached
# the same way): objects, no modules.
source "$(dirname "$0")/../lib.sh"

KP=$(cd "$TOOLS/../.." && pwd)/scripts/kernel-patches.sh
for t in $(cd "$TOOLS/../../kernel-patches" && ls -d -- */ | tr -d /); do
	[ -f "$TOOLS/../../kernel-patches/$t/series" ] || continue
	out=$("$KP" check "$t" 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -q 'cannot download' <<<"$out"; then
		skip "patches/$t/applies" "$(tail -1 <<<"$out")"
		continue
	fi
	check "patches/$t/applies" "$(tail -2 <<<"$out" | tr '\n' ' ')" test $rc = 0
	n=$(grep -vc '^\s*\(#\|$\)' "$TOOLS/../../kernel-patches/$t/series")
	check "patches/$t/series-not-empty" "$n patches" test "$n" -gt 0
	# the patched modules, built against Debian's headers (cached: once per series)
	t0=$SECONDS
	out=$("$KP" build "$t" 2>&1)
	rc=$?
	mods=$(tail -1 <<<"$out")
	# the roots patch adds what kvmmmu-check looks for
	roots=$(grep -c 'Keep-the-MMU-roots' "$TOOLS/../../kernel-patches/$t/series")
	if [ $rc = 3 ]; then
		# the kernel's compiler is not in Debian 12 (7.3's gcc 14): no machine here builds it
		skip "patches/$t/modules-build" "$(tail -1 <<<"$out" | sed 's/^kernel-patches: //')"
		rc=skipped
		# build compiled the series first, as a check (the cached report now):
		# kvm.o, kvm-intel.o and kvm-amd.o compile, and use only what the
		# kernel or kvm.o exports
		out=$("$KP" compile-check "$t" 2>&1)
		crc=$?
		check "patches/$t/compiles-with-gcc-$(gcc -dumpversion)" "$(tail -3 <<<"$out" | tr '\n' ' ')" test $crc = 0
		if [ $crc = 0 ]; then
			syms=$(tail -1 <<<"$out")/symbols
			echo "  patches/$t: compiled with gcc $(gcc -dumpversion) as a check ($((SECONDS - t0)) s), objects only: not loadable"
			check "patches/$t/kvm.o-has-the-event" "no kvm_mmu_page_fault_done in kvm.o" \
				grep -q '^kvm\.o T __probestub_kvm_mmu_page_fault_done$' "$syms"
			check "patches/$t/kvm.o-recovers-huge-pages" "kvm.o: $(grep -o '[a-z_]*\(recover_huge_pages\|zap_collapsible_sptes\)$' "$syms" | sort -u | tr '\n' ' ')" \
				eval 'grep -q "^kvm\.o T kvm_tdp_mmu_recover_huge_pages$" "$syms" &&
					! grep -q " kvm_tdp_mmu_zap_collapsible_sptes$" "$syms"'
			[ "$roots" = 0 ] ||
				check "patches/$t/kvm.o-keeps-roots" "no kvm_mmu_update_root in kvm.o" \
					grep -q '^kvm\.o T kvm_mmu_update_root$' "$syms"
		fi
	else
		check "patches/$t/modules-build" "$(tail -3 <<<"$out" | tr '\n' ' ')" test $rc = 0
	fi
	if [ $rc = 0 ]; then
		echo "  patches/$t: modules in $mods ($((SECONDS - t0)) s)"
		rel=$(sed -n 's/^KERNEL_RELEASE=//p' "$TOOLS/../../kernel-patches/$t/target.conf")
		for m in kvm kvm-amd kvm-intel; do
			vm=$(modinfo -F vermagic "$mods/$m.ko" 2>&1 | cut -d' ' -f1)
			check "patches/$t/$m.ko-for-$rel" "vermagic '$vm'" test "$vm" = "$rel"
		done
		check "patches/$t/kvm.ko-has-the-event" "no kvm_mmu_page_fault_done in kvm.ko" \
			grep -q kvm_mmu_page_fault_done "$mods/kvm.ko"
		# the huge-page patch renames what kvmmmu-check looks for
		check "patches/$t/kvm.ko-recovers-huge-pages" "kvm.ko: $(nm "$mods/kvm.ko" | grep -o '[a-z_]*\(recover_huge_pages\|zap_collapsible_sptes\)' | sort -u | tr '\n' ' ')" \
			eval 'nm "$mods/kvm.ko" | grep -q " T kvm_tdp_mmu_recover_huge_pages$" &&
				! nm "$mods/kvm.ko" | grep -q " kvm_tdp_mmu_zap_collapsible_sptes$"'
		[ "$roots" = 0 ] ||
			check "patches/$t/kvm.ko-keeps-roots" "no kvm_mmu_update_root in kvm.ko" \
				eval 'nm "$mods/kvm.ko" | grep -q " T kvm_mmu_update_root$"'
		for m in kvm kvm-amd; do
			check "patches/$t/$m.ko-has-btf" "no .BTF section: kvmmmu needs module BTF" \
				eval 'readelf -S "$mods/$m.ko" | grep -q " \.BTF "'
		done
	fi
	for p in "$TOOLS/../../kernel-patches/$t"/*.patch; do
		name=${p##*/}
		check "patches/$t/$name-in-series" "not listed in series" grep -qx "$name" "$TOOLS/../../kernel-patches/$t/series"
		check "patches/$t/$name-format-patch" "no From/Subject/Signed-off or description" \
			eval 'head -1 "$p" | grep -q "^From [0-9a-f]\{40\} " && grep -q "^Subject: \[PATCH" "$p" &&
			      [ "$(sed -n "/^$/,/^---$/p" "$p" | wc -l)" -gt 5 ]'
	done
done
# the check can fail: one target's patch against the other's tree does not apply
if [ -d "$TOOLS/../../kernel-patches/6.1" ] && [ -d "$TOOLS/../../kernel-patches/6.12" ]; then
	src=$(ls -d "${KVMMMU_CACHE:-$HOME/.cache/kvmmmu}"/src/linux-source-6.1-* 2>/dev/null | head -1)
	if [ -n "$src" ]; then
		cp -a "$src" "$TMP/tree"
		check patches/6.12-patch-does-not-apply-to-6.1 "it applied" \
			eval '! patch -d "$TMP/tree" -p1 --dry-run -s -f <"$(ls "$TOOLS"/../../kernel-patches/6.12/0001-*.patch)" >/dev/null 2>&1'
	fi
fi
exit 0
