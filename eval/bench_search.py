"""In-process search latency at catalog scale: `python eval/bench_search.py [--data DIR] [--n N]`.

Prints p50/p95 per search (a) end to end, embedding the query live with MiniLM (what search_tools
pays), and (b) with the query vector precomputed (the retrieval pipeline alone), plus the size of
the catalog and the machine's load average, since timings on a shared box swing with load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _percentiles(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"p50 {statistics.median(ms):.1f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms (n={len(ms)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench" / "mcpzero")
    parser.add_argument("--n", type=int, default=200, help="queries to time")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: user cache dir)")
    parser.add_argument("--threads", type=int, default=None,
                        help="MiniLM batches encoded at once (default: the embedder's own, 2)")
    args = parser.parse_args()
    if not (args.data / "tools.jsonl").is_file():
        print(f"no tools.jsonl under {args.data}; pass --data ../shared/bench/<set>", file=sys.stderr)
        return 2

    import platformdirs

    from votr_mcp.catalog import load_catalog
    from votr_mcp.evaluation.data import load_queries
    from votr_mcp.index import FileEmbeddingCache, MiniLMEmbedder
    from votr_mcp.retrieval import Retriever

    catalog = load_catalog(args.data / "tools.jsonl").catalog
    cache = FileEmbeddingCache(args.cache_dir or Path(platformdirs.user_cache_dir("votr-mcp")) / "embeddings")
    embedder = MiniLMEmbedder(threads="auto" if args.threads is None else args.threads)
    retriever = Retriever.build(catalog, embedder=embedder, cache=cache)
    queries = [r.query for r in load_queries(args.data / "queries.jsonl")][: args.n]
    retriever.search(queries[0])  # load the model and warm caches outside the timings
    live, core = [], []
    vectors = retriever.embed([t for q in queries for t in retriever.texts_for(q)])
    for q in queries:
        t = time.perf_counter()
        retriever.search(q)
        live.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        retriever.search(q, query_vectors=vectors)
        core.append((time.perf_counter() - t) * 1000)
    print(f"catalog: {len(catalog)} tools, {len(catalog.servers)} servers ({args.data}); load average {os.getloadavg()[0]:.1f}; "
          f"MiniLM in numpy, {args.threads or 'default'} thread(s)")
    print(f"search, query embedded live:     {_percentiles(live)}")
    print(f"search, query vector precomputed: {_percentiles(core)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
