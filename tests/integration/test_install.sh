#!/usr/bin/env bash
# make install: every command, and a man page for each that renders cleanly.
source "$(dirname "$0")/../lib.sh"

dest=$TMP/inst
# -o all: install what is built (the sanitizer pass must not relink its binaries)
make -s -o all install DESTDIR="$dest" OUTPUT="$BUILD" >"$TMP/install.out" 2>&1
check install/runs "$(tail -3 "$TMP/install.out")" test $? = 0
for cmd in kvmmmu-load kvmmmu-hist kvmmmu-check kvmmmu-top kvmmmu-diff; do
	check "install/$cmd" "not installed" test -x "$dest/usr/local/sbin/$cmd"
	page=$dest/usr/local/share/man/man1/$cmd.1
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$page" >"$TMP/man.out" 2>"$TMP/man.err"
		check "install/man-$cmd" "$(head -3 "$TMP/man.err")" \
			eval 'test -s "$TMP/man.out" && ! test -s "$TMP/man.err" && grep -q "^NAME" "$TMP/man.out"'
	else
		check "install/man-$cmd" "no man page" test -s "$page"
	fi
done
exit 0
