"""``votr-mcp stats`` reads the outcome log a server wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from votr_mcp.cli import main
from votr_mcp.learning import OutcomeLog, Returned
from votr_mcp.store import Store
from votr_mcp.store.events import EventStore

LOG, SHOW = ("git", "git_log"), ("git", "git_show")


def record(path: Path) -> None:
    with Store.open(path) as store:
        events = EventStore(store)
        log = OutcomeLog(sink=events)
        answer = [Returned(LOG, "git__git_log", 1, 1.0), Returned(SHOW, "git__git_show", 2, 0.5)]
        for query, called in (("show recent commits", LOG), ("show recent commits", LOG), ("what changed in HEAD", SHOW)):
            log.searched("s1", query, answer, "git", False)
            log.called("s1", called, "x", True)
        log.searched("s1", "what is the weather", [], "", True)
        log.called("s1", ("time", "now"), "time__now", True)  # never returned: no rank
        events.flush()


def test_stats_report_hit_rate_ranks_abstentions_and_top_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store.sqlite3"
    record(path)
    assert main(["stats", "--store", str(path), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["searches"] == 4 and figures["abstained"] == 1
    assert figures["calls"] == 4 and figures["calls_of_unlisted_tools"] == 1
    assert figures["hit_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert figures["rank_counts"] == {"1": 2, "2": 1}
    assert figures["top_queries"][0] == ["show recent commits", 2]
    assert main(["stats", "--store", str(path)]) == 0
    assert "hit rate (the called tool was the first returned): 66.7%" in capsys.readouterr().out


def test_stats_on_a_missing_store_says_how_to_get_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--store", str(tmp_path / "nope.sqlite3")]) == 1
    assert "votr-mcp serve" in capsys.readouterr().err
