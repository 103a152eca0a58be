"""Risk-coverage of abstention per set: how many requests get an answer (coverage) against how many
of the answered ones get a wrong first tool (risk), as the abstention threshold moves.

A request is answered when its abstention score (the shipped calibration's logistic score over the
search's evidence, retrieval/evidence.py) is at or above the threshold; an answered no-tool request
is always wrong. The shipped threshold is marked on each curve. eval/make_results.py calls this for
the test split of every set and writes eval/risk_coverage.png; alone:

    python eval/risk_coverage.py --data ../shared/bench/mscbench --data eval/queries/human-registry --out /tmp/rc.png
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from votr_mcp.evaluation.adapter import PipelineFactory
from votr_mcp.evaluation.data import load_queries, queries_of, select_split
from votr_mcp.evaluation.harness import build_units, cap_per_kind


def curve(factory: PipelineFactory, query_file: Path, split: str, limit: int | None = None) -> dict[str, Any]:
    """Scores and correctness of each single-need search of one split, and the curve they make."""
    retriever = factory.retriever
    cal = retriever.calibration
    units = [u for u in build_units(cap_per_kind(select_split(load_queries(query_file), split), limit)) if not u.whole_task]
    vectors = factory.embed(units)
    scores, right = [], []
    for unit, prepared in zip(units, vectors):
        result = retriever.search(unit.query, query_vectors=prepared)
        gold = {key for step in unit.steps for key in step}
        score = cal.abstain_score(result.evidence) if cal is not None else float(result.evidence.get("top_cosine", 0))
        scores.append(score)
        right.append(bool(gold) and bool(result.ranked_keys) and result.ranked_keys[0] in gold)
    s, r = np.array(scores), np.array(right)
    order = np.argsort(-s)
    answered = np.arange(1, len(s) + 1)
    risk = np.cumsum(~r[order]) / answered
    coverage = answered / len(s)
    threshold = cal.abstain_threshold if cal is not None else float("-inf")
    at = int((s >= threshold).sum())
    return {"n": len(s), "coverage": coverage.tolist(), "risk": risk.tolist(),
            "shipped": {"coverage": at / len(s) if len(s) else 0.0,
                        "risk": float((~r[s >= threshold]).mean()) if at else 0.0}}


def plot(curves: dict[str, dict[str, Any]], out: Path, title: str) -> None:
    """One line per set, the shipped threshold as a dot on it; PNG at ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=110)
    for name, c in curves.items():
        (line,) = ax.plot(c["coverage"], c["risk"], label=f"{name} (n {c['n']})", linewidth=1.6)
        ax.plot([c["shipped"]["coverage"]], [c["shipped"]["risk"]], "o", color=line.get_color())
    ax.set_xlabel("coverage (share of requests answered)")
    ax.set_ylabel("risk (share of answered requests whose first tool is wrong)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", required=True, help="labelled set folder (repeatable)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = parser.parse_args(argv)
    curves = {}
    for data in args.data:
        factory = PipelineFactory.from_data(data)
        curves[data.name] = curve(factory, queries_of(data), args.split)
    plot(curves, args.out, f"Abstention risk-coverage, {args.split} split (dot: shipped threshold)")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
