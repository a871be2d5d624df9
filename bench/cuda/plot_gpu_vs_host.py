#!/usr/bin/env python3
"""SVG bar plot (no plotting packages) of the GPU/CPU speed-ups that
tcc_bench_gpu_vs_host prints: one panel per kernel section (SDDMM's two forms,
MTTKRP), a bar per input (best GPU variant's time against the best CPU
variant's), on a log scale with the line at 1 (> 1: the GPU is faster).

    plot_gpu_vs_host.py BENCH_OUTPUT.txt OUT.svg [TITLE]
"""
import math
import sys


def parse(path):
    panels = []  # (title, [(input, kind, speed-up)])
    with open(path) as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("SDDMM ") or line.startswith("MTTKRP "):
                panels.append((line.split(";")[0], []))
                continue
            fields = [field.strip() for field in line.split("|")]
            if not panels or len(fields) < 4 or fields[0].startswith("input"):
                continue
            ratio = [f for f in fields if f.endswith("x") and f[:-1].replace(".", "", 1).isdigit()]
            if not ratio:
                continue
            head = fields[0].split()
            if len(head) < 4:  # the summary table at the end
                continue
            # name (may hold spaces), kind, shape, nnz
            panels[-1][1].append((" ".join(head[:-3]), head[-3], float(ratio[0][:-1])))
    return [panel for panel in panels if panel[1]]


def main():
    panels = parse(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) > 3 else "tcc on the GPU against tcc on the host CPU (float32)"
    label_width, bar_width, row_height, gap = 230, 420, 16, 34
    every = [value for _, rows in panels for _, _, value in rows]
    low = min(0.5, min(every) / 1.2)
    high = max(2.0, max(every) * 1.2)
    scale = lambda value: label_width + bar_width * (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))
    height = 40 + sum(gap + row_height * len(rows) for _, rows in panels) + 30
    width = label_width + bar_width + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">{title}</text>']
    y = 40
    colors = {"real": "#4c72b0", "scale-up": "#dd8452", "synthetic": "#55a868"}
    for name, rows in panels:
        ratios = [value for _, _, value in rows]
        mean = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
        out.append(f'<text x="10" y="{y + 16}" font-size="12">{name} (geomean {mean:.2f}x)</text>')
        y += gap - 10
        top = y
        for label, kind, value in rows:
            x0, x1 = scale(1.0), scale(value)
            out.append(f'<text x="{label_width - 6}" y="{y + 11}" text-anchor="end">{label}</text>')
            out.append(f'<rect x="{min(x0, x1):.1f}" y="{y + 2}" width="{abs(x1 - x0):.1f}" height="{row_height - 4}" '
                       f'fill="{colors.get(kind, "#888")}"/>')
            out.append(f'<text x="{max(x0, x1) + 4:.1f}" y="{y + 11}">{value:.2f}</text>')
            y += row_height
        out.append(f'<line x1="{scale(1.0):.1f}" y1="{top}" x2="{scale(1.0):.1f}" y2="{y}" stroke="black"/>')
        y += 10
    axis = [v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200) if low <= v <= high]
    for v in axis:
        out.append(f'<text x="{scale(v):.1f}" y="{y + 12}" text-anchor="middle" fill="#555">{v:g}x</text>')
    x = label_width
    for kind, color in colors.items():
        out.append(f'<rect x="{x}" y="{y + 18}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14}" y="{y + 27}">{kind}</text>')
        x += 90
    out.append("</svg>")
    with open(sys.argv[2], "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
