#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kvmmmu-diff's statistics against scipy's, on generated runs.

Usage: diff_oracle.py KVMMMU_DIFF WORKDIR

For 40 generated comparisons (4 to 12 runs a side, with and without ties,
with and without a shift) it writes one kvmmmu CSV per run, runs kvmmmu-diff
--all --format csv, and checks every tested row's p-value against
scipy.stats.mannwhitneyu (two-sided, scipy's own choice of exact or
asymptotic), then the --holm p-values against Holm-Bonferroni computed here.
Prints one "PASS name" or "FAIL name: why" line per comparison and test. A test oracle
only: kvmmmu never needs Python or scipy.
"""
import csv
import os
import random
import subprocess
import sys

from scipy.stats import mannwhitneyu


def write_run(path, faults, fixed):
    with open(path, "w") as f:
        f.write("# kvmmmu-csv 2\n# tool=kvmmmu-hist\n# version=0.1.0\n")
        f.write("ts,pid,comm,vcpu,source,metric,le,value,vm\n")
        f.write(f"1.0,100,qemu,,bpf,faults,,{faults},vm1\n")
        f.write(f"1.0,100,qemu,,bpf,ret_pf_fixed,,{fixed},vm1\n")
        f.write(f"1.0,100,qemu,,bpf,ret_pf_spurious,,{faults - fixed},vm1\n")


def diff_rows(tool, a, b, holm):
    cmd = [tool, "--all", "--format", "csv"] + (["--holm"] if holm else [])
    cmd += ["A=" + ",".join(a), "B=" + ",".join(b)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["metric"]: r for r in csv.DictReader(out.splitlines())}


def holm(ps):
    """Holm-Bonferroni adjusted p-values, in the order given."""
    m = len(ps)
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: ps[k])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def close(got, want):
    # kvmmmu-diff prints p with 4 significant digits
    return abs(got - want) <= 5e-4 * want + 1e-12


def report(name, na, nb, wrong):
    """One line per comparison; returns 1 when it failed."""
    if not wrong:
        print(f"PASS {name}")
        return 0
    print(f"FAIL {name}: n={na}+{nb}: " + "; ".join(wrong))
    return 1


def main():
    tool, work = sys.argv[1], sys.argv[2]
    rng = random.Random(20261201)
    failed = 0
    for case in range(40):
        na, nb = rng.randint(4, 12), rng.randint(4, 12)
        spread = 4 if case % 3 == 0 else 100000  # narrow: ties; wide: none
        shift = rng.choice([0, 0, 2, 50000])
        runs = {}
        for side, n, base in (("a", na, 100000), ("b", nb, 100000 + shift)):
            runs[side] = []
            for i in range(n):
                faults = base + rng.randint(0, spread)
                fixed = faults - rng.randint(0, 3)
                path = os.path.join(work, f"c{case}{side}{i}.csv")
                write_run(path, faults, fixed)
                runs[side].append((path, faults, fixed))
        a = [r[0] for r in runs["a"]]
        b = [r[0] for r in runs["b"]]
        rows = diff_rows(tool, a, b, False)
        adjusted = diff_rows(tool, a, b, True)
        values = {
            "faults": lambda r: r[1],
            "ret_pf_fixed %": lambda r: 100.0 * r[2] / r[1],
            "ret_pf_spurious %": lambda r: 100.0 * (r[1] - r[2]) / r[1],
        }
        want, names, wrong = [], [], []
        for metric, of in values.items():
            x = [of(r) for r in runs["a"]]
            y = [of(r) for r in runs["b"]]
            p = mannwhitneyu(x, y, alternative="two-sided").pvalue
            got = float(rows[metric]["p"])
            if not close(got, p):
                wrong.append(f"{metric}: kvmmmu-diff p={got}, scipy p={p:.6g}")
            want.append(p)
            names.append(metric)
        failed += report(f"diff/scipy-u-case{case}", na, nb, wrong)
        # Holm over every tested row: these three, and the path shares (all 0, p = 1)
        tested = [m for m in rows if rows[m]["p"] != ""]
        full = want + [1.0] * (len(tested) - len(want))
        wrong = []
        for metric, p in zip(names, holm(full)):
            got = float(adjusted[metric]["p"])
            if not close(got, p):
                wrong.append(f"{metric}: kvmmmu-diff --holm p={got}, Holm here {p:.6g}")
        failed += report(f"diff/scipy-holm-case{case}", na, nb, wrong)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
