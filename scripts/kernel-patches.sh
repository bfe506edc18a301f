#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel patches kvmmmu carries (kernel-patches/TARGET/series), against
# Debian's own source of each target kernel.
#
# Usage: scripts/kernel-patches.sh check [TARGET...]   (default: every target)
#   check   `patch --dry-run` of TARGET's series, in order, against Debian's
#           linux-source package of that kernel (downloaded once and cached,
#           with the KVM part of its tree, under ~/.cache/kvmmmu/)
#
# A target is a folder of kernel-patches/ with a `series` file (the patches
# in order) and a `target.conf` (SOURCE_PACKAGE, SOURCE_VERSION: the Debian
# source package the patches are prepared against).
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PATCHES=$ROOT/kernel-patches
CACHE=${KVMMMU_CACHE:-$HOME/.cache/kvmmmu}
# What of the tree the patches touch (KVM's x86 MMU and what it includes).
TREE_PARTS="arch/x86/kvm virt/kvm include/linux/kvm_host.h include/trace/events/kvm.h"

die() { echo "kernel-patches: $*" >&2; exit 1; }

targets() {
	local t
	for t in "$PATCHES"/*/series; do
		[ -f "$t" ] && basename "$(dirname "$t")"
	done | sort -V
}

# tree TARGET: the cached KVM part of TARGET's source tree (prints its path)
tree() {
	local t=$1 conf=$PATCHES/$1/target.conf SOURCE_PACKAGE SOURCE_VERSION deb dir x tarball p
	local members=()
	[ -f "$conf" ] || die "$t: no $conf"
	# shellcheck disable=SC1090
	. "$conf"
	dir=$CACHE/src/$SOURCE_PACKAGE-$SOURCE_VERSION
	if [ -f "$dir/.complete" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$CACHE/deb" "$CACHE/src" || die "cannot create $CACHE/deb and $CACHE/src"
	deb=$(ls "$CACHE/deb/${SOURCE_PACKAGE}_${SOURCE_VERSION}_"*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ]; then
		echo "kernel-patches: $t: downloading $SOURCE_PACKAGE $SOURCE_VERSION (about 150 MB, cached)" >&2
		(cd "$CACHE/deb" && apt-get download -q "$SOURCE_PACKAGE=$SOURCE_VERSION" >/dev/null 2>&1) ||
			die "$t: cannot download $SOURCE_PACKAGE=$SOURCE_VERSION (apt-get download; is it in the apt sources?)"
		deb=$(ls "$CACHE/deb/${SOURCE_PACKAGE}_${SOURCE_VERSION}_"*.deb 2>/dev/null | head -1)
	fi
	[ -n "$deb" ] || die "$t: no $SOURCE_PACKAGE deb"
	x=$(mktemp -d "$CACHE/src/.x.XXXXXX") || die "cannot create a directory under $CACHE/src"
	tarball=$(dpkg-deb -c "$deb" | awk '$6 ~ /\/linux-source-.*\.tar\.xz$/ { print $6 }' | head -1)
	[ -n "$tarball" ] || { rm -rf "$x"; die "$t: no source tarball in $deb"; }
	echo "kernel-patches: $t: unpacking the KVM part of $(basename "$tarball")" >&2
	for p in $TREE_PARTS; do members+=("linux-source-*/$p"); done
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$tarball" | xz -dc |
		tar -x -C "$x" --strip-components=1 --wildcards --no-wildcards-match-slash "${members[@]}" ||
		{ rm -rf "$x"; die "$t: cannot unpack $tarball"; }
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
*)
	echo "usage: scripts/kernel-patches.sh check [TARGET...]   (targets: $(targets | tr '\n' ' '))" >&2
	exit 2
	;;
esac
