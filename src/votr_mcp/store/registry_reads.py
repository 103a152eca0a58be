"""Reading the tool registry (:mod:`votr_mcp.store.registry`): its tools, their history and audit
trail, its servers, and why a tool may not be called now. Every read runs on a reader connection of
its own (``Database.read``), so it sees the state before a harvest or after it, never one in progress."""

from __future__ import annotations

import json
from collections.abc import Iterable

from votr_mcp.catalog import Catalog, ToolKey, call_names
from votr_mcp.catalog.safety import HIDDEN, INJECTION, visible
from votr_mcp.errors import StoreError
from votr_mcp.store import _sqlite
from votr_mcp.store._sqlite import Connection, Database
from votr_mcp.store.records import RECORD_SQL, ToolRecord, VersionRecord, record_of

__all__ = ["ADDED", "NOT_ACCEPTED", "RegistryReads", "why_held"]

ADDED = "added after its server's first harvest"
NOT_ACCEPTED = "never accepted"


class RegistryReads:
    """The registry's reads; :class:`~votr_mcp.store.registry.Registry` adds the writes."""

    _db: Database

    def records(self, *, status: str | None = None) -> list[ToolRecord]:
        """Every tool (or those with ``status``), in server then insertion order."""
        where, args = ("WHERE t.status = ?", (status,)) if status else ("", ())
        with _sqlite.guard("reading tools"), self._db.read() as conn:
            rows = _sqlite.rows(conn, f"{RECORD_SQL} {where} ORDER BY s.id, t.id", args)
        return [record_of(r) for r in rows]

    def catalog(self, *, include_held: bool = False) -> Catalog:
        """The tools search may show: active ones (and held ones when asked, e.g. to embed)."""
        statuses = ("active", "held") if include_held else ("active",)
        return Catalog(r.tool for r in self.records() if r.status in statuses)

    def withheld(self) -> frozenset[ToolKey]:
        """Keys of tools held back after a change."""
        with _sqlite.guard("reading held tools"), self._db.read() as conn:
            rows = _sqlite.rows(conn,
                "SELECT s.name, t.name FROM tools t JOIN servers s ON s.id = t.server_id WHERE t.status = 'held'"
            )
        return frozenset((s, n) for s, n in rows)

    def refusal(self, key: ToolKey) -> str | None:
        """Why ``key`` may not be called now, with how to allow it; None when it may."""
        with _sqlite.guard("checking a tool"), self._db.read() as conn:
            rows = _sqlite.rows(conn, f"{RECORD_SQL} WHERE s.name = ? AND t.name = ?", key)
            if not rows:
                return None
            record = record_of(rows[0])
            names = self._call_name(conn, record.key) if record.status == "held" else ""
        if record.status == "held":
            return (
                f"tool '{visible(record.name)}' of server '{record.server}' is held back: {why_held(record.changed, record.reasons)}. "
                f"Ask the user to review it with `votr-mcp tools show {names}` and accept it with "
                f"`votr-mcp tools accept {names}`; until then use another tool."
            )
        if record.status == "removed":
            return f"tool '{visible(record.name)}' of server '{record.server}' is no longer offered by its server; call search_tools for another"
        return None

    @staticmethod
    def _call_name(conn: Connection, key: ToolKey) -> str:
        """The call name the server gives ``key``: suffixes for collisions depend on every key."""
        keys = [(str(a), str(b)) for a, b in conn.execute(
            "SELECT s.name, t.name FROM tools t JOIN servers s ON s.id = t.server_id")]
        return call_names(keys)[key]

    def find(self, name: str) -> ToolRecord:
        """A tool by call name (``server__tool``), ``server/tool``, or a tool name unique in the store."""
        records = self.records()
        names = call_names(r.key for r in records)
        matches = [r for r in records if names[r.key] == name or f"{r.server}/{r.name}" == name]
        if not matches:
            matches = [r for r in records if r.name == name]
        if len(matches) == 1:
            return matches[0]
        if matches:
            options = ", ".join(sorted(names[r.key] for r in matches)[:10])
            raise StoreError(f"tool name '{name}' is ambiguous; use one of: {options}")
        raise StoreError(f"no tool '{name}' in the store; `votr-mcp tools list` shows call names (server__tool)")

    def history(self, name: str) -> list[VersionRecord]:
        """Every definition the tool ever had, oldest first."""
        record = self.find(name)
        with _sqlite.guard("reading tool history"), self._db.read() as conn:
            rows = _sqlite.rows(conn,
                "SELECT v.version, v.content_hash, v.changed_fields, v.seen_at, v.definition FROM tool_versions v "
                "JOIN servers s ON s.id = v.server_id WHERE s.name = ? AND v.name = ? ORDER BY v.version",
                record.key,
            )
        return [VersionRecord(v, h, tuple(json.loads(c)), at, json.loads(d)) for v, h, c, at, d in rows]

    def decisions(self, name: str) -> list[tuple[str, int | None, str, str]]:
        """The audit trail of a tool: (time, version, action, note), oldest first."""
        record = self.find(name)
        with _sqlite.guard("reading decisions"), self._db.read() as conn:
            return [tuple(r) for r in _sqlite.rows(
                conn, "SELECT d.at, v.version, d.action, d.note FROM tool_decisions d JOIN tools t ON t.id = d.tool_id "
                "JOIN servers s ON s.id = t.server_id LEFT JOIN tool_versions v ON v.id = d.version_id "
                "WHERE s.name = ? AND t.name = ? ORDER BY d.id", record.key)]

    def servers(self) -> list[tuple[str, str, int]]:
        """(name, trust, present) of every server."""
        with _sqlite.guard("reading servers"), self._db.read() as conn:
            return [tuple(r) for r in _sqlite.rows(conn, "SELECT name, trust, present FROM servers ORDER BY id")]


def why_held(changed: Iterable[str], reasons: Iterable[str]) -> str:
    """Why a tool is held, for the agent: our own words only, never the tool's text."""
    changed, reasons = list(changed), list(reasons)
    why = []
    if changed:
        why.append(f"its definition changed ({', '.join(changed)}) since it was accepted, which can be a rug pull")
    if ADDED in reasons:
        why.append("it appeared after its server's first harvest, and a tool added later is reviewed like a changed one")
    elif NOT_ACCEPTED in reasons:
        why.append("it was never accepted")
    kinds = sorted({r.split(" in ", 1)[0] for r in reasons if r.startswith((INJECTION, HIDDEN))})
    if kinds:
        why.append(f"its metadata looks like tool poisoning ({'; '.join(kinds)})")
    return "; ".join(why) or "its definition changed since it was accepted, which can be a rug pull"
