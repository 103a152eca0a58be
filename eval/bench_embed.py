"""MiniLM encode speed per thread count: `python eval/bench_embed.py [--data DIR] [--n N] [--threads 1 2]`.

Each thread count runs in its own child process (a fresh interpreter, so one run's memory and
thread pools do not colour the next). Prints, per count: the first encode (loading the weights), the encode p50/p95 per
benchmark query of the texts search embeds for it (``Retriever.texts_for``: the query, plus its
parts when it asks for several things), and the time to encode every dense text of the catalog in
batches of 64 (what indexing pays with a cold cache), plus the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _one(data: Path, n: int, threads: int, batch: bool) -> dict[str, float]:
    from votr_mcp.catalog import load_catalog
    from votr_mcp.evaluation.data import load_queries
    from votr_mcp.index import MiniLMEmbedder, dense_texts
    from votr_mcp.retrieval import Retriever

    embedder = MiniLMEmbedder(threads=threads)
    catalog = load_catalog(data / "tools.jsonl").catalog
    lexical = Retriever.build(catalog)
    queries = [lexical.texts_for(r.query) for r in load_queries(data / "queries.jsonl")][:n]
    t = time.perf_counter()
    embedder.encode(queries[0])
    result = {"load_s": time.perf_counter() - t}
    ms = []
    for q in queries:
        t = time.perf_counter()
        embedder.encode(q)
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    result |= {"p50_ms": statistics.median(ms), "p95_ms": ms[int(0.95 * (len(ms) - 1))]}
    if batch:
        texts = dense_texts(catalog)
        t = time.perf_counter()
        embedder.encode(texts)
        result |= {"batch_s": time.perf_counter() - t, "texts": len(texts)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench" / "mcpzero")
    parser.add_argument("--n", type=int, default=200, help="queries to time one by one")
    parser.add_argument("--no-batch", action="store_true", help="skip encoding the whole catalog")
    parser.add_argument("--burners", type=int, default=0, help="busy-loop processes to run alongside (simulated load)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts to measure (default: 1 2)")
    parser.add_argument("--child", type=int, metavar="THREADS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one(args.data, args.n, args.child, not args.no_batch)))
        return 0
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    try:
        time.sleep(2 if burners else 0)
        print(f"load average before: {os.getloadavg()[0]:.2f}; {args.burners} busy-loop processes alongside")
        for threads in args.threads:
            cmd = [sys.executable, __file__, "--data", str(args.data), "--n", str(args.n), "--child", str(threads)]
            cmd += ["--no-batch"] if args.no_batch else []
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            line = (f"numpy threads={threads}: first encode {r['load_s']:.2f} s; "
                    f"per query p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms")
            if "batch_s" in r:
                line += f"; {r['texts']} catalog texts in {r['batch_s']:.1f} s"
            print(line, flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        for p in burners:
            p.kill()
            p.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
