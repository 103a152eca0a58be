"""Fixtures for the upstream tests; helpers live in toy_upstreams.py."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def linux_proc() -> None:
    if not os.path.isdir("/proc/self"):
        pytest.skip("process checks read /proc (Linux)")
