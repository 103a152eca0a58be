"""``votr-mcp search "QUERY"``: search a catalog from the command line."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from votr_mcp.cli._settings import SET_HELP

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("search", help="find the tools for a query in a catalog",
                              description="Search a tool catalog and print the tools chosen (tool, score, tier, signature).")
    p.add_argument("query", help="what you need, e.g. 'list open pull requests'")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--catalog", type=Path, help="tools.jsonl, a tools/list JSON file, or a folder of them (default: the embedded registry/)")
    source.add_argument("--config", type=Path, metavar="FILE", help="an mcpServers config: start each server once and search "
                        "its tools (what `serve --config` would offer, before change control)")
    source.add_argument("--store", metavar="PATH", help="search the tools `votr-mcp index`/`serve` recorded in this store "
                        "(held tools left out, as serve does); its cached embeddings are reused")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="--config: bound on starting the servers and listing their tools")
    p.add_argument("--server-intent", help="hint: which service (e.g. 'github')")
    p.add_argument("--tool-intent", help="hint: which action (e.g. 'list pull requests')")
    p.add_argument("--max-results", type=int, help="return at most this many tools")
    p.add_argument("--lexical", action="store_true", help="skip the embedding model (BM25 + TF-IDF only)")
    p.add_argument("--cache-dir", type=Path, help="embedding cache folder (default: the user cache dir; env VOTR_CACHE_DIR)")
    p.add_argument("--set", dest="settings", action="append", metavar="FIELD=VALUE", help=SET_HELP)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.catalog import default_registry_path, load_catalog
    from votr_mcp.cli._paths import cache_dir
    from votr_mcp.cli._settings import retrieval_config
    from votr_mcp.errors import CatalogError
    from votr_mcp.index import FileEmbeddingCache
    from votr_mcp.index.models import default_embedder
    from votr_mcp.retrieval import Retriever

    config = retrieval_config(args.settings)
    embedder = None if args.lexical else default_embedder()
    cache = FileEmbeddingCache(cache_dir(args.cache_dir))
    if args.store is not None:
        from votr_mcp.store import Store

        with Store.open(_existing_store(args.store)) as store:
            catalog = store.registry.catalog()
            if not len(catalog):
                raise CatalogError(f"the store {args.store} has no active tools; run `votr-mcp index --store {args.store}` first")
            retriever = Retriever.build(catalog, embedder=embedder, cache=store.vectors, config=config)
            result = _search(retriever, args)
    else:
        if args.config is not None:
            from votr_mcp.cli.index import harvest_config

            catalog, _ = harvest_config(args.config, args.timeout, failed_note="its tools are not searched")
            if not len(catalog):
                raise CatalogError(f"no server of {args.config} listed any tool; `votr-mcp upstreams --config {args.config}` says why")
        else:
            catalog = load_catalog(args.catalog or default_registry_path()).require_tools(log)
        result = _search(Retriever.build(catalog, embedder=embedder, cache=cache, config=config), args)
    if args.json:
        print(json.dumps(_as_json(result), indent=2, ensure_ascii=False))
        return 0
    out = sys.stdout
    if result.abstained:
        out.write(f"no tool returned: {result.reason}\n")
    for number, need in enumerate(result.needs, start=1):
        out.write(f"need {number}: {need.text}\n")
    # In a whole task, a hit without a need is the whole query's own best tool.
    unlabelled = "all" if result.needs else ""
    rows = [(h.call_name, f"{h.score:.4f}", h.tier, unlabelled if h.need is None else str(h.need + 1), h.signature)
            for h in result.hits]
    if rows:
        widths = [max(len(r[i]) for r in rows + [("tool", "score", "tier", "need", "")]) for i in range(4)]
        out.write("  ".join(h.ljust(w) for h, w in zip(("tool", "score", "tier", "need"), widths)) + "  signature\n")
        for r in rows:
            out.write("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + f"  {r[4]}\n")
    out.write(f"k={result.k} ({result.reason}); {result.tokens()} cl100k tokens returned\n")
    return 0


def _existing_store(path: str) -> str:
    from votr_mcp.errors import CatalogError

    if not Path(path).is_file():
        raise CatalogError(f"no store at {path}; create it with `votr-mcp index --store {path}` (or serve --store)")
    return path


def _search(retriever: Any, args: argparse.Namespace) -> Any:
    return retriever.search(args.query, server_intent=args.server_intent, tool_intent=args.tool_intent,
                            max_results=args.max_results)


def _as_json(result: object) -> dict:
    from votr_mcp.retrieval import Hit, SearchResult

    assert isinstance(result, SearchResult)

    def hit(h: Hit) -> dict[str, Any]:
        return {"server": h.tool.server, "name": h.tool.name, "call_name": h.call_name, "score": round(h.score, 6),
                "confidence": None if h.confidence is None else round(h.confidence, 4), "tier": h.tier,
                "need": h.need, "signature": h.signature}

    return {
        "query": result.query,
        "k": result.k,
        "abstained": result.abstained,
        "reason": result.reason,
        "tier": result.tier,
        "dense_used": result.dense_used,
        "hits": [hit(h) for h in result.hits],
        "ranked": [hit(h) for h in result.ranked],
        "needs": [{"text": n.text, "hits": [hit(h) for h in n.hits], "abstained": n.abstained} for n in result.needs],
        "tokens": result.tokens(),
    }
