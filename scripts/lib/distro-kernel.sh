# shellcheck shell=bash disable=SC2034 # WHY, DEB, KV, KDIR: for the caller
# Debian's own kernels for the QEMU/TCG guests (tests/vm/run.sh and
# scripts/kvm-guest.sh): fetched once with apt-get download, cached
# uncompressed, only vmlinuz and the modules the guests load.
#
# Sourced; the caller sets KERNEL_PACKAGE (from tests/vm/kernels/NAME.conf),
# CACHE and TMP, and defines tail_of FILE [LINES].

# KVM and what the guest runner mounts the host's root with: 9p over virtio
# under an overlay, and a virtio console for the command's output. Built in
# on some kernels (6.12: virtio_pci, virtio_console): modprobe says so and
# nothing is copied.
GUEST_MODULES="kvm_amd 9p 9pnet_virtio overlay virtio_pci virtio_console"

# apt-get download drops to user _apt when root, which cannot write to $HOME.
apt_opts=()
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)

# fetch_kernel NAME: sets KV (uname -r) and KDIR (the cached vmlinuz and
# modules), downloading and extracting the Debian package on first use.
# Returns 1 with WHY set on failure.
fetch_kernel() {
	local name=$1 pkg deb x ko rel dest log=$TMP/$1.fetch.log
	# A metapackage names the current build; a build's own package names no other.
	pkg=$(apt-cache depends "$KERNEL_PACKAGE" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ] && apt-cache show "$KERNEL_PACKAGE" 2>/dev/null |
		grep -q '^Depends:.*linux-base'; then
		pkg=$KERNEL_PACKAGE
	fi
	if [ -z "$pkg" ]; then
		# No package lists (offline, or apt-get update never ran): the last one used.
		KV=$(cat "$CACHE/kernels/$name.release" 2>/dev/null)
		KDIR=$CACHE/kernels/$KV
		[ -n "$KV" ] && [ "$(cat "$KDIR/.complete" 2>/dev/null)" = "$GUEST_MODULES" ] && return 0
		WHY="apt-cache knows no $KERNEL_PACKAGE, or no linux-image-<release> behind it (apt-get update?)"
		return 1
	fi
	KV=${pkg#linux-image-}
	KDIR=$CACHE/kernels/$KV
	# .complete names the modules picked: a cache made for fewer is made again.
	if [ "$(cat "$KDIR/.complete" 2>/dev/null)" != "$GUEST_MODULES" ]; then
		mkdir -p "$CACHE/deb" "$CACHE/kernels" || { WHY="cannot create $CACHE"; return 1; }
		deb=$(ls "$CACHE/deb/${pkg}_"*.deb 2>/dev/null | head -1)
		if [ -z "$deb" ]; then
			echo "  fetching $pkg"
			if ! (cd "$CACHE/deb" && timeout 600 apt-get download "${apt_opts[@]}" "$pkg") \
				>"$log" 2>&1; then
				WHY="apt-get download $pkg failed:$(tail_of "$log" 5)"
				return 1
			fi
			deb=$(ls "$CACHE/deb/${pkg}_"*.deb 2>/dev/null | head -1)
		fi
		echo "  extracting $deb"
		x=$(mktemp -d "$CACHE/kernels/.extract.XXXXXX")
		if ! dpkg-deb -x "$deb" "$x/pkg" 2>"$log" || [ ! -d "$x/pkg/lib/modules/$KV" ]; then
			rm -rf "$x"
			WHY="dpkg-deb -x $deb failed or has no lib/modules/$KV:$(tail_of "$log" 5)"
			return 1
		fi
		# The package ships no modules.dep: make one to find the modules' dependencies.
		depmod -b "$x/pkg" "$KV" 2>"$log"
		mkdir -p "$x/out/modules"
		cp "$x/pkg/boot/vmlinuz-$KV" "$x/pkg/boot/config-$KV" "$x/out/"
		cp "$x/pkg/lib/modules/$KV"/modules.{order,builtin,builtin.modinfo} "$x/out/modules/"
		# Only these modules, uncompressed (busybox modprobe reads plain .ko).
		# shellcheck disable=SC2086 # a list
		for ko in $(for m in $GUEST_MODULES; do
			modprobe -d "$x/pkg" -S "$KV" --show-depends $m 2>>"$log"
		done | awk '$1 == "insmod" { print $2 }' | sort -u); do
			rel=${ko#"$x/pkg/lib/modules/$KV/"}
			dest=$x/out/modules/${rel%.ko*}.ko
			mkdir -p "$(dirname "$dest")"
			case $ko in
			*.ko.xz) xz -dc "$ko" >"$dest" ;;
			*.ko.gz) gzip -dc "$ko" >"$dest" ;;
			*.ko.zst) zstd -qdc "$ko" >"$dest" ;;
			*) cp "$ko" "$dest" ;;
			esac || { rm -rf "$x"; WHY="cannot decompress $ko"; return 1; }
		done
		if [ ! -e "$x/out/modules/kernel/arch/x86/kvm/kvm-amd.ko" ]; then
			rm -rf "$x"
			WHY="modprobe --show-depends kvm_amd found no kvm-amd.ko:$(tail_of "$log" 5)"
			return 1
		fi
		echo "$GUEST_MODULES" >"$x/out/.complete"
		rm -rf "$KDIR"
		mv "$x/out" "$KDIR" && rm -rf "$x" || { WHY="cannot populate $KDIR"; return 1; }
	fi
	echo "$KV" >"$CACHE/kernels/$name.release"
	return 0
}

# fetch_deb PACKAGE VERSION: sets DEB to the cached .deb of PACKAGE=VERSION
# (in $CACHE/deb), downloading it on first use. Returns 1 with WHY set.
fetch_deb() {
	local log=$TMP/fetch-$1.log
	DEB=$(ls "$CACHE/deb/${1}_${2}_"*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] && return 0
	mkdir -p "$CACHE/deb" || { WHY="cannot create $CACHE/deb"; return 1; }
	echo "  fetching $1 $2" >&2
	if ! (cd "$CACHE/deb" && timeout 600 apt-get download -q "${apt_opts[@]}" "$1=$2") >"$log" 2>&1; then
		WHY="apt-get download $1=$2 failed (is it in the apt sources?):$(tail_of "$log" 5)"
		return 1
	fi
	DEB=$(ls "$CACHE/deb/${1}_${2}_"*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] || { WHY="apt-get download $1=$2 left no .deb in $CACHE/deb"; return 1; }
}

# unpack_source DEB DIR PART...: the PARTs (paths in the kernel tree, shell
# patterns) of the linux-source-*.tar.xz that DEB (a linux-source package)
# holds, into DIR. Returns 1 with WHY set.
unpack_source() {
	local deb=$1 dir=$2 tarball p members=()
	shift 2
	tarball=$(dpkg-deb -c "$deb" | awk '$6 ~ /\/linux-source-.*\.tar\.xz$/ { print $6 }' | head -1)
	[ -n "$tarball" ] || { WHY="no source tarball in $deb"; return 1; }
	for p in "$@"; do members+=("linux-source-*/$p"); done
	mkdir -p "$dir" || { WHY="cannot create $dir"; return 1; }
	if ! dpkg-deb --fsys-tarfile "$deb" | tar -xO "$tarball" | xz -dc |
		tar -x -C "$dir" --strip-components=1 --wildcards --no-wildcards-match-slash "${members[@]}"; then
		WHY="cannot unpack $tarball from $deb"
		return 1
	fi
}
