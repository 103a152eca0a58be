"""Fixtures of the session tests. The end-to-end tests reuse the server tests' helpers
(``tests/server/votr_serving.py``: a real ``votr-mcp serve`` subprocess and a real client)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
