"""``votr-mcp serve`` failing to start says why in one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_a_port_in_use_is_one_line_and_exit_code_2(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "votr_mcp.cli", "serve", "--transport", "http", "--port", str(port),
                               "--no-dense", "--store", "none"], capture_output=True, text=True, timeout=120,
                              env={"XDG_DATA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    # Log lines start with a timestamp, then the level.
    errors = [line for line in done.stderr.splitlines() if line.split(" ", 2)[1:2] != ["INFO"] and not line.startswith("INFO ")]
    assert errors == [f"votr-mcp: cannot listen on 127.0.0.1:{port}: Address already in use; choose another --port "
                      "(0 picks a free one) or stop what is using it"]


def test_sessions_that_are_not_a_redis_url_or_an_unreachable_redis_say_so(tmp_path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    base = [sys.executable, "-m", "votr_mcp.cli", "serve", "--no-dense", "--store", "none"]
    wrong = subprocess.run([*base, "--sessions", "http://user:secret@cache:6379"], capture_output=True, text=True, timeout=120, env=env)
    assert wrong.returncode != 0
    assert "--sessions takes a Redis URL" in wrong.stderr and "secret" not in wrong.stderr
    down = subprocess.run([*base, "--sessions", "redis://127.0.0.1:1/0"], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)
    assert down.returncode != 0
    assert "check that Redis is running" in down.stderr
