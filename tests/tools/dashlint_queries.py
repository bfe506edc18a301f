"""dashlint queries: every query of the dashboards (variables, panels,
annotations) and of Prometheus rule files, Grafana's variables replaced."""

import json
import os
import re

from dashlint_dash import all_panels, annotation_expr, load_json, prom_annotations


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
