"""Canonical form of a tool definition and its SHA-256 content hash.

The canonical form is the tool's definition (what its upstream says about it) as JSON with
sorted keys and no insignificant white space, so that two harvests of an unchanged tool
hash the same whatever the key order or spacing of the wire format. Server texts are not
part of a tool's definition; a server has its own hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from votr_mcp.catalog.models import Server, Tool

__all__ = ["DEFINITION_FIELDS", "canonical_definition", "canonical_json", "content_hash", "server_hash"]

DEFINITION_FIELDS = (
    "name",
    "title",
    "description",
    "input_schema",
    "output_schema",
    "annotations",
    "examples",
)


def canonical_definition(tool: Tool) -> dict[str, Any]:
    """The fields that define a tool; empty optional fields are left out."""
    out: dict[str, Any] = {"name": tool.name, "description": tool.description.strip()}
    if tool.title:
        out["title"] = tool.title
    out["input_schema"] = tool.input_schema or {}
    if tool.output_schema:
        out["output_schema"] = tool.output_schema
    if tool.annotations:
        out["annotations"] = tool.annotations
    if tool.examples:
        out["examples"] = list(tool.examples)
    return out


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, compact separators and real Unicode: one text per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(tool: Tool) -> str:
    """SHA-256 (hex) of the tool's canonical definition."""
    return hashlib.sha256(canonical_json(canonical_definition(tool)).encode("utf-8")).hexdigest()


def server_hash(server: Server) -> str:
    """SHA-256 (hex) of a server's name and describing texts."""
    payload = {"name": server.name, "description": server.description.strip(), "summary": server.summary.strip()}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()
