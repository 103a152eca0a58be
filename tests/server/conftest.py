"""Fixtures of the server tests; the helpers they use live in votr_serving.py."""

from __future__ import annotations

import pytest
from votr_serving import TRANSPORTS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """One test body, run over stdio, legacy SSE and streamable HTTP."""
    return str(request.param)
