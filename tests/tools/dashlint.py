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
"""

import argparse
import copy
import json
import os
import re
import signal
import sys

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RANGE_FUNCS = {"rate", "irate", "increase", "changes", "delta", "deriv"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
KEYWORDS = GROUPING | {"bool", "and", "or", "unless", "offset", "atan2", "inf", "nan"}
RATE_INTERVAL = ("$__rate_interval", "${__rate_interval}", "[[__rate_interval]]")

# ---------------------------------------------------------------- PromQL lexer

TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<dur>(?:\d+(?:ms|[smhdwy]))+(?![\w:]))
  | (?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<var>\$\{[^}]*\}|\$\w+|\[\[\w+\]\])
  | (?P<ident>[A-Za-z_:][\w:]*)
  | (?P<op>=~|!~|==|!=|<=|>=|[-+*/%^<>=@])
  | (?P<punct>[(),])
""", re.X)

OLD_VAR_RE = re.compile(r"\[\[\w+\]\]")
MATCHER_RE = re.compile(r"""\s*([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*
    ("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,|$)""", re.X)


class PromQLError(Exception):
    pass


def _bracketed(expr, i, close):
    """The index after the bracket closing at or after i, skipping strings."""
    while i < len(expr):
        c = expr[i]
        if c in "\"'`":
            m = TOKEN_RE.match(expr, i)
            if not m or m.lastgroup != "str":
                raise PromQLError("unterminated string at %d" % i)
            i = m.end()
            continue
        if c == close:
            return i + 1
        i += 1
    raise PromQLError("no closing %r" % close)


def tokenize(expr):
    """[(kind, text)]: kinds str, dur, num, var, ident, op, punct, matchers
    (the text inside {}), range (the text inside [])."""
    out = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "{" or c == "[" and not OLD_VAR_RE.match(expr, i):
            close = "}" if c == "{" else "]"
            end = _bracketed(expr, i + 1, close)
            out.append(("matchers" if c == "{" else "range", expr[i + 1:end - 1].strip()))
            i = end
            continue
        m = TOKEN_RE.match(expr, i)
        if not m:
            raise PromQLError("unexpected %r at %d" % (expr[i:i + 10], i))
        if m.lastgroup not in ("ws", "comment"):
            out.append((m.lastgroup, m.group()))
        i = m.end()
    depth = 0
    for kind, text in out:
        if text == "(" and kind == "punct":
            depth += 1
        elif text == ")" and kind == "punct":
            depth -= 1
            if depth < 0:
                raise PromQLError("unbalanced )")
    if depth:
        raise PromQLError("unbalanced (")
    return out


def parse_matchers(text):
    """[(label, op, value)] of a {} block's text."""
    found = []
    i = 0
    while i < len(text):
        m = MATCHER_RE.match(text, i)
        if not m:
            raise PromQLError("bad label matchers {%s}" % text)
        value = m.group(3)[1:-1]
        found.append((m.group(1), m.group(2), value))
        i = m.end()
    return found


def _closing(tokens, i):
    """Index of the ")" matching the "(" at tokens[i]."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == ("punct", "("):
            depth += 1
        elif tokens[j] == ("punct", ")"):
            depth -= 1
            if not depth:
                return j
    raise PromQLError("unbalanced (")


def selectors(tokens):
    """[(metric name or "", [(label, op, value)])] of every vector selector."""
    out = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, None)
        if kind == "ident":
            low = text.lower()
            if low in GROUPING and nxt == ("punct", "("):
                i = _closing(tokens, i + 1) + 1
                continue
            if low in KEYWORDS or nxt == ("punct", "(") or \
                    low in AGGREGATIONS and nxt[0] == "ident" and nxt[1].lower() in ("by", "without"):
                i += 1
                continue
            matchers = []
            if nxt[0] == "matchers":
                matchers = parse_matchers(nxt[1])
                i += 1
            out.append((text, matchers))
        elif kind == "matchers":
            out.append(("", parse_matchers(text)))
        i += 1
    return out


def range_problems(tokens):
    """Problems with the ranges of rate() and its kin."""
    problems = []
    for i, (kind, text) in enumerate(tokens):
        if kind != "ident" or text not in RANGE_FUNCS or i + 1 >= len(tokens) \
                or tokens[i + 1] != ("punct", "("):
            continue
        end = _closing(tokens, i + 1)
        depth = 0
        ranges = []
        for k, t in tokens[i + 2:end]:
            if (k, t) == ("punct", "("):
                depth += 1
            elif (k, t) == ("punct", ")"):
                depth -= 1
            elif k == "range" and depth == 0:
                ranges.append(t)
        if not ranges:
            problems.append("%s() has no range at its top level" % text)
        for r in ranges:
            window = r.split(":")[0].strip()
            if window not in RATE_INTERVAL:
                problems.append("%s() range [%s] is not [$__rate_interval]" % (text, r))
    return problems


def uses_var(value, name):
    return any(v in value for v in ("$" + name, "${" + name + "}", "[[" + name + "]]")) and \
        not re.search(r"\$%s\w" % re.escape(name), value)


def query_problems(expr):
    """Problems of one dashboard query."""
    if not isinstance(expr, str) or not expr.strip():
        return ["empty query"]
    try:
        tokens = tokenize(expr)
        sels = selectors(tokens)
        problems = range_problems(tokens)
    except PromQLError as e:
        return ["query does not parse: %s" % e]
    if not sels:
        problems.append("query has no metric selector")
    for name, matchers in sels:
        what = name or "{...}"
        for label in ("job", "instance"):
            if not any(l == label and op == "=~" and uses_var(v, label) for l, op, v in matchers):
                problems.append('selector %s has no %s=~"$%s" matcher' % (what, label, label))
    return problems

# ---------------------------------------------------------------- dashboards


def all_panels(panels):
    """Every panel, rows' nested panels included, in order."""
    for p in panels or []:
        yield p
        if p.get("type") == "row":
            yield from all_panels(p.get("panels"))


def prom_annotations(dash):
    for a in dash.get("annotations", {}).get("list", []):
        if a.get("builtIn") == 1:
            continue
        yield a


def annotation_expr(a):
    target = a.get("target") or {}
    return target.get("expr") or a.get("expr")


def check_variables(dash, report):
    tvars = dash.get("templating", {}).get("list", [])
    dsvars = [v for v in tvars if v.get("type") == "datasource"]
    if len(dsvars) != 1:
        report("dashboard", "has %d datasource variables, wants exactly one" % len(dsvars))
    for v in dsvars:
        if v.get("name") != "datasource":
            report('variable "%s"' % v.get("name"), 'the datasource variable must be named "datasource"')
        if v.get("query") != "prometheus":
            report('variable "%s"' % v.get("name"), 'datasource variable query is not "prometheus"')
    byname = {v.get("name"): v for v in tvars}
    for name in ("job", "instance"):
        v = byname.get(name)
        if v is None:
            report("dashboard", 'has no "%s" variable' % name)
            continue
        where = 'variable "%s"' % name
        if v.get("type") != "query":
            report(where, "is not a query variable")
        if not v.get("multi"):
            report(where, "is not multi-select")
        if not v.get("includeAll"):
            report(where, "has no All option (includeAll)")
        if v.get("allValue") != ".+":
            report(where, 'allValue is %r, wants ".+"' % v.get("allValue"))
    for v in tvars:
        if v.get("type") != "query":
            continue
        where = 'variable "%s"' % v.get("name")
        ds = v.get("datasource")
        if ds != DATASOURCE and ds not in ("$datasource", "${datasource}"):
            report(where, "datasource is %s, wants %s" % (json.dumps(ds), json.dumps(DATASOURCE)))


def lint_dashboard(dash, name="dashboard"):
    """[problem line] of one dashboard (a dict)."""
    problems = []

    def report(where, what):
        problems.append("%s: %s: %s" % (name, where, what))

    if not isinstance(dash, dict) or not isinstance(dash.get("panels"), list):
        return ["%s: dashboard: not a dashboard (no panels list)" % name]
    for key in ("uid", "title"):
        if not dash.get(key):
            report("dashboard", "has no %s" % key)
    check_variables(dash, report)

    ids = {}
    for p in all_panels(dash["panels"]):
        title = p.get("title")
        where = 'panel "%s"' % (title or "#%s" % p.get("id"))
        pid = p.get("id")
        if pid is None:
            report(where, "has no id")
        elif pid in ids:
            report(where, 'id %s is also panel "%s"\'s' % (pid, ids[pid]))
        else:
            ids[pid] = title
        if not title:
            report(where, "has no title")
        if p.get("type") == "row":
            continue
        if not p.get("description"):
            report(where, "has no description")
        unit = (p.get("fieldConfig") or {}).get("defaults", {}).get("unit")
        if not unit:
            report(where, "has no unit (fieldConfig.defaults.unit)")
        if p.get("datasource") != DATASOURCE:
            report(where, "datasource is %s, wants %s"
                   % (json.dumps(p.get("datasource")), json.dumps(DATASOURCE)))
        targets = p.get("targets") or []
        if not targets and p.get("type") not in ("text", "news", "dashlist"):
            report(where, "has no queries")
        refids = set()
        for t in targets:
            ref = t.get("refId", "?")
            if ref in refids:
                report(where, "refId %s is used twice" % ref)
            refids.add(ref)
            if "datasource" in t and t["datasource"] != DATASOURCE:
                report(where, "query %s datasource is %s" % (ref, json.dumps(t["datasource"])))
            for prob in query_problems(t.get("expr")):
                report(where, "query %s: %s" % (ref, prob))
            if p.get("type") == "heatmap":
                if t.get("format") != "heatmap":
                    report(where, 'query %s format is %r, wants "heatmap"' % (ref, t.get("format")))
                if t.get("legendFormat") != "{{le}}":
                    report(where, 'query %s legendFormat is not "{{le}}"' % ref)
        if p.get("type") == "heatmap" and (p.get("options") or {}).get("calculate") is not False:
            report(where, "heatmap of a histogram must have options.calculate false")

    for a in prom_annotations(dash):
        where = 'annotation "%s"' % a.get("name")
        if a.get("datasource") != DATASOURCE:
            report(where, "datasource is %s, wants %s"
                   % (json.dumps(a.get("datasource")), json.dumps(DATASOURCE)))
        for prob in query_problems(annotation_expr(a)):
            report(where, prob)
    return problems


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cmd_lint(files):
    problems = []
    for path in files:
        try:
            dash = load_json(path)
        except (OSError, ValueError) as e:
            problems.append("%s: dashboard: cannot read: %s" % (path, e))
            continue
        problems += lint_dashboard(dash, path)
    for line in problems:
        print(line)
    return 1 if problems else 0

# ---------------------------------------------------------------- queries


def substitute(expr, values):
    """expr with Grafana's $name, ${name}, ${name:fmt} and [[name]] replaced."""
    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        return values.get(name, m.group(0))
    expr = re.sub(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]", repl, expr)
    return re.sub(r"\s*\n\s*", " ", expr).strip()


def dashboard_queries(dash, base):
    """[(source, expr)] of a dashboard: variables, panel targets, annotations."""
    out = []
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        m = re.match(r"\s*label_values\((.*),\s*\w+\s*\)\s*$", q or "", re.S)
        if m:  # label_values(SELECTOR, label): the selector is a query
            out.append(("%s:variable %s" % (base, v.get("name")), m.group(1)))
        elif q and not re.match(r"\s*(label_names|label_values|metrics)\(", q):
            m = re.match(r"\s*query_result\((.*)\)\s*$", q, re.S)
            out.append(("%s:variable %s" % (base, v.get("name")), m.group(1) if m else q))
    for p in all_panels(dash.get("panels")):
        for t in p.get("targets") or []:
            if t.get("expr"):
                out.append(('%s:panel %s "%s"/%s' % (base, p.get("id"), p.get("title"),
                                                    t.get("refId")), t["expr"]))
    for a in prom_annotations(dash):
        if annotation_expr(a):
            out.append(('%s:annotation "%s"' % (base, a.get("name")), annotation_expr(a)))
    return out


def _unquote(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] == "'":
        return s[1:-1].replace("''", "'")
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return json.loads(s)
    return s


def simple_rules(text):
    """[(kind, name, expr)] of a rules file in kvmmmu-rules.yml's layout, without
    PyYAML: '- record: NAME' or '- alert: NAME', then 'expr: ...' on one line or
    as a '|' or '>' block."""
    rules = []
    lines = text.split("\n")
    i = 0
    current = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*-\s+(record|alert):\s*(.+?)\s*$", line)
        if m:
            current = [m.group(1), _unquote(m.group(2)), None]
            rules.append(current)
            i += 1
            continue
        m = re.match(r"^(\s*)expr:\s*(.*?)\s*$", line)
        if m and current is not None:
            indent, value = len(m.group(1)), m.group(2)
            if value[:1] in "|>":
                block = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > indent):
                    block.append(lines[i].strip())
                    i += 1
                current[2] = ("\n" if value[0] == "|" else " ").join(b for b in block if b)
                continue
            current[2] = _unquote(value)
        i += 1
    return [tuple(r) for r in rules if r[2]]


def rules_queries(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    base = os.path.basename(path)
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is None:
        found = simple_rules(text)
    else:
        found = []
        for group in (yaml.safe_load(text) or {}).get("groups", []):
            for r in group.get("rules", []):
                kind = "record" if "record" in r else "alert"
                found.append((kind, r.get(kind), str(r.get("expr", ""))))
    return [("%s:%s %s" % (base, kind, name), expr) for kind, name, expr in found]


def cmd_queries(args):
    values = {"__rate_interval": args.rate_interval, "__interval": args.interval,
              "__range": args.range, "job": ".+", "instance": ".+", "vm": ".+"}
    found = []
    for path in args.files:
        dash = load_json(path)
        for v in dash.get("templating", {}).get("list", []):
            if v.get("type") in ("query", "custom", "textbox") and v.get("name") not in values:
                values[v["name"]] = ".+"
        found += dashboard_queries(dash, os.path.basename(path))
    for path in args.rules or []:
        found += rules_queries(path)
    for source, expr in found:
        print("%s\t%s" % (source.replace("\t", " "), substitute(expr, values)))
    return 0

# ---------------------------------------------------------------- selftest


def _good_dashboard():
    m = 'job=~"$job",instance=~"$instance"'

    def var(name, query):
        return {"type": "query", "name": name, "datasource": dict(DATASOURCE), "query": query,
                "multi": True, "includeAll": True, "allValue": ".+"}
    return {
        "uid": "t", "title": "t",
        "templating": {"list": [
            {"type": "datasource", "name": "datasource", "query": "prometheus"},
            var("job", "label_values(kvmmmu_exporter_build_info, job)"),
            var("instance", 'label_values(kvmmmu_exporter_build_info{job=~"$job"}, instance)')]},
        "annotations": {"list": [
            {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "name": "b"},
            {"name": "toggles", "datasource": dict(DATASOURCE),
             "expr": "changes(x_count{%s}[$__rate_interval]) > 0" % m}]},
        "panels": [
            {"id": 1, "type": "timeseries", "title": "rate", "description": "d",
             "datasource": dict(DATASOURCE), "fieldConfig": {"defaults": {"unit": "ops"}},
             "targets": [{"refId": "A", "expr":
                          'sum by (le, path) (rate(x_total{%s,vm=~"$vm"}[$__rate_interval])) '
                          '/ ignoring (path) group_left () sum without (path) '
                          '(rate(x_total{%s}[$__rate_interval] offset 5m))' % (m, m)}]},
            {"id": 2, "type": "row", "title": "row", "collapsed": True, "panels": [
                {"id": 3, "type": "heatmap", "title": "heat", "description": "d",
                 "datasource": dict(DATASOURCE), "fieldConfig": {"defaults": {"unit": "short"}},
                 "options": {"calculate": False},
                 "targets": [{"refId": "A", "format": "heatmap", "legendFormat": "{{le}}",
                              "expr": 'sum by (le) (increase(h_bucket{%s}[$__rate_interval]))'
                              ' * on (job) group_left (version) '
                              'label_replace(b_info{%s}, "v", "$1", "version", "(.*){x}")'
                              % (m, m)}]}]}]}


def _mutations():
    """(name, wanted substring of a problem, function breaking a good dashboard)."""
    def panel(d, pid):
        return next(p for p in all_panels(d["panels"]) if p.get("id") == pid)

    def setp(pid, path, value):
        def f(d):
            obj = panel(d, pid)
            for k in path[:-1]:
                obj = obj[k]
            if value is None:
                del obj[path[-1]]
            else:
                obj[path[-1]] = value
        return f

    def expr(pid, new):
        return setp(pid, ["targets", 0, "expr"], new)

    m = 'job=~"$job",instance=~"$instance"'
    return [
        ("missing unit", "has no unit", setp(1, ["fieldConfig", "defaults", "unit"], None)),
        ("missing unit in a collapsed row", 'panel "heat": has no unit',
         setp(3, ["fieldConfig", "defaults", "unit"], "")),
        ("missing description", "has no description", setp(1, ["description"], None)),
        ("missing title", "has no title", setp(1, ["title"], "")),
        ("rate without $__rate_interval", "rate() range [5m]",
         expr(1, "sum(rate(x_total{%s}[5m]))" % m)),
        ("increase with $__interval", "increase() range [$__interval]",
         expr(3, "sum by (le) (increase(h_bucket{%s}[$__interval]))" % m)),
        ("changes in an annotation without $__rate_interval", 'annotation "toggles": changes()',
         lambda d: d["annotations"]["list"][1].update(expr="changes(x_count{%s}[1m]) > 0" % m)),
        ("missing job matcher", 'selector x_total has no job=~"$job"',
         expr(1, 'sum(rate(x_total{instance=~"$instance"}[$__rate_interval]))')),
        ("job matcher with = on a multi-value variable", 'no job=~"$job"',
         expr(1, 'sum(rate(x_total{job="$job",instance=~"$instance"}[$__rate_interval]))')),
        ("missing instance matcher on the second selector", 'selector y has no instance=~',
         expr(1, 'x{%s} / on () group_left y{job=~"$job"}' % m)),
        ("bare metric name", "selector up has no job",
         expr(1, "sum(up)")),
        ("missing instance matcher in an annotation", 'annotation "toggles": selector x_count',
         lambda d: d["annotations"]["list"][1].update(expr='x_count{job=~"$job"}')),
        ("unbalanced parentheses", "does not parse", expr(1, "sum(rate(x{%s}[$__rate_interval])" % m)),
        ("wrong panel datasource", "datasource is",
         setp(1, ["datasource"], {"type": "prometheus", "uid": "abc"})),
        ("heatmap target without format heatmap", 'format is None, wants "heatmap"',
         setp(3, ["targets", 0, "format"], None)),
        ("heatmap calculating", "calculate false", setp(3, ["options", "calculate"], True)),
        ("duplicate panel id", "id 1 is also", setp(3, ["id"], 1)),
        ("second datasource variable", "2 datasource variables",
         lambda d: d["templating"]["list"].append({"type": "datasource", "name": "ds2",
                                                   "query": "prometheus"})),
        ("datasource variable misnamed", 'must be named "datasource"',
         lambda d: d["templating"]["list"][0].update(name="ds")),
        ("job not multi-select", 'variable "job": is not multi-select',
         lambda d: d["templating"]["list"][1].update(multi=False)),
        ("instance without allValue", 'variable "instance": allValue',
         lambda d: d["templating"]["list"][2].pop("allValue")),
        ("no job variable", 'has no "job" variable', lambda d: d["templating"]["list"].pop(1)),
    ]


def cmd_selftest():
    failures = 0
    good = _good_dashboard()
    problems = lint_dashboard(good, "good")
    if problems:
        failures += 1
        print("FAIL good dashboard has problems:\n  " + "\n  ".join(problems))
    else:
        print("ok   a good dashboard passes")
    for name, wanted, mutate in _mutations():
        d = copy.deepcopy(good)
        mutate(d)
        problems = lint_dashboard(d, "t")
        if any(wanted in p for p in problems):
            print("ok   caught: %s" % name)
        else:
            failures += 1
            print("FAIL not caught: %s (wanted %r, got %r)" % (name, wanted, problems))
    # queries: substitution and the rules reader without PyYAML
    got = substitute('rate(x{job=~"$job",vm=~"${vm}"}[$__rate_interval]) [$__interval]',
                     {"__rate_interval": "1m", "__interval": "15s", "job": ".+", "vm": ".+"})
    want = 'rate(x{job=~".+",vm=~".+"}[1m]) [15s]'
    print(("ok   " if got == want else "FAIL ") + "substitution: %s" % got)
    failures += got != want
    rules = simple_rules("groups:\n  - name: g\n    rules:\n      - record: a:b:rate5m\n"
                         "        expr: sum(rate(x[5m]))\n      - alert: A\n        expr: >-\n"
                         "          a:b:rate5m\n            > 1\n        for: 5m\n"
                         "      - alert: 'B'\n        expr: |\n          up == 0\n")
    want_rules = [("record", "a:b:rate5m", "sum(rate(x[5m]))"), ("alert", "A", "a:b:rate5m > 1"),
                  ("alert", "B", "up == 0")]
    print(("ok   " if rules == want_rules else "FAIL ") + "rules reader: %r" % rules)
    failures += rules != want_rules
    print("%d failure%s" % (failures, "" if failures == 1 else "s"))
    return 1 if failures else 0


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
