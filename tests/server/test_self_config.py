"""A config that launches votr-mcp itself (the user points --config at the very file that starts
votr-mcp) must not start a chain of votr-mcp processes without end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from votr_mcp.upstream.config import MAX_NESTING

pytestmark = pytest.mark.slow


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            out.setdefault(parent, []).append(int(entry.name))
    return out


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _votr_depths(pid: int) -> dict[int, int]:
    """Each votr-mcp process below ``pid``: how many votr-mcp processes its branch holds down to it
    (itself included; a shell between two of them does not count)."""
    tree, depths, todo = _children(), {}, [(pid, 0)]
    while todo:
        parent, depth = todo.pop()
        for child in tree.get(parent, []):
            below = depth + 1 if _is_votr(child) else depth
            if below > depth:
                depths[child] = below
            todo.append((child, below))
    return depths


def _is_votr(pid: int) -> bool:
    try:
        return b"votr_mcp.cli\x00serve" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc (Linux)")
def test_a_config_that_starts_votr_mcp_through_a_wrapper_stops_at_a_bounded_depth(tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    serve = f"exec {sys.executable} -m votr_mcp.cli serve --config {config} --store none --no-dense"
    # Through sh, the entry check cannot see that this starts votr-mcp; the depth marker must.
    config.write_text(json.dumps({"mcpServers": {"votr": {"command": "sh", "args": ["-c", serve]}}}))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("VOTR_MCP_DEPTH", None)
    top = subprocess.Popen([sys.executable, "-m", "votr_mcp.cli", "serve", "--config", str(config), "--store", "none",
                            "--no-dense"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deepest = 0
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            deepest = max([deepest, *_votr_depths(top.pid).values()])
            time.sleep(0.2)
    finally:
        leftovers = _descendants(top.pid)
        assert top.stdin is not None
        top.stdin.close()
        top.terminate()
        try:
            top.wait(10)
        except subprocess.TimeoutExpired:
            top.kill()
            top.wait()
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    # The first votr-mcp starts one below it, that one another, and the one at MAX_NESTING starts none.
    # (Depth, not a count of processes: one that exits may be started again, under a new pid.)
    assert deepest == MAX_NESTING, f"votr-mcp processes nested {deepest} deep below the first"
