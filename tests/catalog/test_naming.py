from votr_mcp.catalog import call_names
from votr_mcp.catalog.naming import CALL_NAME_PATTERN


def test_call_names_are_namespaced_and_valid() -> None:
    names = call_names([("github", "list_pull_requests"), ("AWS [awslabs/mcp]", "AWS CDK Project Analysis")])
    assert names[("github", "list_pull_requests")] == "github__list_pull_requests"
    assert names[("AWS [awslabs/mcp]", "AWS CDK Project Analysis")] == "AWS_awslabs_mcp__AWS_CDK_Project_Analysis"
    assert all(CALL_NAME_PATTERN.match(n) for n in names.values())


def test_colliding_names_get_stable_distinct_suffixes() -> None:
    keys = [("my server", "get"), ("my_server", "get"), ("my-server", "get")]
    first = call_names(keys)
    again = call_names(list(reversed(keys)))
    assert len(set(first.values())) == 3
    assert first == again
    assert all(CALL_NAME_PATTERN.match(n) for n in first.values())


def test_names_differing_only_in_case_are_treated_as_colliding() -> None:
    names = call_names([("a", "Read"), ("a", "read")])
    assert names[("a", "Read")].lower() != names[("a", "read")].lower()


def test_very_long_names_are_cut_to_128_characters() -> None:
    names = call_names([("s" * 100, "t" * 100), ("s" * 100, "t" * 99 + "u")])
    assert all(len(n) <= 128 and CALL_NAME_PATTERN.match(n) for n in names.values())
    assert len(set(names.values())) == 2
