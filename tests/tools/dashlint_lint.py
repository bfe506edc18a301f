"""dashlint lint: the dashboard-linter rules (variables, panels, queries,
annotations) over one dashboard, and the lint command."""

import json

from dashlint_dash import DATASOURCE, all_panels, annotation_expr, load_json, prom_annotations
from dashlint_promql import query_problems


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
