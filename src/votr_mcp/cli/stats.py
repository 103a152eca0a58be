"""``votr-mcp stats``: what the outcome log says about search (hit rate, abstentions, top queries).

    votr-mcp stats [--store PATH] [--json] [--top N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from votr_mcp.cli.index import add_store_argument, store_path

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="hit rate (rank of the called tool), abstentions and top queries from the outcome log",
        description="Figures over the searches and calls `votr-mcp serve` recorded in its store (unless it ran with "
        "--no-learning): how often the tool the agent called was the first one returned, where it ranked, how often "
        "searches abstained, and the most frequent requests.",
    )
    add_store_argument(parser)
    parser.add_argument("--top", type=int, default=10, metavar="N", help="how many top queries to list (default 10)")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.errors import StoreError
    from votr_mcp.learning.stats import outcome_stats, stats_text
    from votr_mcp.store import MEMORY, Store
    from votr_mcp.store.events import EventStore

    path = store_path(args)
    if path != MEMORY and not Path(path).exists():
        raise StoreError(f"no store at '{path}'; `votr-mcp serve` creates it, or pass --store PATH")
    with Store.open(path) as store:
        events = EventStore(store)
        figures = outcome_stats(events.searches(), events.calls(), top=args.top)
    print(json.dumps(figures, indent=2) if args.json else stats_text(figures), file=sys.stdout)
    return 0
