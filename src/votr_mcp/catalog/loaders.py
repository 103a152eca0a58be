"""Read tool catalogs from disk.

Three shapes are understood, told apart by file suffix and content:

* ``*.jsonl``, the ../shared/bench format: one tool per line, with ``server``,
  ``server_description``, ``name``, ``description``, ``input_schema`` and optional
  ``server_summary``, ``title``, ``output_schema``, ``annotations``, ``examples``.
* ``*.json``, a captured MCP ``tools/list`` result: ``{"server": {...} | "name", "tools": [...]}``
  (tools in MCP camelCase or snake_case), a list of such objects, or a bare ``{"tools": [...]}``
  whose server is named after the file.
* a folder (such as the project's ``registry/``): every ``*.json`` / ``*.jsonl`` below it.

A malformed entry is reported as a :class:`Problem` naming file and line (or JSON
position) and is skipped; the rest still loads. Only an unreadable path raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votr_mcp.catalog.models import Catalog, Tool
from votr_mcp.errors import CatalogError

__all__ = ["Problem", "LoadResult", "load_catalog", "tool_from_mapping", "tools_from_tools_list"]

_KNOWN_KEYS = {
    "server", "server_description", "server_summary", "name", "title", "description",
    "input_schema", "inputSchema", "output_schema", "outputSchema", "annotations", "examples",
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One entry that could not be loaded, and why."""

    path: str
    line: int | None
    message: str
    where: str | None = None

    def __str__(self) -> str:
        place = self.path
        if self.line is not None:
            place += f":{self.line}"
        if self.where:
            place += f" ({self.where})"
        return f"{place}: {self.message}"


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The catalog that loaded and the problems met on the way."""

    catalog: Catalog
    problems: tuple[Problem, ...]


def load_catalog(path: str | Path) -> LoadResult:
    """Load a tools.jsonl file, a captured tools/list JSON file, or a folder of them."""
    root = Path(path)
    if not root.exists():
        raise CatalogError(f"catalog path '{root}' does not exist; pass a tools.jsonl file, a tools/list JSON file or a folder of them")
    files = _catalog_files(root)
    if not files:
        raise CatalogError(f"no *.json or *.jsonl files under '{root}'; a catalog folder holds captured tools/list JSON files")
    tools: list[Tool] = []
    problems: list[Problem] = []
    for file in files:
        loader = _load_jsonl if file.suffix == ".jsonl" else _load_json
        for item in loader(file):
            (problems if isinstance(item, Problem) else tools).append(item)
    catalog = Catalog(tools)
    for server, name in catalog.duplicates:
        problems.append(Problem(str(root), None, f"duplicate tool '{name}' of server '{server}': the first one was kept"))
    return LoadResult(catalog, tuple(problems))


def _catalog_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))


def _load_jsonl(file: Path) -> Iterator[Tool | Problem]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read '{file}': {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Problem(str(file), number, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            yield Problem(str(file), number, f"expected a JSON object per line, got {type(record).__name__}")
            continue
        try:
            yield tool_from_mapping(record)
        except ValueError as exc:
            yield Problem(str(file), number, str(exc))


def _load_json(file: Path) -> Iterator[Tool | Problem]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read '{file}': {exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        yield Problem(str(file), exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno}); the whole file was skipped")
        return
    listings = document if isinstance(document, list) else [document]
    for index, listing in enumerate(listings):
        where = f"[{index}]" if isinstance(document, list) else ""
        if not isinstance(listing, dict) or not isinstance(listing.get("tools"), list):
            yield Problem(str(file), None, "expected an object with a 'tools' list (a captured tools/list result)", where or None)
            continue
        server = _server_fields(listing, default_name=file.stem)
        for position, raw in enumerate(listing["tools"]):
            spot = f"{where}tools[{position}]"
            if not isinstance(raw, dict):
                yield Problem(str(file), None, f"expected a tool object, got {type(raw).__name__}", spot)
                continue
            try:
                yield tool_from_mapping({**server, **raw})
            except ValueError as exc:
                yield Problem(str(file), None, str(exc), spot)


def _server_fields(listing: Mapping[str, Any], default_name: str) -> dict[str, Any]:
    server = listing.get("server")
    info = listing.get("serverInfo") if isinstance(listing.get("serverInfo"), dict) else {}
    if isinstance(server, dict):
        return {
            "server": server.get("name") or default_name,
            "server_description": server.get("description") or "",
            "server_summary": server.get("summary") or server.get("instructions") or "",
        }
    return {
        "server": server if isinstance(server, str) and server else info.get("name") or default_name,
        "server_description": listing.get("server_description") or listing.get("description") or "",
        "server_summary": listing.get("server_summary") or listing.get("instructions") or "",
    }


def tools_from_tools_list(server: str, tools: Iterable[Mapping[str, Any]], *, description: str = "", summary: str = "") -> list[Tool]:
    """Tools from the ``tools`` of an MCP ``tools/list`` result; raises ValueError on a bad entry."""
    base = {"server": server, "server_description": description, "server_summary": summary}
    return [tool_from_mapping({**base, **dict(raw)}) for raw in tools]


def tool_from_mapping(record: Mapping[str, Any]) -> Tool:
    """Build a Tool from a bench-format or MCP-format mapping; ValueError says what is wrong."""
    server = record.get("server")
    name = record.get("name")
    if not isinstance(server, str) or not server.strip():
        raise ValueError("missing 'server' (a non-empty string naming the tool's server)")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("missing 'name' (a non-empty string)")
    description = record.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"tool '{name}': 'description' must be a string, got {type(description).__name__}")
    schema = _pick(record, "input_schema", "inputSchema")
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise ValueError(f"tool '{name}': 'input_schema' must be a JSON object, got {type(schema).__name__}")
    output = _pick(record, "output_schema", "outputSchema")
    if output is not None and not isinstance(output, dict):
        raise ValueError(f"tool '{name}': 'output_schema' must be a JSON object or null")
    annotations = record.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise ValueError(f"tool '{name}': 'annotations' must be a JSON object or null")
    examples = record.get("examples") or []
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ValueError(f"tool '{name}': 'examples' must be a list of strings")
    title = record.get("title")
    return Tool(
        server=server.strip(),
        name=name,
        description=description or "",
        input_schema=schema,
        server_description=_text(record.get("server_description")),
        server_summary=_text(record.get("server_summary")),
        title=title if isinstance(title, str) and title else None,
        output_schema=output,
        annotations=annotations or None,
        examples=tuple(examples),
        extra={k: v for k, v in record.items() if k not in _KNOWN_KEYS},
    )


def _pick(record: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
