"""Where the project's shipped catalogs live: the embedded default catalog (``registry/``) and the
known servers that are only ever suggested (``known-servers/``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from votr_mcp.errors import CatalogError

__all__ = ["default_registry_path", "known_servers_path", "setup_entries"]

_PACKAGE = Path(__file__).resolve().parent.parent


def _shipped(wheel_name: str, checkout_name: str) -> Path | None:
    """The folder packaged with a wheel install (``votr_mcp/<wheel_name>``), or the checkout's."""
    for candidate in (_PACKAGE / wheel_name, _PACKAGE.parent.parent / checkout_name):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    return None


def default_registry_path() -> Path:
    """The default catalog: packaged with a wheel install, or the checkout's ``registry/``."""
    path = _shipped("registry", "registry")
    if path is None:
        raise CatalogError("the embedded registry/ catalog is missing from this install; pass --catalog PATH")
    return path


def known_servers_path() -> Path:
    """The catalog of known servers that search only suggests (never searches as connected tools):
    packaged as ``votr_mcp/known_servers``, or the checkout's ``known-servers/``. A folder apart from
    ``registry/`` because a catalog folder is read with its subfolders."""
    path = _shipped("known_servers", "known-servers")
    if path is None:
        raise CatalogError("the known-servers/ catalog is missing from this install; suggestions use registry/ alone")
    return path


def setup_entries(path: Path) -> dict[str, Mapping[str, Any]]:
    """``server -> mcpServers entry`` from the ``config`` of each catalog file's server object (the
    shipped catalogs' files carry the entry that starts their server)."""
    hints: dict[str, Mapping[str, Any]] = {}
    files = [path] if path.is_file() else sorted(path.glob("*.json"))
    for file in files:
        try:
            document = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # load_catalog reports unreadable files; hints are optional
        for listing in document if isinstance(document, list) else [document]:
            server = listing.get("server") if isinstance(listing, dict) else None
            if isinstance(server, dict) and isinstance(server.get("name"), str) and isinstance(server.get("config"), dict):
                hints[server["name"]] = server["config"]
    return hints
