#!/usr/bin/python3
"""dashlint: checks kvmmmu's Grafana dashboards and lists their queries.

The checks follow grafana/dashboard-linter's rules, which cannot be installed
here (it needs the Go module proxy):

  dashlint.py lint FILE...         one line per problem, exit 1 if any
  dashlint.py queries FILE... [--rules RULES.yml] [--rate-interval 1m]
                                   every query, as SOURCE<TAB>EXPR, with
                                   Grafana's variables replaced so that a plain
                                   Prometheus can run it
  dashlint.py selftest             feeds the linter broken dashboards, exit 0
                                   if every problem is caught

lint checks: exactly one datasource variable, named "datasource"; "job" and
"instance" query variables, multi-select with includeAll and an allValue, on
${datasource}; every panel (rows' panels too) has a title, a description, a
unit (fieldConfig.defaults.unit) and the datasource
{"type": "prometheus", "uid": "${datasource}"}; every query (panel targets and
annotations) parses, has job=~"$job" and instance=~"$instance" on every
selector, and uses [$__rate_interval] as the range of every
rate/irate/increase/changes/delta/deriv; heatmap targets have format
"heatmap"; panel ids are unique.

Only the standard library is needed; PyYAML is used for --rules when present,
else a small reader of the layout kvmmmu-rules.yml uses.

The code: dashlint_promql.py (the PromQL reader and query checks),
dashlint_dash.py (reading and walking a dashboard), dashlint_lint.py,
dashlint_queries.py and dashlint_selftest.py (the three commands); this file
is the command line.
"""

import argparse
import os
import signal
import sys

# the modules beside this file, without leaving __pycache__ in the tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dashlint_lint import cmd_lint  # noqa: E402
from dashlint_queries import cmd_queries  # noqa: E402
from dashlint_selftest import cmd_selftest  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("lint", help="check dashboards")
    p.add_argument("files", nargs="+", metavar="FILE")
    p = sub.add_parser("queries", help="print every query, SOURCE<TAB>EXPR")
    p.add_argument("files", nargs="*", metavar="FILE")
    p.add_argument("--rules", action="append", metavar="RULES.yml",
                   help="also print this Prometheus rule file's exprs (repeatable)")
    p.add_argument("--rate-interval", default="1m", help="$__rate_interval's value (1m)")
    p.add_argument("--interval", default="15s", help="$__interval's value (15s)")
    p.add_argument("--range", default="1h", help="$__range's value (1h)")
    sub.add_parser("selftest", help="check that the linter catches broken dashboards")
    args = ap.parse_args(argv)
    if args.cmd == "lint":
        return cmd_lint(args.files)
    if args.cmd == "queries":
        return cmd_queries(args)
    return cmd_selftest()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    sys.exit(main(sys.argv[1:]))
