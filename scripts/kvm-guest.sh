#!/usr/bin/env bash
# Runs a command as root in a KVM-capable guest: Debian's own kernel under
# QEMU/TCG (SVM, kvm_amd as a module) whose root file system is this host's,
# shared read-only under a writable overlay, with the current directory
# shared read-write. For hosts without /dev/kvm, and for the MMU and probe
# modes this host lacks (nested paging, the TDP MMU, fentry and kprobes).
#
# Usage: scripts/kvm-guest.sh [--kernel 6.1|6.12|7.2|7.3] [--npt 0|1] [--tdp-mmu Y|N]
#                             [--patched] [--mem SIZE] [--timeout SECS] [-v] -- COMMAND [ARG...]
# --patched loads KVM's modules built from kernel-patches/ for that kernel
# (scripts/kernel-patches.sh build KERNEL) instead of Debian's.
# The command runs in the current directory with the caller's environment;
# its stdout and stderr are streamed here and its exit status is ours.
# Files it writes under the current directory are on the host afterwards;
# everything else it writes (/tmp, /etc, ...) lives in the guest's memory
# and is gone when the guest powers off.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage() {
	sed -n 's/^# Usage: /usage: /p; s/^#  \{20,\}/       /p' "$0" | sed '/^#/d'
	exit 0
}
die() {
	echo "kvm-guest: $*" >&2
	exit 2
}

kernel=6.12 npt=0 tdp_mmu=Y mem=4G timeout=${KVMMMU_GUEST_TIMEOUT:-3600} verbose="" patched=""
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a value"; kernel=$2; shift 2 ;;
	--npt) [ $# -ge 2 ] || die "--npt needs a value"; npt=$2; shift 2 ;;
	--tdp-mmu) [ $# -ge 2 ] || die "--tdp-mmu needs a value"; tdp_mmu=$2; shift 2 ;;
	--patched) patched=1; shift ;;
	--mem) [ $# -ge 2 ] || die "--mem needs a value"; mem=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs a value"; timeout=$2; shift 2 ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage ;; # to stdout, exit 0: asked for
	--) shift; break ;;
	*) die "unknown option '$1' (--help lists them)" ;;
	esac
done
[ $# -gt 0 ] || die "no command: kvm-guest.sh [OPTIONS] -- COMMAND [ARG...] (--help)"
conf=$ROOT/tests/vm/kernels/$kernel.conf
[ -f "$conf" ] || die "no kernel '$kernel' (kernels: $(cd "$ROOT/tests/vm/kernels" && ls -- *.conf | sed 's/\.conf$//' | tr '\n' ' '))"
case $npt in 0 | 1) ;; *) die "--npt takes 0 or 1, not '$npt'" ;; esac
case $tdp_mmu in Y | N) ;; *) die "--tdp-mmu takes Y or N, not '$tdp_mmu'" ;; esac
case $timeout in *[!0-9]* | '') die "--timeout takes whole seconds, not '$timeout'" ;; esac
[[ $mem =~ ^[0-9]+[MG]$ ]] || die "--mem takes a size such as 4G or 2048M, not '$mem'"
for t in qemu-system-x86_64 busybox cpio depmod modprobe dpkg-deb apt-get apt-cache; do
	command -v $t >/dev/null || die "$t is missing (sudo make deps installs it)"
done
mods=""
if [ -n "$patched" ]; then
	mods=$("$ROOT/scripts/kernel-patches.sh" built "$kernel") ||
		die "--patched: no modules built from kernel-patches/ for $kernel (scripts/kernel-patches.sh build $kernel)"
	[[ $mods != *[[:space:]]* ]] || die "--patched: the modules' folder '$mods' has spaces (the kernel command line cannot carry it)"
fi
[ "$(id -u)" = 0 ] || die "run as root: the guest shares this host's root file system"
# The guest mounts the current directory at its own path: it must be one.
cwd=$(pwd -P)
[ "$cwd" != / ] || die "run from a directory other than /: it is shared read-write"

CACHE=${KVMMMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmmmu}
TMP=$(mktemp -d /tmp/kvm-guest.XXXXXX)
qemu_pid=""
cleanup() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tail_of() {
	[ -s "$1" ] && tail -n "${2:-15}" "$1" | tr -d '\r' | sed 's/^/    /'
}
# shellcheck source=tests/vm/kernels/6.12.conf
source "$conf"
# shellcheck source=scripts/lib/distro-kernel.sh
source "$ROOT/scripts/lib/distro-kernel.sh"
fetch_kernel "$kernel" >&2 || die "$WHY"

# The initramfs: busybox, the modules, the init; cached by their content.
key=$( (cat "$ROOT/scripts/lib/kvm-guest-init" "$(command -v busybox)"; echo "$KV") | md5sum | cut -c1-12)
initrd=$CACHE/guest/$KV-$key.cpio.gz
if [ ! -s "$initrd" ]; then
	r=$TMP/initrd
	mkdir -p "$r"/{bin,dev,proc,sys,lib/modules} "$CACHE/guest" || die "cannot create $CACHE/guest"
	cp "$(command -v busybox)" "$r/bin/busybox"
	cp -R "$KDIR/modules" "$r/lib/modules/$KV"
	depmod -b "$r" "$KV" || die "depmod failed for $KV"
	install -m 755 "$ROOT/scripts/lib/kvm-guest-init" "$r/init"
	# a name of this process's own: guests started side by side build it at once, and
	# each renames its whole copy into place
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.$$.tmp" &&
		mv "$initrd.$$.tmp" "$initrd" || die "cannot write $initrd"
	# older ones, of another init or busybox
	find "$CACHE/guest" -name "$KV-*.cpio.gz" ! -name "${initrd##*/}" -delete
	rm -rf "$r"
fi

# The command, as bash runs it there: the caller's environment (but what
# names this shell or this terminal), the directory, the words as given.
xfer=$TMP/xfer
mkdir -p "$xfer"
echo "$cwd" >"$xfer/cwd"
{
	echo "# written by scripts/kvm-guest.sh"
	export -p | grep -Ev '^declare -x (SHLVL|_|OLDPWD|PWD|TERM|TMUX|TMUX_PANE|STY|WINDOW|SSH_[A-Z_]*|DISPLAY)='
	printf 'cd %q || exit 125\n' "$cwd"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$xfer/cmd"

loglevel=1
[ -n "$verbose" ] && loglevel=7
# shellcheck disable=SC2054 # the commas are QEMU's
qemu=(qemu-system-x86_64 -machine q35 -accel tcg,thread=single -cpu EPYC -smp 2 -m "$mem"
	-display none -vga none -monitor none -nic none -no-reboot
	-kernel "$KDIR/vmlinuz-$KV" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 quiet loglevel=$loglevel kvmguest_npt=$npt kvmguest_tdp_mmu=$tdp_mmu kvmguest_loglevel=$loglevel${mods:+ kvmguest_patched=$mods}"
	-serial "file:$TMP/console.log"
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$cwd,mount_tag=work,security_model=none,multidevs=remap"
	-virtfs "local,path=$xfer,mount_tag=xfer,security_model=none"
	-device virtio-serial-pci
	-chardev "pipe,id=out,path=$TMP/out" -device virtserialport,chardev=out,name=kvmguest.stdout
	-chardev "pipe,id=err,path=$TMP/err" -device virtserialport,chardev=err,name=kvmguest.stderr)
[ -n "$verbose" ] && echo "kvm-guest: $kernel ($KV)${mods:+ patched}, npt=$npt, tdp_mmu=$tdp_mmu, $mem: ${qemu[*]}" >&2
start=$(date +%s)
# QEMU's own messages to a log. The command's output comes through FIFOs
# (QEMU's pipe chardev: NAME.out is what the guest writes), copied to our
# stdout and stderr as they are: whatever those are, and at their offsets.
mkfifo "$TMP/out.in" "$TMP/out.out" "$TMP/err.in" "$TMP/err.out" || die "mkfifo failed in $TMP"
cat "$TMP/out.out" &
cat_out=$!
cat "$TMP/err.out" >&2 &
cat_err=$!
timeout --kill-after=10 "$timeout" "${qemu[@]}" </dev/null >"$TMP/qemu.log" 2>&1 &
qemu_pid=$!
wait $qemu_pid
rc=$?
qemu_pid=""
# A QEMU that never opened the FIFOs left the copies waiting: an opener
# (read-write: it never blocks) releases them, and its close is their end.
exec 5<>"$TMP/out.out" 6<>"$TMP/err.out"
exec 5>&- 6>&-
wait $cat_out $cat_err
[ -n "$verbose" ] && echo "kvm-guest: powered off after $(($(date +%s) - start)) s; console:" >&2 &&
	tail_of "$TMP/console.log" 40 >&2
if [ -s "$xfer/status" ]; then
	exit "$(cat "$xfer/status")"
fi
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "kvm-guest: no exit status after ${timeout}s (--timeout); console:" >&2
else
	echo "kvm-guest: the guest stopped without an exit status (qemu exit $rc); console:" >&2
fi
tail_of "$TMP/console.log" >&2
tail_of "$TMP/qemu.log" 5 >&2
exit 125
