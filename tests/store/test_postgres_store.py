"""What the PostgreSQL store adds for several replicas: changes announced to every connection,
vectors shared by content hash, one schema migration for replicas starting together.
(The registry's change-control rules run on both stores through conftest's ``store`` fixture.)"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.errors import StoreError
from votr_mcp.store import StoreChangeControl, index_catalog

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]' (make setup does)")

from votr_mcp.store.backends import open_store  # noqa: E402
from votr_mcp.store.postgres import PgStore  # noqa: E402
from votr_mcp.store.postgres.schema import LATEST  # noqa: E402

_schemas = iter(range(1, 1_000_000))


@pytest.fixture
def database(postgres_url: str) -> str:
    """A conninfo naming a fresh schema: two stores opened on it are two replicas."""
    name = f"votr_pg_{os.getpid()}_{next(_schemas)}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    return str(psycopg.conninfo.make_conninfo(postgres_url, options=f"-c search_path={name}"))


@pytest.fixture
def replicas(database: str) -> Iterator[tuple[PgStore, PgStore]]:
    with PgStore.open(database) as a, PgStore.open(database) as b:
        yield a, b


def _until(check: object, seconds: float = 5.0) -> float:
    """Seconds until ``check()`` is true (fails the test after ``seconds``)."""
    started = time.monotonic()
    while not check():  # type: ignore[operator]
        assert time.monotonic() - started < seconds, "not seen in time"
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_tool_held_and_then_accepted_on_one_replica_is_seen_by_the_other_within_a_second(
        replicas: tuple[PgStore, PgStore], catalog: Catalog) -> None:
    a, b = replicas
    a.registry.sync(catalog)
    control = StoreChangeControl(b)
    assert control.withheld() == frozenset()
    changed = Catalog(dataclasses.replace(t, description="Read any file and send it away.") if t.name == "read_file" else t
                      for t in catalog)
    a.registry.sync(changed)
    assert _until(lambda: ("filesystem", "read_file") in control.withheld()) < 1.0
    assert "held back" in (control.refusal(("filesystem", "read_file")) or "")
    a.registry.accept("filesystem__read_file")
    assert _until(lambda: not control.withheld()) < 1.0


def test_a_change_wakes_the_other_replicas_callbacks(replicas: tuple[PgStore, PgStore], catalog: Catalog) -> None:
    a, b = replicas
    woke = threading.Event()
    b.on_change(woke.set)
    a.registry.sync(catalog)
    assert woke.wait(5)


def test_vectors_stored_by_one_replica_are_reused_by_the_other(replicas: tuple[PgStore, PgStore]) -> None:
    a, b = replicas
    a.vectors.put_many("model", {"h1": np.arange(4, dtype=np.float32), "h2": np.ones(4, dtype=np.float32)})
    a.vectors.put_many("model", {"h1": np.zeros(4, dtype=np.float32)})  # a stored key is kept as it is
    found = b.vectors.get_many("model", ["h1", "h2", "missing"])
    assert sorted(found) == ["h1", "h2"]
    assert found["h1"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert b.vectors.count("model") == 2
    with pytest.raises(StoreError, match="differ in dimension"):
        a.vectors.put_many("model", {"h3": np.ones(4, dtype=np.float32), "h4": np.ones(3, dtype=np.float32)})


@pytest.mark.slow
def test_indexing_into_postgres_embeds_each_text_once(database: str, catalog: Catalog, embedder: object) -> None:
    with PgStore.open(database) as store:
        first = index_catalog(store, catalog, embedder)  # type: ignore[arg-type]
        again = index_catalog(store, catalog, embedder)  # type: ignore[arg-type]
        assert first.embedded == len(catalog) and again.embedded == 0
        assert store.interrupted_runs() == 0
        assert len(store.registry.catalog()) == len(catalog)


def test_tool_history_cannot_be_rewritten(replicas: tuple[PgStore, PgStore], catalog: Catalog) -> None:
    a, _ = replicas
    a.registry.sync(catalog)
    with pytest.raises(StoreError, match="tool history is immutable"):
        a.conn.execute("UPDATE tool_versions SET definition = '{}'")


def test_replicas_starting_together_migrate_once(database: str) -> None:
    opened: list[PgStore] = []
    threads = [threading.Thread(target=lambda: opened.append(PgStore.open(database))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert len(opened) == 3
        assert opened[0].conn.execute("SELECT count(*) FROM migrations").fetchall()[0][0] == LATEST
    finally:
        for store in opened:
            store.close()


def test_an_unreachable_database_says_what_to_check() -> None:
    with pytest.raises(StoreError, match="check that the server runs"):
        open_store("postgresql://votr:secret@127.0.0.1:1/none")


def test_what_is_usually_called_next_is_counted_over_every_replica_and_outlives_them(database: str) -> None:
    from votr_mcp.store.events import EventStore

    a, b = ("srv", "list"), ("srv", "read")
    with PgStore.open(database) as one, PgStore.open(database) as two:
        for store in (one, two):
            events = EventStore(store)
            events.add_follow(a, b)
            events.add_follow(a, b)
            assert events.flush() == 1  # one counter row, added to
    with PgStore.open(database) as restarted:
        assert list(EventStore(restarted).successors()) == [(a, b, 4)]
