"""Where the embedded default catalog (the project's ``registry/`` folder) lives."""

from __future__ import annotations

from pathlib import Path

from votr_mcp.errors import CatalogError

__all__ = ["default_registry_path"]


def default_registry_path() -> Path:
    """The default catalog: packaged with a wheel install, or the checkout's ``registry/``."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "registry", package.parent.parent / "registry"):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    raise CatalogError("the embedded registry/ catalog is missing from this install; pass --catalog PATH")
