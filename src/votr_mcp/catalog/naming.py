"""Call names: the namespaced, MCP-valid name under which votr-mcp exposes each tool.

A call name is ``<server slug>__<tool slug>``, matching ``^[A-Za-z0-9._-]{1,128}$``. Slugs
keep letters, digits, ``.``, ``_`` and ``-`` and fold anything else to ``_``. When two tools
would get the same call name (two servers whose slugs agree, or names that differ only in
folded characters) every colliding tool gets a short suffix from the hash of its
``(server, name)``, so the mapping is stable across restarts and never depends on order.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

from votr_mcp.catalog.models import ToolKey

__all__ = ["CALL_NAME_PATTERN", "SEPARATOR", "slug", "call_names"]

CALL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
SEPARATOR = "__"
_MAX = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """An MCP-safe fragment of ``text``: unsafe runs become ``_``; never empty."""
    cleaned = _UNSAFE.sub("_", text.strip()).strip("_")
    return cleaned or "x"


def call_names(keys: Iterable[ToolKey]) -> Mapping[ToolKey, str]:
    """A unique, valid call name for every ``(server, tool)`` key."""
    keys = list(dict.fromkeys(keys))
    wanted = {key: _join(slug(key[0]), slug(key[1])) for key in keys}
    holders: dict[str, list[ToolKey]] = defaultdict(list)
    for key, name in wanted.items():
        holders[name.lower()].append(key)
    names: dict[ToolKey, str] = {}
    for key, name in wanted.items():
        if len(holders[name.lower()]) == 1:
            names[key] = name
        else:
            digest = hashlib.sha256(f"{key[0]}\x00{key[1]}".encode()).hexdigest()[:8]
            names[key] = _join(slug(key[0]), slug(key[1]), suffix=f"-{digest}")
    return names


def _join(server: str, tool: str, suffix: str = "") -> str:
    room = _MAX - len(SEPARATOR) - len(suffix)
    server = server[: max(16, room - len(tool))]
    tool = tool[: room - len(server)]
    return f"{server}{SEPARATOR}{tool}{suffix}"
