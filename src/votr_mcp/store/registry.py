"""The persistent tool registry: servers, tools, their immutable history, and change control.

Change control (rug-pull protection). Trust on first use covers a server's first harvest:
each tool in it becomes its own *accepted* version. A tool that appears in a later harvest of
a known server is a change like any other (a rug pull can add a tool as easily as rewrite
one), so it is recorded and **withheld** until accepted. When a later harvest brings a different
definition (description, title, input or output schema, annotations, examples), a new
version is recorded and the tool is **withheld** - excluded from search and refused by
call_tool - until a person accepts it (``votr-mcp tools accept NAME``) or its server is
configured ``trust: auto``. The old version does not keep serving: the upstream now runs
the new code, so showing the agent the old description while the call reaches the new
tool would hide exactly the change we are guarding against. If the upstream reverts to the
accepted definition, the tool serves again without any action. ``rollback NAME VERSION``
makes an older version the accepted one (undoing a mistaken acceptance); the tool then
serves only while its upstream serves that version.

Tool poisoning. A tool whose metadata reads like orders to the agent or hides text
(:func:`votr_mcp.catalog.safety.injection_reasons`) is withheld the same way, whenever it
is recorded: in a server's first harvest, when it is added later, and when it changes, even
on a ``trust: auto`` server (auto accepts routine changes, not a change that looks like an
attack). Why a tool is held is stored with it (``ToolRecord.reasons``) and shown by
``votr-mcp tools show``; accepting it clears that.

All writes go through :func:`votr_mcp.store._sqlite.write` (one ``BEGIN IMMEDIATE``
transaction each), so a crash leaves either the old or the new state, never a mix. Reads go
through ``Database.read`` on connections of their own, so a search or a call check during a
harvest sees the state before it or after it, never a harvest in progress or rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from votr_mcp.catalog import Catalog, Tool, canonical_definition, canonical_json, content_hash, server_hash
from votr_mcp.catalog.safety import injection_reasons
from votr_mcp.errors import StoreError
from votr_mcp.store import _sqlite
from votr_mcp.store._sqlite import Connection, Database
from votr_mcp.store.records import SyncReport, ToolRecord, changed_fields
from votr_mcp.store.registry_reads import ADDED, NOT_ACCEPTED, RegistryReads

__all__ = ["ADDED", "NOT_ACCEPTED", "Registry", "TRUST_POLICIES"]

TRUST_POLICIES = ("manual", "auto")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Registry(RegistryReads):
    """Servers, tools and history in one SQLite file (see module docstring).

    ``conn`` is the store's :class:`~votr_mcp.store._sqlite.Database` (its writer connection
    alone also works: reads then open reader connections of that file themselves).
    """

    def __init__(self, conn: Connection | Database) -> None:
        self._db = conn if isinstance(conn, Database) else Database(conn)
        self.conn = self._db.writer  # writes only; reads go through self._db.read()
        # Bumped on every write through this object: SQLite's data_version sees only other connections.
        self.generation = 0

    # ---- writing -------------------------------------------------------------------------

    def sync(
        self,
        catalog: Catalog,
        *,
        trust: str | Mapping[str, str] | None = None,
        remove_missing: bool = True,
        prune_servers: bool = False,
    ) -> SyncReport:
        """Record a harvest in one transaction.

        Tools of a server's first harvest are trusted on first use; tools added to a known
        server and changed ones are held back (or auto-accepted when their server's trust is
        'auto'); tools whose metadata looks poisoned are held back in every case; tools missing from a harvested server are marked
        removed (a server that lists no tool at all is not in ``catalog`` and is left alone).
        ``trust`` sets the policy of the harvested servers ('manual' | 'auto', one for all or
        per server name); None keeps each server's stored policy ('manual' when new).
        ``prune_servers`` also removes every server absent from ``catalog`` (a full catalog
        file); leave it off for a partial harvest (e.g. one failed upstream)."""
        counts = dict.fromkeys(("new", "changed", "held", "auto_accepted", "removed", "restored", "flagged"), 0)
        now = _now()
        with _sqlite.guard("recording a harvest"), _sqlite.write(self.conn):
            known = {str(n) for n, in _sqlite.rows(self.conn, "SELECT name FROM servers")}
            server_ids = {name: self._upsert_server(server.name, server.description, server.summary,
                                                    server_hash(server), _trust_of(trust, name), now)
                          for name, server in catalog.servers.items()}
            existing = self._existing(server_ids.values())
            seen: set[int] = set()
            for tool in catalog:
                sid = server_ids[tool.server]
                row = existing.get((sid, tool.name))
                if row is None:
                    outcome = self._insert_tool(sid, tool, now, added=tool.server in known)
                else:
                    seen.add(row["id"])
                    outcome = self._update_tool(row, tool, now)
                for name in outcome:
                    counts[name] += 1
            if remove_missing:
                for row in existing.values():
                    if row["id"] not in seen and row["status"] != "removed":
                        self._set_status(row["id"], "removed", None, now, "missing from the harvest of its server")
                        counts["removed"] += 1
            if prune_servers:
                counts["removed"] += self._prune_servers(set(server_ids.values()), now)
        self.generation += 1
        return SyncReport(tools=len(catalog), **counts)

    def accept(self, name: str, version: int | None = None) -> ToolRecord:
        """Accept the version upstream serves now (or ``version``); the tool serves again when
        that is the version upstream serves."""
        record = self.find(name)
        target = record.version if version is None else version
        return self._set_accepted(record, target, "accepted")

    def rollback(self, name: str, version: int) -> ToolRecord:
        """Make an older version the accepted one (undo a mistaken acceptance)."""
        return self._set_accepted(self.find(name), version, "rolled_back")

    def reject(self, name: str, note: str = "") -> ToolRecord:
        """Record that the version upstream serves now was reviewed and refused: the tool stays
        held (upstream already runs that code), the audit trail says so, and accepting it later
        still works. Refuses a tool that is not held."""
        record = self.find(name)
        if record.status != "held":
            raise StoreError(f"tool '{record.server}/{record.name}' is {record.status}, not held; only a held version can be rejected")
        with _sqlite.guard("rejecting a tool version"), _sqlite.write(self.conn):
            found = _sqlite.rows(self.conn,
                "SELECT t.id, v.id FROM tools t JOIN servers s ON s.id = t.server_id LEFT JOIN tool_versions v "
                "ON v.server_id = t.server_id AND v.name = t.name AND v.version = ? WHERE s.name = ? AND t.name = ?",
                (record.version, record.server, record.name))
            tid, vid = found[0]
            self._decide(int(tid), None if vid is None else int(vid), "rejected", _now(), note)
        self.generation += 1
        return self.find(f"{record.server}/{record.name}")

    def retire_servers(self, keep: Iterable[str]) -> int:
        """Mark every tool of servers not in ``keep`` removed (servers dropped from the config);
        returns how many tools that removed."""
        names = set(keep)
        with _sqlite.guard("retiring servers"), _sqlite.write(self.conn):
            ids = {int(i) for i, n in _sqlite.rows(self.conn, "SELECT id, name FROM servers") if n in names}
            removed = self._prune_servers(ids, _now())
        self.generation += 1
        return removed

    def set_trust(self, server: str, trust: str) -> None:
        """Set a server's policy: 'manual' (hold changes back) or 'auto' (accept changes)."""
        _check_trust(trust)
        with _sqlite.guard("setting a trust policy"), _sqlite.write(self.conn):
            self.conn.execute("UPDATE servers SET trust = ? WHERE name = ?", (trust, server))
            if self.conn.changes() == 0:
                raise StoreError(f"unknown server '{server}'; `votr-mcp tools list` shows the servers in the store")
        self.generation += 1

    # ---- internals -----------------------------------------------------------------------

    def _upsert_server(self, name: str, description: str, summary: str, digest: str, trust: str | None, now: str) -> int:
        row = _sqlite.rows(self.conn, "SELECT id, server_hash, trust, present FROM servers WHERE name = ?", (name,))
        if row and tuple(row[0][1:]) == (digest, trust or row[0][2], 1):
            return int(row[0][0])  # unchanged: no write, so a re-harvest of 300 servers stays cheap
        if row:
            self.conn.execute(
                "UPDATE servers SET description = ?, summary = ?, server_hash = ?, present = 1, updated_at = ?, "
                "trust = coalesce(?, trust) WHERE id = ?", (description, summary, digest, now, trust, row[0][0]))
            return int(row[0][0])
        self.conn.execute(
            "INSERT INTO servers (name, description, summary, server_hash, trust, first_seen, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (name, description, summary, digest, trust or "manual", now, now))
        return int(self.conn.last_insert_rowid())

    def _existing(self, server_ids: Iterable[int]) -> dict[tuple[int, str], dict[str, Any]]:
        ids = list(server_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = _sqlite.rows(self.conn,
            "SELECT t.id, t.server_id, t.name, t.content_hash, t.status, t.definition, t.extra, "
            "cv.version, av.content_hash, t.hold_reasons FROM tools t JOIN tool_versions cv ON cv.id = t.current_version_id "
            f"LEFT JOIN tool_versions av ON av.id = t.accepted_version_id WHERE t.server_id IN ({marks})", ids)
        keys = ("id", "server_id", "name", "content_hash", "status", "definition", "extra", "version", "accepted_hash", "hold_reasons")
        return {(r[1], r[2]): dict(zip(keys, r)) for r in rows}

    def _add_version(self, sid: int, name: str, version: int, digest: str, definition: str, changed: list[str], now: str) -> int:
        self.conn.execute(
            "INSERT INTO tool_versions (server_id, name, version, content_hash, definition, changed_fields, seen_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, name, version, digest, definition, json.dumps(changed), now))
        return int(self.conn.last_insert_rowid())

    def _insert_tool(self, sid: int, tool: Tool, now: str, *, added: bool) -> list[str]:
        """Record a tool seen for the first time; ``added``: its server had been harvested before."""
        definition = canonical_json(canonical_definition(tool))
        digest = content_hash(tool)
        vid = self._add_version(sid, tool.name, 1, digest, definition, [], now)
        poisoned = injection_reasons(tool)
        reasons = [ADDED, *poisoned] if added else poisoned
        if reasons == [ADDED] and self._server_trust(sid) == "auto":
            status, accepted, action, note = "active", vid, "auto_accepted", f"{ADDED}; server trust is auto"
        elif reasons:
            status, accepted, action, note = "held", None, "held", "; ".join(reasons)
        else:
            status, accepted, action, note = "active", vid, "trusted_on_first_use", ""
        self.conn.execute(
            "INSERT INTO tools (server_id, name, content_hash, definition, extra, current_version_id, "
            "accepted_version_id, status, updated_at, hold_reasons) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, tool.name, digest, definition, _extra_json(tool), vid, accepted, status, now,
             json.dumps(reasons if status == "held" else [])))
        self._decide(int(self.conn.last_insert_rowid()), vid, action, now, note)
        return ["new", *(["held"] if status == "held" else []), *(["auto_accepted"] if action == "auto_accepted" else []),
                *(["flagged"] if poisoned else [])]

    def _update_tool(self, row: dict[str, Any], tool: Tool, now: str) -> list[str]:
        digest = content_hash(tool)
        extra = _extra_json(tool)
        if digest == row["content_hash"] and row["status"] != "removed":
            if extra != row["extra"]:
                self.conn.execute("UPDATE tools SET extra = ? WHERE id = ?", (extra, row["id"]))
            return []
        outcome: list[str] = []
        definition = canonical_json(canonical_definition(tool))
        known = _sqlite.rows(self.conn,
            "SELECT id FROM tool_versions WHERE server_id = ? AND name = ? AND content_hash = ? ORDER BY version DESC LIMIT 1",
            (row["server_id"], row["name"], digest))
        if known:
            vid = int(known[0][0])
        else:
            latest = _sqlite.rows(self.conn, "SELECT max(version) FROM tool_versions WHERE server_id = ? AND name = ?",
                                  (row["server_id"], row["name"]))[0][0]
            fields = changed_fields(json.loads(row["definition"]), json.loads(definition))
            vid = self._add_version(row["server_id"], row["name"], int(latest) + 1, digest, definition, fields, now)
        if digest != row["content_hash"]:
            outcome.append("changed")
        if row["status"] == "removed":
            outcome.append("restored")
        self.conn.execute(
            "UPDATE tools SET content_hash = ?, definition = ?, extra = ?, current_version_id = ?, updated_at = ? WHERE id = ?",
            (digest, definition, extra, vid, now, row["id"]))
        poisoned = injection_reasons(tool)
        if poisoned:
            outcome.append("flagged")
        if digest == row["accepted_hash"]:
            self._set_status(row["id"], "active", vid, now, "upstream serves the accepted version", reasons=[])
        elif self._server_trust(row["server_id"]) == "auto" and not poisoned:
            self.conn.execute("UPDATE tools SET accepted_version_id = ? WHERE id = ?", (vid, row["id"]))
            self._set_status(row["id"], "active", vid, now, "server trust is auto", action="auto_accepted", reasons=[])
            outcome.append("auto_accepted")
        else:
            # A tool never accepted stays held for the reason it was held at first (e.g. added late).
            first = [] if row["accepted_hash"] else [ADDED if ADDED in json.loads(row["hold_reasons"]) else NOT_ACCEPTED]
            reasons = [*first, *poisoned]
            note = "; ".join(["definition changed since it was accepted" if row["accepted_hash"] else "definition changed", *reasons])
            self._set_status(row["id"], "held", vid, now, note, reasons=reasons)
            outcome.append("held")
        return outcome

    def _server_trust(self, sid: int) -> str:
        return str(_sqlite.rows(self.conn, "SELECT trust FROM servers WHERE id = ?", (sid,))[0][0])

    def _set_status(self, tool_id: int, status: str, vid: int | None, now: str, note: str, *, action: str | None = None,
                    reasons: list[str] | None = None) -> None:
        """Set a tool's status; ``reasons`` replaces its hold reasons (None keeps them)."""
        self.conn.execute("UPDATE tools SET status = ?, updated_at = ?, hold_reasons = coalesce(?, hold_reasons) WHERE id = ?",
                          (status, now, None if reasons is None else json.dumps(reasons), tool_id))
        self._decide(tool_id, vid, action or status, now, note)

    def _decide(self, tool_id: int, vid: int | None, action: str, now: str, note: str = "") -> None:
        self.conn.execute("INSERT INTO tool_decisions (tool_id, version_id, action, at, note) VALUES (?, ?, ?, ?, ?)",
                          (tool_id, vid, action, now, note))

    def _prune_servers(self, keep: set[int], now: str) -> int:
        removed = 0
        for sid, in _sqlite.rows(self.conn, "SELECT id FROM servers WHERE present = 1"):
            if sid in keep:
                continue
            self.conn.execute("UPDATE servers SET present = 0, updated_at = ? WHERE id = ?", (now, sid))
            for tid, in _sqlite.rows(self.conn, "SELECT id FROM tools WHERE server_id = ? AND status != 'removed'", (sid,)):
                self._set_status(tid, "removed", None, now, "its server is no longer configured")
                removed += 1
        return removed

    def _set_accepted(self, record: ToolRecord, version: int, action: str) -> ToolRecord:
        now = _now()
        with _sqlite.guard("accepting a tool version"), _sqlite.write(self.conn):
            found = _sqlite.rows(self.conn,
                "SELECT v.id, v.content_hash, t.id, t.content_hash, t.status FROM tool_versions v JOIN servers s ON s.id = v.server_id "
                "JOIN tools t ON t.server_id = v.server_id AND t.name = v.name WHERE s.name = ? AND v.name = ? AND v.version = ?",
                (record.server, record.name, version))
            if not found:
                raise StoreError(f"tool '{record.server}/{record.name}' has no version {version}; "
                                 f"`votr-mcp tools history {record.server}/{record.name}` lists its versions")
            vid, digest, tid, current, status = found[0]
            self.conn.execute("UPDATE tools SET accepted_version_id = ? WHERE id = ?", (vid, tid))
            if status != "removed":
                serves = digest == current
                self.conn.execute("UPDATE tools SET status = ?, hold_reasons = CASE WHEN ? THEN '[]' ELSE hold_reasons END "
                                  "WHERE id = ?", ("active" if serves else "held", serves, tid))
            self._decide(tid, vid, action, now)
        self.generation += 1
        return self.find(f"{record.server}/{record.name}")


def _extra_json(tool: Tool) -> str:
    try:
        return canonical_json(dict(tool.extra))
    except (TypeError, ValueError):
        return "{}"  # source metadata that is not JSON is not worth failing a harvest over


def _check_trust(trust: str) -> None:
    if trust not in TRUST_POLICIES:
        raise StoreError(f"unknown trust policy '{trust}'; use 'manual' (hold changed tools back until accepted) or 'auto' (accept changes)")


def _trust_of(trust: str | Mapping[str, str] | None, server: str) -> str | None:
    """The policy to apply for ``server``: a single policy, or per server (None: keep stored)."""
    value = trust if trust is None or isinstance(trust, str) else trust.get(server)
    if value is not None:
        _check_trust(value)
    return value
