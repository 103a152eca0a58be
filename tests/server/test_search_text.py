"""The text of a search_tools answer (server/render.py)."""

import pytest

from votr_mcp.catalog import Tool
from votr_mcp.server.render import Found, search_text


def found(name: str, tier: str) -> Found:
    tool = Tool(server="git", name=name, description="A git tool.")
    return Found(f"git__{name}", tool, 0.5, tier, f"[server: git] {name}() → A git tool.", True)


@pytest.mark.parametrize("tiers,warned", [
    (("low", "low"), True),  # near-misses mostly land here: the agent is told to check before calling
    (("low", "pinned"), True),  # a pinned tool says nothing about the search's confidence
    (("medium", "low"), False),
    (("high",), False),
])
def test_an_answer_of_low_confidence_tools_only_says_none_may_fit(tiers, warned):
    text = search_text([found(f"tool_{i}", tier) for i, tier in enumerate(tiers)], abstained=False, reason=None)
    assert ("Low confidence: none of these may do what was asked" in text) is warned
    assert text.splitlines()[-1].startswith("Call one with call_tool")
