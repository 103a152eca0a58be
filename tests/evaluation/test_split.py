import json
from pathlib import Path

import pytest

from votr_mcp.errors import CatalogError
from votr_mcp.evaluation.data import check_gold, load_queries, select_split, split_of


def row(id: str, chain: str | None = None, step: int | None = None) -> dict:
    return {"id": id, "query": "q", "gold": [{"server": "s", "name": "t"}], "kind": "multi_step" if chain else "single",
            "chain": chain, "step": step, "meta": {}}


def test_rows_of_one_chain_always_share_a_side(tmp_path: Path) -> None:
    lines = [json.dumps(row(f"c{c}#s{s}", f"c{c}", s)) for c in range(50) for s in range(3)]
    file = tmp_path / "q.jsonl"
    file.write_text("\n".join(lines), encoding="utf-8")
    rows = load_queries(file)
    sides: dict[str, set[str]] = {}
    for r in rows:
        sides.setdefault(r.chain, set()).add(split_of(r))
    assert all(len(s) == 1 for s in sides.values())
    dev, test = select_split(rows, "dev"), select_split(rows, "test")
    assert len(dev) + len(test) == len(rows) and dev and test


def test_split_share_is_near_forty_percent_of_tasks(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    file.write_text("\n".join(json.dumps(row(f"r{i}")) for i in range(2000)), encoding="utf-8")
    share = len(select_split(load_queries(file), "dev")) / 2000
    assert 0.36 < share < 0.44


def test_a_bad_row_names_file_and_line(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    file.write_text(json.dumps(row("a")) + "\n" + json.dumps({"id": "b", "query": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"q\.jsonl:2"):
        load_queries(file)


@pytest.mark.parametrize(("record", "problem"), [
    ({"id": "b", "query": "x", "kind": "single"}, "missing field 'gold'"),
    ({"id": "b", "query": "  ", "kind": "single", "gold": [{"server": "s", "name": "t"}]}, "non-empty string"),
    ({"id": "b", "query": "x", "kind": "single", "gold": []}, "single row needs a non-empty gold list"),
    ({"id": "b", "query": "x", "kind": "no_tool", "gold": [{"server": "s", "name": "t"}]}, "no_tool row needs an empty"),
    ({"id": "b", "query": "x", "kind": "single", "gold": [{"server": "s"}]}, "non-empty 'name'"),
    ({"id": "b", "query": "x", "kind": "single", "gold": "s/t"}, "gold must be a list"),
    ({"id": "a", "query": "x", "kind": "single", "gold": [{"server": "s", "name": "t"}]}, "already used on line 1"),
])
def test_a_row_that_cannot_be_scored_as_its_kind_says_why(tmp_path: Path, record: dict, problem: str) -> None:
    file = tmp_path / "q.jsonl"
    file.write_text(json.dumps(row("a")) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"q\.jsonl:2") as caught:
        load_queries(file)
    assert problem in str(caught.value)


def test_a_byte_order_mark_is_read_past_and_other_encodings_are_refused(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    file.write_bytes(b"\xef\xbb\xbf" + json.dumps(row("a")).encode())
    assert [r.id for r in load_queries(file)] == ["a"]
    file.write_bytes(json.dumps(row("caf\u00e9"), ensure_ascii=False).encode("latin-1"))
    with pytest.raises(CatalogError, match="not UTF-8"):
        load_queries(file)


def test_gold_tools_missing_from_the_catalog_are_named(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    file.write_text("\n".join(json.dumps(row(f"r{i}")) for i in range(8)), encoding="utf-8")
    rows = load_queries(file)
    check_gold(rows, lambda key: True, file)
    with pytest.raises(CatalogError, match=r"the catalog lacks 8 gold tools \(r0 -> s/t; .* and 3 more\)"):
        check_gold(rows, lambda key: key != ("s", "t"), file)


def test_gold_names_are_stripped_as_the_catalog_strips_them(tmp_path: Path) -> None:
    record = {"id": "a", "query": "x", "kind": "single", "gold": [{"server": " Geo api", "name": "forward "}]}
    file = tmp_path / "q.jsonl"
    file.write_text(json.dumps(record), encoding="utf-8")
    assert load_queries(file)[0].gold == (("Geo api", "forward"),)


def test_query_files_split_lines_as_catalogs_do(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    text = json.dumps({**row("a"), "query": "first\u2028second"}, ensure_ascii=False) + "\n" + json.dumps(row("b"))
    file.write_text(text, encoding="utf-8")
    assert [r.id for r in load_queries(file)] == ["a", "b"]
    file.write_text(json.dumps(row("a")).replace('"q"', "NaN"), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"q\.jsonl:1.*NaN"):
        load_queries(file)
