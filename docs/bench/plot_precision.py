#!/usr/bin/env python3
"""Error against wall time of a `cosim bench --precision ... --out DIR` run, as an SVG (log-log).

Usage::

    python docs/bench/plot_precision.py DIR/precision.csv OUT.svg [TITLE]

One marker per configuration; configurations of one `system = ...` share a colour and a legend
entry (the system file's stem); failed runs are left out. Standard library only.
"""

import csv
import math
import re
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


def main():
    src, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "error against wall time"
    rows = []
    with open(src, newline="") as f:
        for r in csv.DictReader(f):
            err_key = next(k for k in r if k.startswith("max_abs_error:"))
            if r["failure"] or not r["seconds"] or not r[err_key]:
                continue
            secs, err = float(r["seconds"]), float(r[err_key])
            if not (secs > 0 and err > 0 and math.isfinite(secs) and math.isfinite(err)):
                continue
            m = re.search(r"system = ([^;]+)", r["configuration"])
            group = m.group(1).strip().split("/")[-1].removesuffix(".toml") if m else "run"
            label = re.sub(r"system = [^;]+;?\s*", "", r["configuration"]).strip("; ")
            rows.append((group, label, secs, err))
    groups = list(dict.fromkeys(g for g, *_ in rows))
    w, h, left, right, top, bottom = 720, 440, 80, 200, 40, 60
    lx = [math.log10(s) for *_, s, _ in rows]
    ly = [math.log10(e) for *_, e in rows]
    x0, x1 = math.floor(min(lx)), math.ceil(max(lx))
    y0, y1 = math.floor(min(ly)), math.ceil(max(ly))
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)

    def px(v):
        return left + (math.log10(v) - x0) / (x1 - x0) * (w - left - right)

    def py(v):
        return h - bottom - (math.log10(v) - y0) / (y1 - y0) * (h - top - bottom)

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2 - right / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
    ]
    for e in range(x0, x1 + 1):
        x = px(10.0**e)
        svg.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{h - bottom}" stroke="#ddd"/>')
        svg.append(f'<text x="{x}" y="{h - bottom + 16}" text-anchor="middle">1e{e}</text>')
    for e in range(y0, y1 + 1):
        y = py(10.0**e)
        svg.append(f'<line x1="{left}" y1="{y}" x2="{w - right}" y2="{y}" stroke="#ddd"/>')
        svg.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">1e{e}</text>')
    svg.append(f'<text x="{(left + w - right) / 2}" y="{h - 20}" text-anchor="middle">wall time (s)</text>')
    svg.append(
        f'<text x="18" y="{(top + h - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {(top + h - bottom) / 2})">max |Δs| against crane-pub3-unified (m)</text>'
    )
    for i, g in enumerate(groups):
        c = COLOURS[i % len(COLOURS)]
        pts = sorted((s, e, lab) for gg, lab, s, e in rows if gg == g)
        if len(pts) > 1:
            path = " ".join(f"{px(s):.1f},{py(e):.1f}" for s, e, _ in pts)
            svg.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-opacity="0.4"/>')
        for s, e, lab in pts:
            svg.append(f'<circle cx="{px(s):.1f}" cy="{py(e):.1f}" r="4" fill="{c}"><title>{g} {lab}</title></circle>')
        ly_ = top + 20 + 20 * i
        svg.append(f'<circle cx="{w - right + 16}" cy="{ly_}" r="4" fill="{c}"/>')
        svg.append(f'<text x="{w - right + 26}" y="{ly_ + 4}">{g}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
