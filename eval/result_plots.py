"""PNG plots of eval/results.json, drawn by make_results.py next to the tables of eval/RESULTS.md.

    python eval/result_plots.py [--results eval/results.json] [--out eval/plots]

redraws them from a results file without re-running anything (seconds). Each plot says in its
title which command produced the figures. Three plots:

- ``quality_<split>.png``: top-1, top-3, hand-off and no-tool abstention per set;
- ``ablation_<split>.png``: the change in top-1 when each stage is switched off (or on), set by stage;
- ``latency.png``: search latency p50/p95 per set (without the query embedding when it was not timed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["draw", "quality_plot", "ablation_plot", "latency_plot"]

QUALITY = (("top1", "top-1"), ("top3", "top-3"), ("handoff", "hand-off"), ("abstain_no_tool", "abstain (no-tool rows)"))
SOURCE = "python eval/make_results.py"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(report: dict[str, Any]) -> str:
    return str(report["set"]) + ("" if report["split"] in ("test", "dev") else f" ({report['split']})")


def quality_plot(reports: Sequence[dict[str, Any]], split: str, out: Path, source: str = SOURCE) -> Path | None:
    """Grouped bars per set for the reports of ``split`` (the in-repo sets, scored on all rows, join the test plot)."""
    rows = [r for r in reports if r["split"] == split or (split == "test" and r["split"] == "all")]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) * len(QUALITY) / 2 + 1.8), dpi=110)
    height = 0.8 / len(QUALITY)
    for j, (key, name) in enumerate(QUALITY):
        values = [r["overall"].get(key) for r in rows]
        ys = [i + j * height for i in range(len(rows))]
        ax.barh(ys, [v if v is not None else 0.0 for v in values], height=height, label=name)
        for y, v in zip(ys, values):
            if v is None:
                ax.text(0.01, y, "n/a", va="center", fontsize=6, color="#666")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(rows))], [_label(r) for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("share of rows")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"Retrieval quality per set, {split} split — {source}", fontsize=9)
    return _save(fig, plt, out)


def ablation_plot(reports: Sequence[dict[str, Any]], split: str, out: Path, metric: str = "top1", source: str = SOURCE) -> Path | None:
    """A set-by-stage grid of the change in ``metric`` against the full pipeline (red: the stage helps)."""
    rows = [r for r in reports if r["split"] in (split, "all") and r.get("ablation") and "full" in r["ablation"]]
    if not rows:
        return None
    stages = [s for s in dict.fromkeys(s for r in rows for s in r["ablation"]) if s != "full"]
    grid: list[list[float | None]] = []
    for r in rows:
        full = r["ablation"]["full"].get(metric)
        grid.append([None if full is None or s not in r["ablation"] or r["ablation"][s].get(metric) is None
                     else r["ablation"][s][metric] - full for s in stages])
    import numpy as np

    values = np.array([[np.nan if v is None else v for v in row] for row in grid], dtype=float)
    bound = max(0.01, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.01)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.0 + 0.62 * len(stages)), max(2.5, 1.4 + 0.42 * len(rows))), dpi=110)
    image = ax.imshow(values, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    ax.set_xticks(range(len(stages)), stages, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), [_label(r) for r in rows], fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if v is None else f"{v:+.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, shrink=0.8, label=f"change in {metric} against the full pipeline")
    ax.set_title(f"Ablation, {split} split: {metric} with each stage switched — {source}", fontsize=9)
    return _save(fig, plt, out)


def latency_plot(reports: Sequence[dict[str, Any]], out: Path, source: str = SOURCE) -> Path | None:
    """p50 and p95 per set on the held-out reports; the query embedding is included when it was timed."""
    rows = []
    for r in reports:
        if r["split"] not in ("test", "all"):
            continue
        lat = r["overall"].get("latency_ms") or {}
        with_embed = lat.get("p50") is not None
        p50, p95 = (lat.get("p50"), lat.get("p95")) if with_embed else (lat.get("no_embed_p50"), lat.get("no_embed_p95"))
        if p50 is not None:
            rows.append((_label(r) + ("" if with_embed else " (no embed)"), p50, p95 or p50))
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.6), dpi=110)
    ys = range(len(rows))
    ax.barh([y - 0.2 for y in ys], [r[1] for r in rows], height=0.4, label="p50")
    ax.barh([y + 0.2 for y in ys], [r[2] for r in rows], height=0.4, label="p95")
    ax.set_yticks(list(ys), [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds per search")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Search latency per set — {source}", fontsize=9)
    return _save(fig, plt, out)


def draw(reports: Sequence[dict[str, Any]], folder: Path, source: str = SOURCE) -> dict[str, Path]:
    """Every plot into ``folder``; returns name -> path of those that had data."""
    made = {
        "quality_test": quality_plot(reports, "test", folder / "quality_test.png", source),
        "quality_dev": quality_plot(reports, "dev", folder / "quality_dev.png", source),
        "ablation_test": ablation_plot(reports, "test", folder / "ablation_test.png", source=source),
        "latency": latency_plot(reports, folder / "latency.png", source),
    }
    return {name: path for name, path in made.items() if path is not None}


def _save(fig: Any, plt: Any, out: Path) -> Path:
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=here / "results.json", help="a results.json of make_results.py")
    parser.add_argument("--out", type=Path, default=here / "plots", help="folder for the PNGs")
    args = parser.parse_args(argv)
    document = json.loads(args.results.read_text(encoding="utf-8"))
    command = (document.get("meta") or {}).get("command", SOURCE)
    for _name, path in draw(document["reports"], args.out, command).items():
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
