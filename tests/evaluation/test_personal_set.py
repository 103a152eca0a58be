"""eval/queries/human-personal: human-registry's requests in a 30-tool catalog, as its script writes them."""

import importlib.util
import json
from pathlib import Path

from votr_mcp.catalog import load_catalog
from votr_mcp.evaluation.data import catalog_of, load_queries, split_of

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "eval" / "queries" / "human-personal"


def _script():
    spec = importlib.util.spec_from_file_location("make_personal", ROOT / "eval" / "queries" / "make_personal.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_rows_are_what_the_script_writes_from_human_registry():
    script = _script()
    source = [json.loads(line) for line in script.SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert (FOLDER / "queries.jsonl").read_text(encoding="utf-8") == script.render(script.personal_rows(source))


def test_the_catalog_is_the_five_linked_registry_servers_and_every_gold_tool_is_in_it():
    catalog = load_catalog(catalog_of(FOLDER)).require_tools(None)
    assert len(catalog) == 30 and {t.server for t in catalog} == set(_script().SERVERS)
    keys = {t.key for t in catalog}
    rows = load_queries(FOLDER / "queries.jsonl")
    assert all(set(row.gold) <= keys for row in rows)
    assert all(row.gold or row.kind == "no_tool" for row in rows)


def test_a_request_for_a_tool_not_installed_is_a_no_tool_row_on_its_own_side_of_the_split():
    source = {r.id: r for r in load_queries(ROOT / "eval" / "queries" / "human-registry" / "queries.jsonl")}
    rows = [r for r in load_queries(FOLDER / "queries.jsonl") if (r.meta or {}).get("style") == "not_installed"]
    assert len(rows) > 100
    for row in rows:
        was = source[row.id]
        assert row.kind == "no_tool" and not row.gold and was.kind == "single" and was.gold
        assert split_of(row) == split_of(was)
