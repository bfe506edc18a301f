#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kvmmmu-diff's statistics against scipy's, on generated runs.

Usage: diff_oracle.py KVMMMU_DIFF WORKDIR [A=a1.csv,... B=b1.csv,...]

For 40 generated comparisons (4 to 12 runs a side, with and without ties,
with and without a shift) it writes one kvmmmu CSV per run, runs kvmmmu-diff
--all --format csv, and checks every tested row's p-value against
scipy.stats.mannwhitneyu (two-sided, scipy's own choice of exact or
asymptotic), then the --holm p-values against Holm-Bonferroni computed here.
Given real runs (A=... B=..., kvmmmu-hist CSVs with histograms), it also
checks, per VM-wide latency histogram, the interpolated percentiles (each
run's p50/p90/p99 the histogram_quantile way, the median of the runs) and
the Wasserstein-1 distance on log2(ns) of the pooled histograms
(scipy.stats.wasserstein_distance with the bucket counts as weights).
Prints one "PASS name" or "FAIL name: why" line per comparison and test. A test oracle
only: kvmmmu never needs Python or scipy.
"""
import csv
import math
import os
import random
import re
import statistics
import subprocess
import sys

from scipy.stats import mannwhitneyu, wasserstein_distance


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


def histograms(path):
    """{(vm, metric): [(lo, hi, count), ...]} of a run's VM-wide rows, last values
    (rows are cumulative);
    hi is None for the open-ended last bucket. Also {(vm, metric): the slowest
    fault (NAME_max)}."""
    cumulative, maxima = {}, {}
    with open(path) as f:
        rows = csv.reader(line for line in f if not line.startswith("#"))
        next(rows)
        for r in rows:
            ts, pid, comm, vcpu, source, metric, le, value = r[:8]
            vm = r[8] if len(r) > 8 and r[8] else comm
            # VM-wide rows only: not a vCPU's, nor a thread's tied to none ("NAME [tid N]")
            if (source != "bpf" or vcpu != "" or pid == "0"
                    or re.search(r" \[tid [0-9]+\]$", comm)):
                continue
            if le == "":
                if metric.endswith("_max"):
                    maxima[(vm, metric[:-4])] = int(value)
                continue
            cumulative.setdefault((vm, metric), {})[le] = int(value)
    out = {}
    for key, by_le in cumulative.items():
        bounds = sorted(int(le) for le in by_le if le != "+Inf")
        buckets, below, lo = [], 0, 0
        for b in bounds:
            buckets.append((lo, b, by_le[str(b)] - below))
            below, lo = by_le[str(b)], b + 1
        buckets.append((lo, None, by_le["+Inf"] - below))
        out[key] = buckets
    return out, maxima


def quantile(buckets, q, top=None):
    """histogram_quantile's interpolation inside the bucket that holds rank q*count,
    at most TOP (the slowest fault seen, when known)."""
    v = interpolate(buckets, q)
    return min(v, top) if top else v


def interpolate(buckets, q):
    total = sum(n for _, _, n in buckets)
    rank, seen = q * total, 0
    for lo, hi, n in buckets:
        if n and seen + n >= rank:
            if hi is None:
                return lo
            return lo + (hi + 1 - lo) * (rank - seen) / n
        seen += n
    return buckets[-1][0]


def log2_point(lo, hi):
    """Where a bucket's mass sits on the log2 axis: its geometric middle."""
    if hi is None:
        return math.log2(max(lo, 1))
    return (math.log2(max(lo, 1)) + math.log2(hi + 1)) / 2


def real_runs(tool, sides):
    """Percentiles and Wasserstein distances of real runs against kvmmmu-diff's."""
    (na, a), (nb, b) = [(s.split("=", 1)[0], s.split("=", 1)[1].split(",")) for s in sides]
    out = subprocess.run([tool, "--all", "--format", "csv", *sides], check=True,
                         capture_output=True, text=True).stdout
    rows = {(r["vm"], r["metric"]): r for r in csv.DictReader(out.splitlines())
            if r["vcpu"] == ""}
    text = subprocess.run([tool, "--all", *sides], check=True, capture_output=True,
                          text=True).stdout
    runs, maxima = {}, {}
    for side, paths in ((na, a), (nb, b)):
        runs[side], maxima[side] = map(list, zip(*(histograms(p) for p in paths)))
    failed = 0
    for key in sorted(set().union(*runs[na]) & set().union(*runs[nb])):
        vm, metric = key
        if (vm, f"{metric} mean") not in rows:
            continue  # a histogram kvmmmu-diff does not compare (the mmu_lock waits)
        wrong = []
        for side, col in ((na, f"{na}_median"), (nb, f"{nb}_median")):
            for suffix, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
                row = rows.get((vm, f"{metric} {suffix}"))
                per_run = [quantile(h[key], q, m.get(key))
                           for h, m in zip(runs[side], maxima[side]) if key in h]
                if row is None or not per_run:
                    continue
                want, got = statistics.median(per_run), float(row[col])
                if abs(got - want) > 1e-9 * max(abs(want), 1):
                    wrong.append(f"{side} {suffix}: kvmmmu-diff {got}, here {want}")
        pooled = {}
        for side in (na, nb):
            counts = {}
            for h in runs[side]:
                for lo, hi, n in h.get(key, []):
                    counts[(lo, hi)] = counts.get((lo, hi), 0) + n
            pooled[side] = counts
        support = sorted(set(pooled[na]) | set(pooled[nb]), key=lambda b: b[0])
        points = [log2_point(lo, hi) for lo, hi in support]
        wa = [pooled[na].get(b, 0) for b in support]
        wb = [pooled[nb].get(b, 0) for b in support]
        m = re.search(rf"^  {re.escape(vm)} {re.escape(metric)}: {re.escape(nb)} shifted by "
                      r"([0-9.]+) doublings", text, re.M)
        if sum(wa) and sum(wb):
            want = wasserstein_distance(points, points, wa, wb)
            if not m:
                wrong.append(f"no Wasserstein line (scipy: {want:.4f})")
            elif abs(float(m.group(1)) - want) > 0.005 + 1e-9:
                wrong.append(f"Wasserstein: kvmmmu-diff {m.group(1)}, scipy {want:.4f}")
        name = f"diff/scipy-real-{vm}-{metric}"
        if wrong:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(wrong))
        else:
            print(f"PASS {name}")
    return failed


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
            # no permutation of the runs gives less than the two extreme orderings:
            # kvmmmu-diff floors scipy's tie-corrected approximation there
            p = min(1.0, max(p, 2 / math.comb(len(x) + len(y), len(x))))
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
    if len(sys.argv) == 5:
        failed += real_runs(tool, sys.argv[3:5])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
