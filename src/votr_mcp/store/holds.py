"""What the operator reads on stderr when tools are held back: which, why, what changed, and the
command that lets each through.

A description that changes because the user changed the server's arguments or upgraded it reads
the same to change control as a rug pull; the operator tells them apart by reading the change, so
the note shows it (the words removed and added, not the whole text) next to ``tools accept``. The
agent never sees this text: its refusal names the tool and the commands only (registry.refusal).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from votr_mcp.catalog.naming import call_names
from votr_mcp.store.records import ToolRecord
from votr_mcp.store.registry import Registry

__all__ = ["held_notes", "word_diff"]

_SPAN_WORDS = 12  # words shown of one removed or added span


def held_notes(registry: Registry) -> list[str]:
    """One note per held tool: its call name, why it is held, the description's change, the commands."""
    records = registry.records()
    names = call_names(r.key for r in records)
    out = []
    for record in records:
        if record.status != "held":
            continue
        name = names[record.key]
        why = list(record.reasons)
        if record.changed:
            why.append(f"changed since accepted: {', '.join(record.changed)}")
        change = _description_change(registry, name, record)
        out.append(f"held: {name} ({'; '.join(why) or 'held'})" + (f"\n  description: {change}" if change else "")
                   + f"\n  if you changed this server's arguments or version, let it through: votr-mcp tools accept {name}"
                   + f"\n  otherwise review it first (an unannounced change can be a rug pull): votr-mcp tools show {name}")
    return out


def word_diff(old: str, new: str) -> str:
    """The words removed ``[-…-]`` and added ``{+…+}`` between two texts, unchanged runs elided."""
    a, b = old.split(), new.split()
    parts: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append("…" if i2 - i1 > 6 else " ".join(a[i1:i2]))
            continue
        if i2 > i1:
            parts.append("[-" + _clip(a[i1:i2]) + "-]")
        if j2 > j1:
            parts.append("{+" + _clip(b[j1:j2]) + "+}")
    return " ".join(p for p in parts if p)


def _clip(words: list[str]) -> str:
    return " ".join(words[:_SPAN_WORDS]) + (f" … (+{len(words) - _SPAN_WORDS} words)" if len(words) > _SPAN_WORDS else "")


def _description_change(registry: Registry, name: str, record: ToolRecord) -> str:
    if "description" not in record.changed or record.accepted_version is None:
        return ""
    versions = {v.version: v.definition for v in registry.history(name)}
    return word_diff(_text(versions.get(record.accepted_version)), _text(versions.get(record.version)))


def _text(definition: Mapping[str, Any] | None) -> str:
    value = (definition or {}).get("description")
    return value if isinstance(value, str) else ""
