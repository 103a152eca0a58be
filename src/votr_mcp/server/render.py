"""What the agent reads: the search_tools answer, built from one-line tool signatures
(:func:`votr_mcp.retrieval.render.signature`).

The text is for the model (short: every token is paid on every search); the structured
content carries the same facts for programs. Both come from one list of :class:`Found`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from votr_mcp.catalog import Tool
from votr_mcp.catalog.safety import visible

__all__ = ["Found", "search_text", "search_structured", "SEARCH_OUTPUT_SCHEMA"]


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
    need: str | None = None  # the need of a whole-task request this tool serves
    hint: str | None = None  # one short workflow line: the operator's hint, or what usually comes next


def search_text(found: Sequence[Found], *, abstained: bool, reason: str | None, notes: Sequence[str] = (), mark_unavailable: bool = True) -> str:
    """The text block of a search_tools answer (``mark_unavailable=False`` when a note says it once for all)."""
    lines: list[str] = []
    if abstained or not found:
        why = reason or "no indexed tool matches this request"
        lines.append(f"No tool found: {why}. Rephrase the request or name the service, or do it without a tool.")
    if found:
        need: str | None = None
        for item in found:
            if item.need is not None and item.need != need:
                need = item.need
                lines.append(f"For: {need}")
            facts = [f"call: {item.call_name}", f"score {item.score:.2f}"]
            if item.tier and item.tier != "unknown":
                facts.append(item.tier)
            if item.bound:
                facts.append("already found")
            if mark_unavailable and not item.available:
                facts.append(f"UNAVAILABLE: {item.unavailable_reason or 'its server is not connected'}")
            lines.append(f"{item.signature}  {{{', '.join(facts)}}}")
            if item.hint:
                lines.append(f"  hint: {item.hint}")
        searched = [item for item in found if item.tier != "pinned"]
        if searched and all(item.tier == "low" for item in searched):
            # Near-misses (the right domain, no tool for the action) mostly land here: the agent
            # reads the signatures better than the score does.
            lines.append("Low confidence: none of these may do what was asked; check a signature before calling, "
                         "and if none fits, say so or do it without a tool.")
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
                "server": visible(item.tool.server),
                "tool": visible(item.tool.name),  # as published, less what nobody can see
                "score": round(float(item.score), 4),
                "tier": item.tier,
                "signature": item.signature,
                "available": item.available,
                "bound": item.bound,
                "need": item.need,
                "hint": item.hint,
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
                    "need": {"type": ["string", "null"],
                             "description": "for a request of several steps, the step this tool serves"},
                    "hint": {"type": ["string", "null"], "description": "a short workflow hint for this tool"},
                },
                "required": ["name", "server", "tool", "score", "signature", "available"],
            },
        },
        "abstained": {"type": "boolean"},
        "reason": {"type": ["string", "null"]},
        "session_id": {"type": ["string", "null"]},
        "notes": {"type": "array", "items": {"type": "string"}},
        "dense": {"type": ["boolean", "null"], "description": "whether dense (embedding) retrieval took part"},
        "suggestions": {"type": "array", "description": "servers not connected that would serve the request, with their mcpServers entry",
                        "items": {"type": "object"}},
    },
    "required": ["tools", "abstained"],
}
