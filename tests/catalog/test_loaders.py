import json
import logging
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


def mcp_listing(*names: str) -> str:
    return json.dumps({"tools": [{"name": n, "description": f"{n}.", "inputSchema": {"type": "object"}} for n in names]})


def test_a_generic_file_name_takes_its_folder_name_as_the_server(tmp_path: Path) -> None:
    for server in ("github", "gitlab"):
        (tmp_path / server).mkdir()
        (tmp_path / server / "tools.json").write_text(mcp_listing("search_issues", "create_issue"), encoding="utf-8")
    (tmp_path / "gitlab" / "Tools-List.JSON").write_text(mcp_listing("merge"), encoding="utf-8")

    result = load_catalog(tmp_path)

    assert sorted(t.key for t in result.catalog) == [
        ("github", "create_issue"), ("github", "search_issues"),
        ("gitlab", "create_issue"), ("gitlab", "merge"), ("gitlab", "search_issues")]
    (problem,) = result.problems  # two gitlab files feed one server
    assert problem.path.endswith("tools.json") and "Tools-List.JSON" in problem.message


def test_two_files_feeding_one_server_are_named_in_a_warning(tmp_path: Path) -> None:
    (tmp_path / "github.json").write_text(mcp_listing("a"), encoding="utf-8")
    (tmp_path / "more.json").write_text(json.dumps({"server": "github", "tools": [{"name": "b"}]}), encoding="utf-8")

    (problem,) = load_catalog(tmp_path).problems

    assert problem.path == str(tmp_path / "more.json")
    assert f"server 'github' also gets tools from '{tmp_path / 'github.json'}'" in problem.message


def test_a_duplicate_names_the_dropped_entry_and_whether_it_differs(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text(json.dumps({"server": "notes", "tools": [{"name": "add_note", "description": "Add a note."}]}),
                                         encoding="utf-8")
    write_jsonl(tmp_path / "same.jsonl", [json.dumps({**BENCH_TOOL, "input_schema": {}, "server_category": None})])
    write_jsonl(tmp_path / "z.jsonl", ["", json.dumps({**BENCH_TOOL, "description": "Another."})])

    result = load_catalog(tmp_path)

    dups = [p for p in result.problems if p.message.startswith("duplicate")]
    assert [(Path(p.path).name, p.line) for p in dups] == [("same.jsonl", 1), ("z.jsonl", 2)]
    assert f"first loaded at {tmp_path / 'notes.json'} (tools[0])" in dups[0].message
    assert "same definition" in dups[0].message and "different definition" in dups[1].message


def test_a_benchmark_set_folder_loads_its_tools_jsonl_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_jsonl(tmp_path / "tools.jsonl", [json.dumps(BENCH_TOOL)])
    write_jsonl(tmp_path / "queries.jsonl", [json.dumps({"query": "add a note", "gold": ["notes/add_note"]})])
    (tmp_path / "stats.json").write_text(json.dumps({"tools": 1}), encoding="utf-8")

    with caplog.at_level("INFO", logger="votr_mcp.catalog.loaders"):
        result = load_catalog(tmp_path)

    assert [t.key for t in result.catalog] == [("notes", "add_note")] and result.problems == ()
    assert "reading that file alone" in caplog.text


def test_suffixes_match_in_any_case_and_ndjson_is_read_by_line(tmp_path: Path) -> None:
    (tmp_path / "UPPER.JSON").write_text(mcp_listing("shout"), encoding="utf-8")
    write_jsonl(tmp_path / "more.NDJSON", [json.dumps(BENCH_TOOL), json.dumps({**BENCH_TOOL, "name": "delete_note"})])

    assert sorted(t.name for t in load_catalog(tmp_path).catalog) == ["add_note", "delete_note", "shout"]
    assert len(load_catalog(tmp_path / "more.NDJSON").catalog) == 2


EMPTY = "the file holds no tool entries (a .jsonl holds one JSON tool object per line)"


@pytest.mark.parametrize(("lines", "said"), [([], EMPTY), (["", "  "], EMPTY),
                                             (["garbage", "{}"], "every entry had a problem (2 reported above); fix them and load again")])
def test_a_catalog_that_yields_no_tool_says_so_naming_its_path(tmp_path: Path, lines: list[str], said: str) -> None:
    file = tmp_path / "tools.jsonl"
    file.write_text("\n".join(lines), encoding="utf-8")

    result = load_catalog(file)

    assert len(result.catalog) == 0
    assert str(result.problems[-1]) == f"{file}: no tools loaded: {said}"


def test_a_catalog_that_loads_no_tool_refuses_to_be_searched_and_says_why(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    file = tmp_path / "tools.jsonl"
    file.write_text('{"server": "s"}\n', encoding="utf-8")
    loaded = load_catalog(file)
    with pytest.raises(CatalogError, match="no tools loaded: every entry had a problem"):
        loaded.require_tools(logging.getLogger("test"))
    assert [r.getMessage() for r in caplog.records] == [str(loaded.problems[0])]  # the reason is said once, raised


def test_a_usable_catalog_logs_its_problems_up_to_a_cap(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = tmp_path / "tools.jsonl"
    good = {"server": "s", "server_description": "", "name": "t", "description": "d", "input_schema": {}}
    file.write_text("\n".join(["{", "[1]", '{"server": "s"}', json.dumps(good)]), encoding="utf-8")
    catalog = load_catalog(file).require_tools(logging.getLogger("test"), most=2)
    assert [t.name for t in catalog] == ["t"]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 and messages[0].startswith(f"{file}:1") and messages[2] == "... and 1 more catalog problems"
