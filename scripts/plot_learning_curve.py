#!/usr/bin/env python3
"""Draws the policy's learning curve (the TSV train_policy writes) as an SVG, with no plotting library.

    /usr/bin/python3 scripts/plot_learning_curve.py docs/policy_learning_curve.tsv docs/policy_learning_curve.svg

Up to two phases share the x axis: imitation (cross-entropy against local search's placements), when the run had
one, and reinforcement. Red: the validation ratio the checkpoints are chosen on (greedy single shot, or with
scheduled training the better of that and the greedy scheduled decoding). Blue: the placements sampled in
reinforcement. Dashed: the demonstrations' own step time / bound.
"""
import csv
import sys

W, H, L, R, T, B = 760, 360, 60, 190, 20, 40


def main(src, dst):
    with open(src) as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")]
    rows = [r for r in rows if float(r["iteration"]) > 0]
    phase = [r.get("phase", "reinforce") for r in rows]
    xs = [float(r["iteration"]) for r in rows]
    greedy = [float(r["greedy_validation_ratio"]) for r in rows]
    sampled = [(x, float(r["sampled_ratio"])) for x, r, p in zip(xs, rows, phase)
               if p == "reinforce" and float(r["sampled_ratio"]) > 0]
    demo = [float(r["sampled_ratio"]) for r, p in zip(rows, phase) if p == "imitation"]
    ys = greedy + [y for _, y in sampled] + demo[:1]
    x0, x1 = 0, max(xs)
    y0, y1 = min(1.0, min(ys)), max(ys)

    def px(x):
        return L + (W - L - R) * (x - x0) / (x1 - x0 or 1)

    def py(y):
        return T + (H - T - B) * (1 - (y - y0) / (y1 - y0 or 1))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for i in range(6):
        y = y0 + (y1 - y0) * i / 5
        out.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
        out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#ddd"/>')
        x = x0 + (x1 - x0) * i / 5
        out.append(f'<text x="{px(x):.1f}" y="{H - B + 16}" text-anchor="middle">{int(x)}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 6}" text-anchor="middle">iteration</text>')
    out.append(f'<text x="14" y="{(T + H - B) / 2}" transform="rotate(-90 14 {(T + H - B) / 2})" '
               'text-anchor="middle">step time / lower bound (OOM +2)</text>')
    boundary = max((x for x, p in zip(xs, phase) if p == "imitation"), default=None)
    if boundary is not None:
        out.append(f'<line x1="{px(boundary):.1f}" y1="{T}" x2="{px(boundary):.1f}" y2="{H - B}" stroke="#888" '
                   'stroke-dasharray="2,3"/>')
        out.append(f'<text x="{px(boundary) + 4:.1f}" y="{T + 10}">imitation | reinforcement</text>')
    legend = []
    if sampled:
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sampled)
        out.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.2" points="{pts}"/>')
        legend.append(("sampled (training)", "#1f77b4", ""))
    pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, greedy))
    out.append(f'<polyline fill="none" stroke="#d62728" stroke-width="1.5" points="{pts}"/>')
    legend.append(("greedy / scheduled (validation)", "#d62728", ""))
    if demo:
        out.append(f'<line x1="{L}" y1="{py(demo[0]):.1f}" x2="{W - R}" y2="{py(demo[0]):.1f}" stroke="#2ca02c" '
                   'stroke-dasharray="6,4"/>')
        legend.append(("demonstrations (training)", "#2ca02c", ' stroke-dasharray="6,4"'))
    for i, (label, color, dash) in enumerate(legend):
        out.append(f'<line x1="{W - R + 10}" y1="{T + 10 + 16 * i}" x2="{W - R + 30}" y2="{T + 10 + 16 * i}" '
                   f'stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{W - R + 34}" y="{T + 14 + 16 * i}">{label}</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
