"""Two replicas behind no sticky routing: eval/scaleout.py's kill-a-replica scenario, end to end
(real Redis, real PostgreSQL, real `votr-mcp serve` processes and upstream)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_session_survives_its_replica_and_an_accept_reaches_the_other_replica(tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]' (make setup does)")
    pytest.importorskip("redis", reason="the 'redis' client is not installed: pip install redis (make setup does)")
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed; run `make test-servers` (apt-get install redis-server)")
    out = tmp_path / "scaleout.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "eval" / "scaleout.py"), "--json", str(out)], env=env,
                          capture_output=True, text=True, timeout=240)
    result = json.loads(out.read_text())
    assert result.get("error") is None, done.stderr[-3000:]
    assert result["context_kept"] and result["control_unbound_call_refused"]
    assert result["guard_kept"], result
    assert result["session_continued"], result
    assert result["change_propagated"], result["change"]
    assert done.returncode == 0
