"""Plots for the dashboard as inline SVG and HTML: drawn on the server, no script, no build step.

A rate is drawn only where it has a denominator: a minute without searches leaves a gap in the
line instead of a fall to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["rate_chart", "heatmap"]

_W, _H, _PAD = 640, 180, 32
COLORS = ("#2563eb", "#dc2626", "#059669", "#d97706")


def rate_chart(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> str:
    """A line chart of rates in [0, 1] over ``labels`` (x), one line per (name, values); None is a gap."""
    n = max(len(labels), 2)
    x = lambda i: _PAD + i * (_W - 2 * _PAD) / (n - 1)
    y = lambda v: _H - _PAD - v * (_H - 2 * _PAD)
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
             'xmlns="http://www.w3.org/2000/svg">', f"<title>{escape(title)}</title>"]
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<line x1="{_PAD}" x2="{_W - _PAD}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>'
                     f'<text x="4" y="{y(tick) + 4:.1f}" font-size="10">{int(tick * 100)}%</text>')
    for i in (0, len(labels) - 1):
        if 0 <= i < len(labels):
            parts.append(f'<text x="{x(i):.1f}" y="{_H - 8}" font-size="10" text-anchor="middle">{escape(labels[i])}</text>')
    for (_name, values), color in zip(series, COLORS):
        for run in _runs(values):
            points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run)
            if len(run) == 1:
                i, v = run[0]
                parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{color}"/>')
            else:
                parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>')
    legend_x = _PAD
    for (name, _), color in zip(series, COLORS):
        parts.append(f'<rect x="{legend_x}" y="6" width="10" height="10" fill="{color}"/>'
                     f'<text x="{legend_x + 14}" y="15" font-size="11">{escape(name)}</text>')
        legend_x += 14 + 8 * len(name) + 16
    parts.append("</svg>")
    return "".join(parts)


def _runs(values: Sequence[float | None]) -> list[list[tuple[int, float]]]:
    runs: list[list[tuple[int, float]]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((i, max(0.0, min(1.0, v))))
    return [r for r in runs if r]


def heatmap(columns: Sequence[str], rows: Sequence[tuple[str, Sequence[int]]]) -> str:
    """A table of counts (rows: tools, columns: hours), each cell shaded by its share of the largest count."""
    if not rows:
        return '<p class="empty">No tool calls yet.</p>'
    top = max((max(counts) for _, counts in rows), default=0) or 1
    head = "".join(f'<th class="hour">{escape(c)}</th>' for c in columns)
    body = []
    for name, counts in rows:
        cells = "".join(
            f'<td class="cell" title="{escape(name)} at {escape(col)}: {n} calls" '
            f'style="background: rgba(37, 99, 235, {0.08 + 0.92 * n / top:.2f})">{n or ""}</td>' if n else
            f'<td class="cell" title="{escape(name)} at {escape(col)}: 0 calls"></td>'
            for n, col in zip(counts, columns))
        body.append(f'<tr><th class="tool">{escape(name)}</th>{cells}<td class="total">{sum(counts)}</td></tr>')
    return (f'<table class="heatmap"><thead><tr><th>tool</th>{head}<th>total</th></tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')
