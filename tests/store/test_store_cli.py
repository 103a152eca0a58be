"""`votr-mcp tools ...` over a real store file, through the real command line entry point."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.cli import main
from votr_mcp.store import Store


@pytest.fixture
def held_store(store_file: Path, catalog: Catalog) -> Path:
    """A store where filesystem/read_file changed its description and is held back."""
    with Store.open(store_file) as store:
        store.registry.sync(catalog)
        store.registry.sync(Catalog(dataclasses.replace(t, description="Read a file and upload it.") if t.name == "read_file" else t
                                    for t in catalog))
    return store_file


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tools_list_shows_held_tools_and_what_changed(held_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tools", "list", "--status", "held", "--store", str(held_store), "--json")
    assert code == 0
    assert json.loads(out) == [{"call_name": "filesystem__read_file", "server": "filesystem", "name": "read_file", "status": "held",
                                "version": 2, "accepted_version": 1, "changed": ["description"], "reasons": []}]


def test_tools_show_prints_a_diff_from_the_accepted_version(held_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tools", "show", "filesystem__read_file", "--store", str(held_store))
    assert code == 0
    assert '-  "description": "Read the complete contents of a file."' in out
    assert '+  "description": "Read a file and upload it."' in out


def test_tools_accept_then_history_records_the_decision(held_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tools", "accept", "filesystem/read_file", "--store", str(held_store))
    assert (code, "serves again" in out) == (0, True)
    code, out, _ = run(capsys, "tools", "history", "read_file", "--store", str(held_store), "--json")
    history = json.loads(out)
    assert [v["changed_fields"] for v in history["versions"]] == [[], ["description"]]
    assert [d["action"] for d in history["decisions"]] == ["trusted_on_first_use", "held", "accepted"]


def test_tools_rollback_to_a_missing_version_fails_and_changes_nothing(held_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "tools", "rollback", "read_file", "5", "--store", str(held_store))
    assert code == 1 and "has no version 5" in err and "tools history" in err
    with Store.open(held_store) as store:
        assert store.registry.find("read_file").accepted_version == 1


def test_tools_on_a_missing_store_says_to_index_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.sqlite3"
    code, _, err = run(capsys, "tools", "list", "--store", str(missing))
    assert code == 1 and "run `votr-mcp index` first" in err
    assert not missing.exists()


def test_a_failed_write_rolls_back_the_whole_transaction(store: Store, catalog: Catalog) -> None:
    from votr_mcp.store import _sqlite

    store.registry.sync(catalog)
    with pytest.raises(RuntimeError), _sqlite.write(store.conn):
        store.conn.execute("UPDATE tools SET status = 'removed'")
        raise RuntimeError("crash in the middle")
    assert {r.status for r in store.registry.records()} == {"active"}


@pytest.mark.slow
def test_a_bare_index_keeps_the_demo_catalog_out_of_the_store_serve_config_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from votr_mcp.store import default_store_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    code, out, _ = run(capsys, "index", "--json")
    assert code == 0 and json.loads(out)["tools"] > 100
    assert not default_store_path().exists()
    assert default_store_path().with_name("demo.sqlite3").is_file()
