"""dashlint selftest: a good dashboard, broken copies of it that the linter
must catch, and the substitution and rules reader on known input."""

import copy

from dashlint_dash import DATASOURCE, all_panels
from dashlint_lint import lint_dashboard
from dashlint_queries import simple_rules, substitute


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
