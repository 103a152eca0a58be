"""Change control from the dashboard: the held tools with their diffs, and the operator's decisions.

The same registry operations as ``votr-mcp tools show / accept / rollback``
(:mod:`votr_mcp.store.registry`), plus *reject*: the held version was reviewed and refused, which
the audit trail records while the tool stays held. Plain synchronous code over the store; the web
layer runs it in a worker thread.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from votr_mcp.catalog import call_names
from votr_mcp.errors import StoreError
from votr_mcp.store.holds import word_diff

__all__ = ["ACTIONS", "HeldTool", "decide", "held_tools"]

ACTIONS = ("accept", "reject", "rollback")


@dataclass(frozen=True, slots=True)
class HeldTool:
    """A withheld tool as the operator reviews it."""

    call_name: str
    server: str
    name: str
    version: int
    accepted_version: int | None
    reasons: tuple[str, ...]
    changed: tuple[str, ...]
    diff: str  # unified diff of the accepted definition against the held one (or the whole definition)
    description_change: str  # the description's words removed [-…-] and added {+…+}
    versions: tuple[int, ...]
    last_decision: str | None


def held_tools(store: Any) -> list[HeldTool]:
    """Every held tool of ``store``, in server order."""
    registry = store.registry
    records = registry.records()
    names = call_names(r.key for r in records)
    out = []
    for record in records:
        if record.status != "held":
            continue
        name = names[record.key]
        history = {v.version: v.definition for v in registry.history(name)}
        current = history.get(record.version, {})
        accepted = history.get(record.accepted_version) if record.accepted_version else None
        if accepted is not None and record.accepted_version != record.version:
            diff = _diff(accepted, current, f"accepted v{record.accepted_version}", f"upstream v{record.version}")
            words = word_diff(_text(accepted), _text(current)) if "description" in record.changed else ""
        else:
            diff, words = json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False), ""
        decisions = registry.decisions(name)
        last = f"{decisions[-1][2]} at {decisions[-1][0]}" if decisions else None
        out.append(HeldTool(name, record.server, record.name, record.version, record.accepted_version, tuple(record.reasons),
                            tuple(record.changed), diff, words, tuple(sorted(history)), last))
    return out


def decide(store: Any, name: str, action: str, version: int | None = None) -> dict[str, Any]:
    """Apply the operator's ``action`` (accept, reject, rollback) to tool ``name``; its record afterwards."""
    registry = store.registry
    if action == "accept":
        record = registry.accept(name, version)
    elif action == "reject":
        record = registry.reject(name, "rejected from the dashboard")
    elif action == "rollback":
        if version is None:
            raise StoreError("rollback needs the version to go back to, e.g. {\"version\": 1}")
        record = registry.rollback(name, version)
    else:
        raise StoreError(f"unknown action '{action}'; use one of {', '.join(ACTIONS)}")
    return {"server": record.server, "name": record.name, "status": record.status, "version": record.version,
            "accepted_version": record.accepted_version}


def _diff(old: Any, new: Any, old_label: str, new_label: str) -> str:
    a = json.dumps(old, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    b = json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(a, b, old_label, new_label, lineterm=""))


def _text(definition: Any) -> str:
    value = (definition or {}).get("description") if isinstance(definition, dict) else None
    return value if isinstance(value, str) else ""
