#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The KVM selftests that the distro-kernel harness runs (its selftests group,
# tests/vm/guest-selftests.sh), built from Debian's own linux-source of each
# kernel: 6.12's selftests refuse to run on 6.1. Static, so that the guest's
# initramfs needs no library for them, and with tests/vm/selftest_stats.c
# linked in (-Wl,--wrap=kvm_vm_free): it writes each vCPU's pf_* counters
# before a VM is freed, which only the VM's own process can read.
#
# Usage: scripts/build-selftests.sh KERNEL   (a tests/vm/kernels/*.conf name
#        whose kernel tests/vm/run.sh has fetched)
# Prints the folder of the binaries, $CACHE/selftests/PACKAGE-VERSION/, built
# once (about a minute) and cached by the source's Debian version, the tests'
# names and the hook's source; a failed build leaves nothing there.
set -u
export LC_ALL=C
# Under make test the caller's make exports OUTPUT (our build folder) and
# MAKEFLAGS: the selftests' Makefile takes OUTPUT as its own output folder,
# so the targets named below matched none of its rules, and make's built-in
# rule linked each test without its library (undefined test_assert).
unset OUTPUT O MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KVMMMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmmmu}
# The tests the group runs; one a kernel's tree lacks is left out
# (dirty_log_page_splitting_test came after 6.1).
SELFTESTS="access_tracking_perf_test demand_paging_test dirty_log_perf_test kvm_page_table_test
memslot_modification_stress_test dirty_log_page_splitting_test"
# What of the tree they need: `make headers` (the top Makefile, scripts,
# include, arch/x86, usr) and the selftests with their tools/ headers, and
# from 7.x the libraries of cgroup, clone3 and vfio (with the device headers
# vfio links to): patterns, as a member
# that matches nothing in an older tree fails tar.
PARTS="Makefile scripts include arch/x86 usr tools/include tools/arch/x86 tools/build tools/lib
tools/scripts tools/testing/selftests/lib.mk tools/testing/selftests/kselftest*
tools/testing/selftests/kvm tools/testing/selftests/rseq tools/testing/selftests/c*
tools/testing/selftests/v* drivers/dma/idxd drivers/dma/ioat drivers/net/ethernet/intel/igb"
HOOK=$ROOT/tests/vm/selftest_stats.c

die() {
	echo "build-selftests: $*" >&2
	exit 1
}
# tail_of FILE [LINES]: the end of FILE, indented
tail_of() { echo; tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    /'; }

TMP=$(mktemp -d /tmp/build-selftests.XXXXXX) || die "cannot create a temporary directory"
work=""
trap 'rm -rf "$TMP" "$work"' EXIT
# shellcheck source=scripts/lib/distro-kernel.sh
source "$ROOT/scripts/lib/distro-kernel.sh"

name=${1:-}
conf=$ROOT/tests/vm/kernels/$name.conf
[ -n "$name" ] && [ -f "$conf" ] ||
	die "usage: scripts/build-selftests.sh KERNEL (one of: $(cd "$ROOT/tests/vm/kernels" && ls -- *.conf | sed 's/\.conf$//' | tr '\n' ' '))"
SOURCE_PACKAGE=""
# shellcheck source=tests/vm/kernels/6.12.conf
source "$conf"
[ -n "$SOURCE_PACKAGE" ] || die "$name: $conf names no SOURCE_PACKAGE"
KV=$(cat "$CACHE/kernels/$name.release" 2>/dev/null)
[ -n "$KV" ] || die "$name: no kernel fetched yet (tests/vm/run.sh $name fetches it)"
use_apt_sources "$name"
# the source of the kernel booted: its image package's Debian version (from
# 7.0 its vmlinuz is in linux-binary-VERSION)
deb=$(ls "$CACHE/deb/linux-image-${KV}_"*.deb "$CACHE/deb/linux-binary-${KV}_"*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
	ver=$(dpkg-deb -f "$deb" Version)
else
	ver=$(apt-cache "${apt_opts[@]}" show "linux-image-$KV" 2>/dev/null | awk '$1 == "Version:" { print $2; exit }')
fi
[ -n "$ver" ] || die "$name: cannot tell linux-image-$KV's version (no cached .deb, no package lists)"

out=$CACHE/selftests/$SOURCE_PACKAGE-$ver
key=$({
	echo "$SELFTESTS"
	cat "$HOOK"
} | sha256sum | cut -c1-16)
if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi

start=$SECONDS
mkdir -p "$CACHE/selftests" || die "cannot create $CACHE/selftests"
fetch_deb "$SOURCE_PACKAGE" "$ver" || die "$name: $WHY"
work=$(mktemp -d "$CACHE/selftests/.build.XXXXXX") || die "cannot create a directory under $CACHE/selftests"
src=$work/src
echo "build-selftests: $name: unpacking $SOURCE_PACKAGE $ver" >&2
# shellcheck disable=SC2086 # a list of paths
unpack_source "$DEB" "$src" $PARTS || die "$name: $WHY"
# the selftests include the uapi headers from the tree's usr/include
make -s -C "$src" headers >"$work/headers.log" 2>&1 ||
	die "$name: make headers failed:$(tail_of "$work/headers.log" 10)"

kvm=$src/tools/testing/selftests/kvm
arch=x86_64
[ -d "$kvm/include/$arch" ] || arch=x86
# as the selftests' own Makefile compiles, their headers' warnings not ours
inc=()
for d in tools/include tools/arch/x86/include usr/include tools/testing/selftests \
	tools/testing/selftests/kvm/include "tools/testing/selftests/kvm/include/$arch"; do
	inc+=(-isystem "$src/$d")
done
gcc -O2 -g -std=gnu99 -Wall -Wextra -Werror -DCONFIG_64BIT -fno-stack-protector -fno-PIE \
	"${inc[@]}" -c "$HOOK" -o "$work/selftest_stats.o" >"$work/hook.log" 2>&1 ||
	die "$name: ${HOOK#"$ROOT"/} does not build against $SOURCE_PACKAGE $ver:$(tail_of "$work/hook.log" 10)"
targets=()
for t in $SELFTESTS; do
	for d in "" x86_64/ x86/; do
		if [ -f "$kvm/$d$t.c" ]; then
			targets+=("$kvm/$d$t")
			break
		fi
	done
done
echo "build-selftests: $name: building ${#targets[@]} selftests" >&2
make -C "$kvm" -j2 LDFLAGS="-static -pthread -no-pie -Wl,--wrap=kvm_vm_free $work/selftest_stats.o" \
	"${targets[@]}" >"$work/build.log" 2>&1 ||
	die "$name: the selftests' build failed:$(grep -v 'statically linked applications' "$work/build.log" | tail -10 | sed 's/^/    /')"
mkdir "$work/out" && cp "${targets[@]}" "$work/out/" && echo "$key" >"$work/out/.complete" ||
	die "$name: cannot copy the selftests"
# this package's earlier builds go (about 10 MB each)
rm -rf "$CACHE/selftests/$SOURCE_PACKAGE"-*
mv "$work/out" "$out" || die "$name: cannot write $out"
echo "build-selftests: $name: ${#targets[@]} selftests built in $((SECONDS - start)) s" >&2
echo "$out"
