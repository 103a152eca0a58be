"""``votr-mcp fit-adapter``: fit the query adapter on DEV rows only, and save it."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from votr_mcp.cli._paths import add_fit_arguments

    parser = subparsers.add_parser(
        "fit-adapter",
        help="fit the query-vector adapter on the dev split of one or more query sets",
        description="Embed the answerable single-step dev rows of each --data set and fit a low-rank correction of "
        "query vectors that brings each nearer its gold tool among its catalog's tools (each set weighted equally), "
        "plus one fit per fold without that fold, for cross-fitting. Test rows are never read. Refit the rerank "
        "(votr-mcp fit-rerank) and then the calibration (votr-mcp calibrate) afterwards: both read the adapted cosines.",
    )
    parser.add_argument("--rank", type=int, default=16, help="rank of the correction U·V (default 16)")
    parser.add_argument("--l2", type=float, default=0.01, help="L2 penalty on U·V (default 0.01)")
    parser.add_argument("--cv", action="store_true",
                        help="first print dense-only top-1/top-5 per set on its dev rows, without the adapter and with "
                        "one fit on the other sets only (leave one set out), to judge whether it carries over")
    add_fit_arguments(parser, "adapter")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.cli._paths import check_fit_inputs, report_fit
    from votr_mcp.cli.eval import StderrProgress, cache_dir
    from votr_mcp.errors import CatalogError
    from votr_mcp.evaluation.query_adapter_fit import collect_adapter_rows, fit_adapter_on, leave_one_set_out

    check_fit_inputs(args.data, args.limit)
    if args.rank < 1 or args.l2 < 0:
        raise CatalogError(f"--rank must be at least 1 and --l2 non-negative; got {args.rank} and {args.l2}")
    collected = collect_adapter_rows(args.data, limit=args.limit, cache_dir=cache_dir(args.cache_dir),
                                     progress=StderrProgress("fit-adapter "))
    if args.cv:
        print("# dense-only top-1 / top-5 on each set's dev rows: no adapter -> adapter fit on the other sets")
        for name, (before, after) in leave_one_set_out(collected, rank=args.rank, l2=args.l2).items():
            print(f"{name:>18}: {before[0]:.3f} -> {after[0]:.3f} / {before[1]:.3f} -> {after[1]:.3f}")
    adapter, out, counts = fit_adapter_on(args.data, limit=args.limit, rank=args.rank, l2=args.l2, out=args.out,
                                          collected=collected)
    size = float(((adapter.u @ adapter.v) ** 2).sum()) ** 0.5
    report_fit(counts, "queries", f"query adapter written to {out} (rank {args.rank}, |U·V| {size:.3f})")
    print("now refit the rerank, then the calibration: votr-mcp fit-rerank ... && votr-mcp calibrate ...")
    return 0
