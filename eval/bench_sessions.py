"""Soak benchmark of the session layer: do sessions leave memory behind when abandoned?

    python eval/bench_sessions.py [--sessions 10000] [--rounds 3] [--write eval/SESSIONS_BENCH.md]

Each round creates ``--sessions`` sessions, each playing a short agent trace (one search
binding five tools, a few calls with varied arguments, one identical-call loop that trips
the guard, a re-search), then abandons them all. Time is a manual clock, so "abandoned" is
exact: the clock moves past the idle timeout and ``collect()`` runs.

The workload runs twice, each in a fresh interpreter, because measuring changes memory:
once under ``python -X tracemalloc`` for the bytes Python objects hold (the figure that shows
a leak; tracing starts with the interpreter, so the baseline is the whole Python heap of a
process with the session layer loaded), and once untraced for the process RSS (whose
figures tracemalloc's own tables would inflate). Goal: after every collection, traced
memory is back within 10% of the baseline.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import json
import platform
import subprocess
import sys
import time
import tracemalloc
from array import array
from dataclasses import asdict, dataclass
from pathlib import Path

from votr_mcp.session import GuardSettings, ManualClock, SessionManager, SessionSettings

TOOLS = [f"server{s}__tool{t}" for s in range(40) for t in range(25)]  # 1,000 call names


@dataclass
class Point:
    label: str
    value: int  # bytes: traced Python heap or RSS, depending on the pass
    live: int


def rss_bytes() -> int:
    """Resident set size of this process (Linux); 0 where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def load_libc() -> ctypes.CDLL | None:
    """The C library, for ``malloc_trim``; None where there is none to call (not glibc)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.malloc_trim  # noqa: B018 - raises AttributeError outside glibc
    except (OSError, AttributeError, TypeError):
        return None
    return libc


def measure(values: array, lives: array, at: int, manager: SessionManager, traced: bool) -> None:
    """Record one point into preallocated arrays.

    Nothing long-lived may be allocated while sessions fill the heap: one surviving object
    pins a whole allocator arena, and the benchmark would then measure its own bookkeeping.
    """
    gc.collect()
    values[at] = tracemalloc.get_traced_memory()[0] if traced else rss_bytes()
    lives[at] = len(manager)


def play_trace(manager: SessionManager, clock: ManualClock, i: int) -> int:
    """One agent session; returns how many guard notes it produced."""
    session = manager.resolve(transport_key=f"conn-{i}")
    picked = [TOOLS[(i * 7 + k * 131) % len(TOOLS)] for k in range(5)]
    session.after_search(picked)
    notes = 0
    for step in range(6):
        name = picked[step % 3]
        session.admit(name)
        notes += session.after_call(name, {"id": step, "query": f"item {i}"}) is not None
    for _ in range(4):  # a loop: the 4th identical call trips the guard
        session.admit(picked[0])
        notes += session.after_call(picked[0], {"url": f"https://example.com/{i}/"}) is not None
    session.after_search(picked[:2])  # re-search brings the evicted tool back
    clock.advance(0.001)
    return notes


def run(sessions: int, rounds: int) -> dict:
    """The workload in this process; measures whatever this process can measure."""
    traced = tracemalloc.is_tracing()
    # Loaded once, before the workload: loading it later allocates objects that outlive a round.
    libc = None if traced else load_libc()
    trim = libc is not None
    labels = ["baseline"]
    for r in range(1, rounds + 1):
        labels += [f"round {r}: {sessions:,} live", f"round {r}: after collection"]
        labels += [f"round {r}: after collection + malloc_trim"] if trim else []
    values, lives, counts = array("q", [0] * len(labels)), array("q", [0] * len(labels)), array("q", [0, 0])
    clock = ManualClock()
    settings = SessionSettings(guard=GuardSettings(max_repeats=3), max_sessions=sessions, idle_seconds=1800.0)
    manager = SessionManager(settings, clock=clock, pinned=TOOLS[:3])
    measure(values, lives, 0, manager, traced)
    at = 1
    started = time.perf_counter()
    for r in range(1, rounds + 1):
        for i in range(sessions):
            counts[0] += play_trace(manager, clock, r * sessions + i)
        measure(values, lives, at, manager, traced)
        clock.advance(settings.idle_seconds + 1)
        manager.collect()
        measure(values, lives, at + 1, manager, traced)
        at += 2
        if libc is not None:
            libc.malloc_trim(0)
            measure(values, lives, at, manager, traced)
            at += 1
    counts[1] = manager.collected
    return {
        "traced": traced,
        "elapsed_s": time.perf_counter() - started,
        "guard_notes": counts[0],
        "collected": counts[1],
        "points": [asdict(Point(label, values[k], lives[k])) for k, label in enumerate(labels)],
    }


def child(sessions: int, rounds: int, traced: bool) -> dict:
    """Run the workload in a fresh interpreter (under -X tracemalloc when ``traced``)."""
    cmd = [sys.executable, *(["-X", "tracemalloc=1"] if traced else []), __file__, "--child",
           "--sessions", str(sessions), "--rounds", str(rounds)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mib(n: float) -> str:
    return f"{n / 2**20:.2f}"


def pct(value: int, base: int) -> str:
    return f"{(value - base) / base * 100:+.1f}%"


def report(traced: dict, untraced: dict, sessions: int, rounds: int, command: str) -> tuple[str, bool]:
    tp, rp = traced["points"], untraced["points"]
    t0, r0 = tp[0]["value"], rp[0]["value"]
    ok = all(p["value"] <= t0 * 1.10 for p in tp if "after collection" in p["label"])
    per_session = (tp[1]["value"] - t0) / sessions
    lines = [
        "# Session soak benchmark",
        "",
        f"Command: `{command}`",
        "",
        f"Python {platform.python_version()} on {platform.machine()}. {sessions:,} sessions per round, {rounds} rounds, "
        "each session a scripted agent trace (search, 6 calls, an identical-call loop that trips the guard, "
        f"re-search), then abandoned; a manual clock moves past the idle timeout and `collect()` runs. "
        f"Untraced pass: {untraced['elapsed_s']:.1f} s for {sessions * rounds:,} sessions "
        f"({untraced['elapsed_s'] / (sessions * rounds) * 1e6:.0f} µs each); "
        f"{untraced['guard_notes']:,} guard notes; {untraced['collected']:,} sessions collected.",
        "",
        "| point | live sessions | traced Python heap MiB | vs baseline | RSS MiB (untraced run) | vs baseline |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    by_label = {t["label"]: t for t in tp}
    for r in rp:
        t = by_label.get(r["label"])
        heap = f"{mib(t['value'])} | {pct(t['value'], t0)}" if t else "– | –"
        lines.append(f"| {r['label']} | {r['live']:,} | {heap} | {mib(r['value'])} | {pct(r['value'], r0)} |")
    peaks = [r["value"] for r in rp if r["label"].endswith(" live")]
    afters = [r["value"] for r in rp if r["label"].endswith("after collection")]
    lines += [
        "",
        f"Python heap per live session: {per_session / 1024:.1f} KiB.",
        f"Peak RSS, round 1 -> round {rounds}: {mib(peaks[0])} -> {mib(peaks[-1])} MiB ({pct(peaks[-1], peaks[0])}); "
        f"RSS after collection: {mib(afters[0])} -> {mib(afters[-1])} MiB ({pct(afters[-1], afters[0])}).",
        f"Goal (traced heap after every collection within 10% of baseline): {'met' if ok else 'NOT met'}.",
        "",
        "The traced heap is what the session layer holds; it is the leak check. RSS is what the OS",
        "sees: the C allocator keeps freed memory for reuse, so after collection RSS stays between",
        "baseline and peak, and the peak must not climb from round to round. The `malloc_trim` rows",
        "(the untraced run only; the server does not call it) show how much of that retained RSS is",
        "free allocator memory rather than live objects.",
        "",
    ]
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions per round (default 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="create-and-abandon rounds (default 3)")
    parser.add_argument("--write", type=Path, help="also write the markdown report to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.rounds < 1:
        parser.error("--sessions and --rounds must be at least 1")
    if args.child:
        print(json.dumps(run(args.sessions, args.rounds)))
        return 0
    untraced = child(args.sessions, args.rounds, traced=False)
    traced = child(args.sessions, args.rounds, traced=True)
    command = " ".join(["python eval/bench_sessions.py", *(sys.argv[1:] if argv is None else argv)])
    text, ok = report(traced, untraced, args.sessions, args.rounds, command)
    print(text)
    if args.write:
        args.write.write_text(text, encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
