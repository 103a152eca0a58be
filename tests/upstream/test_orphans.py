"""However votr-mcp ends, even by SIGKILL, nothing it started outlives it (issue 16, item 4)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from process_tree import SERVED, serve_and_stop, served_config

from votr_mcp.upstream import _reaper

REAPER = Path(_reaper.__file__)


# "term": SIGTERM with the client's stdin still open (and stdout not a pipe: /dev/null here).
@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill", "eof", "term"])
def test_no_upstream_process_or_grandchild_outlives_votr_mcp_however_it_stops(linux_proc: None, tmp_path: Path, how: str) -> None:
    outcome = serve_and_stop(served_config(tmp_path), tmp_path, SERVED, how, within=5.0)
    # npx, npm exec, sh, node; node; python; python and its sleep
    assert len(outcome.started) >= 7, outcome.describe()
    assert how == "kill" or outcome.exited, f"votr-mcp did not exit by itself within 20 s of {how}"
    assert outcome.left == [], f"{len(outcome.left)} of {len(outcome.started)} left {outcome.seconds:.1f} s after {how}: {outcome.describe()}"


def test_the_reaper_ends_the_groups_still_listed_when_its_pipe_closes_and_spares_those_stopped(linux_proc: None) -> None:
    listed, unlisted = (subprocess.Popen(["sleep", "300"], start_new_session=True) for _ in range(2))
    try:
        reaper = subprocess.Popen([sys.executable, "-I", "-S", str(REAPER)], stdin=subprocess.PIPE, start_new_session=True)
        assert reaper.stdin is not None
        reaper.stdin.write(f"+{listed.pid}\n+{unlisted.pid}\n-{unlisted.pid}\n".encode())
        reaper.stdin.close()  # what the death of votr-mcp does to it
        assert reaper.wait(5) == 0
        assert listed.wait(5) == -signal.SIGTERM
        assert unlisted.poll() is None
    finally:
        for process in (listed, unlisted):
            process.kill()
            process.wait()
