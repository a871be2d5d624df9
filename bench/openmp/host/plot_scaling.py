#!/usr/bin/env python3
"""Speedup over the serial kernel against OpenMP threads, one line per kernel,
from the Markdown tables tcc_openmp_host_bench prints: each time is the
median over the runs in the file. Also prints that median table.

    /usr/bin/python3 bench/openmp/host/plot_scaling.py RESULTS_16_cores.md scaling_16_cores.png
(needs Debian's python3-matplotlib)"""
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def tables(path):
    """Yields (thread counts, {kernel: (serial ms, [ms per thread count])}) per table."""
    threads, rows = None, {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| kernel"):
            if threads:
                yield threads, rows
            threads = [int(c.split()[0]) for c in cells if c.endswith("ms") and c.split()[0].isdigit()]
            rows = {}
        elif threads and line.startswith("| ") and not line.startswith("|---"):
            times = [float(c) for c in cells[2:2 + 1 + len(threads)]]
            rows[cells[0]] = (times[0], times[1:])
    if threads:
        yield threads, rows


def main(source, target):
    runs = {}
    threads = None
    for threads, rows in tables(source):
        for kernel, (serial, times) in rows.items():
            runs.setdefault(kernel, []).append([serial] + times)
    median = {kernel: [statistics.median(column) for column in zip(*values)] for kernel, values in runs.items()}
    mean = {kernel: [values[0] / t for t in values[1:]] for kernel, values in median.items()}
    print("| kernel | serial ms | " + " | ".join(f"{t} thread{'s' if t > 1 else ''} ms" for t in threads) +
          f" | {threads[-1]} threads vs serial |")
    print("|---|" + "---:|" * (len(threads) + 2))
    for kernel, values in median.items():
        print(f"| {kernel} | " + " | ".join(f"{v:.4g}" for v in values) + f" | {values[0] / values[-1]:.1f}x |")
    figure, axes = plt.subplots(figsize=(6.4, 4.4))
    axes.plot(threads, threads, color="0.75", linestyle="--", label="linear")
    for kernel, speedups in mean.items():
        axes.plot(threads, speedups, marker="o", label=kernel)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log", base=2)
    axes.set_xticks(threads, [str(t) for t in threads])
    axes.set_xlabel("OpenMP threads")
    axes.set_ylabel("speedup over the unscheduled serial kernel\n(median times of the runs)")
    axes.set_title("tcc parallel schedules, 16-core Xeon")
    axes.legend(fontsize=8)
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(target, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
