#!/bin/sh
# Installs kvmmmu's build, test and benchmark dependencies from Debian 12's
# packages (uuid-dev: the 7.x KVM selftests link libuuid; man-db and
# systemd: test_install.sh renders the man pages and verifies the exporter's
# unit). Idempotent and quiet: does nothing when all are present.
set -eu
PKGS="make gcc libc6-dev clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
libcmocka-dev bpftrace qemu-system-x86 busybox-static cpio kmod xz-utils libncurses-dev tmux gnuplot-nox gdb strace
python3-scipy libmicrohttpd-dev libdeflate-dev nettle-dev libyaml-dev libcap-dev prometheus python3-prometheus-client curl openssl
pahole clang-format uuid-dev man-db systemd"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root: sudo make deps)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
