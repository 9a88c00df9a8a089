#!/usr/bin/env python3
"""Draws docs/performance.svg from ember-bench JSON output (no dependencies beyond Python 3).

    ember-bench -m tinyllama-Q4_0.gguf -p 512 -n 128 -t 2 -r 5 -o json > q4_0.json
    ...
    scripts/bench_chart.py Q4_0=q4_0.json Q8_0=q8_0.json Q4_K_M=q4_k_m.json -o docs/performance.svg

Each bar pair compares ember's tokens/s (mean of the repetitions) with llama.cpp's figure for the
same model shape, type and thread count measured on the same machine (LLAMA_CPP below).
"""
import argparse
import json
import sys

# llama.cpp on the reference machine (2 threads, TinyLlama-1.1B-shaped), tokens/s.
LLAMA_CPP = {
    "Q4_0": {"pp": 200.0, "tg": 50.0},
    "Q8_0": {"pp": 107.0, "tg": 24.5},
    "Q4_K_M": {"pp": 140.0, "tg": 45.0},
}


def load(spec):
    label, _, path = spec.partition("=")
    if not path:
        sys.exit(f"bench_chart: expected LABEL=FILE.json, got {spec!r}")
    with open(path) as f:
        data = json.load(f)
    found = {}
    for r in data["results"]:
        if not r["test"].startswith(("pp", "tg")):
            continue  # the load row
        kind = "pp" if r["test"].startswith("pp") else "tg"
        found[kind] = (r["tps_mean"], r.get("limit_fraction"), r["test"])
    return label, found


def bar_chart(title, groups, width=640, height=300):
    """groups: [(label, [(series, value)])] -> SVG text of one grouped bar chart."""
    colours = {"ember": "#d9480f", "llama.cpp": "#868e96"}
    top = max([v for _, series in groups for _, v in series] + [1.0])
    left, bottom, plot_h = 60, 40, height - 80
    group_w = (width - left - 20) / max(len(groups), 1)
    bar_w = group_w / 3
    out = [f'<g><text x="{width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{title}</text>']
    for i in range(5):  # horizontal grid with tokens/s labels
        y = 30 + plot_h - plot_h * i / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 20}" y2="{y:.1f}" stroke="#dee2e6"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{top * i / 4:.0f}</text>')
    for g, (label, series) in enumerate(groups):
        x0 = left + g * group_w + bar_w / 2
        for s, (name, value) in enumerate(series):
            h = plot_h * value / top
            x = x0 + s * bar_w
            y = 30 + plot_h - h
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" fill="{colours[name]}"/>')
            out.append(f'<text x="{x + (bar_w - 4) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle" font-size="11">{value:.0f}</text>')
        out.append(f'<text x="{x0 + bar_w - 2:.1f}" y="{height - bottom + 24}" text-anchor="middle" font-size="13">{label}</text>')
    out.append("</g>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="LABEL=ember-bench.json")
    ap.add_argument("-o", "--output", default="docs/performance.svg")
    args = ap.parse_args()
    runs = [load(spec) for spec in args.runs]
    charts = []
    for kind, title in (("tg", "Generation (tokens/s, 2 threads)"), ("pp", "Prompt processing (tokens/s, 2 threads)")):
        groups = []
        for label, found in runs:
            if kind not in found:
                continue
            series = [("ember", found[kind][0])]
            if label in LLAMA_CPP:
                series.append(("llama.cpp", LLAMA_CPP[label][kind]))
            groups.append((label, series))
        charts.append(bar_chart(title, groups))
    w, h = 640, 300
    legend = ('<g font-size="12"><rect x="470" y="8" width="12" height="12" fill="#d9480f"/>'
              '<text x="486" y="18">ember</text><rect x="540" y="8" width="12" height="12" fill="#868e96"/>'
              '<text x="556" y="18">llama.cpp</text></g>')
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{2 * h}" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>', legend]
    for i, chart in enumerate(charts):
        svg.append(f'<g transform="translate(0,{i * h + 10})">{chart}</g>')
    svg.append("</svg>")
    with open(args.output, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"bench_chart: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
