#!/usr/bin/env python3
"""Turns tcc_ism_bench's JSON output into the markdown tables of RESULTS.md.

Usage: summarize.py results.json > tables.md
Per benchmark it keeps the fastest repetition: on a shared machine the
minimum is the repetition least disturbed by other load. The policy table
uses CPU time of the inserting thread (all those runs are single-threaded,
and CPU time is less inflated by other processes than wall time); the
optimization table uses wall time, since pipelining runs a second thread
whose CPU time the first does not see.
"""
import json
import sys
from collections import defaultdict

BASE = ["Map", "Vector", "Bucket", "ChainedBucket", "Hash", "Coord"]
OPTIMIZED = ["Bucket", "Hash", "Coord", "Bucket@16k", "Coord@16k"]
VARIANTS = ["", "+DoubleBuffer", "+Pipeline", "+Pipeline+DoubleBuffer"]


def main(path):
    data = json.load(open(path))
    best = {}
    bestCpu = {}
    counters = {}
    matrices = []
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removesuffix("/real_time")
        matrix, variant = name.split("/", 1)
        if matrix not in matrices:
            matrices.append(matrix)
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        t = b["real_time"] * scale
        cpu = b["cpu_time"] * scale
        if name not in best or t < best[name]:
            best[name] = t
        if name not in bestCpu or cpu < bestCpu[name]:
            bestCpu[name] = cpu
        counters[name] = b
    out = []
    out.append("### Run time (CPU ms of the one thread, fastest of the repetitions; lower is better)\n")
    out.append("| matrix | components | nnz(A) | stream only | " + " | ".join(BASE) +
               " | Bucket beats Map and Vector |")
    out.append("|" + "---|" * (5 + len(BASE)))
    wins = 0
    for m in matrices:
        c = counters.get(f"{m}/Bucket", {})
        row = [m, f"{c.get('components', 0) / 1e6:.2f} M", f"{c.get('nnz_A', 0) / 1e3:.1f} k",
               f"{bestCpu.get(f'{m}/LowerBound', float('nan')):.3g}"]
        row += [f"{bestCpu.get(f'{m}/{p}', float('nan')):.3g}" for p in BASE]
        bucket = bestCpu.get(f"{m}/Bucket")
        beats = (bucket is not None and bucket < bestCpu.get(f"{m}/Map", 0) and
                 bucket < bestCpu.get(f"{m}/Vector", 0))
        wins += beats
        row.append("yes" if beats else "**no**")
        out.append("| " + " | ".join(row) + " |")
    out.append(f"\nBucket beats both extremes on {wins} of {len(matrices)} matrices.\n")

    out.append("### Peak workspace memory (MiB, counted by the ISM allocator)\n")
    out.append("| matrix | " + " | ".join(BASE) + " |")
    out.append("|" + "---|" * (1 + len(BASE)))
    for m in matrices:
        row = [m] + [f"{counters.get(f'{m}/{p}', {}).get('peak_MiB', float('nan')):.2f}" for p in BASE]
        out.append("| " + " | ".join(row) + " |")

    out.append("\n### Optimizations (wall ms, fastest repetition / peak MiB; merges in the base run)\n")
    out.append("| matrix | policy | merges | base | +DoubleBuffer | +Pipeline | +Pipeline+DoubleBuffer |")
    out.append("|---|---|---|---|---|---|---|")
    for m in matrices:
        for p in OPTIMIZED:
            cells = []
            for v in VARIANTS:
                n = f"{m}/{p}{v}"
                cells.append(f"{best.get(n, float('nan')):.3g} / "
                             f"{counters.get(n, {}).get('peak_MiB', float('nan')):.1f}")
            if f"{m}/{p}" not in best:
                continue  # not in this run (filtered out)
            merges = int(counters.get(f"{m}/{p}", {}).get("merges", 0))
            out.append(f"| {m} | {p} | {merges} | " + " | ".join(cells) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
