"""Malformed input-schema parts are reported at load; the tool is kept with its schema as given."""

import json
from pathlib import Path

import pytest

from votr_mcp.catalog import input_schema_problems, load_catalog


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": "oops"}, ["input_schema.properties must be an object"]),
        ({"properties": {"q": "string", "n": {"type": "integer"}, "b": True}}, ["input_schema.properties 'q'"]),
        ({"properties": {"q": {}}, "required": "q"}, ['input_schema.required must be a list', 'write ["q"]']),
        ({"properties": {"q": {}}, "required": [{"q": 1}, "q"]}, ["input_schema.required must hold parameter names"]),
    ],
)
def test_each_malformed_part_of_a_schema_is_named(schema: dict, expected: list[str]) -> None:
    (problem,) = input_schema_problems(schema)
    assert all(part in problem for part in expected)


def test_well_formed_and_absent_parts_are_not_problems() -> None:
    assert input_schema_problems({}) == []
    assert input_schema_problems({"properties": None, "required": None}) == []
    assert input_schema_problems({"type": "object", "properties": {"q": {"type": "string"}, "any": True}, "required": ["q"]}) == []


def test_a_tool_with_a_malformed_schema_is_kept_verbatim_and_reported_with_file_and_line(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"q": "string"}, "required": [{"q": 1}]}
    lines = [{"server": "s", "name": "ok", "input_schema": {"type": "object"}}, {"server": "s", "name": "search", "input_schema": schema}]
    file = tmp_path / "tools.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    result = load_catalog(file)

    assert [t.name for t in result.catalog] == ["ok", "search"]
    assert result.catalog[1].input_schema == schema
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [(2, "tool 'search'"), (2, "tool 'search'")]
    assert "properties 'q'" in result.problems[0].message and "required" in result.problems[1].message
    assert all("kept" in p.message for p in result.problems)
