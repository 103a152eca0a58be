"""Logs on stderr carry UTC timestamps; ``--log-format json`` makes each line one JSON object."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from votr_mcp.cli._logging import JsonFormatter, TextFormatter

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def record(message: str, **extra: object) -> logging.LogRecord:
    item = logging.LogRecord("votr_mcp.test", logging.WARNING, __file__, 1, message, (), None)
    item.__dict__.update(extra)
    return item


def test_a_text_line_starts_with_a_utc_timestamp_then_level_and_logger() -> None:
    line = TextFormatter().format(record("upstream 'dies' is down"))
    assert STAMP.match(line) and line.endswith(" WARNING votr_mcp.test: upstream 'dies' is down")


def test_a_json_line_holds_time_level_logger_message_extras_and_the_traceback() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        item = record("failed", server="dies")
        item.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(item))
    assert STAMP.match(entry["time"] + " ")
    assert (entry["level"], entry["logger"], entry["message"], entry["server"]) == ("WARNING", "votr_mcp.test", "failed", "dies")
    assert "ValueError: boom" in entry["exc_info"]


@pytest.mark.parametrize("where", ["before", "after"])
def test_the_command_line_takes_log_format_json_before_or_after_the_subcommand(where: str, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"dies": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}}}))
    flag = ["--log-format", "json"]
    command = [sys.executable, "-m", "votr_mcp.cli", *(flag if where == "before" else []), "upstreams", "--config", str(config),
               *(flag if where == "after" else [])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    entries = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert any(e["level"] == "WARNING" and "dies" in e["message"] for e in entries), done.stderr
    assert all(STAMP.match(e["time"] + " ") for e in entries)
