"""The ``votr-mcp`` command line: one subcommand per module in this package.

Each subcommand module defines ``register(subparsers)``, which adds its parser and sets
``handler`` (a function taking the parsed args and returning an exit code). Configuration
and environment are read here, at the edge, and passed down as values. Logs go to stderr:
stdout carries results (and, for ``serve`` over stdio, the MCP protocol).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser"]

# Modules under votr_mcp.cli that provide subcommands, in help order.
COMMANDS = ("search", "eval", "calibrate", "fit_adapter", "fit_rerank", "fit_request", "serve", "index", "tools", "stats", "upstreams", "bench")


_LOG_FORMAT_HELP = "stderr logs as timestamped text (default) or one JSON object per line"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("votr-mcp")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="votr-mcp", description="Find the right few tools among thousands, and call them.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--log-format", choices=("text", "json"), default="text",
                        help=_LOG_FORMAT_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"votr_mcp.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"votr_mcp.cli.{name}":
                continue  # a subcommand not built yet
            raise
        module.register(subparsers)
    for sub in subparsers.choices.values():
        # Also after the subcommand (`votr-mcp serve --log-format json`), where people put it.
        sub.add_argument("--log-format", choices=("text", "json"), default=argparse.SUPPRESS, help=_LOG_FORMAT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # numpy's OpenBLAS threads spin and fight torch's threads; must be set before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    from votr_mcp.cli._logging import setup_logging

    setup_logging(verbose=args.verbose, fmt=args.log_format)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    from votr_mcp.errors import VotrError

    try:
        return int(handler(args) or 0)
    except VotrError as exc:
        print(f"votr-mcp: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
