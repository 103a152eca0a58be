"""Orphans: however ``votr-mcp serve`` ends, nothing it started outlives it (issue 16, item 4).

Each run starts votr-mcp over stdio in front of real servers as users configure them (memory
through npx -> sh -> node, everything on node, time on python) and toy_server.py with a helper
process that does not read the MCP pipe; once all of them run, votr-mcp is stopped, and every
process it had started (children, grandchildren, counted from /proc by pid and start time) must
be gone within a few seconds. Shares tests/upstream/process_tree.py with tests/upstream/test_orphans.py.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from . import Finding

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "upstream"))

from process_tree import SERVED, Outcome, serve_and_stop, served_config

KILLS = 5
CLOSES = 3
TERMS = 2
WITHIN = 3.0  # seconds after the stop by which every process must be gone


def _runs(how: str, count: int) -> list[Outcome]:
    if not Path("/proc/self").is_dir():
        raise RuntimeError("counts processes from /proc (Linux only)")
    outcomes = []
    for _ in range(count):
        with tempfile.TemporaryDirectory(prefix="votr-orphans-") as tmp:
            outcomes.append(serve_and_stop(served_config(Path(tmp)), Path(tmp), SERVED, how, within=WITHIN))
    return outcomes


def _figure(outcomes: list[Outcome]) -> tuple[str, bool]:
    started = sum(len(o.started) for o in outcomes)
    left = sum(len(o.left) for o in outcomes)
    example = next((o.describe() for o in outcomes if o.left), "")
    slowest = max(o.seconds for o in outcomes)
    figure = (f"leaked processes: {left} of {started} started, {len(outcomes)} runs; "
              f"{'last gone' if not left else 'checked'} {slowest:.1f} s after the stop at the latest"
              f"{'; e.g. ' + example[:160] if example else ''}")
    return figure, left == 0


def sigkill() -> Finding:
    figure, ok = _figure(_runs("kill", KILLS))
    return Finding(f"kill -9 of votr-mcp serve: every upstream process and grandchild is gone within {WITHIN:.0f} s", figure, ok)


def stdin_closed() -> Finding:
    outcomes = _runs("eof", CLOSES)
    figure, ok = _figure(outcomes)
    exited = sum(o.exited for o in outcomes)
    return Finding(f"client closes stdin (graceful stop): votr-mcp exits and leaves no process ({WITHIN:.0f} s)",
                   f"exited by itself {exited} of {len(outcomes)}; {figure}", ok and exited == len(outcomes))


def sigterm() -> Finding:
    outcomes = _runs("term", TERMS)
    figure, ok = _figure(outcomes)
    exited = sum(o.exited for o in outcomes)
    return Finding("SIGTERM with stdin still open (graceful stop): votr-mcp exits within 18 s and leaves no process",
                   f"exited by itself {exited} of {len(outcomes)} (else SIGKILLed after 18 s); {figure}",
                   ok and exited == len(outcomes))


CHECKS = [sigkill, stdin_closed, sigterm]
