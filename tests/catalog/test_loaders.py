import json
from pathlib import Path

import pytest

from votr_mcp.catalog import load_catalog, tool_from_mapping
from votr_mcp.errors import CatalogError

BENCH_TOOL = {
    "server": "notes",
    "server_description": "Keep notes.",
    "name": "add_note",
    "description": "Add a note.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "server_category": "Productivity",
}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_loads_good_lines_and_reports_bad_ones_with_file_and_line(tmp_path: Path) -> None:
    good = json.dumps(BENCH_TOOL)
    other = json.dumps({**BENCH_TOOL, "name": "delete_note"})
    file = write_jsonl(tmp_path / "tools.jsonl", [good, "{not json", json.dumps({"server": "notes"}), "", other, "[1, 2]"])

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["add_note", "delete_note"]
    lines = sorted(p.line for p in result.problems)
    assert lines == [2, 3, 6]
    assert all(p.path == str(file) for p in result.problems)
    assert "name" in str(next(p for p in result.problems if p.line == 3))


def test_bench_record_keeps_source_metadata_outside_the_definition(tmp_path: Path) -> None:
    tool = tool_from_mapping(BENCH_TOOL)
    assert tool.extra == {"server_category": "Productivity"}
    assert tool.input_schema["required"] == ["text"]
    assert tool.key == ("notes", "add_note")


def test_captured_tools_list_reads_mcp_camel_case_and_server_block(tmp_path: Path) -> None:
    listing = {
        "server": {"name": "memory", "description": "A knowledge graph."},
        "tools": [
            {"name": "read_graph", "description": "Read it all.", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}},
            {"name": "bad", "inputSchema": "not an object"},
            "not a tool",
        ],
    }
    file = tmp_path / "memory.json"
    file.write_text(json.dumps(listing), encoding="utf-8")

    result = load_catalog(file)

    (tool,) = result.catalog
    assert tool.server == "memory" and tool.server_description == "A knowledge graph."
    assert tool.annotations == {"readOnlyHint": True}
    assert [p.where for p in result.problems] == ["tools[1]", "tools[2]"]


def test_bare_tools_list_is_named_after_its_file_and_folders_are_read_whole(tmp_path: Path) -> None:
    (tmp_path / "time.json").write_text(json.dumps({"tools": [{"name": "get_current_time"}]}), encoding="utf-8")
    write_jsonl(tmp_path / "more.jsonl", [json.dumps(BENCH_TOOL)])
    (tmp_path / "broken.json").write_text('{"tools": [', encoding="utf-8")

    result = load_catalog(tmp_path)

    assert {t.key for t in result.catalog} == {("time", "get_current_time"), ("notes", "add_note")}
    (problem,) = result.problems
    assert problem.path.endswith("broken.json") and problem.line == 1


def test_duplicate_keys_keep_the_first_and_are_reported(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "t.jsonl", [json.dumps(BENCH_TOOL), json.dumps({**BENCH_TOOL, "description": "again"})])
    result = load_catalog(file)
    assert [t.description for t in result.catalog] == ["Add a note."]
    assert "duplicate tool 'add_note'" in str(result.problems[0])


def test_missing_path_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="does not exist"):
        load_catalog(tmp_path / "nope.jsonl")
