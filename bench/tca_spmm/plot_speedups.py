#!/usr/bin/env python3
"""Bar plot (SVG, no plotting packages) of TCA-SpMM's speed-up over cuSPARSE
float16 per case, from the CSV tcc_bench_tca_spmm writes (--csv), or from
the compact table a device run prints (matrix N tcc_us TFLOPs x16 alg x32
reldiff, one case a line).

    plot_speedups.py RESULTS.csv OUT.svg [TITLE]
"""
import csv
import math
import sys


def read_cases(path):
    with open(path) as handle:
        text = handle.read().splitlines()
    cases = []
    if text and text[0].startswith("matrix,"):
        for row in csv.DictReader(text):
            cases.append((row["matrix"], int(row["N"]), float(row["speedup_f16"])))
    else:
        for line in text:
            fields = line.split()
            if len(fields) >= 5 and fields[1].isdigit():
                try:
                    cases.append((fields[0], int(fields[1]), float(fields[4])))
                except ValueError:
                    pass
    return [case for case in cases if case[2] > 0]


def main():
    cases = read_cases(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) > 3 else "TCA-SpMM vs cuSPARSE SpMM (float16)"
    geomean = math.exp(sum(math.log(c[2]) for c in cases) / len(cases)) if cases else 0
    width, height, top, bottom, left = 100 + 14 * len(cases), 420, 40, 300, 60
    low, high = math.log2(0.125), math.log2(16)

    def y(ratio):
        value = min(max(math.log2(ratio), low), high)
        return bottom - (value - low) / (high - low) * (bottom - top)

    colors = {32: "#1f77b4", 64: "#ff7f0e", 128: "#2ca02c", 256: "#9467bd"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="10">', '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="20" font-size="13">{title}: geomean {geomean:.2f}x over {len(cases)} cases</text>']
    for ratio in (0.125, 0.25, 0.5, 1, 1.5, 2, 4, 8, 16):
        stroke = "black" if ratio == 1 else "#c00" if ratio == 1.5 else "#ddd"
        dash = ' stroke-dasharray="4 3"' if ratio == 1.5 else ""
        out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(ratio):.1f}" y2="{y(ratio):.1f}" stroke="{stroke}"{dash}/>')
        out.append(f'<text x="{left - 6}" y="{y(ratio) + 3:.1f}" text-anchor="end">{ratio}x</text>')
    previous = None
    for k, (matrix, columns, ratio) in enumerate(cases):
        x = left + 6 + 14 * k
        y0, y1 = y(1), y(ratio)
        out.append(f'<rect x="{x}" y="{min(y0, y1):.1f}" width="11" height="{abs(y1 - y0):.1f}" '
                   f'fill="{colors.get(columns, "#777")}"><title>{matrix} N={columns}: {ratio:.2f}x</title></rect>')
        if matrix != previous:
            out.append(f'<text transform="translate({x + 8},{bottom + 8}) rotate(60)">{matrix}</text>')
        previous = matrix
    legend = left
    for columns, color in colors.items():
        out.append(f'<rect x="{legend}" y="{height - 16}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{legend + 14}" y="{height - 7}">N={columns}</text>')
        legend += 60
    out.append(f'<text x="{legend + 10}" y="{height - 7}">bars: cuSPARSE float16 time / tcc time (log scale); '
               'dashed: 1.5x</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
