"""dashlint's view of a dashboard: reading its JSON, walking its panels (rows'
too) and its Prometheus annotations; the datasource every part must use."""

import json

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


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


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
