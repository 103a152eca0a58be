"""KNN over tool vectors: numpy in memory vs sqlite-vec in the store, at ~2.8k and ~100k tools.

    python eval/bench_knn.py [--bench ../shared/bench] [--work DIR] [--queries 200] [--k 10] [--out eval/KNN.md]

The small catalog is mcpzero (2,792 tools). The large one is every tool of every corpus in
../shared/bench (smithery_distractors, mscbench, mcpzero, toolbench, metatool), repeated
under renamed servers (``<server> ~copy<i>``) until there are 100,000 tools.

Vectors: real all-MiniLM-L6-v2 embeddings for the mcpzero tools and for the queries (its
first --queries task texts). For the 100k set, every tool whose text was embedded (here:
the mcpzero ones, or any found in the store from an earlier run) uses its real vector; the
others get the real vector of an embedded tool plus Gaussian noise (sigma 0.02 per
component), renormalised. Embedding all ~18k corpus texts would cost ~10 CPU-minutes on
this shared machine; brute-force KNN time does not depend on the values, and the noisy
copies keep the neighbourhood structure realistic (near-duplicates exist in real
registries too). Pass --embed-all to embed every corpus text for real instead.

Each (backend, size) runs in its own subprocess so its memory is measured alone: the
figure is the growth of peak RSS from just before the vectors are loaded to the end of the
searches. Latency is per query (k nearest), median and p95 of --queries queries after 5
warm-up queries. The two backends must agree: the overlap of their top-k is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("smithery_distractors", "mscbench", "mcpzero", "toolbench", "metatool")
LARGE = 100_000
MODEL_NOISE = 0.02


def rss_mb() -> float:
    """Peak resident set size of this process so far, in MB.

    Read from /proc/self/status (VmHWM), which starts afresh at exec; getrusage's ru_maxrss
    would carry over the parent's peak from before the fork."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- building the stores ----------------------------------------------------------------


def build(args: argparse.Namespace) -> dict[str, Path]:
    from votr_mcp.catalog import Catalog, load_catalog
    from votr_mcp.index.dense import MiniLMEmbedder, text_hash
    from votr_mcp.index.text import tool_dense_text
    from votr_mcp.store import Store, dense_texts, index_catalog

    args.work.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder()
    small_path, large_path = args.work / "knn_2.8k.sqlite3", args.work / "knn_100k.sqlite3"
    small = load_catalog(args.bench / "mcpzero" / "tools.jsonl").catalog
    with Store.open(small_path) as store:
        report = index_catalog(store, small, embedder, prune_servers=True)
        log(f"2.8k store: {report.tools} tools, {report.embedded} embedded now, {report.seconds:.1f} s")
        queries = [json.loads(line)["query"] for line in (args.bench / "mcpzero" / "queries.jsonl").read_text().splitlines()[: args.queries]]
        qvec = embedder.encode(queries)
        keys, matrix = store.vectors.matrix(embedder.model_id, [text_hash(t) for t in dense_texts(small)[0]])
    np.save(args.work / "queries.npy", qvec)
    real = dict(zip(keys, matrix))

    if large_path.exists() and not args.rebuild:
        log(f"reusing {large_path} (pass --rebuild to build it again)")
        return {"2.8k": small_path, "100k": large_path}
    corpus = list(Catalog(t for name in CORPORA for t in load_catalog(args.bench / name / "tools.jsonl").catalog))
    if args.embed_all:
        with Store.open(small_path) as store:
            found = store.vectors.get_many(embedder.model_id, [text_hash(tool_dense_text(t)) for t in corpus])
            todo = list(dict.fromkeys(tool_dense_text(t) for t in corpus if text_hash(tool_dense_text(t)) not in found))
            log(f"embedding {len(todo)} corpus texts for real")
            from votr_mcp.store import CheckpointEmbedder

            CheckpointEmbedder(embedder, store.vectors, batch_size=128).encode(todo)
            real.update(store.vectors.get_many(embedder.model_id, [text_hash(tool_dense_text(t)) for t in corpus]))
    tools = []
    copy = 0
    while len(tools) < LARGE:
        for tool in corpus:
            if len(tools) == LARGE:
                break
            tools.append(tool if copy == 0 else _renamed(tool, copy))
        copy += 1
    large = Catalog(tools)
    rng = np.random.default_rng(7)
    pool = np.stack(list(real.values()))
    vectors: dict[str, np.ndarray] = {}
    n_real = 0
    for i, tool in enumerate(large):
        text = tool_dense_text(tool)
        key = f"{i}:{text_hash(text)}"  # renamed copies share texts; one row per tool here
        base = real.get(text_hash(text))
        if base is not None and i < len(corpus):
            vectors[key] = base
            n_real += 1
        else:
            seed = base if base is not None else pool[rng.integers(len(pool))]
            noisy = seed + rng.normal(0, MODEL_NOISE, size=seed.shape).astype(np.float32)
            vectors[key] = (noisy / np.linalg.norm(noisy)).astype(np.float32)
    if large_path.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{large_path}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    with Store.open(large_path) as store:
        sync = store.registry.sync(large)
        items = list(vectors.items())
        for start in range(0, len(items), 5000):
            store.vectors.put_many(embedder.model_id, dict(items[start:start + 5000]))
    log(f"100k store: {len(large)} tools ({sync.new} new), {n_real} real vectors, "
        f"{len(large) - n_real} noisy copies, written in {time.perf_counter() - started:.1f} s")
    return {"2.8k": small_path, "100k": large_path}


def _renamed(tool: Any, copy: int) -> Any:
    import dataclasses

    return dataclasses.replace(tool, server=f"{tool.server} ~copy{copy}")


# ---- one measurement, in its own process ------------------------------------------------


def worker(backend: str, store_path: Path, queries_path: Path, k: int) -> dict[str, Any]:
    from votr_mcp.index.dense import MINILM_ID
    from votr_mcp.store import Store

    queries = np.load(queries_path)
    store = Store.open(store_path)
    store.conn.execute("SELECT count(*) FROM embeddings").fetchall()
    before = rss_mb()
    started = time.perf_counter()
    if backend == "numpy":
        keys, matrix = store.vectors.matrix(MINILM_ID)
        load = time.perf_counter() - started

        def search(q: np.ndarray) -> list[str]:
            scores = matrix @ q
            top = np.argpartition(-scores, k)[:k]
            return [keys[i] for i in top[np.argsort(-scores[top])]]
    else:
        load = 0.0  # nothing to load: the vectors stay in the file

        def search(q: np.ndarray) -> list[str]:
            return [key for key, _ in store.vectors.knn(MINILM_ID, q, k)]

    for q in queries[:5]:
        search(q)
    times, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        results.append(search(q))
        times.append((time.perf_counter() - t0) * 1000)
    n = store.vectors.count(MINILM_ID)
    store.close()
    return {"backend": backend, "vectors": n, "load_s": load, "p50_ms": statistics.median(times),
            "p95_ms": float(np.percentile(times, 95)), "rss_growth_mb": rss_mb() - before, "results": results}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "votr-mcp" / "bench-knn")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--embed-all", action="store_true", help="embed every corpus text for real (slow)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the 100k store even if it exists")
    parser.add_argument("--out", type=Path, help="write the markdown table here (default: stdout only)")
    parser.add_argument("--worker", nargs=2, metavar=("BACKEND", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]), args.work / "queries.npy", args.k)))
        return 0
    if not (args.bench / "mcpzero" / "tools.jsonl").is_file():
        log(f"benchmark data not found under {args.bench}; pass --bench PATH")
        return 2
    stores = build(args)
    rows = []
    for size, path in stores.items():
        measured = {}
        for backend in ("numpy", "sqlite-vec"):
            out = subprocess.run([sys.executable, __file__, "--work", str(args.work), "--k", str(args.k),
                                  "--worker", backend, str(path)], capture_output=True, text=True, check=True)
            measured[backend] = json.loads(out.stdout)
        agree = statistics.mean(len(set(a) & set(b)) / args.k for a, b in
                                zip(measured["numpy"]["results"], measured["sqlite-vec"]["results"]))
        file_mb = sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists()) / 1e6
        for backend, m in measured.items():
            rows.append((size, backend, m["vectors"], m["p50_ms"], m["p95_ms"], m["load_s"], m["rss_growth_mb"], agree, file_mb))
    table = ["| tools | backend | vectors | p50 ms | p95 ms | load s | RSS growth MB | top-k overlap | store file MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for size, backend, n, p50, p95, load, rss, agree, file_mb in rows:
        table.append(f"| {size} | {backend} | {n:,} | {p50:.2f} | {p95:.2f} | {load:.2f} | {rss:.0f} | {agree:.3f} | {file_mb:.0f} |")
    text = "\n".join(table)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
