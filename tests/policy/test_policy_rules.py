"""Rules decide per principal, server, tool and annotation, and say which rule decided."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from votr_mcp.catalog.models import Catalog, Tool
from votr_mcp.errors import ConfigError
from votr_mcp.policy import Governance, Policy, PolicyRefused, Principal

RESET = Tool("git", "git_reset", "Reset the repository", annotations={"destructiveHint": True})
LOG = Tool("git", "git_log", "Show commits", annotations={"readOnlyHint": True})
WRITE = Tool("filesystem", "write_file", "Write a file")  # no annotations: may be destructive (MCP default)
VIEWER, ADMIN = Principal("bob", ("viewer",)), Principal("alice", ("admin",))

POLICY = {"rules": [{"deny": {"roles": ["viewer"], "annotations": {"destructiveHint": True}}},
                    {"name": "git is for the git team", "deny": {"orgs": ["sales"], "servers": "git*"}}],
          "disabled": ["filesystem__write_*"]}


def test_a_viewer_is_refused_destructive_tools_and_the_refusal_names_the_rule() -> None:
    policy = Policy.parse(POLICY, "policy.json")
    decision = policy.decide(VIEWER, RESET)
    assert not decision.allowed
    assert decision.why == "rule 1 (deny: roles viewer; destructiveHint=true) in policy.json"
    assert policy.decide(VIEWER, LOG).allowed
    assert policy.decide(ADMIN, RESET).allowed


def test_disabled_tools_are_off_for_everybody_and_named_rules_read_as_named() -> None:
    policy = Policy.parse(POLICY, "policy.json")
    assert policy.decide(ADMIN, WRITE).why == "'filesystem__write_*' under \"disabled\" in policy.json"
    sales = Principal("sam", (), "sales")
    assert policy.decide(sales, LOG).why == "git is for the git team in policy.json"


def test_a_rule_with_an_unknown_field_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="unknown fields \\['tool'\\]"):
        Policy.parse({"rules": [{"deny": {"tool": "x"}}]}, "p")
    with pytest.raises(ValueError, match="exactly one of"):
        Policy.parse({"rules": [{"deny": {}, "allow": {}}]}, "p")


def test_a_changed_policy_file_applies_without_a_restart_and_a_broken_one_keeps_the_last(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"rules": []}))
    gov = Governance(path)
    catalog = Catalog([RESET, LOG])
    assert gov.hidden(VIEWER, catalog) is None
    path.write_text(json.dumps(POLICY))
    os.utime(path, ns=(1, 10**18))  # a new stamp even within the file system's time resolution
    mask = gov.hidden(VIEWER, catalog)
    assert mask is not None and mask.tolist() == [True, False]
    path.write_text("{ not json")
    os.utime(path, ns=(1, 2 * 10**18))
    assert gov.hidden(VIEWER, catalog).tolist() == [True, False]  # type: ignore[union-attr]
    assert gov.problem is not None and "previous policy stays" in gov.problem


def test_tokens_map_to_principals_over_http_and_stdio_is_the_local_user() -> None:
    gov = Governance(data={"principals": {"local": {"user": "me"}, "tokens": {"${BOB}": {"user": "bob", "roles": ["viewer"]}}}},
                     environ={"BOB": "s3cret"})
    assert gov.principal(None, over_http=False) == Principal("me")
    assert gov.principal("s3cret", over_http=True) == VIEWER
    with pytest.raises(PolicyRefused, match="missing or unknown"):
        gov.principal("guess", over_http=True)


def test_a_missing_policy_file_is_a_config_error_saying_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="drop --policy"):
        Governance(tmp_path / "nope.json")
