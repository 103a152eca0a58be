"""Argument normalization: trivial differences vanish, meaningful ones stay."""

from __future__ import annotations

import pytest

from votr_mcp.session import fingerprint, normalize_arguments


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"q": "open issues"}, {"q": "  open \n issues\t"}),
        ({"url": "https://example.com/a/"}, {"url": "https://example.com/a"}),
        ({"url": "HTTPS://Example.COM/a"}, {"url": "https://example.com/a"}),
        ({"url": "https://example.com/"}, {"url": "https://example.com"}),
        ({"n": 2}, {"n": 2.0}),
        ({"nested": {"x": [1, {"b": 1, "a": " s "}]}}, {"nested": {"x": [1, {"a": "s", "b": 1}]}}),
    ],
)
def test_trivially_different_arguments_share_a_fingerprint(left: dict, right: dict) -> None:
    assert fingerprint("t", left) == fingerprint("t", right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"q": "Open"}, {"q": "open"}),
        ({"ids": [1, 2]}, {"ids": [2, 1]}),
        ({"url": "https://example.com/A"}, {"url": "https://example.com/a"}),
        ({"url": "https://example.com/a?x=1"}, {"url": "https://example.com/a?x=2"}),
        ({"flag": True}, {"flag": 1}),
        ({"a": None}, {}),
    ],
)
def test_meaningfully_different_arguments_get_different_fingerprints(left: dict, right: dict) -> None:
    assert fingerprint("t", left) != fingerprint("t", right)


def test_the_same_arguments_to_different_tools_differ() -> None:
    assert fingerprint("a", {"x": 1}) != fingerprint("b", {"x": 1})


def test_missing_arguments_equal_empty_arguments() -> None:
    assert fingerprint("t", None) == fingerprint("t", {})


def test_non_json_values_and_deep_nesting_do_not_break_normalization() -> None:
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["x"] = {}
        node = node["x"]
    assert isinstance(fingerprint("t", {"deep": deep, "odd": {1, 2}, "nan": float("nan")}), str)


def test_normalized_arguments_keep_values_that_matter() -> None:
    assert normalize_arguments({"b": " x  y ", "a": 3.0}) == {"a": 3, "b": "x y"}
