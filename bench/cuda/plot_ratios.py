#!/usr/bin/env python3
"""SVG bar plots (no plotting packages) of tcc's speed-up over cuSPARSE from
the table tcc_bench_cusparse prints: one panel per SpMV kernel (a bar per
matrix) and one per SpMM kernel (bars for N = 32, 128, 256 per matrix), on a
log scale with the line at 1 (> 1: tcc faster).

    plot_ratios.py BENCH_OUTPUT.txt OUT.svg [TITLE]
"""
import math
import re
import sys


def parse(path):
    spmv_names, spmm_names, rows = [], [], []
    with open(path) as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("tcc kernels:"):
                spmv_part, _, spmm_part = line.partition("; SpMM:")
                spmv_names = re.findall(r"examples/gpu/(\S+)\.tc", spmv_part)
                spmm_names = re.findall(r"examples/gpu/(\S+)\.tc", spmm_part)
                continue
            fields = [field.strip() for field in line.split("|")]
            if len(fields) < 2 or not fields[0] or fields[0].startswith("matrix"):
                continue
            head = fields[0].split()
            if len(head) < 4 or not head[-1].isdigit():
                continue
            name = " ".join(head[:-3])
            spmv, spmm = [], []
            for k, field in enumerate(fields[2:]):
                values = field.split()
                if k < len(spmv_names):
                    spmv.append(to_ratio(values[1]) if len(values) >= 2 else None)
                else:
                    spmm.append([to_ratio(v) for v in values])
            rows.append((name, spmv, spmm))
    return spmv_names, spmm_names, rows


def to_ratio(text):
    try:
        value = float(text.rstrip("*"))  # '*': the kernel run was a nonzero split
    except ValueError:
        return None
    return value if value > 0 else None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0


def main():
    spmv_names, spmm_names, rows = parse(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) > 3 else "tcc vs cuSPARSE (CSR, float32)"
    panels = [(f"SpMV {name}", [[r[1][k] if k < len(r[1]) else None] for r in rows], ["SpMV"])
              for k, name in enumerate(spmv_names)]
    panels += [(f"SpMM {name}", [r[2][k] if k < len(r[2]) else [] for r in rows], ["N=32", "N=128", "N=256"])
               for k, name in enumerate(spmm_names)]
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    left, panel_height, top_pad, label_room = 60, 170, 40, 120
    group = 40
    width = left + group * len(rows) + 40
    height = 30 + len(panels) * (panel_height + top_pad) + label_room
    low, high = math.log2(1 / 64), math.log2(8)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="10">', '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13">{title}</text>']
    for index, (label, cells, series) in enumerate(panels):
        top = 30 + index * (panel_height + top_pad) + top_pad
        bottom = top + panel_height

        def y(ratio):
            value = min(max(math.log2(ratio), low), high)
            return bottom - (value - low) / (high - low) * (bottom - top)

        all_values = [v for cell in cells for v in cell if v]
        out.append(f'<text x="{left}" y="{top - 6}" font-size="12">{label}: geomean {geomean(all_values):.2f}x '
                   f'over {len(all_values)} cases</text>')
        for ratio in (1 / 64, 1 / 16, 1 / 4, 1, 4):
            stroke = "black" if ratio == 1 else "#ddd"
            out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(ratio):.1f}" y2="{y(ratio):.1f}" stroke="{stroke}"/>')
            text = f"{ratio:g}" if ratio >= 1 else f"1/{round(1 / ratio)}"
            out.append(f'<text x="{left - 6}" y="{y(ratio) + 3:.1f}" text-anchor="end">{text}</text>')
        bar = (group - 8) / max(len(series), 1)
        for m, cell in enumerate(cells):
            for s, value in enumerate(cell):
                if not value:
                    continue
                x = left + m * group + 4 + s * bar
                y0, y1 = y(1), y(value)
                out.append(f'<rect x="{x:.1f}" y="{min(y0, y1):.1f}" width="{bar - 1:.1f}" '
                           f'height="{abs(y1 - y0):.1f}" fill="{colors[s % 3]}"/>')
        for s, name in enumerate(series):
            out.append(f'<rect x="{width - 200 + s * 60}" y="{top - 16}" width="10" height="10" fill="{colors[s % 3]}"/>'
                       f'<text x="{width - 186 + s * 60}" y="{top - 7}">{name}</text>')
    base = 30 + len(panels) * (panel_height + top_pad) + 8
    for m, row in enumerate(rows):
        x = left + m * group + group / 2
        out.append(f'<text transform="translate({x:.1f},{base}) rotate(50)">{row[0]}</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
