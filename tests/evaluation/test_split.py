import json
from pathlib import Path

import pytest

from votr_mcp.errors import CatalogError
from votr_mcp.evaluation.data import load_queries, select_split, split_of


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
