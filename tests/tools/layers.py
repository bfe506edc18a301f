#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The include rules of src/ (docs/architecture.md), as one line per check.

Each folder of src/ is a layer; a file may include headers of its own
layer, of the layers below it (BELOW), of include/ and the system; a
command, any layer's but another command's. A module is a .c file with
its header; two modules must not include each other, even through others
(a cycle).

Usage: layers.py SRC_DIR; prints "ok NAME" or "not ok NAME: why" lines.
"""
import os
import re
import sys

# what each layer may include besides itself: the snapshot (core) is the
# renderers' whole view; the session runs the sources (trace) to make it
BELOW = {
    "lib": set(),
    "core": {"lib"},
    "trace": {"lib", "core"},
    "session": {"lib", "core", "trace"},
    "render": {"lib", "core"},
}
COMMANDS = {"check", "diff", "exporter", "hist", "load", "top"}
# commands that read CSV only and must not reach the tracing layers
OFFLINE = {"diff": {"lib", "core", "render"}}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    src = sys.argv[1]
    headers = {}  # header name -> layer/module (a command's own: by its folder)
    files = []
    for layer in sorted(os.listdir(src)):
        d = os.path.join(src, layer)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                files.append((layer, f))
                if f.endswith(".h"):
                    headers[(layer, f) if layer in COMMANDS else f] = layer + "/" + f[:-2]
    failures = []
    edges = {}
    for layer, f in files:
        text = open(os.path.join(src, layer, f)).read()
        me = layer + "/" + f.rsplit(".", 1)[0]
        for inc in INCLUDE.findall(text):
            target = headers.get((layer, inc), headers.get(inc))
            if not target:
                continue  # include/, a skeleton, the system
            tlayer = target.split("/")[0]
            if target != me:
                edges.setdefault(me, set()).add(target)
            if tlayer == layer:
                continue
            where = f"{layer}/{f} includes {inc} ({tlayer})"
            if layer in COMMANDS:
                if tlayer in COMMANDS:
                    failures.append(f"{where}: a command's header in another command")
                elif layer in OFFLINE and tlayer not in OFFLINE[layer]:
                    failures.append(f"{where}: {layer} reads CSV and links no tracing layer")
            elif tlayer in COMMANDS:
                failures.append(f"{where}: a layer includes a command's header")
            elif tlayer not in BELOW[layer]:
                failures.append(f"{where}: not a layer below it")
    print(("not ok layers: " + "; ".join(failures)) if failures else
          f"ok layers ({len(files)} files, each includes only lower layers)")

    # cycles between modules: strongly connected components of more than one
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(frozenset(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    if comps:
        print("not ok module-cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in comps))
    else:
        print(f"ok module-cycles (none among {len(edges)} modules)")

if __name__ == "__main__":
    main()
