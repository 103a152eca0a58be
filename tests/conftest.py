"""Fixtures shared by every test folder: the real reference MCP servers (tests/upstream_servers.py).

pytest puts this folder on sys.path, so any test may also ``import upstream_servers`` directly.
The servers come from scripts/install-test-servers.sh; when they are missing, tests that use these
fixtures are skipped with that hint, except under CI=true, where they fail.
"""

from __future__ import annotations

import os

# The models run as the server runs them: numpy's OpenBLAS on one thread (votr_mcp.cli sets the same
# before numpy loads). With a pool of its own, a product's last bits depended on how it split the work.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from pathlib import Path
from typing import Any

import pytest
import upstream_servers


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def upstream_config(tmp_path: Path) -> dict[str, Any]:
    """``{"mcpServers": ...}`` for the five core real servers (everything, filesystem, memory, time, git),
    each confined to a folder under tmp_path."""
    return upstream_servers.servers_config(tmp_path / "upstreams")


@pytest.fixture
def upstream_config_file(tmp_path: Path, upstream_config: dict[str, Any]) -> Path:
    """The core servers' config written to a JSON file, ready for ``votr-mcp serve --config``."""
    return upstream_servers.write_config(tmp_path / "upstreams.json", upstream_config)


@pytest.fixture
def every_upstream_config(tmp_path: Path) -> dict[str, Any]:
    """``{"mcpServers": ...}`` for every installed real server (the core five plus sequential-thinking,
    fetch, sqlite and calculator; the last two run on mcp 1.x)."""
    return upstream_servers.servers_config(tmp_path / "upstreams", upstream_servers.EVERY)


@pytest.fixture
def inspector() -> Any:
    """:func:`upstream_servers.run_inspector`, after checking that the Inspector CLI is installed."""
    upstream_servers.require_servers((), inspector=True)
    return upstream_servers.run_inspector
