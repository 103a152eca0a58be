"""``votr-mcp fit-rerank``: fit the learned head rerank on DEV rows only, and save it."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from votr_mcp.cli._paths import add_fit_arguments

    parser = subparsers.add_parser(
        "fit-rerank",
        help="fit the learned head rerank on the dev split of one or more query sets",
        description="Search the answerable dev rows of each --data set with the rerank off, collect the fused head "
        "and its features, fit the rerank's weights (listwise softmax loss, each set's share growing with the square root of its size) and write the "
        "file the search loads. Test rows are never read. Refit the calibration afterwards (votr-mcp calibrate): "
        "its thresholds read the reranked scores.",
    )
    parser.add_argument("--l2", type=float, default=1e-2, help="L2 penalty on the standardised weights (default 0.01)")
    parser.add_argument("--head", type=int, default=20, help="fused candidates the rerank reorders (default 20)")
    parser.add_argument("--cv", type=int, default=0, metavar="R",
                        help="first print top-1 per set on held-out halves of the dev rows, R rounds of 2 folds "
                        "(rerank fit on the other half, and the fusion alone), to judge a change to the fit")
    add_fit_arguments(parser, "rerank model")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.cli._paths import check_fit_inputs, report_fit
    from votr_mcp.cli.eval import StderrProgress, cache_dir
    from votr_mcp.errors import CatalogError
    from votr_mcp.evaluation.rerank_fit import collect_rows, cross_validate, fit_rerank_on

    check_fit_inputs(args.data, args.limit)
    if args.head < 2 or args.l2 < 0:
        raise CatalogError(f"--head must be at least 2 and --l2 non-negative; got {args.head} and {args.l2}")
    if args.cv < 0:
        raise CatalogError(f"--cv takes a number of rounds (0 for none), got {args.cv}")
    collected = collect_rows(args.data, limit=args.limit, head=args.head, cache_dir=cache_dir(args.cache_dir),
                             progress=StderrProgress("fit-rerank "))
    if args.cv:
        print(f"# held-out top-1 on dev, {args.cv} x 2-fold (rerank / fusion alone)")
        for name, (reranked, fused) in cross_validate(collected[0], l2=args.l2, head=args.head, repeats=args.cv).items():
            print(f"{name:>18}: {reranked:.3f} / {fused:.3f}")
    model, out, counts = fit_rerank_on(args.data, limit=args.limit, l2=args.l2, head=args.head, out=args.out,
                                       collected=collected)
    report_fit(counts, "queries", f"rerank model written to {out}")
    for name, weight in zip(model.features, model.weights):
        print(f"{name:>18}: {weight:+.3f}")
    print("dev loss per set: " + ", ".join(f"{k} {v:.3f}" for k, v in model.dev_loss.items()))
    print("now refit the calibration on the reranked scores: votr-mcp calibrate ...")
    return 0
