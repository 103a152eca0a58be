"""However votr-mcp ends, even by SIGKILL, nothing it started outlives it (issue 16, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_tree import SERVED, serve_and_stop, served_config

pytestmark = pytest.mark.slow


# SIGTERM with stdin left open is not here: votr-mcp serve (stdio) does not exit then until stdin
# closes (eval/reliability_checks/orphans.py measures it).
@pytest.mark.parametrize("how", ["kill", "eof"])
def test_no_upstream_process_or_grandchild_outlives_votr_mcp_however_it_stops(linux_proc: None, tmp_path: Path, how: str) -> None:
    outcome = serve_and_stop(served_config(tmp_path), tmp_path, SERVED, how, within=5.0)
    # npx, npm exec, sh, node; node; python; python and its sleep
    assert len(outcome.started) >= 7, outcome.describe()
    assert outcome.left == [], f"{len(outcome.left)} of {len(outcome.started)} left {outcome.seconds:.1f} s after {how}: {outcome.describe()}"
