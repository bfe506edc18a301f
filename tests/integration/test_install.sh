#!/usr/bin/env bash
# make install: every command, and a man page for each that renders cleanly.
source "$(dirname "$0")/../lib.sh"

dest=$TMP/inst
# -o all: install what is built (the sanitizer pass must not relink its binaries)
make -s -o all install DESTDIR="$dest" OUTPUT="$BUILD" >"$TMP/install.out" 2>&1
# make's status, kept before the reason's command substitution resets $?
rc=$?
check install/runs "exit $rc: $(tail -3 "$TMP/install.out")" test $rc = 0
for cmd in kvmmmu-load kvmmmu-hist kvmmmu-check kvmmmu-top kvmmmu-diff kvmmmu-exporter; do
	check "install/$cmd" "not installed" test -x "$dest/usr/local/sbin/$cmd"
	page=$dest/usr/local/share/man/man1/$cmd.1
	check "install/man-page-$cmd" "no man page" test -s "$page"
	# rendered as man does, warnings and all (man-db: make deps installs it)
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$page" >"$TMP/man.out" 2>"$TMP/man.err"
		check "install/man-$cmd" "$(head -3 "$TMP/man.err")" \
			eval 'test -s "$TMP/man.out" && ! test -s "$TMP/man.err" && grep -q "^NAME" "$TMP/man.out"'
	else
		fail "install/man-$cmd" "man is not installed (make deps installs man-db)"
	fi
done
unit=$dest/usr/local/lib/systemd/system/kvmmmu-exporter.service
check install/exporter-unit "$(grep ExecStart "$unit" 2>&1)" grep -qx 'ExecStart=/usr/local/sbin/kvmmmu-exporter $KVMMMU_EXPORTER_ARGS' "$unit"
if command -v systemd-analyze >/dev/null; then
	# the unit's options as systemd reads them (a typo is an unknown-key
	# warning, with exit 0); --man=no: the man page is not installed where
	# man looks, and a missing unit must fail, not verify as silence
	sed "s|/usr/local/sbin/kvmmmu-exporter|$dest/usr/local/sbin/kvmmmu-exporter|" "$unit" >"$TMP/kvmmmu-exporter.service"
	out=$(systemd-analyze verify --man=no "$TMP/kvmmmu-exporter.service" 2>&1)
	rc=$?
	check install/exporter-unit-verifies "exit $rc: $out" test $rc = 0 -a -z "$out"
	# systemd's own exposure score of the hardening (0 best, 10 worst): "OK" is under 5
	out=$(systemd-analyze security --offline=yes "$TMP/kvmmmu-exporter.service" 2>&1 | grep 'Overall exposure')
	level=$(sed -n 's/.*: \([0-9.]*\) .*/\1/p' <<<"$out")
	check install/exporter-unit-hardened "$out" eval 'awk -v l="$level" "BEGIN { exit !(l != \"\" && l < 5) }"'
else
	fail install/exporter-unit-verifies "systemd-analyze is not installed (make deps installs systemd)"
fi
exit 0
