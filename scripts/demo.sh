#!/usr/bin/env bash
# The README's first command: trace the VMs running on this host for a few
# seconds, or, when there are none, kvmmmu's own workload (kvmmmu-load), and
# print the per-VM and per-vCPU summary.
set -u
out=${1:-build}
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (sudo make demo): loading BPF and using /dev/kvm need it" >&2
	exit 1
fi
if [ ! -c /dev/kvm ]; then
	# No KVM here (some hosts of the CI kind): the same demo, in a guest that has it.
	echo "== No /dev/kvm on this host: running the demo in a QEMU guest (Debian's 6.12 kernel, KVM with shadow paging; about 60 s)"
	exec "$(dirname "$0")/kvm-guest.sh" -- "$0" "$out"
fi
vms=$(for fd in /proc/[0-9]*/fd/*; do
	[ "$(readlink "$fd" 2>/dev/null)" = anon_inode:kvm-vm ] && echo "${fd#/proc/}"
done | cut -d/ -f1 | sort -u)
if [ -n "$vms" ]; then
	echo "== Tracing the VMs running here for 10 s: $(echo $vms)"
	exec "$out/kvmmmu-hist" --per-vcpu -u -d 10
fi
echo "== No VM is running here: tracing kvmmmu-load (2 vCPUs x 128 MiB, then 2 dirty-log passes)"
exec "$out/kvmmmu-hist" --per-vcpu -u -- "$out/kvmmmu-load" --vcpus 2 --mem 128M --dirty-log 2
