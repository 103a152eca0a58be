"""Labelled query sets in the ../shared/bench format, and the fixed dev/test split.

The split is by task: every row of a chain lands on the same side, so a whole-task query is
never tuned on and reported on at once. A row's side depends only on its chain (or id), via
SHA-256, so it is the same on every machine and for every consumer (tuning, calibration,
reporting).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from votr_mcp.catalog.formats import json_lines
from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import CatalogError

__all__ = ["DEV_SHARE", "QueryRow", "Split", "catalog_of", "check_gold", "fit_source", "load_queries", "queries_of",
           "split_of", "select_split"]

Split = Literal["dev", "test", "all"]
DEV_SHARE = 40
"""Percent of tasks in the dev split (tuning and calibration); the rest is test (reporting)."""


@dataclass(frozen=True, slots=True)
class QueryRow:
    """One retrieval step: a query and the tools (any of which) serve it."""

    id: str
    query: str
    gold: tuple[ToolKey, ...]
    kind: str
    chain: str | None = None
    step: int | None = None
    server_intent: str | None = None
    tool_intent: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def task(self) -> str:
        """The unit the split is drawn over: the chain, or the row itself."""
        return self.chain or self.id


CATALOG_POINTER = "catalog"
"""A labelled set folder without tools.jsonl names its catalog in this file: one line, a path
relative to the folder (our own query sets over registry/ or a ../shared/bench corpus)."""


def catalog_of(folder: Path) -> Path:
    """The catalog a labelled set folder is searched in: its tools.jsonl, the catalog its ``catalog``
    file names, or the folder itself (a catalog folder such as registry/, used with --queries)."""
    if (folder / "tools.jsonl").is_file():
        return folder / "tools.jsonl"
    pointer = folder / CATALOG_POINTER
    if pointer.is_file():
        target = (folder / pointer.read_text(encoding="utf-8").strip()).resolve()
        if not target.exists():
            raise CatalogError(f"'{pointer}' names the catalog '{target}', which is not there; that set needs "
                               "../shared/bench beside the project (or fix the path in the file)")
        return target / "tools.jsonl" if (target / "tools.jsonl").is_file() else target
    return folder


def queries_of(folder: Path) -> Path:
    """The labelled queries of a set folder."""
    return folder / "queries.jsonl"


def split_of(row: QueryRow) -> Literal["dev", "test"]:
    """'dev' for about DEV_SHARE percent of tasks, else 'test'; stable everywhere."""
    bucket = int(hashlib.sha256(row.task.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "dev" if bucket < DEV_SHARE else "test"


def select_split(rows: list[QueryRow], split: Split) -> list[QueryRow]:
    """The rows on one side of the split (or all of them)."""
    if split == "all":
        return list(rows)
    if split not in ("dev", "test"):
        raise ValueError(f"unknown split '{split}'; use dev, test or all")
    return [row for row in rows if split_of(row) == split]


def load_queries(path: str | Path) -> list[QueryRow]:
    """Read a queries.jsonl file; a malformed line raises CatalogError naming file and line."""
    file = Path(path)
    if not file.is_file():
        raise CatalogError(f"query file '{file}' not found; pass a queries.jsonl in the ../shared/bench format")
    rows: list[QueryRow] = []
    first_line: dict[str, int] = {}
    for number, record, why in json_lines(file.read_bytes()):
        try:
            if why is not None:
                raise ValueError(why)
            row = _row(record)
            if first_line.setdefault(row.id, number) != number:
                raise ValueError(f"id {row.id!r} is already used on line {first_line[row.id]}; ids must be unique")
            rows.append(row)
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise CatalogError(f"{file}:{number}: bad query row ({problem}); each line needs id, a non-empty query, "
                               "kind (single, multi_step or no_tool) and gold (the tools that serve it, [] for no_tool)") from exc
    return rows


def _row(record: dict[str, Any]) -> QueryRow:
    if not isinstance(record, dict):
        raise ValueError(f"a row is a JSON object, got {type(record).__name__}")
    query = record["query"]
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query must be a non-empty string, got {query!r}")
    kind = record["kind"]
    if kind not in ("single", "multi_step", "no_tool"):
        raise ValueError(f"kind must be single, multi_step or no_tool, got {kind!r}")
    golds = record["gold"]
    if not isinstance(golds, list):
        raise ValueError(f"gold must be a list of {{\"server\", \"name\"}} objects ([] for no_tool), got {golds!r}")
    gold = tuple((_text(g, "server"), _text(g, "name")) for g in golds)
    if (kind == "no_tool") != (not gold):
        raise ValueError(f"a {kind} row needs {'an empty' if kind == 'no_tool' else 'a non-empty'} gold list, "
                         f"got {len(gold)} gold tools")
    return QueryRow(
        id=str(record["id"]),
        query=query,
        gold=gold,
        kind=kind,
        chain=record.get("chain"),
        step=record.get("step"),
        server_intent=record.get("server_intent"),
        tool_intent=record.get("tool_intent"),
        meta=record.get("meta") or {},
    )


def _text(gold: Any, key: str) -> str:
    """A gold entry's server or name, stripped as the catalog loader strips them (ToolBench has a
    server name with a leading space: unstripped, its rows could never be answered)."""
    value = gold.get(key) if isinstance(gold, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"each gold entry needs a non-empty {key!r} string, got {gold!r}")
    return value.strip()


def check_gold(rows: Sequence[QueryRow], has_tool: Callable[[ToolKey], bool], source: Path) -> None:
    """Raise CatalogError when a row names a gold tool the catalog lacks: such a row cannot be
    answered, so it would lower every figure without saying why."""
    missing = [(row.id, key) for row in rows for key in row.gold if not has_tool(key)]
    if not missing:
        return
    shown = "; ".join(f"{row_id} -> {server}/{name}" for row_id, (server, name) in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    plural = "s" if len(missing) != 1 else ""
    raise CatalogError(f"{source}: the catalog lacks {len(missing)} gold tool{plural} ({shown}{more}); "
                       "fix their server and name, or pass the catalog (--data) that holds them")


def fit_source(command: str, datas: Sequence[Path], limit: int | None, *details: str) -> str:
    """The ``source`` a fitted file records: the command, the sets whose dev split it read, the cap
    per kind, its own settings and the date. eval/make_results.py reads it back to refit and compare."""
    parts = [f"votr-mcp {command} on the dev split of {'+'.join(d.name for d in datas)}",
             *([f"at most {limit} tasks per kind"] if limit else []), *details,
             time.strftime("%Y-%m-%d", time.gmtime())]
    return ", ".join(parts)
