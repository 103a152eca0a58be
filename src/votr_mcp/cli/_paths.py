"""Default locations the subcommands share (read here, at the edge, from the environment), and the
checks of the bench folders the fitting commands read."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_fit_arguments", "cache_dir", "check_fit_inputs", "report_fit"]


def add_fit_arguments(parser: Any, shipped: str,
                      limit_help: str = "at most N dev tasks per kind and set, chosen by hash") -> None:
    """The options every fitting command takes: --data (repeatable), --limit, --out (default: the
    ``shipped`` file inside the package) and --cache-dir."""
    parser.add_argument("--data", required=True, type=Path, action="append",
                        help="labelled set: a folder with queries.jsonl and tools.jsonl or a 'catalog' file (repeatable)")
    parser.add_argument("--limit", type=int, metavar="N", help=limit_help)
    parser.add_argument("--out", type=Path, help=f"where to write (default: the {shipped} shipped with the package)")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache folder (default: the user cache dir; env VOTR_CACHE_DIR)")


def cache_dir(arg: Path | None) -> Path:
    """Where query and tool vectors are cached: the flag, else $VOTR_CACHE_DIR, else the user cache dir."""
    if arg is not None:
        return arg
    if os.environ.get("VOTR_CACHE_DIR"):
        return Path(os.environ["VOTR_CACHE_DIR"]) / "embeddings"
    import platformdirs

    return Path(platformdirs.user_cache_dir("votr-mcp")) / "embeddings"


def check_fit_inputs(datas: list[Path], limit: int | None) -> None:
    """Raise CatalogError unless every --data folder has queries.jsonl and a catalog (tools.jsonl, or a
    ``catalog`` file naming one) and --limit is positive."""
    from votr_mcp.errors import CatalogError
    from votr_mcp.evaluation.data import catalog_of, queries_of

    for data in datas:
        if not queries_of(data).is_file() or catalog_of(data) == data:
            raise CatalogError(f"'{data}' is not a labelled set; each --data is a folder with queries.jsonl and "
                               "tools.jsonl (or a file 'catalog' naming the catalog folder)")
    if limit is not None and limit < 1:
        raise CatalogError(f"--limit must be a positive number of tasks per kind, got {limit}")


def report_fit(counts: dict[str, int], unit: str, written: str) -> None:
    """What every fitting command ends with: the dev rows each set gave (stderr), then the file written."""
    for name, n in counts.items():
        print(f"{name}: {n} dev {unit}", file=sys.stderr)
    print(f"# {written}")
