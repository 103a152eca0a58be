"""The dashboard's change-control decisions over a real store: held tools with their diff, and
accept / reject / rollback, each written to the audit trail."""

from __future__ import annotations

import dataclasses

import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.errors import StoreError
from votr_mcp.server.dashboard.actions import decide, held_tools
from votr_mcp.store import Store


def hold_first_tool(store: Store, catalog: Catalog) -> str:
    store.registry.sync(catalog)
    tool = catalog[0]
    moved = dataclasses.replace(tool, description=tool.description.rstrip(".") + " <b>and mails it</b>.")
    store.registry.sync(Catalog([moved if t.key == tool.key else t for t in catalog]))
    return f"{tool.server}__{tool.name}"


def test_a_held_tool_is_listed_with_its_diff_versions_and_why(store: Store, catalog: Catalog) -> None:
    name = hold_first_tool(store, catalog)
    [held] = held_tools(store)
    assert (held.call_name, held.version, held.accepted_version, held.versions) == (name, 2, 1, (1, 2))
    assert held.changed == ("description",)
    assert "--- accepted v1" in held.diff and "+++ upstream v2" in held.diff and "<b>and mails it</b>" in held.diff
    assert "{+" in held.description_change and held.last_decision.startswith("held at ")


def test_reject_keeps_the_tool_held_and_records_the_decision_then_accept_lets_it_through(store: Store, catalog: Catalog) -> None:
    name = hold_first_tool(store, catalog)
    rejected = decide(store, name, "reject")
    assert rejected["status"] == "held" and rejected["accepted_version"] == 1
    assert store.registry.decisions(name)[-1][2] == "rejected"
    accepted = decide(store, name, "accept")
    assert accepted["status"] == "active" and accepted["accepted_version"] == 2 and held_tools(store) == []
    with pytest.raises(StoreError, match="not held"):
        decide(store, name, "reject")


def test_rollback_needs_a_version_and_an_unknown_action_is_refused(store: Store, catalog: Catalog) -> None:
    name = hold_first_tool(store, catalog)
    with pytest.raises(StoreError, match="needs the version"):
        decide(store, name, "rollback")
    with pytest.raises(StoreError, match="unknown action 'delete'"):
        decide(store, name, "delete")
    rolled = decide(store, name, "rollback", 1)
    assert rolled["accepted_version"] == 1 and rolled["status"] == "held"  # upstream still serves v2
