#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs COMMAND as on a host of the CI kind without /dev/kvm (some have none),
# on a host that has it: in a mount namespace of its own whose /dev is a
# copy without the kvm node (the pty, shm and mqueue mounts bound into it).
# Nothing outside the namespace changes; the copy is removed at the end.
#
# Usage: sudo scripts/without-kvm.sh COMMAND [ARG...]
#   e.g. sudo scripts/without-kvm.sh make test   (the guest passes run it all)
set -u
die() { echo "without-kvm.sh: $*" >&2; exit 2; }
[ $# -gt 0 ] || die "no command: without-kvm.sh COMMAND [ARG...]"
[ "$(id -u)" = 0 ] || die "run as root: it makes a mount namespace"

if [ -z "${KVMMMU_WITHOUT_KVM_INNER:-}" ]; then
	dev=$(mktemp -d /tmp/kvmmmu-dev.XXXXXX) || exit 1
	KVMMMU_WITHOUT_KVM_INNER=$dev unshare -m --propagation private "$0" "$@"
	rc=$?
	rm -rf "$dev"
	exit $rc
fi

dev=$KVMMMU_WITHOUT_KVM_INNER
unset KVMMMU_WITHOUT_KVM_INNER
cp -a /dev/. "$dev/" 2>/dev/null # device nodes as they are; mounts below
rm -f "$dev/kvm"
for m in pts shm mqueue hugepages; do
	if mountpoint -q "/dev/$m"; then
		mkdir -p "$dev/$m"
		mount --rbind "/dev/$m" "$dev/$m" || die "cannot bind /dev/$m"
	fi
done
mount --bind "$dev" /dev || die "cannot bind the copy of /dev"
[ ! -e /dev/kvm ] || die "/dev/kvm is still there"
exec "$@"
