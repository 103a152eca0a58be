"""What one catalog file may hold: encodings, line breaks, strict JSON, the tools/list shapes."""

import json
from pathlib import Path

from votr_mcp.catalog import canonical_definition, canonical_json, load_catalog


def record(name: str, **changes: object) -> dict:
    return {"server": "notes", "server_description": "Keep notes.", "name": name, "description": f"{name} a note.",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, **changes}


def mcp_tool(name: str) -> dict:
    return {"name": name, "description": f"{name} a note.", "inputSchema": {"type": "object"}}


def lines_of(*records: dict) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def test_a_jsonl_line_that_is_not_utf8_is_reported_and_the_other_lines_load(tmp_path: Path) -> None:
    latin1 = json.dumps(record("caf\u00e9")).encode("utf-8").replace(b"caf\\u00e9", "caf\xe9".encode("latin-1"))
    file = tmp_path / "tools.jsonl"
    file.write_bytes(lines_of(record("add")) + latin1 + b"\n" + lines_of(record("delete")))

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["add", "delete"]
    (problem,) = result.problems
    assert (problem.path, problem.line) == (str(file), 2)
    assert "not UTF-8 (byte 0xe9" in problem.message and "save the file as UTF-8" in problem.message


def test_a_json_file_that_is_not_utf8_is_skipped_and_the_rest_of_the_folder_loads(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps({"tools": [mcp_tool("add")]}), encoding="utf-8")
    (tmp_path / "bad.json").write_bytes('{"tools": [\n{"name": "caf\xe9"}]}'.encode("latin-1"))

    result = load_catalog(tmp_path)

    assert [t.key for t in result.catalog] == [("good", "add")]
    (problem,) = result.problems
    assert problem.path.endswith("bad.json") and problem.line == 2
    assert "not UTF-8" in problem.message and "whole file was skipped" in problem.message


def test_a_utf8_bom_does_not_cost_the_first_line_or_the_json_file(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    (tmp_path / "a.jsonl").write_bytes(bom + lines_of(record("add"), record("delete")))
    (tmp_path / "b.json").write_bytes(bom + json.dumps({"tools": [mcp_tool("find")]}).encode())

    result = load_catalog(tmp_path)

    assert sorted(t.name for t in result.catalog) == ["add", "delete", "find"]
    assert result.problems == ()


def test_unicode_line_separators_inside_strings_do_not_split_a_line_and_crlf_is_fine(tmp_path: Path) -> None:
    texts = ["one\u2028two", "one\x85two", "one\u2029two"]
    data = b"".join(json.dumps(record(f"t{i}", description=text), ensure_ascii=False).encode() + b"\r\n"
                    for i, text in enumerate(texts))
    file = tmp_path / "tools.jsonl"
    file.write_bytes(data)

    result = load_catalog(file)

    # NEL is a C1 control: loading turns it into the newline it means (catalog.safety.visible).
    assert [t.description for t in result.catalog] == ["one\u2028two", "one\ntwo", "one\u2029two"]
    assert result.problems == ()


def test_nan_and_infinity_are_rejected_on_their_line(tmp_path: Path) -> None:
    good = json.dumps(record("add"))
    bad = [good[:-1] + f', "annotations": {{"x": {value}}}}}' for value in ("NaN", "-Infinity", "1e999")]
    file = tmp_path / "tools.jsonl"
    file.write_text("\n".join([good, *bad]) + "\n", encoding="utf-8")

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["add"]
    assert [p.line for p in result.problems] == [2, 3, 4]
    assert "NaN is not a JSON value" in result.problems[0].message
    assert "overflows to infinity" in result.problems[2].message
    json.loads(canonical_json(canonical_definition(result.catalog[0])))  # what loaded is valid JSON


def test_json_nested_too_deeply_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    file = tmp_path / "tools.jsonl"
    file.write_text(json.dumps(record("add")) + "\n" + "[" * 100_000 + "\n", encoding="utf-8")

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["add"]
    assert result.problems[0].line == 2 and "nested too deeply" in result.problems[0].message


def test_a_saved_json_rpc_response_loads_the_tools_inside_its_result(tmp_path: Path) -> None:
    response = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [mcp_tool("add"), "junk"]}}
    (tmp_path / "notes.json").write_text(json.dumps(response), encoding="utf-8")

    result = load_catalog(tmp_path / "notes.json")

    assert [t.key for t in result.catalog] == [("notes", "add")]
    assert [p.where for p in result.problems] == ["result.tools[1]"]


def test_a_json_rpc_error_response_is_reported_as_such(tmp_path: Path) -> None:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    (tmp_path / "err.json").write_text(json.dumps(error), encoding="utf-8")
    (tmp_path / "ok.json").write_text(json.dumps({"tools": [mcp_tool("add")]}), encoding="utf-8")

    result = load_catalog(tmp_path)

    assert [t.name for t in result.catalog] == ["add"]
    (problem,) = result.problems
    assert problem.path.endswith("err.json")
    assert "JSON-RPC error response (code -32601: Method not found)" in problem.message


def test_a_plain_list_of_tools_is_a_tools_array_named_after_the_file(tmp_path: Path) -> None:
    file = tmp_path / "notes.json"
    file.write_text(json.dumps([mcp_tool("add"), mcp_tool("delete"), {"description": "no name"}]), encoding="utf-8")

    result = load_catalog(file)

    assert [t.key for t in result.catalog] == [("notes", "add"), ("notes", "delete")]
    (problem,) = result.problems
    assert problem.where == "tools[2]" and "missing 'name'" in problem.message


def test_a_list_of_listings_still_reads_each_listing(tmp_path: Path) -> None:
    listings = [{"server": "a", "tools": [mcp_tool("add")]}, {"jsonrpc": "2.0", "id": 2, "result": {"tools": [mcp_tool("x")]}}]
    (tmp_path / "both.json").write_text(json.dumps(listings), encoding="utf-8")

    result = load_catalog(tmp_path / "both.json")

    assert [t.key for t in result.catalog] == [("a", "add"), ("both", "x")]
    assert result.problems == ()


def test_tool_names_padded_with_white_space_are_stripped(tmp_path: Path) -> None:
    file = tmp_path / "tools.jsonl"
    file.write_bytes(lines_of(record("add"), record(" add \t")))

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["add"]
    (problem,) = result.problems
    assert problem.line == 2 and "duplicate tool 'add'" in problem.message


def test_a_json_file_holding_json_lines_says_to_name_it_jsonl(tmp_path: Path) -> None:
    file = tmp_path / "tools.json"
    file.write_bytes(lines_of(record("add"), record("delete")))

    (problem, summary) = load_catalog(file).problems

    assert problem.line == 2 and "name it .jsonl" in problem.message
    assert "no tools loaded" in summary.message
