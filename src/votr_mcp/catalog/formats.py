"""The bytes of one catalog file to tool entries and problems.

* :func:`read_jsonl` reads one tool per line (the ../shared/bench ``tools.jsonl`` format).
  Lines are split on ``\\n`` only (a trailing ``\\r`` is dropped): U+2028 and U+0085 may
  stand raw inside a JSON string. A leading UTF-8 BOM is skipped. A line that is not
  UTF-8 or not JSON is a problem of that line; the other lines load.
* :func:`read_json` reads one document: a ``tools/list`` result ``{"server": ..., "tools":
  [...]}``, the saved JSON-RPC response around one (``{"jsonrpc": "2.0", "result": {...}}``),
  a list of either, or a plain list of tool objects. A document that is not UTF-8 or not
  JSON is skipped whole, as one problem.

JSON here is strict: ``NaN`` and ``Infinity`` (which Python's json accepts but JSON does
not have) are rejected, so that every definition has a valid canonical JSON form. Tool
names read from files are stripped of surrounding white space, as server names are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votr_mcp.catalog.models import Tool
from votr_mcp.catalog.records import input_schema_problems, tool_from_mapping

__all__ = ["Entry", "Problem", "json_lines", "read_json", "read_jsonl"]

_BOM = b"\xef\xbb\xbf"
_RPC_KEYS = ("tools", "result", "error", "jsonrpc")


def _place(path: str, line: int | None, where: str | None) -> str:
    place = path if line is None else f"{path}:{line}"
    return f"{place} ({where})" if where else place


@dataclass(frozen=True, slots=True)
class Problem:
    """One entry that could not be loaded (or loaded with a defect), and why."""

    path: str
    line: int | None
    message: str
    where: str | None = None

    def __str__(self) -> str:
        return f"{_place(self.path, self.line, self.where)}: {self.message}"


@dataclass(frozen=True, slots=True)
class Entry:
    """A tool and where it was read: file, line (JSONL) and position in the document (JSON)."""

    tool: Tool
    path: str
    line: int | None
    where: str | None = None

    @property
    def place(self) -> str:
        return _place(self.path, self.line, self.where)


class _BadJson(ValueError):
    """Text that is not strict JSON; ``line`` is set when the parser knows it."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def json_lines(data: bytes) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, value, None)`` per non-blank line of a JSON-lines file, or ``(line number,
    None, why)`` for a line that is not UTF-8 or not strict JSON. Shared by every JSONL reader
    (tool catalogs, query sets), so they split and decode alike."""
    for number, raw in enumerate(data.removeprefix(_BOM).split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as exc:
            yield number, None, _not_utf8(exc)
            continue
        if not line.strip():
            continue
        try:
            yield number, _parse(line), None
        except _BadJson as exc:
            yield number, None, str(exc)


def read_jsonl(file: Path, data: bytes) -> Iterator[Entry | Problem]:
    """One tool object per line; each bad line is a problem naming its line number."""
    path = str(file)
    for number, record, why in json_lines(data):
        if why is not None:
            yield Problem(path, number, f"{why}; this line was skipped")
            continue
        if not isinstance(record, dict):
            yield Problem(path, number, f"expected a JSON object per line (one tool), got {type(record).__name__}; this line was skipped")
            continue
        yield from _entries(record, path, number, None)


def read_json(file: Path, data: bytes, server: str) -> Iterator[Entry | Problem]:
    """A captured ``tools/list`` document; ``server`` names tools whose listing names no server."""
    path = str(file)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = exc.object.count(b"\n", 0, exc.start) + 1
        yield Problem(path, line, _not_utf8(exc) + "; the whole file was skipped")
        return
    try:
        document = _parse(text)
    except _BadJson as exc:
        hint = "; if it holds one tool per line, name it .jsonl" if "Extra data" in str(exc) else ""
        yield Problem(path, exc.line, f"{exc}; the whole file was skipped{hint}")
        return
    if isinstance(document, list) and not any(_is_listing(item) for item in document):
        document = {"tools": document}  # a plain list of tool objects
    if isinstance(document, list):
        for index, listing in enumerate(document):
            yield from _listing(listing, path, f"[{index}]", server)
    else:
        yield from _listing(document, path, "", server)


def _listing(listing: Any, path: str, where: str, server: str) -> Iterator[Entry | Problem]:
    if isinstance(listing, dict) and "error" in listing and "result" not in listing:
        yield Problem(path, None, _rpc_error(listing["error"]), where or None)
        return
    if isinstance(listing, dict) and isinstance(listing.get("result"), dict):
        listing, where = listing["result"], _key(where, "result")
    if not isinstance(listing, dict) or not isinstance(listing.get("tools"), list):
        yield Problem(path, None, "expected a tools/list result: an object with a 'tools' list, the JSON-RPC "
                      "response around one, or a list of tool objects", where or None)
        return
    fields = _server_fields(listing, server)
    for position, raw in enumerate(listing["tools"]):
        spot = f"{_key(where, 'tools')}[{position}]"
        if not isinstance(raw, dict):
            yield Problem(path, None, f"expected a tool object, got {type(raw).__name__}; this entry was skipped", spot)
            continue
        yield from _entries({**fields, **raw}, path, None, spot)


def _entries(record: Mapping[str, Any], path: str, line: int | None, where: str | None) -> Iterator[Entry | Problem]:
    """The tool of one record, after any problems of its schema; or the problem that stops it."""
    name = record.get("name")
    if isinstance(name, str):
        record = {**record, "name": name.strip()}
    try:
        tool = tool_from_mapping(record)
    except ValueError as exc:
        yield Problem(path, line, f"{exc}; this tool was skipped", where)
        return
    for issue in input_schema_problems(tool.input_schema):
        yield Problem(path, line, f"tool '{tool.name}': {issue}. The tool was kept, its schema passed on unchanged", where)
    yield Entry(tool, path, line, where)


def _server_fields(listing: Mapping[str, Any], default_name: str) -> dict[str, Any]:
    server = listing.get("server")
    info = listing.get("serverInfo")
    info = info if isinstance(info, dict) else {}
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


def _is_listing(item: Any) -> bool:
    return isinstance(item, dict) and any(key in item for key in _RPC_KEYS)


def _rpc_error(error: Any) -> str:
    detail = json.dumps(error, ensure_ascii=False)[:200]
    if isinstance(error, dict) and "message" in error:
        detail = f"code {error.get('code')}: {error['message']}"
    return (f"a JSON-RPC error response ({detail}), not a tools/list result; no tools here. "
            "Save the response of a tools/list call that succeeded")


def _key(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _parse(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise _BadJson(f"not valid JSON ({exc.msg} at column {exc.colno})", exc.lineno) from exc
    except RecursionError as exc:
        raise _BadJson("not valid JSON here: nested too deeply to read") from exc


def _reject_constant(text: str) -> Any:
    raise _BadJson(f"not valid JSON: {text} is not a JSON value; write null or a string instead")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _BadJson(f"not valid JSON here: the number {text[:20]} overflows to infinity; write it as a string")
    return value


def _not_utf8(exc: UnicodeDecodeError) -> str:
    column = exc.start - exc.object.rfind(b"\n", 0, exc.start)
    return f"not UTF-8 (byte 0x{exc.object[exc.start]:02x} at column {column}); save the file as UTF-8"
