"""Where the project's shipped catalogs live: the embedded default catalog (``registry/``) and the
known servers that are only ever suggested (``known-servers/``)."""

from __future__ import annotations

from pathlib import Path

from votr_mcp.errors import CatalogError

__all__ = ["default_registry_path", "known_servers_path"]

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
