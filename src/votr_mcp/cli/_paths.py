"""Default locations the subcommands share (read here, at the edge, from the environment)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(arg: Path | None) -> Path:
    """Where query and tool vectors are cached: the flag, else $VOTR_CACHE_DIR, else the user cache dir."""
    if arg is not None:
        return arg
    if os.environ.get("VOTR_CACHE_DIR"):
        return Path(os.environ["VOTR_CACHE_DIR"]) / "embeddings"
    import platformdirs

    return Path(platformdirs.user_cache_dir("votr-mcp")) / "embeddings"
