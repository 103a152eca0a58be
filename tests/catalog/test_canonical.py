import json

from votr_mcp.catalog import Tool, canonical_json, content_hash, tool_from_mapping


def tool(**changes: object) -> Tool:
    base = {
        "server": "s",
        "name": "search_issues",
        "description": "Search issues.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}, "page": {"type": "integer"}}},
    }
    base.update(changes)
    return tool_from_mapping(base)


def test_hash_ignores_key_order_and_surrounding_white_space() -> None:
    reordered = json.loads(json.dumps({"properties": {"page": {"type": "integer"}, "q": {"type": "string"}}, "type": "object"}))
    assert content_hash(tool()) == content_hash(tool(input_schema=reordered, description="  Search issues.\n"))


def test_hash_changes_with_every_part_of_the_definition() -> None:
    base = content_hash(tool())
    variants = [
        tool(description="Search all issues."),
        tool(input_schema={"type": "object"}),
        tool(annotations={"readOnlyHint": True}),
        tool(outputSchema={"type": "object"}),
        tool(title="Search"),
        tool(examples=["find bugs"]),
        tool(name="search_issue"),
    ]
    hashes = {content_hash(v) for v in variants}
    assert base not in hashes and len(hashes) == len(variants)


def test_hash_does_not_depend_on_the_server_texts() -> None:
    assert content_hash(tool()) == content_hash(tool(server_description="changed", server_summary="x"))


def test_canonical_json_is_compact_sorted_and_unicode() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
