"""``votr-mcp serve``: run the MCP server (stdio by default; streamable HTTP or SSE on request)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if sys.version_info < (3, 11):  # anyio's own dependency on older Pythons
    from exceptiongroup import BaseExceptionGroup

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider  # the [otel] extra; imported when --otlp-endpoint is used

__all__ = ["register"]

log = logging.getLogger("votr_mcp.serve")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the MCP server: search_tools + call_tool over your MCP servers",
        description=(
            "Serve search_tools and call_tool over MCP. With --config, connect to the upstream servers in that "
            "mcpServers file (e.g. your claude_desktop_config.json); without it, serve the embedded catalog "
            "(search works; calls explain how to configure the server)."
        ),
    )
    parser.add_argument("--config", type=Path, help="upstream servers, in Claude Desktop's mcpServers JSON format")
    parser.add_argument("--catalog", type=Path, help="serve this tool catalog (tools.jsonl, tools/list JSON or a folder) instead of the embedded one; no upstreams")
    parser.add_argument("--transport", choices=("stdio", "sse", "http"), default="stdio", help="stdio (default); http = streamable HTTP at /mcp; sse = legacy SSE at /sse")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000; 0 picks a free one, logged on stderr)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST", help="also accept this Host header (e.g. 'mcp.example.com:*'); repeatable")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN", help="also accept this Origin (e.g. 'https://app.example.com'); repeatable")
    parser.add_argument("--token-env", default="VOTR_MCP_TOKEN", metavar="VAR", help="HTTP clients must send 'Authorization: Bearer $VAR' when this variable is set (default VOTR_MCP_TOKEN)")
    parser.add_argument("--expose", choices=("search", "all"), default="search", help="'all' also lists every upstream tool directly under its call name")
    parser.add_argument("--max-results", type=int, default=None, help="cap on tools per search (default: adaptive)")
    parser.add_argument("--no-dense", action="store_true", help="lexical retrieval only: do not load the embedding model")
    parser.add_argument("--wait-for-dense", action="store_true", help="searches wait (up to 15 min) for the embedding model and catalog embeddings instead of answering lexically meanwhile")
    parser.add_argument("--guard-max-repeats", type=int, default=3, metavar="N", help="identical calls of a tool allowed within 60 s before the iteration guard evicts it (default 3)")
    parser.add_argument("--binding-mode", choices=("open", "strict"), default="open", help="strict: call_tool accepts only tools a search returned in this session")
    parser.add_argument("--otlp-endpoint", default=None, metavar="URL",
                        help="export OpenTelemetry spans (one per search and call) to this OTLP/HTTP collector, e.g. "
                             "http://localhost:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT; unset: nothing is exported); "
                             "needs pip install 'votr-mcp[otel]'")
    parser.add_argument("--store", default=None, metavar="PATH", help="SQLite registry (tools, embeddings, change control) used with --config; default under your user data dir; 'none' to keep nothing; postgresql://… to share one registry between several replicas")
    parser.add_argument("--sessions", default=None, metavar="URL", help="redis://host:port/db: keep sessions (tool context, loop guard) in Redis, so several replicas serve one agent's requests in any order; default: in this process")
    parser.add_argument("--policy", type=Path, metavar="FILE", help="principals (bearer tokens -> user, roles, org) and allow/deny rules over servers, tools and annotations; re-read when it changes")
    parser.add_argument("--no-learning", action="store_true", help="do not learn from which searched tools are then called (the outcome log and its use)")
    parser.add_argument("--no-query-log", action="store_true", help="keep no query text in the outcome log (outcomes still count; no requests are learned as examples)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from votr_mcp.cli._paths import cache_dir
    from votr_mcp.errors import ConfigError
    from votr_mcp.server.runtime import ServeOptions, serve
    from votr_mcp.server.transports import HttpOptions

    if args.config is not None and args.catalog is not None:
        raise ConfigError("pass either --config (connect to upstream servers) or --catalog (serve a catalog file), not both")
    if args.max_results is not None and not 1 <= args.max_results <= 20:
        raise ConfigError(f"--max-results must be from 1 to 20, got {args.max_results}")
    if args.guard_max_repeats < 1:
        raise ConfigError(f"--guard-max-repeats must be at least 1, got {args.guard_max_repeats}")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be from 0 to 65535, got {args.port}")
    options = ServeOptions(
        config_path=args.config,
        catalog_path=args.catalog,
        transport=args.transport,
        http=HttpOptions(
            host=args.host,
            port=args.port,
            allowed_hosts=tuple(args.allow_host),
            allowed_origins=tuple(args.allow_origin),
            token=os.environ.get(args.token_env) or None,
        ),
        expose_all=args.expose == "all",
        dense=not args.no_dense,
        max_results=args.max_results,
        guard_max_repeats=args.guard_max_repeats,
        binding_mode=args.binding_mode,
        store_path=args.store,
        wait_for_dense=args.wait_for_dense,
        embedding_cache=cache_dir(None),
        sessions_url=_sessions_url(args.sessions),
        learning=not args.no_learning,
        learn_queries=not args.no_query_log,
        policy_path=args.policy,
        policy_env=dict(os.environ),
    )
    provider = _tracing(args.otlp_endpoint)
    try:
        anyio.run(serve, options)
    except (OSError, BaseExceptionGroup) as exc:
        taken = _address_in_use(exc)
        if taken is None:
            raise
        print(f"votr-mcp: cannot listen on {args.host}:{args.port}: {taken}; choose another --port "
              "(0 picks a free one) or stop what is using it", file=sys.stderr)
        return 2
    finally:
        if provider is not None:
            provider.shutdown()  # flush the spans still batched
    return 0


def _tracing(flag: str | None) -> TracerProvider | None:
    """The tracer provider exporting to ``--otlp-endpoint`` (or $OTEL_EXPORTER_OTLP_ENDPOINT), or None."""
    from votr_mcp.errors import ConfigError
    from votr_mcp.server.tracing import configure_otlp

    endpoint = flag or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    if endpoint is None:
        return None
    try:
        provider = configure_otlp(endpoint)
    except ConfigError as exc:
        if flag:
            raise
        # Set for other programs perhaps: say why votr does not export, and serve anyway.
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but no spans are exported: %s", exc)
        return None
    log.info("exporting OpenTelemetry spans to %s", endpoint)
    return provider
def _sessions_url(url: str | None) -> str | None:
    from votr_mcp.errors import ConfigError

    if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"--sessions takes a Redis URL (redis://host:6379/0, rediss://… or unix:///path.sock), got {url.split('@')[-1]!r}")
    return url


def _address_in_use(exc: BaseException) -> str | None:
    """The reason when ``exc`` (or the one exception inside a task group's) is a failed bind."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
        return exc.strerror or str(exc)
    return None
