"""eval/replay.py's accounting: what its report says about the paraphrases missed and the rows held back."""

import importlib.util
import sys
from pathlib import Path
from typing import Any

from votr_mcp.evaluation.data import QueryRow

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "replay.py"


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location("replay", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


replay = load_script()
GOLD, X, Y = ("s", "gold"), ("s", "x"), ("t", "y")


def need(name: str) -> QueryRow:
    return QueryRow(name, f"the whole task {name}", (GOLD,), "single")


def test_each_paraphrase_missed_is_counted_by_what_its_needs_first_visit_handed_off() -> None:
    a, b, c, d, e = (need(n) for n in "abcde")
    seen = [
        (replay.Visit(a, 0, a.query, "first"), [GOLD, X]),  # the gold at top-1: learned, nothing passed over
        (replay.Visit(b, 0, b.query, "first"), [X, GOLD]),  # X passed over for the gold
        (replay.Visit(c, 0, c.query, "first"), [Y, GOLD]),  # Y passed over, not X
        (replay.Visit(d, 0, d.query, "first"), [GOLD]),
        (replay.Visit(e, 0, e.query, "first"), [X]),
        (replay.Visit(a, 1, "short", "paraphrase"), [X, GOLD]),
        (replay.Visit(b, 1, "short", "paraphrase"), [X, GOLD]),
        (replay.Visit(c, 1, "short", "paraphrase"), [X, Y, GOLD]),
        (replay.Visit(d, 1, "short", "paraphrase"), [X, Y]),  # missed, the gold not handed off
        (replay.Visit(e, 1, "short", "paraphrase"), [GOLD]),  # a hit: not counted
        (replay.Visit(b, 2, b.query, "repeat"), [X, GOLD]),  # a repeat: not a paraphrase
    ]
    assert replay.paraphrase_misses(seen) == {"missed": 4, "gold_handed_off": 3, "first_gold_top1": 1,
                                              "first_passed_over_this_top1": 1, "first_other": 1}


def report_of(short: int) -> dict[str, Any]:
    """A replay report in the shape main() writes, every group at top-1 0.5 off and 0.75 on."""
    def group(top1: float, n: int = 4) -> dict[str, Any]:
        return {"n": n, "top1": top1 if n else None, "handoff": 1.0 if n else None}

    def mode(top1: float) -> dict[str, Any]:
        return {**group(top1), **{k: group(top1) for k in ("repeat", "paraphrase", "first")},
                "over_time": [group(top1)] * 4, "search_ms": {"p50": 10.0, "p95": 12.0},
                "halves": {h: {"revisit": group(top1), "held_back": group(top1), "held_back_short": group(top1, short)}
                           for h in replay.HALVES},
                "paraphrase_misses": {"missed": 2, "gold_handed_off": 1, "first_gold_top1": 1,
                                      "first_passed_over_this_top1": 0, "first_other": 0}}

    return {"off": mode(0.5), "on": mode(0.75), "held_back": {"off": group(0.5), "on": group(0.75)},
            "held_back_short": {"off": group(0.5, short), "on": group(0.75, short)},
            "setup": {"command": "python eval/replay.py --data d --json j", "tools": 3, "needs": 4, "visits": 3, "stream": 12,
                      "paraphrased_needs": 4, "held_back_rows": 4, "held_back_short_rows": short, "seed": 0, "seconds": 1.0}}


def test_the_page_shows_held_back_rows_in_the_short_style_and_the_paraphrase_misses_when_they_were_run() -> None:
    page = replay.markdown(report_of(short=4))
    assert "|   held back, short style | 4 | 0.500 | 0.750 | +25.0 |" in page
    assert "short style 0.500 / 0.750" in page
    assert "passed over this top-1 for the gold 0 / 0" in page
    without = replay.markdown(report_of(short=0))
    assert "held back, short style" not in without and "short style 0" not in without
