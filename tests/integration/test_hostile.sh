#!/usr/bin/env bash
# The hostile corpus: every tests/hostile/cases* file, one case a line,
#   NAME | NEEDS | EXIT | STDERR-ERE | COMMAND
# (split on the first four " | ": COMMAND may hold "|"; blank lines and
# lines starting with "#" are comments). Each COMMAND runs in bash -c, in a
# fresh directory $T, with B (the build), F (tests/hostile/fixtures) and T
# set, stdin /dev/null, 20 s at most. It passes when it exits EXIT, a line
# of its stderr matches STDERR-ERE ("-": anything) and nothing crashed: no
# sanitizer report, no death by a signal or the timeout unless EXIT is that
# status. An error is one line (the house rule): with EXIT 1 or 2, stderr
# must be exactly one line, unless EXIT is written "N*". NEEDS is "-" or a
# comma list of kvm (root and /dev/kvm), root, cmd:PROG (PROG installed);
# a case whose needs are not met is a SKIP saying which. docs/testing.md
# says how to add one. No "# needs: /dev/kvm" line: the cases that need KVM
# say so each, and the rest runs on every host.
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/hostile/fixtures
KVM_WHY=$(need_kvm) && KVM_WHY=""
# statuses of a crash or of the timeout: 124 (timeout), 137 (its KILL),
# 132 SIGILL, 134 SIGABRT (ASan's abort_on_error too), 135 SIGBUS,
# 136 SIGFPE, 139 SIGSEGV
CRASH=" 124 132 134 135 136 137 139 "
SANITIZER='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|UndefinedBehaviorSanitizer'
# ... and the shell's word for a death by a signal (the case's or a command's in it)
KILLED='Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception|core dumped'

trim() { local s=$1; s=${s#"${s%%[! ]*}"}; printf '%s' "${s%"${s##*[! ]}"}"; }

# unmet NEEDS: prints why the case cannot run here (nothing when it can);
# status 2 for a need the runner does not know
unmet() {
	local n why=""
	[ "$1" = - ] && return 0
	for n in ${1//,/ }; do
		case $n in
		kvm) [ -z "$KVM_WHY" ] || why="$why${why:+, }$KVM_WHY" ;;
		root) [ "$(id -u)" = 0 ] || why="$why${why:+, }not root" ;;
		cmd:?*) command -v "${n#cmd:}" >/dev/null || why="$why${why:+, }no ${n#cmd:}" ;;
		*) return 2 ;;
		esac
	done
	printf '%s' "$why"
}

# run_case WHERE NAME NEEDS EXIT ERE COMMAND
run_case() {
	local where=$1 name=$2 needs=$3 want=$4 ere=$5 cmd=$6 why rc lines first strict=1 t bad=""
	if ! why=$(unmet "$needs"); then
		fail "hostile/$name" "$where: unknown NEEDS '$needs' (-, kvm, root, cmd:PROG)"
		return
	fi
	[ -z "$why" ] || { skip "hostile/$name" "$why"; return; }
	case $want in *\*) strict="" want=${want%\*} ;; esac
	t=$(mktemp -d "$TMP/case.XXXXXX")
	# (the subshell waits for timeout, not exec'ing it: a death by a signal
	# is then said on the case's stderr, not on the runner's)
	(
		cd "$t" || exit
		B=$BUILD F=$FIX T=$t timeout -k 5 20 bash -c "$cmd"
		exit
	) </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	rm -rf "$t"
	lines=$(wc -l <"$TMP/err")
	first=$(head -n 1 "$TMP/err" | cut -c 1-200)
	if [ "$rc" != "$want" ]; then
		bad="exit $rc (want $want)"
	elif grep -qE "$SANITIZER" "$TMP/err"; then
		bad="a sanitizer's report: $(grep -m 1 -E "$SANITIZER" "$TMP/err" | cut -c 1-200)"
	elif [[ $CRASH != *" $want "* ]] && grep -qE "$KILLED" "$TMP/err"; then
		bad="something in it crashed: $(grep -m 1 -E "$KILLED" "$TMP/err" | cut -c 1-200)"
	elif [ -n "$strict" ] && { [ "$want" = 1 ] || [ "$want" = 2 ]; } && [ "$lines" != 1 ]; then
		bad="$lines lines on stderr (an error is one; EXIT $want* allows more)"
	elif [ "$ere" != - ] && ! grep -qE -- "$ere" "$TMP/err"; then
		bad="stderr does not match /$ere/"
	fi
	if [ -z "$bad" ]; then
		pass "hostile/$name"
	else
		case $CRASH in *" $rc "*) [ "$rc" = "$want" ] || bad="$bad: crashed or timed out" ;; esac
		fail "hostile/$name" "$bad ($where); stderr $lines lines, first: $first"
	fi
}

declare -A seen
files=0
for f in "$ROOT"/tests/hostile/cases "$ROOT"/tests/hostile/cases.*; do
	[ -f "$f" ] || continue
	case ${f##*/} in cases | cases.[A-Za-z0-9_-]*) ;; *) continue ;; esac
	case ${f##*/} in *~ | *.orig | *.rej | *.swp) continue ;; esac
	files=$((files + 1))
	rel=tests/hostile/${f##*/}
	n=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		where=$rel:$n
		rest=$line
		fields=()
		for _ in 1 2 3 4; do
			case $rest in *" | "*) ;; *) break ;; esac
			fields+=("$(trim "${rest%%" | "*}")")
			rest=${rest#*" | "}
		done
		name=${fields[0]:-}
		cmd=$(trim "$rest")
		if [ ${#fields[@]} != 4 ] || [ -z "$cmd" ] || [ -z "${fields[1]}" ] || [ -z "${fields[3]}" ]; then
			fail "hostile/$where" "malformed case (want NAME | NEEDS | EXIT | STDERR-ERE | COMMAND): $(cut -c 1-120 <<<"$line")"
			continue
		fi
		if ! [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._/+-]*$ ]]; then
			fail "hostile/$where" "malformed case name '$name' (letters, digits, . _ / + -)"
			continue
		fi
		if ! [[ ${fields[2]} =~ ^[0-9]{1,3}\*?$ ]] || [ "${fields[2]%\*}" -gt 255 ]; then
			fail "hostile/$name" "$where: malformed EXIT '${fields[2]}' (0-255, or N* for any number of stderr lines)"
			continue
		fi
		if [ -n "${seen[$name]:-}" ]; then
			fail "hostile/$name" "$where: duplicate name (first at ${seen[$name]})"
			continue
		fi
		seen[$name]=$where
		run_case "$where" "$name" "${fields[1]}" "${fields[2]}" "${fields[3]}" "$cmd"
	done <"$f"
done
[ $files -gt 0 ] || fail hostile/cases "no tests/hostile/cases* file"
