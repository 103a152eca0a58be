"""What the agent reads: one-line tool signatures and the search_tools answer.

The text is for the model (short: every token is paid on every search); the structured
content carries the same facts for programs. Both come from one list of :class:`Found`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from votr_mcp.catalog import Tool

__all__ = ["Found", "signature", "search_text", "search_structured", "SEARCH_OUTPUT_SCHEMA"]

_DESCRIPTION_CHARS = 160
_TYPE_NAMES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list", "object": "dict", "null": "None"}


@dataclass(frozen=True, slots=True)
class Found:
    """One tool in a search answer."""

    call_name: str
    tool: Tool
    score: float
    tier: str | None
    signature: str
    available: bool
    unavailable_reason: str | None = None
    bound: bool = False


def signature(tool: Tool) -> str:
    """``[server: S] name(p: type, q?: type) → first sentence of the description``."""
    schema = tool.input_schema or {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    required = set(schema.get("required") or ())
    params = []
    for name, spec in properties.items():
        mark = "" if name in required else "?"
        params.append(f"{name}{mark}: {_type_name(spec)}")
    return f"[server: {tool.server}] {tool.name}({', '.join(params)}) → {_short(tool.description)}"


def _type_name(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "any"
    kind = spec.get("type")
    if isinstance(kind, list):
        return " | ".join(_TYPE_NAMES.get(k, str(k)) for k in kind)
    if "enum" in spec and isinstance(spec["enum"], list) and 0 < len(spec["enum"]) <= 5:
        return " | ".join(repr(v) for v in spec["enum"])
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        return f"list[{_type_name(spec['items'])}]"
    if kind is None:
        for union in ("anyOf", "oneOf"):
            if isinstance(spec.get(union), list):
                return " | ".join(_type_name(s) for s in spec[union])
        return "any"
    return _TYPE_NAMES.get(kind, str(kind))


def _short(description: str) -> str:
    text = " ".join(description.split())
    if not text:
        return "(no description)"
    for stop in (". ", "\n"):
        cut = text.find(stop)
        if 0 < cut < _DESCRIPTION_CHARS:
            return text[: cut + 1]
    return text if len(text) <= _DESCRIPTION_CHARS else text[: _DESCRIPTION_CHARS - 1].rstrip() + "…"


def search_text(found: Sequence[Found], *, abstained: bool, reason: str | None, notes: Sequence[str] = (), mark_unavailable: bool = True) -> str:
    """The text block of a search_tools answer (``mark_unavailable=False`` when a note says it once for all)."""
    lines: list[str] = []
    if not found:
        why = reason or "no indexed tool matches this request"
        lines.append(f"No tool found: {why}. Rephrase the request or name the service, or do it without a tool.")
    else:
        for item in found:
            facts = [f"call: {item.call_name}", f"score {item.score:.2f}"]
            if item.tier and item.tier != "unknown":
                facts.append(item.tier)
            if item.bound:
                facts.append("already found")
            if mark_unavailable and not item.available:
                facts.append(f"UNAVAILABLE: {item.unavailable_reason or 'its server is not connected'}")
            lines.append(f"{item.signature}  {{{', '.join(facts)}}}")
        lines.append('Call one with call_tool(name="<call>", arguments={...}).')
    lines.extend(notes)
    return "\n".join(lines)


def search_structured(
    found: Sequence[Found], *, abstained: bool, reason: str | None, session_id: str | None, notes: Sequence[str], dense: bool | None
) -> dict[str, Any]:
    """The structured content of a search_tools answer (matches SEARCH_OUTPUT_SCHEMA)."""
    return {
        "tools": [
            {
                "name": item.call_name,
                "server": item.tool.server,
                "tool": item.tool.name,
                "score": round(float(item.score), 4),
                "tier": item.tier,
                "signature": item.signature,
                "available": item.available,
                "bound": item.bound,
            }
            for item in found
        ],
        "abstained": abstained,
        "reason": reason,
        "session_id": session_id,
        "notes": list(notes),
        "dense": dense,
    }


SEARCH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "the call name to pass to call_tool"},
                    "server": {"type": "string"},
                    "tool": {"type": "string", "description": "the tool's own name on its server"},
                    "score": {"type": "number"},
                    "tier": {"type": ["string", "null"]},
                    "signature": {"type": "string"},
                    "available": {"type": "boolean"},
                    "bound": {"type": "boolean"},
                },
                "required": ["name", "server", "tool", "score", "signature", "available"],
            },
        },
        "abstained": {"type": "boolean"},
        "reason": {"type": ["string", "null"]},
        "session_id": {"type": ["string", "null"]},
        "notes": {"type": "array", "items": {"type": "string"}},
        "dense": {"type": ["boolean", "null"], "description": "whether dense (embedding) retrieval took part"},
    },
    "required": ["tools", "abstained"],
}
