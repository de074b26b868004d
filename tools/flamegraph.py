#!/usr/bin/env python3
"""Render folded stacks ("frame;frame;... weight" per line) as a flame graph SVG.

    whyslow report app.data --format folded | tools/flamegraph.py --title "..." > graph.svg

A small stand-in for flamegraph.pl (not packaged in Debian 12), enough for whyslow's causal
flame graphs: the bottom frame is the waiting thread, each tower climbs through the hops of its
chain, widths are time. Python 3 standard library only.
"""
import argparse
import html
import sys

WIDTH, ROW, FONT = 1200, 18, 12


def build(lines):
    root = {"name": "all", "w": 0, "kids": {}}
    for no, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, weight = line.rpartition(" ")
        if not stack or not weight.isdigit():
            raise ValueError("line %d is not 'frame;frame weight': %r" % (no, line))
        w = int(weight)
        node = root
        node["w"] += w
        for f in stack.split(";"):
            node = node["kids"].setdefault(f, {"name": f, "w": 0, "kids": {}})
            node["w"] += w
    return root


def depth(node):
    return 1 + max((depth(k) for k in node["kids"].values()), default=0)


def colour(name):
    if name.startswith("[woken by"):
        return "rgb(120,160,230)"
    if name.startswith("[root:"):
        return "rgb(230,90,70)"
    if name.startswith("["):
        h = sum(map(ord, name)) % 60
        return "rgb(240,%d,60)" % (140 + h)
    return "rgb(160,200,120)"


def fmt_ns(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return "%.3g%s" % (ns / div, unit)
    return "%dns" % ns


def draw(node, x, level, scale, height, out):
    w = node["w"] * scale
    if w < 0.5:
        return
    y = height - (level + 1) * ROW
    label = "%s (%s, %.1f%%)" % (node["name"], fmt_ns(node["w"]), 100.0 * node["w"] / draw.total)
    out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" '
               'rx="2"/>' % (html.escape(label), x, y, w, ROW - 1, colour(node["name"])))
    chars = int(w / (FONT * 0.6))
    if chars >= 3:
        text = node["name"] if len(node["name"]) <= chars else node["name"][:chars - 2] + ".."
        out.append('<text x="%.1f" y="%d">%s</text>' % (x + 3, y + ROW - 5, html.escape(text)))
    out.append("</g>")
    for kid in sorted(node["kids"].values(), key=lambda k: k["name"]):
        draw(kid, x, level + 1, scale, height, out)
        x += kid["w"] * scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--title", default="whyslow: causal flame graph (width = time blocked)")
    ap.add_argument("input", nargs="?", help="folded stacks (default: standard input)")
    a = ap.parse_args()
    try:
        lines = open(a.input).readlines() if a.input else sys.stdin.readlines()
        root = build(lines)
    except (OSError, ValueError) as e:
        sys.exit("flamegraph.py: %s" % e)
    if not root["w"]:
        sys.exit("flamegraph.py: no stacks in the input")
    draw.total = root["w"]
    height = (depth(root) + 2) * ROW
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" '
           'font-size="%d">' % (WIDTH, height, FONT),
           '<rect width="100%%" height="100%%" fill="rgb(250,250,245)"/>',
           '<text x="%d" y="%d" text-anchor="middle" font-size="%d">%s</text>'
           % (WIDTH // 2, ROW, FONT + 2, html.escape(a.title))]
    draw(root, 10, 0, (WIDTH - 20) / root["w"], height, out)
    out.append("</svg>")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
