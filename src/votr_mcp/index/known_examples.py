"""Example requests for tools the project knows: the registry's and the known servers' (registry/README.md,
known-servers/README.md), lent to the same tool when it comes from a user's own server.

A harvested tool carries no examples, but the reference servers and the popular servers a user
configures list exactly the tools those catalogs captured (at the captured versions). A tool whose
name and description equal a captured tool's borrows that tool's examples for its vector
(Tool2Vec). The tool itself is not changed, so its content hash, and with it change control, sees
only what its server sent.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from votr_mcp.catalog.models import Tool

__all__ = ["examples_of", "known_examples"]

log = logging.getLogger(__name__)


@cache
def known_examples() -> Mapping[tuple[str, str], tuple[str, ...]]:
    """(tool name, stripped description) -> examples, from the embedded registry and the known
    servers' catalog (empty without them; the registry's first where both have a tool)."""
    from votr_mcp.catalog.embedded import default_registry_path, known_servers_path
    from votr_mcp.errors import CatalogError

    files: list[Path] = []
    for find in (default_registry_path, known_servers_path):
        try:
            files += sorted(find().glob("*.json"))
        except CatalogError:
            continue
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for file in files:
        try:
            tools = json.loads(file.read_text(encoding="utf-8")).get("tools", [])
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("registry file %s unreadable for its examples (%s)", file, exc)
            continue
        for tool in tools:
            examples = tool.get("examples") if isinstance(tool, dict) else None
            if isinstance(examples, list) and isinstance(tool.get("name"), str):
                key = (tool["name"], str(tool.get("description", "")).strip())
                out.setdefault(key, tuple(e for e in examples if isinstance(e, str)))
    return out


def examples_of(tool: Tool) -> tuple[str, ...]:
    """The tool's own examples, else those of the registry tool with its name and description."""
    if tool.examples:
        return tool.examples
    return known_examples().get((tool.name, tool.description.strip()), ())
