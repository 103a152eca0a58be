"""``votr-mcp serve`` failing to start says why in one line."""

from __future__ import annotations

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
