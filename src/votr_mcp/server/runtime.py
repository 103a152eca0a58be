"""Start-up and life of ``votr-mcp serve``: catalog, index, upstreams, transport.

Order matters for the first answer, not for correctness:

1. the transport starts at once, so a client's handshake never waits for upstreams;
2. upstreams start concurrently; the first search waits (bounded) until each has connected
   or failed once, then searches the tools harvested so far;
3. the index starts lexical (BM25 + TF-IDF: milliseconds to build) and the dense stage is
   added in a worker thread after the model loads, then swapped in; until then results say
   they are lexical only;
4. ``tools/list_changed`` or a reconnect re-indexes that one server (only changed tools are
   re-embedded) and swaps the index while searches go on.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from votr_mcp.catalog import Catalog, Tool, ToolKey, default_registry_path, load_catalog, setup_entries
from votr_mcp.errors import VotrError
from votr_mcp.index.dense import Embedder, EmbeddingCache, JointEmbedder
from votr_mcp.retrieval.searcher import EmptyCatalog, Searcher, searcher_for
from votr_mcp.server.app import build_server
from votr_mcp.server.hooks import ChangeControl, NoChangeControl, SessionHooks
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex, Snapshot
from votr_mcp.server.observability import observe, web_routes
from votr_mcp.server.sessions import ManagedSessions
from votr_mcp.server.suggest import default_suggester
from votr_mcp.server.transports import HttpOptions, serve_http, serve_stdio

__all__ = ["ServeOptions", "serve", "build_searcher"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeOptions:
    """Everything ``votr-mcp serve`` was told, as values (read in the CLI, nowhere else)."""

    config_path: Path | None = None
    catalog_path: Path | None = None
    transport: str = "stdio"
    http: HttpOptions = field(default_factory=HttpOptions)
    expose_all: bool = False
    dense: bool = True
    max_results: int | None = None
    guard_max_repeats: int | None = None
    binding_mode: str = "open"
    store_path: str | None = None
    wait_for_dense: bool = False
    embedding_cache: Path | None = None
    """Folder of cached catalog embeddings for a catalog served without a store (the one `votr-mcp
    search` and setup fill), so the embedded catalog is dense from the first search."""
    sessions_url: str | None = None  # redis://…: sessions shared by every replica (session/redis_store.py)
    learning: bool = True  # learn from search outcomes (votr_mcp.learning)
    learn_queries: bool = True  # keep query texts in the outcome log (off: counts only, no learned examples)
    policy_path: Path | None = None  # principals and access rules (votr_mcp.policy), re-read when it changes
    policy_env: Mapping[str, str] = field(default_factory=dict, repr=False)  # for ${VAR} tokens in the policy


def build_searcher(catalog: Catalog, *, embedder: Embedder | None = None, cache: EmbeddingCache | None = None) -> Searcher:
    """The searcher of ``catalog`` (retrieval/searcher.py), its abstention threshold scored now (about a
    second, in the index's worker thread) so the first search after a change does not pay for it."""
    return searcher_for(catalog, embedder=embedder, cache=cache).warm()


def patch(searcher: Searcher, changed: Sequence[Tool], removed: Sequence[ToolKey]) -> Searcher | None:
    """Only the changed rows swapped in (the retriever's incremental path), or None to rebuild instead."""
    if isinstance(searcher, EmptyCatalog):
        return None
    try:
        return searcher.with_tools_changed(changed, removed).warm()
    except VotrError:  # e.g. the change would empty the catalog
        return None


def reindex(searcher: Searcher, catalog: Catalog) -> Searcher:
    """``searcher`` moved to a new catalog, keeping its embedder and cache (re-embeds only changes)."""
    if len(catalog) == 0:
        return build_searcher(catalog, embedder=searcher.embedder, cache=searcher.cache)
    return searcher.with_catalog(catalog).warm()


_MODEL_LOADS = ThreadPoolExecutor(1, thread_name_prefix="votr-models")


def load_embedder() -> JointEmbedder:
    """The search models (index/models.py) loaded (a second or two: numpy weights). Worker thread.
    USE keeps what it parses and inflates in the user cache dir (index/use_state.py): a second of
    each restart."""
    import platformdirs

    from votr_mcp.index.models import default_embedder

    embedder = default_embedder(state_dir=Path(platformdirs.user_cache_dir("votr-mcp")) / "models")
    embedder.encode(["warm up"])
    if embedder.sparse is not None:
        embedder.sparse.encode(["warm up"])  # load now, not in the first search that needs a query vector
    return embedder


async def serve(
    options: ServeOptions,
    *,
    sessions: SessionHooks | None = None,
    change_control: ChangeControl | None = None,
) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP)."""
    if sessions is None:
        sessions = session_hooks(options)
    # The models load (a second or two) while the store and its index snapshot are read (as long
    # again at 100k tools, eval/SCALE.md): started first, on a thread of their own; _load_dense
    # attaches them once both are there.
    models = _MODEL_LOADS.submit(load_embedder) if options.dense else None
    async with AsyncExitStack() as stack:
        hub, start = await _prepare(options, stack, sessions, change_control or NoChangeControl())
        if options.policy_path is not None:
            from votr_mcp.policy import Governance

            hub.governance = Governance(options.policy_path, environ=options.policy_env)
        observer = observe(hub, sessions)
        server = build_server(hub, expose_all=options.expose_all, on_disconnect=getattr(sessions, "close_transport", None),
                              observer=observer)
        async with anyio.create_task_group() as tg:
            tg.start_soon(start)
            hub.dense_pending = options.dense
            # A catalog served without upstreams is small and its embeddings are cached (setup
            # fills the cache): the model is ready within a second or two, so a first search waits
            # for it rather than answering lexically. Harvesting many servers may take minutes
            # to embed; there the first searches are lexical unless --wait-for-dense.
            hub.wait_for_dense = options.wait_for_dense or options.config_path is None
            if options.dense:
                tg.start_soon(_load_dense, hub, models)
            if options.transport == "stdio":
                tg.start_soon(_stop_on_signals, tg.cancel_scope)
                await serve_stdio(server)
            else:
                # uvicorn shuts down gracefully on signals
                await serve_http(server, options.transport, options.http, routes=web_routes(observer, options.http))
            tg.cancel_scope.cancel()  # the client left or the server stopped: stop upstreams and the model load too


def session_hooks(options: ServeOptions) -> ManagedSessions:
    """Session context and iteration guard configured from the serve options."""
    from votr_mcp.session import ContextSettings, GuardSettings, SessionManager, SessionSettings

    guard = GuardSettings(max_repeats=options.guard_max_repeats or 3)
    settings = SessionSettings(guard=guard, context=ContextSettings(mode=options.binding_mode))  # type: ignore[arg-type]
    if options.sessions_url:
        from votr_mcp.session.redis_store import RedisSessions

        log.info("sessions: shared, in %s", options.sessions_url.split("@")[-1])
        return ManagedSessions(RedisSessions.from_url(options.sessions_url, settings))  # type: ignore[arg-type]
    return ManagedSessions(SessionManager(settings))


def _apply_session_policy(sessions: SessionHooks, snapshot: Snapshot, config: Any) -> None:
    """Per-server pinned, polling and loop-hint settings, as call names, into the session layer."""
    if not isinstance(sessions, ManagedSessions):
        return
    names = snapshot.names

    def called(server: str, tools: Sequence[str]) -> list[str]:
        return [names[(server, tool)] for tool in tools if (server, tool) in names]

    manager = sessions.manager
    manager.set_pinned([n for e in config.enabled for n in called(e.name, e.pinned)])
    manager.set_exempt([n for e in config.enabled for n in called(e.name, e.polling)])
    manager.set_hints({names[(e.name, tool)]: hint for e in config.enabled for tool, hint in e.loop_hints.items() if (e.name, tool) in names})


async def _prepare(options: ServeOptions, stack: AsyncExitStack, sessions: SessionHooks, change_control: ChangeControl) -> tuple[Hub, Any]:
    """Build the hub; return it with a coroutine function that finishes start-up in the background."""
    if options.config_path is None:
        return await _prepare_catalog(options, stack, sessions, change_control)
    return await _prepare_upstreams(options, options.config_path, stack, sessions, change_control)


async def _prepare_catalog(options: ServeOptions, stack: AsyncExitStack, sessions: SessionHooks, change_control: ChangeControl) -> tuple[Hub, Any]:
    """No upstreams: serve a catalog (``--catalog``, else what ``votr-mcp index`` put in a named
    ``--store``, else the embedded registry). Search works; calls explain how to add the server."""
    # A named store caches embeddings (a restart embeds nothing) and, when it is the source,
    # also withholds changed tools until accepted.
    store = await _open_store(options, stack) if options.store_path not in (None, "none") else None
    cache: Any = store.vectors if store is not None else None
    if cache is None and options.embedding_cache is not None:
        from votr_mcp.index import FileEmbeddingCache

        cache = FileEmbeddingCache(options.embedding_cache)
    catalog, source, path = Catalog([]), "", None
    stored = None
    if options.catalog_path is None and store is not None and options.dense and options.store_path != ":memory:":
        stored = await anyio.to_thread.run_sync(_stored_index, store)
    if options.catalog_path is None and store is not None:
        if stored is not None and stored.loaded is not None:
            catalog = stored.loaded.catalog  # what the store holds: the snapshot's fingerprint says so
        else:
            catalog = await anyio.to_thread.run_sync(_stored_catalog, store)
        source = f"the store {options.store_path}"
        if len(catalog) and isinstance(change_control, NoChangeControl):
            from votr_mcp.store import StoreChangeControl

            change_control = StoreChangeControl(store)
    if not len(catalog):
        path = options.catalog_path or default_registry_path()
        catalog, source = load_catalog(path).require_tools(log), f"the catalog at {path}"
    log.info("no upstream config: serving %s (%d tools of %d servers); calls explain how to add servers",
             source, len(catalog), len(catalog.servers))
    hints = setup_entries(path) if path is not None else {}
    if path is None or options.catalog_path is not None:
        try:
            hints = {**setup_entries(default_registry_path()), **hints}
        except VotrError:
            pass  # no embedded registry in this install: generic hints
    searcher = stored.lexical() if stored is not None and stored.loaded is not None else build_searcher(catalog, cache=cache)
    hub = Hub(LiveIndex(catalog, searcher, reindex=reindex), None, sessions, change_control,
              setup_hints=hints, default_max_results=options.max_results)
    hub.stored_index = stored if store is not None and options.catalog_path is None else None
    hub.learning = await _learning(options, store, stack)
    hub.ready.set()

    async def nothing() -> None:
        return None

    if store is not None and options.catalog_path is None and hasattr(store, "on_change"):
        return hub, lambda: _follow_store(hub, store)
    return hub, nothing


async def _follow_store(hub: Hub, store: Any) -> None:
    """A shared store (PostgreSQL) as the catalog: another replica's index run or an operator's
    accept reaches this replica's index within a fraction of a second of its commit."""
    seen = store.data_version()
    while True:
        await anyio.sleep(0.1)
        version = store.data_version()  # counts the store's change notifications: no query
        if version == seen:
            continue
        seen = version
        catalog = await anyio.to_thread.run_sync(_stored_catalog, store)
        if list(catalog) != list(hub.index.current.catalog):
            log.info("the store changed: re-indexing %d tools", len(catalog))
            await hub.index.rebuild(catalog)
async def _learning(options: ServeOptions, store: Any, stack: AsyncExitStack, config: Any = None) -> Any:
    """The outcome log and what is learned from it, kept in the store when there is one; seeded with
    the example requests the config gives (``"votr": {"examples": {tool: [...]}}``)."""
    given = [((entry.name, tool), text) for entry in (config.enabled if config is not None else ())
             for tool, texts in entry.examples.items() for text in texts]
    if not options.learning and not given:
        return None
    from votr_mcp.learning import Learning
    from votr_mcp.learning.examples import CONFIG_WEIGHT

    if not options.learning:
        learning = Learning(learn=False)
        for key, text in given:
            learning.examples.add(key, text, CONFIG_WEIGHT)
        return learning
    sink = None
    if store is not None:
        from votr_mcp.store.events import EventStore

        sink = EventStore(store)
    learning = Learning(keep_queries=options.learn_queries, sink=sink)
    for key, text in given:
        learning.examples.add(key, text, CONFIG_WEIGHT)
    if sink is not None:
        restored = await anyio.to_thread.run_sync(lambda: learning.restore(sink.calls(limit=20_000)))
        if restored:
            log.info("learning: %d earlier search outcomes restored from the store", restored)
        follows = await anyio.to_thread.run_sync(lambda: learning.restore_next(sink.successors()))
        if follows:
            log.info("learning: %d 'usually called next' counts restored from the store", follows)
        stack.push_async_callback(anyio.to_thread.run_sync, learning.flush)
    return learning


async def _prepare_upstreams(options: ServeOptions, config_path: Path, stack: AsyncExitStack, sessions: SessionHooks,
                             change_control: ChangeControl) -> tuple[Hub, Any]:
    from votr_mcp.upstream import Upstreams
    from votr_mcp.upstream.config import MAX_NESTING, NESTING_ENV, UpstreamsConfig, load_upstreams, nesting

    config = load_upstreams(config_path)
    for problem in config.problems:
        log.warning("config: %s", problem)
    depth = nesting()
    if depth >= MAX_NESTING and config.enabled:
        log.error("this votr-mcp was started by %d others in a chain (%s=%d): it starts none of the %d upstreams of %s, "
                  "since a config that launches votr-mcp would otherwise start it again without end",
                  depth, NESTING_ENV, depth, len(config.enabled), config_path)
        config = UpstreamsConfig((), config.problems, config.source)
    if not config.enabled:
        log.warning("%s configures no enabled upstream server; search has nothing to find", config_path)
    configured = {entry.name for entry in config.enabled}
    trust = {entry.name: entry.trust for entry in config.enabled}
    store = await _open_store(options, stack)
    cache = store.vectors if store is not None else None
    if store is not None and isinstance(change_control, NoChangeControl):
        from votr_mcp.store import StoreChangeControl

        change_control = StoreChangeControl(store)
    # Warm start: the tools the store remembers for the configured servers are searchable at
    # once (marked unavailable until their server is up), instead of after the harvest.
    remembered = Catalog([])
    if store is not None:
        stored = await anyio.to_thread.run_sync(_stored_catalog, store)
        remembered = Catalog(t for t in stored if t.server in configured)
    index = LiveIndex(remembered, build_searcher(remembered, cache=cache), reindex=reindex, patch=patch)
    hub = Hub(index, None, sessions, change_control, default_max_results=options.max_results, upstreams_started=anyio.Event())
    hub.learning = await _learning(options, store, stack, config)
    hub.categories = {entry.name: entry.categories for entry in config.enabled if entry.categories}
    hub.hints = {(entry.name, tool): hint for entry in config.enabled for tool, hint in entry.hints.items()}
    if len(remembered):
        log.info("serving %d remembered tools of %d servers while the upstreams start", len(remembered), len(remembered.servers))
        hub.ready.set()

    async def record(catalog: Catalog) -> None:
        if store is not None and len(catalog):
            report = await anyio.to_thread.run_sync(lambda: store.registry.sync(catalog, trust=trust))
            log.info("registry: %s", report.as_dict())
            if report.held or report.flagged:
                from votr_mcp.store.holds import held_notes

                for note in await anyio.to_thread.run_sync(lambda: held_notes(store.registry)):
                    log.warning("%s", note)

    async def on_tools(server: str, tools: Sequence[Tool]) -> None:
        # Before the first full index the start-up path below picks these up anyway.
        if started.is_set():
            log.info("upstream %s now lists %d tools: re-indexing it", server, len(tools))
            await record(Catalog(tools))
            await hub.index.replace_server(server, tools)

    started = anyio.Event()
    upstreams = await stack.enter_async_context(Upstreams(config, on_tools=on_tools))
    hub.upstreams = _UpstreamsView(upstreams, config)
    hub.suggester = default_suggester(options.embedding_cache)
    hub.index.on_swap(lambda snap: _apply_session_policy(sessions, snap, config))
    _apply_session_policy(sessions, hub.index.current, config)

    async def start() -> None:
        try:
            await upstreams.wait_started()
            harvested = Catalog(upstreams.tools())
            await record(harvested)
            # A server that failed to start keeps its remembered tools, shown as unavailable.
            missing = [t for t in remembered if t.server not in harvested.servers]
            catalog = Catalog([*harvested, *missing])
            await hub.index.rebuild(catalog)
            log.info("ready: %d tools from %d upstream servers", len(harvested), len(harvested.servers))
        except Exception:
            log.exception("start-up indexing failed")
        finally:
            started.set()
            hub.upstreams_started.set()
            hub.ready.set()

    return hub, start


async def _open_store(options: ServeOptions, stack: AsyncExitStack) -> Any:
    """The SQLite registry (``--store``; default under the user data dir; 'none' for no store)."""
    if options.store_path == "none":
        return None
    from votr_mcp.store import default_store_path
    from votr_mcp.store.backends import is_url, open_store

    path = options.store_path or str(default_store_path())
    if path != ":memory:" and not is_url(path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    store = await anyio.to_thread.run_sync(open_store, path)
    stack.callback(store.close)
    log.info("registry store: %s", store.path)
    return store


async def _stop_on_signals(scope: anyio.CancelScope) -> None:
    """SIGTERM/SIGHUP/SIGINT end the task group, so upstream process groups are stopped on the way
    out (clients stop stdio servers by closing stdin, then SIGTERM after a grace period)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
        async for received in signals:
            log.info("received %s: stopping upstream servers and exiting", signal.Signals(received).name)
            scope.cancel()
            return


async def _load_dense(hub: Hub, models: Future[JointEmbedder] | None = None) -> None:
    # The model loads outside the index lock, so the first (lexical) index of the harvest is
    # never stuck behind it; only attaching it (embedding what the cache lacks) takes the lock.
    # The models are numpy (no torch import holding the GIL): ``models`` has been loading them since
    # serve started, beside the store and the index snapshot.
    await hub.ready.wait()
    try:
        embedder = await anyio.to_thread.run_sync(models.result if models is not None else load_embedder)
        stored = hub.stored_index

        def attach(snap: Snapshot) -> tuple[Catalog, Searcher]:
            loaded = stored.with_models(snap.catalog, embedder) if stored is not None else None
            return snap.catalog, loaded if loaded is not None else _with_embedder(snap.searcher, embedder)

        ready = await hub.index.update(attach)
        log.info("dense retrieval ready")
        from votr_mcp.store.index_snapshot import settle

        settle()  # the index outlives everything: keep the collector from walking it during searches
        if stored is not None and stored.loaded is None:
            await anyio.to_thread.run_sync(stored.save, ready.searcher)
    except Exception:
        log.exception("could not load the embedding model; serving lexical results only")
        return
    finally:
        hub.dense_pending = False
        hub.dense_done.set()
    if hub.suggester is not None:
        # The known servers' vectors (some 800 tools; cached, so embedded once), off the search path.
        try:
            await anyio.to_thread.run_sync(hub.suggester.warm, ready.searcher, abandon_on_cancel=True)
        except Exception:
            log.exception("could not index the known servers; search suggests none")


def _stored_catalog(store: Any) -> Catalog:
    """Every tool the store holds (held ones too), read with the collector paused (100k tools)."""
    from votr_mcp.store.index_snapshot import paused_gc

    with paused_gc():
        return store.registry.catalog(include_held=True)


def _stored_index(store: Any) -> Any:
    """The index snapshot of ``store`` (server/stored_index.py), for the models serve loads."""
    from votr_mcp.index.models import default_embedder
    from votr_mcp.server.stored_index import StoredIndex

    return StoredIndex.open(store, default_embedder().model_id)


def _with_embedder(searcher: Searcher, embedder: Embedder) -> Searcher:
    return searcher.with_embedder(embedder).warm()


class _UpstreamsView:
    """Adapts the upstream pool (:class:`votr_mcp.upstream.Upstreams`) to what the hub asks: configured? available? call."""

    def __init__(self, upstreams: Any, config: Any) -> None:
        self._upstreams = upstreams
        self._config = config

    def configured(self, server: str) -> bool:
        entry = self._config.get(server)
        return entry is not None and not entry.disabled

    def statuses(self) -> Mapping[str, Any]:
        return self._upstreams.statuses()

    def unavailable(self, server: str) -> str | None:
        if self._upstreams.available(server):
            return None
        return f"server '{server}' is {self._upstreams.status(server).describe()}"

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        return await self._upstreams.call(server, tool, arguments)
