"""The operator's note for held tools shows what changed and how to let each through."""

from __future__ import annotations

import dataclasses

from votr_mcp.catalog import Catalog
from votr_mcp.store import Store
from votr_mcp.store.holds import held_notes, word_diff


def test_a_changed_description_is_shown_as_the_words_removed_and_added_next_to_the_accept_command(store: Store, catalog: Catalog) -> None:
    store.registry.sync(catalog)
    tool = catalog[0]
    moved = dataclasses.replace(tool, description=tool.description.rstrip(".") + " under /srv/data only.")
    store.registry.sync(Catalog([moved if t.key == tool.key else t for t in catalog]))
    [note] = held_notes(store.registry)
    name = f"{tool.server}__{tool.name}"
    assert note.startswith(f"held: {name} (changed since accepted: description)")
    assert "{+" in note and "/srv/data only.+}" in note
    assert f"votr-mcp tools accept {name}" in note and f"votr-mcp tools show {name}" in note
    with Store.open(":memory:") as empty:
        assert held_notes(empty.registry) == []


def test_word_diff_elides_what_stayed_and_clips_long_additions() -> None:
    assert word_diff("List files in /home/alice/projects, the allowed directory of this server.",
                     "List files in /home/alice/work, the allowed directory of this server.") == \
        "List files in [-/home/alice/projects,-] {+/home/alice/work,+} the allowed directory of this server."
    long = word_diff("Get the weather.", "Get the weather. " + "word " * 30)
    assert long.endswith("… (+18 words)+}")
