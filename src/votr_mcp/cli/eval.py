"""``votr-mcp eval``: measure retrieval on a labelled query set, honestly (see eval/RESULTS.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from votr_mcp.cli._paths import cache_dir
from votr_mcp.cli._settings import SET_HELP

__all__ = ["register", "run", "StderrProgress", "cache_dir"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure retrieval on a labelled query set (markdown tables on stdout)",
        description="Search every query of a set in the ../shared/bench format and report top-k, MRR, hand-off at "
        "the adaptive k, abstention, whole-task recall, latency and tokens. Queries are searched by their text "
        "alone. Tune on --split dev, report on --split test.",
    )
    parser.add_argument("--data", required=True, type=Path,
                        help="folder with tools.jsonl and queries.jsonl, or any catalog folder (e.g. registry/) with --queries")
    parser.add_argument("--queries", type=Path, help="another query file over the same tools (e.g. queries_intents.jsonl)")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="test", help="rows to score (default: test)")
    parser.add_argument("--ablation", action="store_true", help="also run the full pipeline minus each stage it runs, plus each stage it leaves off, "
                        "and the naive hybrid (BM25 + TF-IDF + MiniLM, RRF, nothing after)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure to this JSON file")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N tasks per kind, chosen by hash (same rows every run)")
    parser.add_argument("--latency-samples", type=int, default=200, metavar="N", help="searches timed end to end (default 200)")
    parser.add_argument("--calibration", type=Path, help="calibration file to use instead of the shipped one")
    parser.add_argument("--distractors", type=Path, action="append", default=[], metavar="DIR",
                        help="add this catalog's tools to the search, never gold (repeatable): retrieval at scale, "
                        "e.g. ../shared/bench/smithery_distractors")
    parser.add_argument("--set", dest="settings", action="append", metavar="FIELD=VALUE", help=SET_HELP)
    parser.add_argument("--cache-dir", type=Path, help="embedding cache folder (default: the user cache dir; env VOTR_CACHE_DIR)")
    parser.set_defaults(handler=run)


class StderrProgress:
    """Progress on stderr: a rewritten line on a terminal, a line every few seconds otherwise."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._tty = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        final = done >= total
        if not final and now - self._last < (0.2 if self._tty else 5.0):
            return
        self._last = now
        text = f"{self.prefix}{label}: {done}/{total}"
        if self._tty:
            sys.stderr.write("\r" + text.ljust(60) + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _check_data(args: argparse.Namespace) -> None:
    from votr_mcp.errors import CatalogError
    from votr_mcp.evaluation.data import catalog_of, queries_of

    tools = catalog_of(args.data)
    if tools == args.data and not (args.queries is not None and args.data.is_dir()):
        raise CatalogError(f"'{args.data / 'tools.jsonl'}' not found; --data takes a folder holding tools.jsonl and "
                           "queries.jsonl (e.g. ../shared/bench/mscbench), a folder of our own queries.jsonl with a "
                           "'catalog' file (eval/queries/human/registry), or any catalog folder (e.g. registry/) "
                           "together with --queries FILE")
    queries = args.queries or queries_of(args.data)
    if not queries.is_file():
        raise CatalogError(f"query file '{queries}' not found; pass --queries FILE or put queries.jsonl in {args.data}")
    if args.limit is not None and args.limit < 1:
        raise CatalogError(f"--limit must be a positive number of tasks per kind, got {args.limit}")
    for extra in args.distractors:
        if not extra.exists():
            raise CatalogError(f"--distractors '{extra}' not found; pass a catalog folder or file, e.g. "
                               "../shared/bench/smithery_distractors")
    if args.json is not None:
        _check_writable(args.json)


def _check_writable(out: Path) -> None:
    """Fail before the evaluation, not after it, when the --json file cannot be written."""
    from votr_mcp.errors import CatalogError

    if out.is_dir():
        raise CatalogError(f"--json '{out}' is a folder; give a file path, e.g. {out / 'results.json'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}.", delete=True):
            pass
    except OSError as exc:
        raise CatalogError(f"cannot write --json '{out}' ({exc.strerror or exc}); choose a writable path") from exc


def _write_json(out: Path, report: dict[str, Any]) -> None:
    """Write through a temporary file and rename, so an old file is never left half-written."""
    from votr_mcp.errors import CatalogError

    text = json.dumps(report, indent=1, sort_keys=False) + "\n"
    partial: str | None = None
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=out.parent, prefix=f".{out.name}.",
                                         delete=False) as tmp:
            partial = tmp.name
            tmp.write(text)
        os.replace(partial, out)
    except OSError as exc:
        if partial is not None:
            Path(partial).unlink(missing_ok=True)
        raise CatalogError(f"cannot write --json '{out}' ({exc.strerror or exc}); the tables above are complete") from exc


def run(args: argparse.Namespace) -> int:
    from votr_mcp.cli._settings import retrieval_config
    from votr_mcp.evaluation.adapter import PipelineFactory
    from votr_mcp.evaluation.report import render_report
    from votr_mcp.evaluation.suite import SPLIT_RULE, EvalSpec, evaluate, machine

    _check_data(args)
    config = retrieval_config(args.settings)
    spec = EvalSpec(data=args.data, queries=args.queries, split=args.split, limit=args.limit,
                    latency_samples=args.latency_samples, ablation=args.ablation, distractors=tuple(args.distractors))
    factory = PipelineFactory.from_data(args.data, distractors=args.distractors, calibration=args.calibration or "shipped",
                                        cache_dir=cache_dir(args.cache_dir), ablation=args.ablation, config=config)
    if args.split == "dev":
        factory = factory.cross_fitted()  # dev rows fitted the query adapter: each is read by the fit that left it out
    report = evaluate(spec, factory, StderrProgress(f"{spec.name} "))
    report["command"] = "votr-mcp eval " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["eval"] else None
    report["machine"] = machine()
    report["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    report["split_rule"] = SPLIT_RULE
    report["pipeline"] = factory.describe()
    sys.stdout.write(render_report(report, level=2))
    if args.json is not None:
        _write_json(args.json, report)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
