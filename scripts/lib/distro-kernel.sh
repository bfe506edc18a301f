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
apt_base=("${apt_opts[@]}")
APT_DIR=""

# use_apt_sources NAME: apt_opts for the kernel NAME's packages. A kernel
# newer than this machine's Debian (APT_SOURCES in its conf, e.g. Debian 13's
# backports) is looked up through package lists of the harness's own, in
# $CACHE/apt/NAME and refreshed once a day: the machine's apt sources are
# neither read nor changed. Without APT_SOURCES, the machine's.
use_apt_sources() {
	local dir=$CACHE/apt/$1
	apt_opts=("${apt_base[@]}")
	APT_DIR=""
	[ -n "${APT_SOURCES:-}" ] || return 0
	APT_DIR=$dir
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 0
	if [ "$(cat "$dir/sources.list" 2>/dev/null)" != "$APT_SOURCES" ]; then
		echo "$APT_SOURCES" >"$dir/sources.list"
		rm -f "$dir/updated"
	fi
	apt_opts+=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	[ -n "$(find "$dir/updated" -mmin -1440 2>/dev/null)" ] || apt_update
}

# apt_update: refreshes the private package lists (a no-op without them);
# offline, the lists and packages already cached serve.
apt_update() {
	[ -n "$APT_DIR" ] || return 1
	echo "  apt-get update ($(tr '\n' ';' <"$APT_DIR/sources.list" | sed 's/;$//'))" >&2
	# apt-get update exits 0 when an index failed to download ("W: Failed to
	# fetch"): that is no refresh
	timeout 300 apt-get "${apt_opts[@]}" update -q >"$APT_DIR/update.log" 2>&1 &&
		! grep -q '^W: Failed to fetch' "$APT_DIR/update.log" && touch "$APT_DIR/updated"
}

# apt_download LOG PACKAGE[=VERSION]: into $CACHE/deb; when the private
# lists are stale (they name a build the registry has dropped), once more
# after refreshing them.
apt_download() {
	local log=$1
	shift
	(cd "$CACHE/deb" && timeout 600 apt-get download -q "${apt_opts[@]}" "$@") >"$log" 2>&1 ||
		{ apt_update && (cd "$CACHE/deb" && timeout 600 apt-get download -q "${apt_opts[@]}" "$@") >"$log" 2>&1; }
}

# download_failed LOG WHAT: sets WHY for a failed apt_download of WHAT, and
# UNREACHABLE=1 when apt could not reach the registry at all (no name
# resolution, no connection: LOG's words): callers skip with that reason
# rather than fail, since no machine here can do better offline. A version
# the registry does not have is a failure.
download_failed() {
	local lists=""
	UNREACHABLE=""
	# the private lists' last refresh too: without them apt only says "Unable to locate"
	[ -n "${APT_DIR:-}" ] && [ -f "$APT_DIR/update.log" ] && lists=$APT_DIR/update.log
	local said
	# shellcheck disable=SC2086 # $lists: none or one file
	said=$(cat "$1" $lists | grep -m1 -E 'Temporary failure resolving|Could not resolve|Could not connect|Connection timed out|Network is unreachable' | sed 's/^ *//')
	if [ -n "$said" ]; then
		UNREACHABLE=1
		WHY="cannot download $2: the package registry is unreachable ($said)"
	else
		WHY="apt-get download $2 failed (is it in the apt sources?):$(tail_of "$1" 5)"
	fi
}

# kernel_packages PACKAGE: the packages of a kernel build that hold its
# vmlinuz, modules and their lists. Up to 6.x linux-image-VERSION holds them
# all; from 7.0 it is a metapackage of linux-binary- (vmlinuz), linux-modules-
# and linux-base- (config, modules.order, ...) of the same VERSION.
kernel_packages() {
	local split
	split=$(apt-cache "${apt_opts[@]}" depends "$1" 2>/dev/null |
		awk -v v="${1#linux-image-}" '$1 == "Depends:" && ($2 == "linux-binary-" v ||
			$2 == "linux-modules-" v || $2 == "linux-base-" v) { print $2 }')
	if [ -n "$split" ]; then
		echo "$split"
	else
		echo "$1"
	fi
}

# fetch_kernel NAME: sets KV (uname -r) and KDIR (the cached vmlinuz and
# modules), downloading and extracting the Debian package on first use.
# Returns 1 with WHY set on failure.
fetch_kernel() {
	local name=$1 pkg p deb x ko rel dest root boot log=$TMP/$1.fetch.log
	UNREACHABLE=""
	use_apt_sources "$name"
	# A metapackage names the current build; a build's own package names no other.
	pkg=$(apt-cache "${apt_opts[@]}" depends "$KERNEL_PACKAGE" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ] && apt-cache "${apt_opts[@]}" show "$KERNEL_PACKAGE" 2>/dev/null |
		grep -q '^Depends:.*linux-base'; then
		pkg=$KERNEL_PACKAGE
	fi
	# a metapackage moved on to another series: this series' newest build
	if [ -n "$pkg" ] && [ -n "${KERNEL_RELEASE_PREFIX:-}" ] &&
		[[ ${pkg#linux-image-} != "$KERNEL_RELEASE_PREFIX"* ]]; then
		pkg=$(apt-cache "${apt_opts[@]}" pkgnames "linux-image-$KERNEL_RELEASE_PREFIX" 2>/dev/null |
			grep -E -- '^linux-image-[0-9.]+(\+deb[0-9]+|-[0-9]+)-amd64$' | sort -V | tail -1)
	fi
	if [ -z "$pkg" ]; then
		# No package lists (offline, or apt-get update never ran): the last one used.
		KV=$(cat "$CACHE/kernels/$name.release" 2>/dev/null)
		KDIR=$CACHE/kernels/$KV
		[ -n "$KV" ] && [ "$(cat "$KDIR/.complete" 2>/dev/null)" = "$GUEST_MODULES" ] && return 0
		WHY="apt-cache knows no $KERNEL_PACKAGE, or no linux-image-<release> behind it (apt-get update?)"
		# the private lists were never fetched: the registry may be out of reach
		if [ -n "$APT_DIR" ] && [ ! -f "$APT_DIR/updated" ] && [ -f "$APT_DIR/update.log" ]; then
			local known=$WHY
			download_failed "$APT_DIR/update.log" "the package lists of $KERNEL_PACKAGE"
			[ -n "$UNREACHABLE" ] || WHY=$known
		fi
		return 1
	fi
	KV=${pkg#linux-image-}
	KDIR=$CACHE/kernels/$KV
	# .complete names the modules picked: a cache made for fewer is made again.
	if [ "$(cat "$KDIR/.complete" 2>/dev/null)" != "$GUEST_MODULES" ]; then
		mkdir -p "$CACHE/deb" "$CACHE/kernels" || { WHY="cannot create $CACHE"; return 1; }
		x=$(mktemp -d "$CACHE/kernels/.extract.XXXXXX")
		for p in $(kernel_packages "$pkg"); do
			deb=$(ls "$CACHE/deb/${p}_"*.deb 2>/dev/null | head -1)
			if [ -z "$deb" ]; then
				echo "  fetching $p"
				if ! apt_download "$log" "$p"; then
					rm -rf "$x"
					download_failed "$log" "$p"
					return 1
				fi
				deb=$(ls "$CACHE/deb/${p}_"*.deb 2>/dev/null | head -1)
			fi
			echo "  extracting $deb"
			if ! dpkg-deb -x "$deb" "$x/pkg" 2>"$log"; then
				rm -rf "$x"
				WHY="dpkg-deb -x $deb failed:$(tail_of "$log" 5)"
				return 1
			fi
		done
		# 6.x: /boot/vmlinuz-VERSION and /lib/modules; 7.x: all in /usr/lib/modules/VERSION
		root=$x/pkg
		[ -d "$root/lib/modules/$KV" ] || root=$x/pkg/usr
		boot=$root/lib/modules/$KV
		[ -e "$x/pkg/boot/vmlinuz-$KV" ] && boot=""
		if [ ! -d "$root/lib/modules/$KV/kernel" ]; then
			rm -rf "$x"
			WHY="$(kernel_packages "$pkg" | tr '\n' ' ')hold no lib/modules/$KV/kernel"
			return 1
		fi
		# The package ships no modules.dep: make one to find the modules' dependencies.
		depmod -b "$root" "$KV" 2>"$log"
		mkdir -p "$x/out/modules"
		if [ -n "$boot" ]; then
			cp "$boot/vmlinuz" "$x/out/vmlinuz-$KV" && cp "$boot/config" "$x/out/config-$KV"
		else
			cp "$x/pkg/boot/vmlinuz-$KV" "$x/pkg/boot/config-$KV" "$x/out/"
		fi || { rm -rf "$x"; WHY="no vmlinuz or config of $KV in $(kernel_packages "$pkg" | tr '\n' ' ')"; return 1; }
		cp "$root/lib/modules/$KV"/modules.{order,builtin,builtin.modinfo} "$x/out/modules/"
		# Only these modules, uncompressed (busybox modprobe reads plain .ko).
		# shellcheck disable=SC2086 # a list
		for ko in $(for m in $GUEST_MODULES; do
			modprobe -d "$root" -S "$KV" --show-depends $m 2>>"$log"
		done | awk '$1 == "insmod" { print $2 }' | sort -u); do
			rel=${ko#"$root/lib/modules/$KV/"}
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
	UNREACHABLE=""
	DEB=$(ls "$CACHE/deb/${1}_${2}_"*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] && return 0
	mkdir -p "$CACHE/deb" || { WHY="cannot create $CACHE/deb"; return 1; }
	echo "  fetching $1 $2" >&2
	if ! apt_download "$log" "$1=$2"; then
		download_failed "$log" "$1=$2"
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
