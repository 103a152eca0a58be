"""``votr-mcp calibrate``: fit adaptive-k and abstention thresholds on DEV rows only, and save them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from votr_mcp.cli._paths import add_fit_arguments

    parser = subparsers.add_parser(
        "calibrate",
        help="fit adaptive k and abstention on the dev split of one or more query sets",
        description="Search the dev rows of each --data set with adaptive k switched off, fit the split-conformal "
        "set threshold and the abstention threshold on them, and write the calibration file the search "
        "loads. Test rows are never read. Repeat --data to fit on several catalogs at once.",
    )
    parser.add_argument("--k-data", type=Path, action="append",
                        help="only these --data sets' rows set adaptive k (repeatable); all sets still set abstention")
    parser.add_argument("--bound-together", type=Path, nargs="+", action="append", default=[], metavar="DATA",
                        help="--data sets whose false abstention is bounded as one (repeatable, one group each): "
                        "sets of one style, each too small to bound alone")
    parser.add_argument("--coverage", type=float, default=0.97,
                        help="nominal coverage of the returned set (default 0.97, the shipped level)")
    parser.add_argument("--false-abstain", type=float, default=0.03,
                        help="highest share of answerable queries allowed to get zero tools, on each --data set or "
                        "--bound-together group (default 0.03)")
    parser.add_argument("--abstain-confidence", type=float, default=0.9,
                        help="probability that the --false-abstain bound holds on new rows, over the draw of the dev "
                        "rows (default 0.9; 0 bounds it only in expectation, which a small set can overshoot)")
    parser.add_argument("--fresh", action="store_true",
                        help="fit without regard to the calibration being replaced (by default a refit starts from it: the "
                        "abstention retuning climbs from its weights first, and its temperature and mix stay unless others "
                        "make k clearly smaller, so a small change of the rows keeps its optimum)")
    add_fit_arguments(parser, "calibration",
                      "at most N dev tasks per kind and set, chosen by hash, so one big set cannot outweigh the rest")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.cli._paths import check_fit_inputs, report_fit
    from votr_mcp.cli.eval import StderrProgress, cache_dir
    from votr_mcp.evaluation.calibration import calibrate_on
    from votr_mcp.retrieval.calibration import check_levels

    check_fit_inputs(args.data, args.limit)
    check_levels(args.coverage, args.false_abstain, args.abstain_confidence)  # before any search, not after
    fitted, out, counts = calibrate_on(args.data, coverage=args.coverage, false_abstain=args.false_abstain,
                                       abstain_confidence=args.abstain_confidence,
                                       limit=args.limit, out=args.out, cache_dir=cache_dir(args.cache_dir),
                                       k_datas=args.k_data, bound_together=args.bound_together, fresh=args.fresh,
                                       progress=StderrProgress("calibrate "))
    report_fit(counts, "searches", f"calibration written to {out}")
    for key, value in fitted.items():
        print(f"{key}: {value}")
    print(f"nominal coverage: {fitted['coverage']:.2f} (check it on held-out rows: votr-mcp eval --data DIR --split test)")
    return 0
