#!/usr/bin/env bash
# Boots Debian's own kernels under QEMU (TCG, -cpu EPYC: SVM with nested
# paging) with the kvmmmu binaries built here, runs tests/vm/guest-checks.sh
# in each, and reports the guest's PASS/FAIL/SKIP lines as vm/KERNEL/CHECK.
#
# Usage: tests/vm/run.sh [KERNEL...]   (KERNEL: a tests/vm/kernels/*.conf name)
# Environment:
#   KVMMMU_VM_KERNELS  kernels to boot, space or comma separated (default: all)
#   KVMMMU_VM_CHECKS   check groups to run in the guest, shell patterns
#                      (modprobe always runs; default: all)
#   KVMMMU_VM_CACHE    downloaded packages and extracted kernels
#                      (default: ${XDG_CACHE_HOME:-~/.cache}/kvmmmu)
#   KVMMMU_VM_STALL    seconds a boot's console may stay silent before the guest
#                      counts as hung (default 900; the longest quiet group,
#                      tdp-ab, takes about 300 s under load)
#   KVMMMU_VM_TIMEOUT  seconds one boot may take in all (default 3600: a full
#                      run takes 900-1000 s when two kernels share the machine)
#   KVMMMU_VM_VERBOSE  1: libbpf's messages in the guest's .out files
#   KVMMMU_PATCH_RUNS  runs a side of each kernel-patches/ measurement
#                      (default 1; make test-patches: 4, with kvmmmu-diff)
#   KVMMMU_VM_LOGLEVEL the guest's console loglevel (default 1: results only)
#   OUTPUT             the build folder (default build); artifacts go to
#                      $OUTPUT/vm/KERNEL/
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib.sh
source tests/lib.sh

VMDIR=tests/vm
CACHE=${KVMMMU_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmmmu}
TIMEOUT=${KVMMMU_VM_TIMEOUT:-3600}
STALL=${KVMMMU_VM_STALL:-900}
LOGLEVEL=${KVMMMU_VM_LOGLEVEL:-1}
CHECKS=$(echo "${KVMMMU_VM_CHECKS:-}" | tr ' ' ,)
MARK=@@KVMMMU@@
KERNELS=${*:-${KVMMMU_VM_KERNELS:-$(cd $VMDIR/kernels && ls -- *.conf | sed 's/\.conf$//' | sort -V)}}
KERNELS=$(echo "$KERNELS" | tr , ' ')
APPS="kvmmmu-check kvmmmu-hist kvmmmu-load kvmmmu-diff kvmmmu-exporter kvmmmu-top"
# SVM with 4-level nested paging (-cpu max has la57: 5-level NPT). Two CPUs
# for the two vCPU threads, emulated by one host thread: with multi-threaded
# TCG the guest hung (soft lockups in kvmmmu-check, then silence) in about
# one boot in four, while patching kernel text for fentry/kprobes.
# shellcheck disable=SC2054 # the comma is QEMU's
QEMU_CPU=(-accel tcg,thread=single -cpu EPYC -smp 2)

# The last lines of FILE, indented, as a failure's reason.
tail_of() {
	if [ -s "$1" ]; then
		echo
		tail -n "${2:-15}" "$1" | tr -d '\r' | sed 's/^/    /'
	else
		echo " (empty)"
	fi
}

missing=""
for t in qemu-system-x86_64 busybox cpio depmod modprobe dpkg-deb apt-get apt-cache xz \
	gzip timeout md5sum; do
	command -v $t >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
	skip vm "missing:$missing (sudo make deps installs them)"
	exit 0
fi
for a in $APPS; do
	if [ ! -x "$BUILD/$a" ]; then
		fail vm "$BUILD/$a is not built (run make)"
		exit 0
	fi
done

# shellcheck source=scripts/lib/distro-kernel.sh
source scripts/lib/distro-kernel.sh

# copy_with_libs ROOT FILE...: FILE and the shared libraries it needs, at their paths.
copy_with_libs() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		for lib in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# make_nested_kit ROOT: what the "qemu" check group boots a nested guest with:
# Debian's QEMU with its libraries and the firmware a -kernel boot reads (QEMU
# finds them at ../share from its binary), this same kernel, a busybox
# initramfs running tests/vm/l2-init, and the QMP client tests/tools/qmp.
make_nested_kit() {
	local r=$1 qemu l2=$1.l2
	qemu=$(command -v qemu-system-x86_64)
	mkdir -p "$r/usr/bin" "$r/usr/share/seabios" "$r/usr/share/qemu" "$r/kvmmmu/l2" \
		"$l2"/{bin,dev,proc,mnt} || return 1
	cp "$qemu" "$r/usr/bin/" && copy_with_libs "$r" "$qemu" || return 1
	cp -L /usr/share/seabios/bios-256k.bin "$r/usr/share/seabios/" || return 1
	cp -L /usr/share/qemu/kvmvapic.bin /usr/share/qemu/linuxboot_dma.bin "$r/usr/share/qemu/" ||
		return 1
	cp "$KDIR/vmlinuz-$KV" "$r/kvmmmu/l2/vmlinuz" || return 1
	cp "$(command -v busybox)" "$l2/bin/busybox" && cp $VMDIR/l2-init "$l2/init" &&
		chmod 755 "$l2/init" || return 1
	(cd "$l2" && find . | cpio -o -H newc --quiet | gzip -1) >"$r/kvmmmu/l2/initrd.gz" || return 1
	rm -rf "$l2"
	cp "$BUILD/tests/tools/qmp" "$r/kvmmmu/qmp"
}

# make_initramfs NAME OUT: busybox, the kvmmmu binaries built here with their
# libraries (the same binaries on every kernel: that is the CO-RE proof),
# KVM's modules and the guest scripts.
make_initramfs() {
	local name=$1 out=$2 r=$TMP/$1.root a
	mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,run,kvmmmu,"lib/modules/$KV"}
	cp "$(command -v busybox)" "$r/bin/busybox"
	copy_with_libs "$r" "$r/bin/busybox"
	for a in $APPS; do
		cp "$BUILD/$a" "$r/kvmmmu/$a"
		copy_with_libs "$r" "$BUILD/$a"
	done
	cp -R "$KDIR/modules/." "$r/lib/modules/$KV/"
	depmod -b "$r" "$KV" || return 1
	make_nested_kit "$r" || return 1
	cp $VMDIR/init "$r/init"
	# guest-checks.sh and the groups it sources (guest-probes.sh, -mmu, -qemu, ...)
	cp $VMDIR/guest-*.sh "$r/kvmmmu/"
	# the selftests group's: this kernel's selftests (or why they are not
	# there, for the guest to report) and kvmpin
	if [ -n "$SELFTESTS_DIR$SELFTESTS_WHY" ]; then
		mkdir -p "$r/kvmmmu/selftests"
		if [ -n "$SELFTESTS_DIR" ]; then
			cp "$SELFTESTS_DIR"/* "$r/kvmmmu/selftests/" || return 1
		else
			echo "$SELFTESTS_WHY" >"$r/kvmmmu/selftests/BUILD-FAILED"
		fi
		cp "$BUILD/tests/tools/kvmpin" "$r/kvmmmu/kvmpin" && copy_with_libs "$r" "$BUILD/tests/tools/kvmpin" ||
			return 1
	fi
	# KVM built from kernel-patches/, when the cache has it for this series
	if mods=$("$VMDIR/../../scripts/kernel-patches.sh" built "$name" 2>/dev/null); then
		mkdir -p "$r/kvmmmu/patched" && cp "$mods"/kvm.ko "$mods"/kvm-amd.ko "$r/kvmmmu/patched/" &&
			cp "$VMDIR/../../kernel-patches/$name/series" "$r/kvmmmu/patched/series"
	fi
	cp $VMDIR/../tools/outcomes.awk "$r/kvmmmu/outcomes.awk"
	cp $VMDIR/../../scripts/tdp-ab.sh "$r/kvmmmu/tdp-ab.sh"
	cp "$VMDIR/kernels/$name.conf" "$r/kvmmmu/kernel.conf"
	chmod 755 "$r/init"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
}

# collect NAME LOG DEST: re-emits the guest's results and writes its files to DEST.
collect() {
	local name=$1 log=$2 dest=$3 line verdict rest file sum files=0
	tr -d '\r' <"$log" | sed -n "s/.*$MARK //p" >"$TMP/$name.marked"
	# FILE-BEGIN NAME, then F NAME LINE for each line, then FILE-END NAME MD5
	awk -v d="$dest" '$1 == "FILE-BEGIN" { f = d "/" $2; printf "" > f; next }
		$1 == "F" && f != "" { sub(/^F [^ ]* ?/, ""); print >> f }
		$1 == "FILE-END" { close(f); f = "" }' "$TMP/$name.marked"
	while IFS= read -r line; do
		verdict=${line%% *}
		rest=${line#* }
		case $verdict in
		PASS) pass "vm/$name/$rest" ;;
		FAIL) report "FAIL vm/$name/$rest" ;;
		SKIP) report "SKIP vm/$name/$rest" ;;
		INFO) echo "  vm/$name: $rest" ;;
		FILE-END)
			file=${rest%% *}
			sum=${rest#* }
			if [ "$(md5sum <"$dest/$file" | cut -d' ' -f1)" = "$sum" ]; then
				files=$((files + 1))
			else
				fail "vm/$name/artifact-$file" "garbled on the serial console (md5 mismatch)"
			fi
			;;
		esac
	done < <(grep -E '^(PASS|FAIL|SKIP|INFO|FILE-END) ' "$TMP/$name.marked")
	echo "  vm/$name: console log and $files files from the guest in $dest/"
}

# wanted GROUP: whether KVMMMU_VM_CHECKS selects GROUP (as the guest's want does)
wanted() {
	local p pats
	[ -z "$CHECKS" ] && return 0
	IFS=, read -ra pats <<<"$CHECKS"
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2254 # a pattern
		case $1 in $p) return 0 ;; esac
	done
	return 1
}

# selftests NAME: sets SELFTESTS_DIR to this kernel's KVM selftests, built
# once (scripts/build-selftests.sh), or SELFTESTS_WHY to why they are not.
selftests() {
	local log=$TMP/$1.selftests
	SELFTESTS_DIR="" SELFTESTS_WHY=""
	wanted selftests || return 0
	if [ ! -x "$BUILD/tests/tools/kvmpin" ]; then
		SELFTESTS_WHY="$BUILD/tests/tools/kvmpin is not built (make test-vm builds it)"
	elif ! SELFTESTS_DIR=$(KVMMMU_VM_CACHE=$CACHE scripts/build-selftests.sh "$1" 2>"$log"); then
		SELFTESTS_DIR=""
		SELFTESTS_WHY="scripts/build-selftests.sh $1 failed:$(tail_of "$log" 12)"
	fi
	sed 's/^/  /' "$log" 2>/dev/null
}

# run_kernel NAME: fetch, build, boot, collect.
run_kernel() {
	local name=$1 conf=$VMDIR/kernels/$1.conf dest start rc log append
	KERNEL_PACKAGE=""
	if [ ! -f "$conf" ]; then
		fail "vm/$name" "no $conf (kernels: $(cd $VMDIR/kernels && ls -- *.conf | tr '\n' ' '))"
		return
	fi
	# shellcheck source=tests/vm/kernels/6.1.conf
	source "$conf"
	start=$(date +%s)
	if ! fetch_kernel "$name"; then
		# offline: no machine here can fetch it (download_failed); else a real failure
		if [ -n "${UNREACHABLE:-}" ]; then skip "vm/$name/fetch" "$WHY"; else fail "vm/$name/fetch" "$WHY"; fi
		return
	fi
	selftests "$name"
	dest=$BUILD/vm/$name
	rm -rf "$dest"
	mkdir -p "$dest"
	if ! make_initramfs "$name" "$dest/initramfs.cpio.gz" >"$TMP/$name.mkinitramfs" 2>&1; then
		fail "vm/$name/initramfs" "$(tail_of "$TMP/$name.mkinitramfs" 5)"
		return
	fi
	echo "  vm/$name: booting $KV (qemu ${QEMU_CPU[*]}, timeout ${TIMEOUT}s)"
	log=$dest/console.log
	# kvmmmu_* are not kernel parameters: the kernel hands them to /init as its environment.
	append="console=ttyS0 panic=-1 quiet loglevel=$LOGLEVEL kvmmmu_loglevel=$LOGLEVEL"
	append="$append kvmmmu_checks=$CHECKS${KVMMMU_VM_VERBOSE:+ kvmmmu_verbose=1}"
	append="$append${KVMMMU_PATCH_RUNS:+ kvmmmu_patch_runs=$KVMMMU_PATCH_RUNS}"
	timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 -machine q35 "${QEMU_CPU[@]}" \
		-m 2G -kernel "$KDIR/vmlinuz-$KV" -initrd "$dest/initramfs.cpio.gz" -append "$append" \
		-display none -vga none -monitor none -serial "file:$log" -no-reboot -nic none \
		</dev/null >"$dest/qemu.log" 2>&1 &
	watch_console "$log" $!
	wait $!
	rc=$?
	collect "$name" "$log" "$dest"
	# guest-checks.sh exits 42 at its end: anything else, it stopped early
	if grep -q "$MARK DONE" "$log" && ! grep -q "$MARK CHECKS-EXIT 42" "$log"; then
		fail "vm/$name/checks-ran-to-the-end" "guest-checks.sh stopped early ($(grep -a "$MARK CHECKS-EXIT" "$log" | tr -d '\r' | cut -d' ' -f2-)):$(grep -av "^$MARK" "$log" | grep -a 'guest-\|sh: ' | tail -3 | sed 's/^/    /')"
	fi
	if ! grep -q "$MARK DONE" "$log"; then
		if [ -e "$log.stalled" ]; then
			fail "vm/$name/boot" "the console was silent for ${STALL}s (KVMMMU_VM_STALL): the guest hangs; console:$(tail_of "$log")"
		elif [ $rc = 124 ] || [ $rc = 137 ]; then
			fail "vm/$name/boot" "no result after ${TIMEOUT}s (KVMMMU_VM_TIMEOUT); console:$(tail_of "$log")"
		else
			fail "vm/$name/boot" "qemu exited $rc before the checks finished; console:$(tail_of "$log")$(tail_of "$dest/qemu.log" 3)"
		fi
	fi
	echo "  vm/$name: $KV, $(($(date +%s) - start)) s"
}

# Stops the boot PID (timeout(1), which passes the signal on to QEMU) once
# LOG has not grown for STALL seconds, and says so in LOG.stalled: a slow
# machine's boot goes on as long as its checks report, a hung one does not.
watch_console() {
	local log=$1 pid=$2 size last=-1 since=$SECONDS
	rm -f "$log.stalled"
	while kill -0 "$pid" 2>/dev/null; do
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size
			since=$SECONDS
		elif [ $((SECONDS - since)) -ge "$STALL" ]; then
			: >"$log.stalled"
			kill "$pid"
			return
		fi
		sleep 5
	done
}

# Each guest is one host thread (TCG, thread=single): with a CPU for each,
# the kernels boot side by side, and their reports follow in order.
set -- $KERNELS
if [ $# -gt 1 ] && [ "$(nproc)" -ge $# ]; then
	echo "  vm: booting $* side by side ($(nproc) CPUs)"
	for k in "$@"; do
		run_kernel "$k" >"$TMP/$k.report" 2>&1 &
	done
	wait
	for k in "$@"; do
		cat "$TMP/$k.report"
	done
else
	for k in "$@"; do
		run_kernel "$k"
	done
fi
exit 0
