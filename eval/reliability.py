"""Run the attack/fault suite and write eval/RELIABILITY.md.

    python eval/reliability.py [--only NAME ...] [--out eval/RELIABILITY.md] [--deadline 300]

Each module under eval/reliability_checks/ lists checks (see eval/reliability_checks/__init__.py); every check
runs with a deadline, on loopback only, and cleans up what it starts. The report gives one line
per property: the property, the figure, whether it held, and the command.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import pkgutil
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "tests"))

from reliability_checks import Finding

COMMAND = "python eval/reliability.py"


def modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(ROOT / "reliability_checks")]) if not m.name.startswith("_"))


def run_check(check, deadline: float) -> list[Finding]:  # type: ignore[no-untyped-def]
    name = getattr(check, "__name__", repr(check))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(check)
    try:
        got = future.result(timeout=deadline)
    except concurrent.futures.TimeoutError:
        return [Finding(name, f"no answer within {deadline:.0f} s", False)]
    except Exception as exc:  # a broken check is a failed finding, with its reason
        return [Finding(name, f"check failed: {type(exc).__name__}: {exc}", False)]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return list(got) if isinstance(got, (list, tuple)) else [got]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", help=f"run only these modules ({', '.join(modules())})")
    p.add_argument("--out", type=Path, default=ROOT / "RELIABILITY.md")
    p.add_argument("--deadline", type=float, default=300.0, help="seconds each check may take")
    args = p.parse_args(argv)
    chosen = args.only or modules()
    unknown = sorted(set(chosen) - set(modules()))
    if unknown:
        p.error(f"unknown module(s) {unknown}; choose from {modules()}")
    rows: list[tuple[str, Finding]] = []
    started = time.monotonic()
    for name in chosen:
        module = importlib.import_module(f"reliability_checks.{name}")
        for check in module.CHECKS:
            for finding in run_check(check, args.deadline):
                rows.append((name, finding))
                mark = "ok  " if finding.ok else "FAIL"
                print(f"{mark} [{name}] {finding.prop}: {finding.figure}", flush=True)
    held = sum(f.ok for _, f in rows)
    lines = ["# Reliability: attacks and faults", "",
             f"Made by `{COMMAND}{' --only ' + ' '.join(args.only) if args.only else ''}` on {platform.node()} "
             f"({platform.python_version()}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"in {time.monotonic() - started:.0f} s: {held} of {len(rows)} properties hold.", "",
             "| area | property | figure | holds | command |", "|---|---|---|---|---|"]
    for name, f in rows:
        lines.append(f"| {name} | {f.prop} | {f.figure} | {'yes' if f.ok else '**no**'} | `{f.command or COMMAND + ' --only ' + name}` |")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{held}/{len(rows)} hold; wrote {args.out}")
    return 0 if held == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
