"""Read tool catalogs from disk: a file, or a folder of files.

Three sources are understood:

* a ``*.jsonl`` or ``*.ndjson`` file in the ../shared/bench format: one tool per line, with
  ``server``, ``server_description``, ``name``, ``description``, ``input_schema`` and
  optional ``server_summary``, ``title``, ``output_schema``, ``annotations``, ``examples``.
* a ``*.json`` file of captured MCP ``tools/list`` results (see :mod:`.formats` for the
  shapes). Tools whose listing names no server take the file's name; a file with a
  generic name (``tools.json``, ``tools_list.json``, ``list.json``, ``index.json``, ...:
  :data:`GENERIC_STEMS`) takes its folder's name instead, so ``github/tools.json`` is
  server ``github``.
* a folder (such as the project's ``registry/``): every such file below it, suffixes
  matched case-insensitively. A folder that holds a ``tools.jsonl`` is a benchmark set
  (../shared/bench/<set>/): that file alone is read, not the query files beside it.

A malformed entry is reported as a :class:`Problem` naming file and line (or position in
the JSON document) and is skipped; the rest still loads. So is a file in a folder that
cannot be read or is not UTF-8. Two files feeding the same server, a duplicate tool (the
first one is kept) and a catalog that yields no tool at all are reported too. Only a
missing path, a folder with no catalog files, or a named file that cannot be read raise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from votr_mcp.catalog.canonical import content_hash
from votr_mcp.catalog.formats import Entry, Problem, read_json, read_jsonl
from votr_mcp.catalog.models import Catalog, ToolKey
from votr_mcp.errors import CatalogError

__all__ = ["GENERIC_STEMS", "LoadResult", "Problem", "default_server_name", "load_catalog"]

log = logging.getLogger(__name__)

GENERIC_STEMS = frozenset({"tools", "tools_list", "tools-list", "tools.list", "list", "index", "catalog"})
"""File names (without suffix, any case) that say nothing about the server: the folder names it."""

_LINES_SUFFIXES = (".jsonl", ".ndjson")
_DOCUMENT_SUFFIXES = (".json",)
_SET_FILE = "tools.jsonl"


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The catalog that loaded and the problems met on the way."""

    catalog: Catalog
    problems: tuple[Problem, ...]

    def require_tools(self, log: logging.Logger, most: int | None = None) -> Catalog:
        """The catalog, after logging each problem as a warning (only the first ``most`` and a count,
        when given); CatalogError, not a warning, when not one tool loaded (the last problem says why)."""
        empty = len(self.catalog) == 0
        shown = self.problems[:-1] if empty else self.problems
        for problem in shown[:most]:
            log.warning("%s", problem)
        if most is not None and len(shown) > most:
            log.warning("... and %d more catalog problems", len(shown) - most)
        if empty:
            raise CatalogError(str(self.problems[-1]) if self.problems else "no tools loaded")
        return self.catalog


def load_catalog(path: str | Path) -> LoadResult:
    """Load a tools.jsonl file, a captured tools/list JSON file, or a folder of them.

    A folder holding a ``tools.jsonl`` (a benchmark set) loads that file alone, and says so
    in an INFO log line. Problems come back in :attr:`LoadResult.problems`, never raised.
    """
    root = Path(path)
    if not root.exists():
        raise CatalogError(f"catalog path '{root}' does not exist; pass a tools.jsonl file, a tools/list JSON file or a folder of them")
    problems: list[Problem] = []
    files = [root] if root.is_file() else _folder_files(root, problems)
    if not files and not problems:
        raise CatalogError(f"no *.json, *.jsonl or *.ndjson files under '{root}'; a catalog folder holds captured "
                           "tools/list JSON files or a tools.jsonl")
    entries: list[Entry] = []
    for file in files:
        for item in _read(file, named=file == root):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                entries.append(item)
    problems.extend(_shared_servers(entries))
    kept = _first_of_each_key(entries, problems)
    if not kept:
        problems.append(_nothing_loaded(root, problems))
    return LoadResult(Catalog(entry.tool for entry in kept), tuple(problems))


def default_server_name(file: Path) -> str:
    """The server of a listing that names none: the file's stem, or its folder's name for a generic stem."""
    if file.stem.lower() in GENERIC_STEMS:
        return file.absolute().parent.name or file.stem
    return file.stem


def _folder_files(folder: Path, problems: list[Problem]) -> list[Path]:
    """Catalog files below ``folder`` in sorted order; a benchmark set folder gives its tools.jsonl alone."""
    set_file = folder / _SET_FILE
    if set_file.is_file():
        log.info("'%s' holds a %s: reading that file alone as the catalog (a benchmark set; its query and "
                 "stats files are not tools)", folder, _SET_FILE)
        return [set_file]
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        problems.append(Problem(str(folder), None, f"cannot list this folder ({exc.strerror}); its files were skipped"))
        return []
    files: list[Path] = []
    for child in children:
        if child.is_dir() and not child.is_symlink():  # as rglob: no symlinked folders, so no cycles
            files.extend(_folder_files(child, problems))
        elif child.suffix.lower() in _LINES_SUFFIXES + _DOCUMENT_SUFFIXES and child.is_file():
            files.append(child)
    return files


def _read(file: Path, *, named: bool) -> Iterable[Entry | Problem]:
    try:
        data = file.read_bytes()
    except OSError as exc:
        if named:
            raise CatalogError(f"cannot read '{file}': {exc.strerror}; check that it is a readable file") from exc
        return [Problem(str(file), None, f"cannot read this file ({exc.strerror}); it was skipped, check its permissions")]
    if file.suffix.lower() in _LINES_SUFFIXES:
        return read_jsonl(file, data)
    return read_json(file, data, default_server_name(file))


def _shared_servers(entries: list[Entry]) -> list[Problem]:
    """One warning per file whose tools join a server first met in another file."""
    first_file: dict[str, str] = {}
    warned: set[tuple[str, str]] = set()
    problems: list[Problem] = []
    for entry in entries:
        server = entry.tool.server
        origin = first_file.setdefault(server, entry.path)
        if origin != entry.path and (server, entry.path) not in warned:
            warned.add((server, entry.path))
            problems.append(Problem(entry.path, None, (
                f"server '{server}' also gets tools from '{origin}': both files are merged into one server. If they "
                "are different servers, name each one (\"server\": \"...\") or put each file in a folder named after it")))
    return problems


def _first_of_each_key(entries: list[Entry], problems: list[Problem]) -> list[Entry]:
    """The first entry of every (server, name); each later one is reported where it stands."""
    first: dict[ToolKey, Entry] = {}
    for entry in entries:
        kept = first.setdefault(entry.tool.key, entry)
        if kept is not entry:
            problems.append(_duplicate(entry, kept))
    return list(first.values())


def _duplicate(dropped: Entry, kept: Entry) -> Problem:
    server, name = dropped.tool.key
    if content_hash(dropped.tool) == content_hash(kept.tool):
        detail = "with the same definition; this copy was dropped"
    else:
        detail = "with a different definition; the first was kept and this one dropped: remove the stale copy"
    message = f"duplicate tool '{name}' of server '{server}', first loaded at {kept.place}, {detail}"
    return Problem(dropped.path, dropped.line, message, dropped.where)


def _nothing_loaded(root: Path, problems: list[Problem]) -> Problem:
    if problems:
        what = f"every entry had a problem ({len(problems)} reported above); fix them and load again"
    elif root.is_file():
        what = "the file holds no tool entries (a .jsonl holds one JSON tool object per line)"
    else:
        what = "its files hold no tool entries"
    return Problem(str(root), None, f"no tools loaded: {what}")
