"""``votr-mcp index``: harvest or load a catalog into the store, embedding only what changed.

    votr-mcp index [--catalog PATH | --config FILE] [--store PATH] [--json]

Without ``--catalog``, ``--config`` or ``--store`` the embedded demo catalog goes into
``demo.sqlite3`` beside the default store, never into the store ``serve --config`` uses.

Progress goes to stderr; ``--json`` prints ``{"tools": n, "embedded": m, "seconds": s, ...}``
on stdout. Killing a run is safe: the next one resumes from the batches already stored.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_store_argument", "harvest_config", "register", "run", "store_path"]

log = logging.getLogger("votr_mcp.cli.index")


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--store PATH`` option shared by the commands that use the registry."""
    parser.add_argument(
        "--store", metavar="PATH",
        help="the SQLite registry file (default: registry.sqlite3 in the user data folder, as for `votr-mcp serve`), "
             "or a PostgreSQL database shared by several servers (postgresql://user:password@host:5432/db)",
    )


def store_path(args: argparse.Namespace) -> str:
    """The store path from ``--store``, else the platform default (the same as `votr-mcp serve`)."""
    if getattr(args, "store", None):
        return str(args.store)
    from votr_mcp.store import default_store_path

    return str(default_store_path())


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "index",
        help="load a catalog (or harvest the configured servers) into the store, embedding only what changed",
        description="Record every tool of a catalog file/folder or of the upstream servers in an mcpServers config in "
        "the SQLite store. Unchanged tools are never re-embedded; a tool whose definition changed since it was "
        "accepted, or that a known server added, is held back until `votr-mcp tools accept NAME` (or its server "
        "has trust: auto); so is a tool whose metadata looks poisoned, whatever the trust.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--catalog", type=Path, metavar="PATH", help="tools.jsonl, a captured tools/list JSON file, or a folder "
                        "of them (default: the embedded registry/)")
    source.add_argument("--config", type=Path, metavar="FILE", help="an mcpServers config (e.g. claude_desktop_config.json): "
                        "connect to each server and harvest its tools")
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help='print {"tools": n, "embedded": m, "seconds": s, ...} on stdout')
    parser.add_argument("--trust", choices=("manual", "auto"),
                        help="policy for the catalog's servers: manual holds changed tools back (default for new servers), "
                        "auto accepts changes; --config takes it from each server's trust setting")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N", help="texts embedded (and committed) per batch")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="--config: bound on the whole harvest")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.errors import ConfigError
    from votr_mcp.index.models import default_embedder
    from votr_mcp.store import index_catalog
    from votr_mcp.store.backends import open_store

    if args.batch_size < 1:
        raise ConfigError(f"--batch-size must be at least 1, got {args.batch_size}")
    path = store_path(args) if args.store or args.config or args.catalog else _demo_store()
    if args.config is not None:
        catalog, trust, source, configured = _harvest(args)
    else:
        catalog, source = _load(args)
        trust, configured = args.trust, None
    with open_store(path) as store:
        with _Bar() as bar:
            report = index_catalog(store, catalog, default_embedder(), trust=trust, source=source,
                                   batch_size=args.batch_size, progress=bar.update,
                                   prune_servers=args.config is None)
        if configured is not None:
            retired = store.registry.retire_servers(keep=configured)
            if retired:
                log.info("%d tools of servers no longer in the config were marked removed", retired)
        held = store.registry.withheld()
    figures = report.as_json()
    log.info("indexed %d tools into %s: %d embedded, %d new, %d changed (%d held back), %d removed in %.1f s",
             report.tools, path, report.embedded, report.sync.new, report.sync.changed, report.sync.held,
             report.sync.removed, report.seconds)
    if held:
        log.warning("%d tools are held back (changed, added to a known server, or looking poisoned: %d flagged in this run); "
                    "review with `votr-mcp tools list --status held`", len(held), report.sync.flagged)
    if args.json:
        print(json.dumps(figures))
    return 0


def _demo_store() -> str:
    """Where a bare ``votr-mcp index`` puts the embedded demo catalog: beside the default store, never
    in it (indexing a catalog retires the servers it lacks, which would be every server of
    ``serve --config``)."""
    from votr_mcp.store import default_store_path

    path = default_store_path().with_name("demo.sqlite3")
    log.info("indexing the embedded demo catalog into %s (not the store `serve --config` uses; --store to choose)", path)
    return str(path)


def _load(args: argparse.Namespace) -> tuple[Any, str]:
    from votr_mcp.catalog import default_registry_path, load_catalog

    path = args.catalog if args.catalog is not None else default_registry_path()
    return load_catalog(path).require_tools(log), f"catalog {path}"


def _harvest(args: argparse.Namespace) -> tuple[Any, dict[str, str], str, set[str]]:
    catalog, config = harvest_config(args.config, args.timeout, failed_note="its stored tools are kept as they were")
    trust = {server.name: server.trust for server in config.servers}
    return catalog, trust, f"config {args.config}", {server.name for server in config.servers}


def harvest_config(path: Path, timeout: float | None, *, failed_note: str) -> tuple[Any, Any]:
    """(catalog, upstream config): every enabled server of an mcpServers file started once and its
    tools listed; a server that fails is logged with ``failed_note`` and left out."""
    import anyio

    from votr_mcp.catalog import Catalog
    from votr_mcp.errors import ConfigError
    from votr_mcp.upstream import harvest
    from votr_mcp.upstream.config import load_upstreams

    config = load_upstreams(path, os.environ)
    for problem in config.problems:
        log.warning("%s", problem)
    if not config.enabled:
        raise ConfigError(f"no enabled server in '{path}'; add entries under mcpServers")
    result = anyio.run(lambda: harvest(config, timeout=timeout, errlog=sys.stderr))
    for status in result.failed:
        log.warning("server '%s' was not harvested (%s); %s", status.name, status.describe(), failed_note)
    return Catalog(result.tools), config


class _Bar:
    """A tqdm progress bar on stderr, created on the first batch (nothing shown when all is cached)."""

    def __init__(self) -> None:
        self._bar: Any = None

    def update(self, done: int, total: int) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="text", desc="embedding", file=sys.stderr, dynamic_ncols=True)
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
