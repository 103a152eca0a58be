"""`votr-mcp upstreams --config FILE`: a user's check of their config, run as a real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from toy_upstreams import toy_entry

pytestmark = pytest.mark.slow  # starts a real server process


def run_check(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "upstreams.json"
    config.write_text(json.dumps({"mcpServers": {
        "toy": toy_entry(),
        "typo": {"command": "votr-no-such-server-binary"},
        "bad": {"command": "x", "args": [1]},
        "off": {"command": "x", "disabled": True},
    }}))
    return subprocess.run([sys.executable, "-m", "votr_mcp.cli", "upstreams", "--config", str(config), *flags],
                          capture_output=True, text=True, timeout=120)


def test_the_check_reports_every_server_and_fails_when_one_did_not_start(tmp_path: Path) -> None:
    done = run_check(tmp_path, "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["problems"] == ["mcpServers.bad.args[0]: must be a string, got 1; quote numbers; this server was skipped"]
    servers = {s["name"]: s for s in report["servers"]}
    assert set(servers) == {"toy", "typo", "off"}
    assert servers["toy"]["state"] == "ready" and servers["toy"]["tools"][:2] == ["echo", "whoami"]
    assert servers["typo"] == {
        "name": "typo", "transport": "stdio", "state": "failed", "server_info": None, "protocol_version": None, "tools": [],
        "error": "cannot start 'votr-no-such-server-binary': command not found; check 'command' and PATH",
    }
    assert servers["off"]["state"] == "disabled"


def test_the_text_report_has_one_line_per_server(tmp_path: Path) -> None:
    done = run_check(tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0].endswith("upstreams.json: 3 servers, 1 problem in the config")
    assert lines[2].split()[:3] == ["toy", "ready", "stdio"]
    assert lines[3].split()[:3] == ["typo", "failed", "stdio"]
    assert lines[4].split() == ["off", "disabled", "stdio", "not", "started"]
