#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel patches kvmmmu carries (kernel-patches/TARGET/series), against
# Debian's own source of each target kernel.
#
# Usage: scripts/kernel-patches.sh check|build|compile-check [TARGET...]   (default: every target)
#   check   `patch --dry-run` of TARGET's series, in order, against Debian's
#           linux-source package of that kernel (downloaded once and cached,
#           with the KVM part of its tree, under ~/.cache/kvmmmu/)
#   build   the patched kvm.ko, kvm-amd.ko and kvm-intel.ko, built out of tree
#           against Debian's linux-headers package of that kernel (unpacked
#           into the cache, not installed); cached by the series' content, so
#           only a changed series is built again. Prints the modules' folder.
#           Exit 3: the kernel's compiler is not in this Debian (7.3: gcc 14);
#           the series is then compiled as a check (compile-check) first, and
#           a failure of that is exit 1.
#   compile-check   the patched kvm.o, kvm-intel.o and kvm-amd.o compiled with
#           this machine's gcc against those headers, as a check where the
#           modules cannot be built: objects only, linked into no module and
#           kept nowhere; every symbol they use must be the kernel's or
#           exported by kvm.o. Cached by the series' content; prints the
#           folder of its report (the compiler, the objects' symbols).
#   built TARGET   that folder, if the current series is built (else exit 1)
#
# A target is a folder of kernel-patches/ with a `series` file (the patches
# in order) and a `target.conf`: SOURCE_PACKAGE, SOURCE_VERSION (the Debian
# source package the patches are prepared against), KERNEL_RELEASE,
# HEADERS_PACKAGES and HEADERS_VERSION (the kernel the modules are for), and
# APT_SOURCES for a kernel from another Debian release (scripts/lib/distro-kernel.sh).
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PATCHES=$ROOT/kernel-patches
CACHE=${KVMMMU_CACHE:-$HOME/.cache/kvmmmu}
# What of the tree the patches touch (KVM's x86 MMU and what it includes).
TREE_PARTS="Makefile arch/x86/kvm virt/kvm include/linux/kvm_host.h include/trace/events/kvm.h"

die() { echo "kernel-patches: $*" >&2; exit 1; }
# cannot MESSAGE: what no machine with this Debian can do (exit 3: a test skips it)
cannot() { echo "kernel-patches: $*" >&2; exit 3; }

TMP=$(mktemp -d /tmp/kernel-patches.XXXXXX) || die "cannot create a temporary directory"
trap 'rm -rf "$TMP"' EXIT
# tail_of FILE [LINES]: the end of FILE, indented (for distro-kernel.sh's messages)
tail_of() { echo; tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    /'; }
# shellcheck source=scripts/lib/distro-kernel.sh
source "$ROOT/scripts/lib/distro-kernel.sh"

targets() {
	local t
	for t in "$PATCHES"/*/series; do
		[ -f "$t" ] && basename "$(dirname "$t")"
	done | sort -V
}

# tree TARGET: the cached KVM part of TARGET's source tree (prints its path)
tree() {
	local t=$1 conf=$PATCHES/$1/target.conf SOURCE_PACKAGE SOURCE_VERSION APT_SOURCES="" dir x
	[ -f "$conf" ] || die "$t: no $conf"
	# shellcheck disable=SC1090
	. "$conf"
	use_apt_sources "$t"
	dir=$CACHE/src/$SOURCE_PACKAGE-$SOURCE_VERSION
	if [ -f "$dir/.complete" ] && [ -f "$dir/Makefile" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$CACHE/src" || die "cannot create $CACHE/src"
	fetch_deb "$SOURCE_PACKAGE" "$SOURCE_VERSION" || die "$t: $WHY"
	x=$(mktemp -d "$CACHE/src/.x.XXXXXX") || die "cannot create a directory under $CACHE/src"
	echo "kernel-patches: $t: unpacking the KVM part of $SOURCE_PACKAGE $SOURCE_VERSION" >&2
	# shellcheck disable=SC2086 # a list of paths
	unpack_source "$DEB" "$x" $TREE_PARTS || { rm -rf "$x"; die "$t: $WHY"; }
	rm -rf "$dir"
	mv "$x" "$dir" && touch "$dir/.complete" || die "$t: cannot write $dir"
	echo "$dir"
}

# series TARGET: the patch files of TARGET's series, in order
series() {
	local p
	while read -r p; do
		case $p in '' | '#'*) continue ;; esac
		echo "$PATCHES/$1/$p"
	done <"$PATCHES/$1/series"
}

# check TARGET: every patch of the series applies, in order, on a copy of the tree
check() {
	local t=$1 src work p n=0 out
	src=$(tree "$t") || return 1
	work=$(mktemp -d) || return 1
	cp -a "$src/." "$work/"
	for p in $(series "$t"); do
		[ -f "$p" ] || { echo "FAIL $t: ${p##*/}: in series, but no such file"; rm -rf "$work"; return 1; }
		# dry run first (what the issue asks), then for real: the next patch applies on top
		if ! out=$(patch -d "$work" -p1 --dry-run -s -f <"$p" 2>&1) ||
			! patch -d "$work" -p1 -s -f <"$p" >/dev/null 2>&1; then
			echo "FAIL $t: ${p##*/} does not apply to $(basename "$src"): $(head -3 <<<"$out" | tr '\n' ' ')"
			rm -rf "$work"
			return 1
		fi
		n=$((n + 1))
	done
	rm -rf "$work"
	echo "ok   $t: $n patches apply to $(basename "$src")"
}

# fetch PACKAGE VERSION: the cached deb of PACKAGE=VERSION (downloaded if need be)
fetch() {
	fetch_deb "$1" "$2" || die "$WHY"
	echo "$DEB"
}

# kernel_version MAKEFILE: VERSION.PATCHLEVEL.SUBLEVEL of a kernel Makefile
kernel_version() {
	awk -F' = ' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 } $1 == "SUBLEVEL" { s = $2 }
		END { print v "." p "." s }' "$1"
}

# vmlinux_btf TARGET OUT: the BTF of TARGET's kernel as an ELF file with only a
# .BTF section, from Debian's image package (vmlinuz: a compressed vmlinux
# after the boot code; its first xz, zstd or gzip stream that unpacks to ELF)
vmlinux_btf() {
	local t=$1 out=$2 deb x off magic unpack KERNEL_RELEASE HEADERS_VERSION APT_SOURCES=""
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	use_apt_sources "$t"
	command -v objcopy >/dev/null || die "$t: objcopy is not installed (binutils)"
	deb=$(fetch "linux-image-$KERNEL_RELEASE" "$HEADERS_VERSION") || return 1
	x=$(mktemp -d) || return 1
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x" "./boot/vmlinuz-$KERNEL_RELEASE" ||
		{ rm -rf "$x"; die "$t: no vmlinuz in $deb"; }
	for magic in 'fd377a585a00:xz -dc' '28b52ffd:zstd -dc' '1f8b08:gzip -dc'; do
		unpack=${magic#*:}
		off=$(od -An -v -tx1 -w1 "$x/boot/vmlinuz-$KERNEL_RELEASE" | tr -d ' \n' |
			grep -bo "${magic%%:*}" | head -1 | cut -d: -f1)
		[ -n "$off" ] || continue
		tail -c +$((off / 2 + 1)) "$x/boot/vmlinuz-$KERNEL_RELEASE" | $unpack 2>/dev/null >"$x/vmlinux"
		[ "$(head -c 4 "$x/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && break
	done
	if ! objcopy --only-section=.BTF "$x/vmlinux" "$out" 2>/dev/null; then
		rm -rf "$x"
		die "$t: no BTF found in the vmlinuz of $deb"
	fi
	rm -rf "$x"
}

# headers TARGET: Debian's headers of TARGET's kernel, unpacked (prints the build directory)
headers() {
	local t=$1 root x pkg deb KERNEL_RELEASE HEADERS_PACKAGES HEADERS_VERSION APT_SOURCES=""
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	use_apt_sources "$t"
	[ -n "${KERNEL_RELEASE:-}" ] && [ -n "${HEADERS_PACKAGES:-}" ] ||
		die "$t: target.conf names no KERNEL_RELEASE and HEADERS_PACKAGES"
	root=$CACHE/headers/$KERNEL_RELEASE-$HEADERS_VERSION
	if [ ! -f "$root/.complete" ]; then
		mkdir -p "$CACHE/headers" || die "cannot create $CACHE/headers"
		x=$(mktemp -d "$CACHE/headers/.x.XXXXXX") || die "cannot create a directory under $CACHE/headers"
		for pkg in $HEADERS_PACKAGES; do
			deb=$(fetch "$pkg" "$HEADERS_VERSION") || { rm -rf "$x"; return 1; }
			dpkg -x "$deb" "$x" || { rm -rf "$x"; die "$t: cannot unpack $deb"; }
		done
		rm -rf "$root"
		mv "$x" "$root" || die "$t: cannot write $root"
		# the per-flavour Makefile includes the common one by its installed path
		# (and from 7.x names its own folder so too: KBUILD_OUTPUT)
		sed -i "s|^include /usr/src/|include $root/usr/src/|; s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$root/usr/src/|" \
			"$root/usr/src/linux-headers-$KERNEL_RELEASE/Makefile" ||
			die "$t: unexpected layout of $HEADERS_PACKAGES"
		# module BTF is encoded against the kernel's: 6.12's headers have it, 6.1's not
		if [ ! -f "$root/usr/src/linux-headers-$KERNEL_RELEASE/vmlinux" ]; then
			vmlinux_btf "$t" "$root/usr/src/linux-headers-$KERNEL_RELEASE/vmlinux" || return 1
		fi
		touch "$root/.complete"
	fi
	echo "$root/usr/src/linux-headers-$KERNEL_RELEASE"
}

# series_dir KIND TARGET [SALT]: where KIND (modules, compile-check) of
# TARGET's current series is kept (made or not)
series_dir() {
	local kind=$1 t=$2 salt=${3:-} key p SOURCE_VERSION HEADERS_VERSION KERNEL_RELEASE
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	key=$({
		echo "$SOURCE_VERSION $HEADERS_VERSION kbuild-2$salt"
		cat "$PATCHES/$t/series"
		for p in $(series "$t"); do cat "$p"; done
	} | sha256sum | cut -c1-16)
	echo "$CACHE/$kind/$t-$KERNEL_RELEASE-$key"
}

# modules_dir TARGET: where TARGET's modules of its current series are (built or not)
modules_dir() { series_dir modules "$1"; }

# compiled_dir TARGET: where the report of TARGET's compile check is (made or not),
# for this machine's gcc
compiled_dir() { series_dir compile-check "$1" " compile-check-1 $(gcc -dumpfullversion 2>/dev/null)"; }

# tree_and_headers TARGET: SRC and HDR, TARGET's cached tree and headers,
# which must be of one kernel
tree_and_headers() {
	local t=$1 sv hv SOURCE_VERSION HEADERS_VERSION
	SRC=$(tree "$t") || exit 1
	HDR=$(headers "$t") || exit 1
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	sv=$(kernel_version "$SRC/Makefile")
	hv=$(kernel_version "$(sed -n 's|^include \(.*\)|\1|p' "$HDR/Makefile")")
	[ "$sv" = "$hv" ] && [ "$SOURCE_VERSION" = "$HEADERS_VERSION" ] ||
		die "$t: the headers ($hv, Debian $HEADERS_VERSION) and the source ($sv, Debian $SOURCE_VERSION) disagree"
}

# patched_tree TARGET SRC WORK: TARGET's series applied to a copy of SRC's
# arch and virt in WORK, whose KVM Makefile then builds out of tree
patched_tree() {
	local t=$1 src=$2 work=$3 p
	cp -a "$src/arch" "$src/virt" "$work/" || return 1
	for p in $(series "$t"); do
		patch -d "$work" -p1 -s -f <"$p" >/dev/null || { echo "kernel-patches: $t: ${p##*/} does not apply" >&2; return 1; }
	done
	# Out of tree, "srctree" is the headers': KVM's own folder and virt/kvm are
	# found from the module's, and the trace headers' ../../arch/x86/kvm from
	# an include/trace beside it. 7.x's check that KVM exports only with
	# EXPORT_SYMBOL_FOR_KVM_INTERNAL greps these folders too.
	mkdir -p "$work/include/trace"
	sed -i 's|-I $(srctree)/arch/x86/kvm|-I $(src) -I $(src)/../../../include/trace|;
		s|include $(srctree)/virt/kvm/Makefile.kvm|include $(src)/../../../virt/kvm/Makefile.kvm|;
		s|$(srctree)/virt/kvm $(srctree)/arch/x86/kvm|$(src)/../../../virt/kvm $(src)|' \
		"$work/arch/x86/kvm/Makefile"
}

# kernel_cc HDR: the compiler the kernel of headers HDR was built with, if it
# is not installed here (else nothing)
kernel_cc() {
	local cc
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT=\([^ ]*\) .*/\1/p' "$1/include/config/auto.conf" 2>/dev/null)
	[ -z "$cc" ] || command -v "$cc" >/dev/null || sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$1/include/config/auto.conf"
}

# compile_check TARGET: the patched kvm.o, kvm-intel.o and kvm-amd.o, compiled
# with this machine's gcc against TARGET's headers (prints the report's folder)
compile_check() {
	local t=$1 src hdr out work obj m missing ccver KERNEL_RELEASE
	local flags=(CC=gcc objtool=true CONFIG_KVM=m CONFIG_KVM_AMD=m CONFIG_KVM_INTEL=m)
	command -v gcc >/dev/null || die "$t: gcc is not installed"
	command -v nm >/dev/null || die "$t: nm is not installed (binutils)"
	tree_and_headers "$t"
	src=$SRC hdr=$HDR
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	out=$(compiled_dir "$t")
	if [ -f "$out/.complete" ]; then
		echo "$out"
		return 0
	fi
	work=$TMP/compile-check-$t
	if ! mkdir -p "$work" || ! patched_tree "$t" "$src" "$work"; then
		die "$t: cannot prepare the patched tree"
	fi
	# gcc 12 has no -fmin-function-alignment (gcc 14): the kernel's Makefile
	# then aligns with -falign-functions, as for any compiler without it
	gcc -Werror -fmin-function-alignment=16 -c -x c /dev/null -o "$work/probe.o" 2>/dev/null ||
		flags+=(CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=)
	ccver=$(gcc --version | head -1)
	echo "kernel-patches: $t: compiling kvm.o, kvm-intel.o, kvm-amd.o with $ccver against the $KERNEL_RELEASE headers, as a check (no modules)" >&2
	# objtool is not run: it checks and annotates the objects, and the kbuild
	# package's (7.3's) needs glibc 2.38; modpost (likewise) is replaced by
	# the symbol check below
	if ! make -s -C "$hdr" M="$work/arch/x86/kvm" "${flags[@]}" -j"$(nproc)" \
		kvm.o kvm-intel.o kvm-amd.o >"$work/build.log" 2>&1; then
		grep -m5 -i 'error' "$work/build.log" >&2 || tail -5 "$work/build.log" >&2
		die "$t: the compile check failed"
	fi
	# what modpost would refuse: a symbol neither the kernel nor kvm.o exports
	# (__this_module is modpost's own)
	obj=$work/arch/x86/kvm
	{
		cut -f2 "$hdr/Module.symvers"
		nm "$obj/kvm.o" | sed -n 's/.* __export_symbol_//p'
		echo __this_module
	} | sort -u >"$work/exported"
	for m in kvm kvm-intel kvm-amd; do
		missing=$(nm -u "$obj/$m.o" | awk '{ print $2 }' | sort -u | comm -23 - "$work/exported" | tr '\n' ' ')
		[ -z "$missing" ] || die "$t: $m.o uses symbols that neither the kernel nor kvm.o exports: ${missing% }"
	done
	mkdir -p "$out.x" || die "$t: cannot write $out.x"
	{
		echo "compiler: $ccver"
		echo "headers: $KERNEL_RELEASE (Debian $HEADERS_VERSION), whose kernel was built with $(sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$hdr/include/config/auto.conf")"
		echo "objects: kvm.o kvm-intel.o kvm-amd.o (compiled without objtool; linked into no module, not kept)"
	} >"$out.x/report"
	for m in kvm kvm-intel kvm-amd; do
		nm -g --defined-only "$obj/$m.o" | awk -v m="$m.o" '{ print m, $2, $3 }'
	done >"$out.x/symbols"
	if ! rm -rf "$out" || ! mv "$out.x" "$out" || ! touch "$out/.complete"; then
		die "$t: cannot write $out"
	fi
	rm -rf "$work"
	# the checks of this target's earlier series go
	for p in "$CACHE/compile-check/$t-$KERNEL_RELEASE"-*; do
		[ "$p" = "$out" ] || rm -rf "$p"
	done
	echo "$out"
}

# build TARGET: the patched KVM modules (prints their folder)
build() {
	local t=$1 src hdr out work p cc KERNEL_RELEASE resolve
	command -v pahole >/dev/null || die "$t: pahole is not installed (module BTF; sudo make deps)"
	command -v readelf >/dev/null || die "$t: readelf is not installed (binutils)"
	tree_and_headers "$t"
	src=$SRC hdr=$HDR
	# shellcheck disable=SC1090
	. "$PATCHES/$t/target.conf"
	# Modules are built with the kernel's own compiler, whose features its
	# configuration records (7.3's: gcc 14's -fmin-function-alignment,
	# -finline-stringops); Debian 12 has gcc 12. The series is still compiled
	# with gcc 12, as a check.
	cc=$(kernel_cc "$hdr")
	if [ -n "$cc" ]; then
		compile_check "$t" >/dev/null || exit 1
		cannot "$t: kvm.o, kvm-intel.o, kvm-amd.o compiled with $(gcc --version | head -1) as a check (compile-check $t); no loadable modules: $KERNEL_RELEASE was built with $cc, which is not installed (not in Debian 12)"
	fi
	out=$(modules_dir "$t")
	if [ -f "$out/.complete" ]; then
		echo "$out"
		return 0
	fi
	work=$(mktemp -d) || return 1
	patched_tree "$t" "$src" "$work" || { rm -rf "$work"; die "$t: cannot prepare the patched tree"; }
	# 6.1's kbuild package has no resolve_btfids: KVM's modules need none (no
	# .BTF_ids section, checked below), so it is not run there
	resolve=()
	[ -x "$hdr/tools/bpf/resolve_btfids/resolve_btfids" ] || resolve=(RESOLVE_BTFIDS=true)
	echo "kernel-patches: $t: building kvm.ko, kvm-amd.ko, kvm-intel.ko for $KERNEL_RELEASE" >&2
	if ! make -s -C "$hdr" M="$work/arch/x86/kvm" CONFIG_KVM=m CONFIG_KVM_AMD=m CONFIG_KVM_INTEL=m \
		"${resolve[@]}" -j"$(nproc)" modules >"$work/build.log" 2>&1; then
		tail -5 "$work/build.log" >&2
		rm -rf "$work"
		die "$t: the build failed"
	fi
	for p in "$work"/arch/x86/kvm/*.ko; do
		if ! readelf -S "$p" | grep -q ' \.BTF '; then
			rm -rf "$work"
			die "$t: ${p##*/} has no BTF (kvmmmu needs module BTF)"
		fi
		if [ ${#resolve[@]} -gt 0 ] && readelf -S "$p" | grep -q '\.BTF_ids'; then
			rm -rf "$work"
			die "$t: ${p##*/} has BTF ids to resolve, and this kbuild has no resolve_btfids"
		fi
	done
	mkdir -p "$out.x" && cp "$work"/arch/x86/kvm/*.ko "$out.x/" && rm -rf "$out" && mv "$out.x" "$out" &&
		touch "$out/.complete" || die "$t: cannot write $out"
	rm -rf "$work"
	# the builds of this target's earlier series go (about 40 MB each)
	for p in "$CACHE/modules/$t-$KERNEL_RELEASE"-*; do
		[ "$p" = "$out" ] || rm -rf "$p"
	done
	echo "$out"
}

cmd=${1:-}
shift || true
case $cmd in
check)
	# shellcheck disable=SC2046 # target names have no spaces
	[ $# -gt 0 ] || set -- $(targets)
	rc=0
	for t in "$@"; do
		[ -f "$PATCHES/$t/series" ] || die "no target '$t' (targets: $(targets | tr '\n' ' '))"
		check "$t" || rc=1
	done
	exit $rc
	;;
built)
	# the modules' folder if TARGET's current series is built, else exit 1
	[ $# = 1 ] && [ -f "$PATCHES/$1/series" ] || die "built: one target"
	out=$(modules_dir "$1")
	[ -f "$out/.complete" ] || exit 1
	echo "$out"
	;;
compile-check)
	# shellcheck disable=SC2046 # target names have no spaces
	[ $# -gt 0 ] || set -- $(targets)
	for t in "$@"; do
		[ -f "$PATCHES/$t/series" ] || die "no target '$t' (targets: $(targets | tr '\n' ' '))"
		(compile_check "$t") || exit 1
	done
	;;
build)
	# shellcheck disable=SC2046 # target names have no spaces
	[ $# -gt 0 ] || set -- $(targets)
	rc=0
	for t in "$@"; do
		[ -f "$PATCHES/$t/series" ] || die "no target '$t' (targets: $(targets | tr '\n' ' '))"
		# a target this machine cannot build (exit 3) does not stop the others
		(build "$t") || { r=$?; [ $r = 3 ] || exit $r; rc=3; }
	done
	exit $rc
	;;
*)
	echo "usage: scripts/kernel-patches.sh check|build|compile-check [TARGET...]   (targets: $(targets | tr '\n' ' '))" >&2
	exit 2
	;;
esac
