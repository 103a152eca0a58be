"""What the registry hands out: tool records, history entries, sync reports.

Plain values built from rows of the ``tools`` / ``tool_versions`` tables; nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from votr_mcp.catalog import Tool, ToolKey
from votr_mcp.catalog.canonical import DEFINITION_FIELDS

__all__ = ["ToolRecord", "VersionRecord", "SyncReport", "changed_fields", "RECORD_SQL", "record_of"]


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Definition fields whose values differ between two canonical definitions."""
    return [f for f in DEFINITION_FIELDS if old.get(f) != new.get(f)]


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One tool as the registry holds it now."""

    server: str
    name: str
    status: str  # 'active' | 'held' | 'removed'
    version: int  # the version upstream serves now
    accepted_version: int | None
    content_hash: str
    changed: tuple[str, ...]  # fields that differ from the accepted version ('held' only)
    tool: Tool
    reasons: tuple[str, ...] = ()  # why it is held besides ``changed``: added late, poisoning ('held' only)

    @property
    def key(self) -> ToolKey:
        return (self.server, self.name)


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One immutable entry of a tool's history."""

    version: int
    content_hash: str
    changed_fields: tuple[str, ...]
    seen_at: str
    definition: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync changed."""

    tools: int
    new: int
    changed: int
    held: int
    auto_accepted: int
    removed: int
    restored: int
    flagged: int = 0  # held (or kept held) because their metadata looks poisoned

    def as_dict(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


RECORD_SQL = (
    "SELECT s.name, s.description, s.summary, t.name, t.status, cv.version, av.version, t.content_hash, "
    "t.definition, t.extra, av.definition, t.hold_reasons FROM tools t JOIN servers s ON s.id = t.server_id "
    "JOIN tool_versions cv ON cv.id = t.current_version_id LEFT JOIN tool_versions av ON av.id = t.accepted_version_id"
)


def record_of(row: tuple[Any, ...]) -> ToolRecord:
    """A ToolRecord from one row of :data:`RECORD_SQL`."""
    server, s_desc, s_summary, name, status, version, accepted, digest, definition, extra, accepted_def, reasons = row
    current = json.loads(definition)
    changed = tuple(changed_fields(json.loads(accepted_def), current)) if status == "held" and accepted_def else ()
    tool = Tool(
        server=server, name=name, description=current.get("description", ""), input_schema=current.get("input_schema") or {},
        server_description=s_desc, server_summary=s_summary, title=current.get("title"),
        output_schema=current.get("output_schema"), annotations=current.get("annotations"),
        examples=tuple(current.get("examples") or ()), extra=json.loads(extra),
    )
    held = tuple(json.loads(reasons)) if status == "held" else ()
    return ToolRecord(server, name, status, int(version), None if accepted is None else int(accepted), digest, changed, tool, held)
