"""Fixtures for the store tests: a varied catalog, stores, and the real model behind a counter."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from votr_mcp.catalog import Catalog, Tool
from votr_mcp.store import Store


def make_catalog() -> Catalog:
    """Twelve tools of four servers, varied enough for every stage (BM25 needs >= ~8)."""
    gh = ("github", "Repositories, issues and pull requests on GitHub.")
    fs = ("filesystem", "Read and write files in allowed folders.")
    wx = ("weather", "Forecasts and current conditions.")
    db = ("postgres", "Query a PostgreSQL database.")
    rows = [
        (gh, "list_pull_requests", "List pull requests of a repository.", {"owner": "string", "repo": "string", "state": "string"}),
        (gh, "create_issue", "Open a new issue in a repository.", {"owner": "string", "repo": "string", "title": "string"}),
        (gh, "merge_pull_request", "Merge an open pull request.", {"owner": "string", "repo": "string", "number": "integer"}),
        (fs, "read_file", "Read the complete contents of a file.", {"path": "string"}),
        (fs, "write_file", "Create or overwrite a file with new content.", {"path": "string", "content": "string"}),
        (fs, "list_directory", "List the entries of a directory.", {"path": "string"}),
        (wx, "get_forecast", "Weather forecast for a city for the next days.", {"city": "string", "days": "integer"}),
        (wx, "get_alerts", "Active severe weather alerts for a US state.", {"state": "string"}),
        (wx, "current_conditions", "Temperature, wind and humidity right now.", {"city": "string"}),
        (db, "run_query", "Run a read-only SQL query and return the rows.", {"sql": "string"}),
        (db, "list_tables", "List the tables of the database schema.", {}),
        (db, "describe_table", "Columns and types of one table.", {"table": "string"}),
    ]
    return Catalog(
        Tool(server=server, server_description=sdesc, name=name, description=desc,
             input_schema={"type": "object", "properties": {k: {"type": t} for k, t in params.items()}},
             annotations={"readOnlyHint": True} if name.startswith(("get", "list", "read", "describe")) else None)
        for (server, sdesc), name, desc, params in rows
    )


@pytest.fixture
def catalog() -> Catalog:
    return make_catalog()


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services import ServiceMissing, postgres_server  # noqa: E402

_SCHEMAS = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """One PostgreSQL for the session (tests/services.py); each test gets a schema of its own."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]' (make setup does)")
    try:
        with postgres_server() as url:
            yield url
    except ServiceMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture
def sqlite_store() -> Iterator[Store]:
    """For what only the SQLite store has (sqlite-vec KNN inside the file)."""
    with Store.open(":memory:") as opened:
        yield opened


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """The registry tests run on both stores: SQLite (embedded) and PostgreSQL (shared by replicas)."""
    if request.param == "sqlite":
        with Store.open(":memory:") as opened:
            yield opened
        return
    import psycopg

    from votr_mcp.store.postgres import PgStore

    url = request.getfixturevalue("postgres_url")
    name = f"votr_test_{os.getpid()}_{next(_SCHEMAS)}"  # a schema per test: as isolated as a database, faster
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    with PgStore.open(psycopg.conninfo.make_conninfo(url, options=f"-c search_path={name}")) as opened:
        yield opened  # type: ignore[misc]


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return tmp_path / "registry.sqlite3"


class CountingEmbedder:
    """The real embedder, counting every text it is asked to encode."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.model_id: str = inner.model_id  # type: ignore[attr-defined]
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.texts.extend(texts)
        return self.inner.encode(texts)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="session")
def minilm() -> object:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index.dense import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def embedder(minilm: object) -> CountingEmbedder:
    return CountingEmbedder(minilm)
