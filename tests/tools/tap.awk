# TAP (as cmocka prints it) to the suite's result lines:
#   awk -v name=unit/test_x -f tests/tools/tap.awk <tap
# prints "PASS|FAIL|SKIP name/TEST[: reason]" per result, and every other
# line (cmocka's assertion details, a test's own output) indented by two.
# The forms, checked by tests/unit/test_tap.sh on tests/unit/tap/:
#   ok N - name, ok N name             PASS
#   not ok N - name                    FAIL
#   ok N - name # SKIP reason          SKIP (# skip, # Skipped: any case)
#   not ok N # SKIP name               SKIP: cmocka 1.1 puts the name there
#   ... # TODO reason                  not a failure: PASS if ok, else SKIP
#   Bail out! reason                   FAIL
#   1..N with another number of results: FAIL (the binary died mid-run)
# A skip's reason is its directive's text or, for cmocka's form, the line
# just before it when that says "SKIP: reason" (what our tests print). A
# failure's reason is the "# " lines cmocka prints after it, so the summary
# says why: its line waits for them, and they are not printed twice.
BEGIN { plan = -1; results = 0; pending = ""; failed = "" }

function emit(verdict, test, reason) {
	print verdict " " name "/" test (reason != "" ? ": " reason : "")
}

function flush() {
	if (failed != "")
		emit("FAIL", failed, why != "" ? why : "not ok")
	failed = why = ""
}

# 1..N, optionally "1..0 # SKIP reason" (nothing to run)
/^1\.\.[0-9]+/ {
	flush()
	plan = $0
	sub(/^1\.\./, "", plan)
	sub(/[^0-9].*/, "", plan)
	plan += 0
	if (plan == 0 && match($0, /#[ \t]*[Ss][Kk][Ii][Pp]/)) {
		reason = substr($0, RSTART + RLENGTH)
		sub(/^[ \t]+/, "", reason)
		emit("SKIP", "all", reason)
	}
	pending = ""
	next
}

/^(not )?ok([ \t]|$)/ {
	flush()
	results++
	ok = ($0 !~ /^not /)
	line = $0
	sub(/^(not )?ok[ \t]*/, "", line)
	num = ""
	if (match(line, /^[0-9]+/)) {
		num = substr(line, 1, RLENGTH)
		line = substr(line, RLENGTH + 1)
	}
	sub(/^[ \t]*(-[ \t]*)?/, "", line)
	# description and directive: the first "#" (TAP's "\#" is a literal #)
	desc = line; dir = ""
	if (match(line, /(^|[^\\])#/)) {
		desc = substr(line, 1, RSTART - 1 + (RLENGTH == 2))
		dir = substr(line, RSTART + RLENGTH)
		sub(/^[ \t]+/, "", dir)
	}
	sub(/[ \t]+$/, "", desc)
	kind = toupper(substr(dir, 1, 4))
	text = dir
	sub(/^[A-Za-z]+:?[ \t]*/, "", text)
	if (kind == "SKIP") {
		# cmocka 1.1.x: "not ok N # SKIP name", the reason on the line before
		if (desc == "") { desc = text; text = pending }
		if (desc == "") desc = "test " num
		emit("SKIP", desc, text != "" ? text : (pending != "" ? pending : "no reason given"))
	} else {
		if (desc == "") desc = "test " num
		if (kind == "TODO")
			emit(ok ? "PASS" : "SKIP", desc, ok ? "" : "TODO" (text != "" ? ": " text : ""))
		else if (ok)
			emit("PASS", desc, "")
		else
			failed = desc
	}
	pending = ""
	next
}

/^Bail out!/ {
	flush()
	bailed = 1
	reason = $0
	sub(/^Bail out![ \t]*/, "", reason)
	emit("FAIL", "bail-out", "Bail out!" (reason != "" ? " " reason : ""))
	pending = ""
	next
}

# cmocka's group summary ("# ok - tests", "# not ok - tests") says nothing new
/^#[ \t]*(not )?ok - / { pending = ""; next }

{
	# cmocka's "# " lines after a failure: its reason, printed there
	if (failed != "" && /^#/) {
		d = $0
		sub(/^#[ \t]*/, "", d)
		why = why (why != "" ? "; " : "") d
		next
	}
	flush()
	if ($0 ~ /^SKIP:/) {
		pending = $0
		sub(/^SKIP:[ \t]*/, "", pending)
	} else
		pending = ""
	print "  " $0
}

END {
	flush()
	if (bailed)
		exit
	if (plan < 0 && results == 0)
		emit("FAIL", "tap", "no TAP output")
	else if (plan >= 0 && results != plan)
		emit("FAIL", "tap", "plan 1.." plan " but " results " results: the binary died mid-run")
}
