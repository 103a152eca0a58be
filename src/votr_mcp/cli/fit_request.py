"""``votr-mcp fit-request``: fit the model that tells requests for a tool from chat, and save it."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

_DEFAULT_DIR = Path("eval/queries/request_classifier")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fit-request",
        help="fit the tool-request model (chat vs requests for a tool) that abstention reads",
        description="Embed hand-written requests with multilingual USE and fit a logistic regression telling requests "
        "that ask for a tool from chat no tool serves; its probability is one feature of the abstention evidence. "
        "No evaluation set is read. Refit the calibration afterwards (votr-mcp calibrate).",
    )
    parser.add_argument("--tool", type=Path, action="append",
                        help="requests that ask for a tool: a text file, one per line, or a JSON file of example "
                        f"requests per server and tool (repeatable; default: {_DEFAULT_DIR}/tool.txt and "
                        "scripts/registry_examples.json)")
    parser.add_argument("--chat", type=Path, action="append",
                        help=f"requests no tool serves, one per line (repeatable; default: {_DEFAULT_DIR}/chat.txt)")
    parser.add_argument("--l2", type=float, action="append",
                        help="L2 penalty; given several times, 5-fold cross-validation picks the best by AUC (default 1, 3, 10)")
    parser.add_argument("--out", type=Path, help="where to write (default: the tool_request.npz shipped with the package)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.errors import CatalogError
    from votr_mcp.evaluation.request_model_fit import cross_validate, fit_request_model, read_requests
    from votr_mcp.index.use import USEEmbedder
    from votr_mcp.retrieval.tool_request import SHIPPED_REQUEST_MODEL

    tool_files = args.tool or [_DEFAULT_DIR / "tool.txt", Path("scripts/registry_examples.json")]
    chat_files = args.chat or [_DEFAULT_DIR / "chat.txt"]
    penalties = args.l2 or [1.0, 3.0, 10.0]
    if any(not (p > 0) for p in penalties):
        raise CatalogError(f"--l2 must be positive; got {penalties}")
    tool = [r for f in tool_files for r in read_requests(f)]
    chat = [r for f in chat_files for r in read_requests(f)]
    embedder = USEEmbedder()
    scores = cross_validate(embedder, tool, chat, penalties)
    print(f"# {len(tool)} tool requests, {len(chat)} chat requests; held-out folds:")
    for l2, s in scores.items():
        print(f"l2={l2:g}: balanced accuracy {s['balanced_accuracy']:.3f}, AUC {s['auc']:.3f}, "
              f"chat below the tool requests' 3rd percentile {s['chat_below_tool_p3']:.3f}")
    best = max(scores, key=lambda l2: scores[l2]["auc"])
    # The files of each kind by name, so a results run can refit it by this recipe (eval/fit_checks.py).
    source = (f"votr-mcp fit-request on tool requests {', '.join(map(str, tool_files))} and chat requests "
              f"{', '.join(map(str, chat_files))} ({len(tool)} tool / {len(chat)} chat requests), l2={best:g} "
              f"by 5-fold AUC {scores[best]['auc']:.3f}, {datetime.date.today().isoformat()}")
    model = fit_request_model(embedder, tool, chat, l2=best, source=source)
    out = args.out or SHIPPED_REQUEST_MODEL
    model.save(out)
    print(f"# tool-request model written to {out} (l2={best:g}); now refit the calibration: votr-mcp calibrate ...")
    return 0
