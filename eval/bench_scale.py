"""Search at catalog scale (2.8k, 12.8k, 100k tools): latency, memory, cold index, restart, one change.

    python eval/bench_scale.py --sizes 2800,100000 --json OUT [--queries 300] [--store-dir DIR]
    python eval/bench_scale.py --sizes 100000 --restart-only   # step 2 alone, on built stores

Per size, over a SQLite store of its own (``<store-dir>/scale_<size>.sqlite3``, default under the
user cache dir):

1. **cold index** (only when the store lacks vectors): the corpus (eval/scale_corpus.py: MCP-Zero,
   Smithery distractors, MSC-Bench, then clearly labelled synthetic tools) is indexed with the
   search models (MiniLM + USE dense, SPLADE sparse, all numpy) through ``index_catalog``, whose
   batches are committed as they finish (a killed build resumes). Its seconds are kept beside the
   store (``.build.json``) and reported on later runs, which reuse the vectors by content hash;
2. **restart**: a fresh process does what a restarted ``votr-mcp serve --store`` does before its
   first dense answer (imports; the models loading on a thread from then on; open the store, read
   its index snapshot, or without one the catalog and every vector to build the lexical and dense
   indexes and score the abstention null requests; attach the models) and answers one query:
   ``restart_s`` is launch -> that answer, wall clock;
3. **search**: the dev queries of the labelled sets in the corpus, each searched once with its
   query embedded live (what search_tools pays): p50/p95/p99 in ms;
4. **memory**: the process's resident set after the searches (``rss_mb``) and its peak;
5. **one-tool change**: one tool's description changes; what a re-harvest of its server costs
   (record it in the store, embed the one new text, swap it into the retriever, rescore the null
   requests), then the change is undone.

Writes the JSON, a markdown table (eval/SCALE.md) and a plot (eval/scale.png). Timings on this
shared 2-core machine swing with load; the load average is recorded with each size.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_LAUNCHED = time.time()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"p95_ms": 80.0, "rss_mb": 2048.0, "restart_s": 2.0}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _default_store_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("votr-mcp")) / "bench-scale"


def _memory_mb() -> tuple[float, float]:
    """(resident, peak resident) MB of this process (Linux /proc)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _percentile(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values), q))


# ---- child: cold build ------------------------------------------------------------------------

def build(size: int, path: Path) -> dict[str, Any]:
    """Embed what the store lacks for the corpus of ``size`` (resumable); returns the build record."""
    sys.path.insert(0, str(ROOT / "eval"))
    from scale_corpus import corpus

    from votr_mcp.index.catalog_index import splade_rows
    from votr_mcp.index.models import default_embedder
    from votr_mcp.index.text import tool_splade_text
    from votr_mcp.store import Store, dense_texts, index_catalog

    sidecar = path.with_suffix(".build.json")
    record = json.loads(sidecar.read_text()) if sidecar.is_file() else {"cold_index_s": 0.0, "runs": 0, "embedded": 0}
    catalog = corpus(size)
    embedder = default_embedder()
    started = time.perf_counter()
    spent = float(record["cold_index_s"])

    def save(extra: dict[str, Any]) -> None:
        record.update(extra, cold_index_s=round(spent + time.perf_counter() - started, 1))
        sidecar.write_text(json.dumps(record, indent=1))

    def by_length(c: Any) -> tuple[list[str], list[str]]:
        # Each batch is padded to its longest text: sorted, a batch pads little (same vectors).
        tools, servers = dense_texts(c)
        return sorted(tools, key=len), sorted(servers, key=len)

    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            log(f"  size {size}: embedded {done:,}/{total:,} dense texts ({time.perf_counter() - started:.0f} s)")
            save({"done": False})

    record["runs"] += 1
    with Store.open(path) as store:
        report = index_catalog(store, catalog, embedder, trust="auto", prune_servers=True, source=f"bench_scale {size}",
                               batch_size=128, progress=progress, texts=by_length)
        record["embedded"] += report.embedded + report.servers_embedded
        save({"done": False})
        if embedder.sparse is not None:
            texts = sorted((tool_splade_text(t) for t in catalog), key=len)
            for start in range(0, len(texts), 1024):
                splade_rows(embedder.sparse, texts[start:start + 1024], store.vectors)  # committed per chunk
                log(f"  size {size}: SPLADE {min(start + 1024, len(texts)):,}/{len(texts):,}")
                save({"done": False})
    save({"done": True, "tools": len(catalog), "servers": len(catalog.servers),
          "models": embedder.model_id + (f" + {embedder.sparse.model_id}" if embedder.sparse else ""),
          "finished_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())})
    return record


# ---- child: restart, search, memory, one change -----------------------------------------------

def measure(size: int, path: Path, n_queries: int, launched: float, *, rebuild: bool = False,
            restart_only: bool = False) -> dict[str, Any]:
    """Restart as ``serve --store`` does, then search. ``rebuild``: without the index snapshot
    (server/stored_index.py), i.e. rebuild everything from the catalog and the stored vectors, and
    save the snapshot after the first answer (the next restart loads it). ``restart_only``: stop at
    the first answer (``--restart-only``)."""
    steps: dict[str, float] = {}
    mark = time.perf_counter()

    def step(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        steps[name] = round(now - mark, 3)
        mark = now

    from concurrent.futures import ThreadPoolExecutor

    from votr_mcp.index.models import default_embedder
    from votr_mcp.retrieval.pipeline import Retriever
    from votr_mcp.server.stored_index import StoredIndex, snapshot_path
    from votr_mcp.store import Store
    step("imports")

    def load_models() -> Any:  # what serve's load_embedder does (server/runtime.py), on a thread from the start
        import platformdirs

        loaded = default_embedder(state_dir=Path(platformdirs.user_cache_dir("votr-mcp")) / "models")
        loaded.encode(["warm up"])
        if loaded.sparse is not None:
            loaded.sparse.encode(["warm up"])
        return loaded

    models = ThreadPoolExecutor(1).submit(load_models)
    store = Store.open(path)
    if rebuild:
        snapshot_path(store).unlink(missing_ok=True)
    stored = StoredIndex.open(store, default_embedder().model_id)
    if stored.loaded is not None:
        catalog = stored.loaded.catalog
    else:
        from votr_mcp.store.index_snapshot import paused_gc

        with paused_gc():  # as serve reads it
            catalog = store.registry.catalog(include_held=True)
    step("store open + catalog" if stored.loaded is None else "store open + index snapshot")
    embedder = models.result()
    step("models load (rest of)")
    retriever = stored.with_models(catalog, embedder)
    if retriever is None:
        retriever = Retriever.build(catalog, embedder=embedder, cache=store.vectors)
        step("index build (vectors from store)")
        retriever.abstain_threshold()
        step("abstention null requests")
    else:
        step("models attached to the snapshot")
    sys.path.insert(0, str(ROOT / "eval"))
    from scale_corpus import SYNTHETIC_PREFIX, dev_queries

    queries = dev_queries(catalog, limit=n_queries)
    first = retriever.search(queries[0])
    step("first search")
    restart_s = time.time() - launched
    restart_load = os.getloadavg()[0]  # the machine is shared: what the restart ran beside
    from votr_mcp.store.index_snapshot import settle

    settle()  # as serve does once its dense index is ready
    if rebuild:
        cpu_s = time.process_time()
        stored.save(retriever)
        store.close()
        return {"restart_rebuild_s": round(restart_s, 2), "restart_rebuild_cpu_s": round(cpu_s, 2),
                "restart_rebuild_steps_s": steps, "snapshot_mb": round(stored.path.stat().st_size / 2**20)}
    restart_cpu_s = time.process_time()  # this process's CPU since it started (all threads)
    if restart_only:
        rss, peak = _memory_mb()
        store.close()
        return {"tools": len(catalog), "restart_s": round(restart_s, 2), "restart_cpu_s": round(restart_cpu_s, 2),
                "restart_steps_s": steps, "restart_load_average_1min": restart_load,
                "restart_loaded_snapshot": stored.loaded is not None, "restart_rss_mb": round(rss),
                "restart_peak_rss_mb": round(peak)}
    assert first is not None
    times, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        retriever.search(q)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    rss, peak = _memory_mb()
    change = _one_change(store, catalog, retriever, embedder)
    # The change was undone, but the store's catalog state moved on: save the index (of the same
    # tools) under the new state, so the next run's restart loads it again.
    from votr_mcp.store.index_snapshot import catalog_token

    StoredIndex(store, stored.path, catalog_token(store), None).save(retriever)
    store.close()
    return {
        "tools": len(catalog), "servers": len(catalog.servers), "queries": len(queries),
        "synthetic_tools": sum(server.startswith(SYNTHETIC_PREFIX) for server, _ in catalog.tool_keys()),
        "p50_ms": round(_percentile(times, 50), 1), "p95_ms": round(_percentile(times, 95), 1),
        "p99_ms": round(_percentile(times, 99), 1), "rss_mb": round(rss), "peak_rss_mb": round(peak),
        "p50_cpu_ms": round(_percentile(cpu, 50), 1), "p95_cpu_ms": round(_percentile(cpu, 95), 1),
        "restart_s": round(restart_s, 2), "restart_cpu_s": round(restart_cpu_s, 2), "restart_steps_s": steps,
        "restart_load_average_1min": restart_load,
        "restart_loaded_snapshot": stored.loaded is not None, **change, **_index_sizes(retriever),
        "load_average_1min": os.getloadavg()[0],
    }


def measure_lexical(path: Path, launched: float, *, snapshot: bool) -> dict[str, Any]:
    """What a restarted `serve --store` answers first: lexical results (BM25 + TF-IDF), while the
    models load in the background. ``snapshot``: from the index snapshot, as serve does when it has
    one; else built from the stored catalog, as it did before."""
    from votr_mcp.index.models import default_embedder
    from votr_mcp.retrieval.pipeline import Retriever
    from votr_mcp.server.stored_index import StoredIndex
    from votr_mcp.store import Store

    sys.path.insert(0, str(ROOT / "eval"))
    from scale_corpus import dev_queries

    with Store.open(path) as store:
        stored = StoredIndex.open(store, default_embedder().model_id) if snapshot else None
        used = stored is not None and stored.loaded is not None
        if used:
            retriever = stored.lexical()
        else:
            retriever = Retriever.build(store.registry.catalog(include_held=True))
        retriever.search(dev_queries(retriever.catalog, limit=1)[0])
    key = "first_answer_lexical_snapshot" if snapshot else "first_answer_lexical_rebuild"
    out = {f"{key}_s": round(time.time() - launched, 2), f"{key}_cpu_s": round(time.process_time(), 2)}
    if snapshot:
        out["first_answer_loaded_snapshot"] = used
    return out


def _index_sizes(retriever: Any) -> dict[str, Any]:
    """What a search reads that grows with the catalog: the dense tool matrix, the SPLADE terms."""
    dense = retriever.dense_index
    columns = dense.splade_columns if dense is not None else None
    return {"dense_matrix_mb": round(dense.tools.nbytes / 2**20) if dense is not None else 0,
            "splade_terms": len(columns) if columns is not None else 0}


def _one_change(store: Any, catalog: Any, retriever: Any, embedder: Any) -> dict[str, Any]:
    """A re-harvest of one server with one tool changed (as tools/list_changed does), then undone."""
    from votr_mcp.catalog import Catalog
    from votr_mcp.store import index_catalog

    target = catalog[len(catalog) // 3]
    server_tools = [t for t in catalog if t.server == target.server]
    changed = dataclasses.replace(target, description=f"{target.description} (revised {time.time():.0f})")
    t0 = time.perf_counter()
    index_catalog(store, Catalog(changed if t.key == target.key else t for t in server_tools), embedder, trust="auto")
    t1 = time.perf_counter()
    swapped = retriever.with_tools_changed([changed])
    swapped.abstain_threshold()
    t2 = time.perf_counter()
    index_catalog(store, Catalog(server_tools), embedder, trust="auto")  # undo, so the store stays the corpus
    return {"one_tool_change_ms": round((t2 - t0) * 1000), "one_tool_change_store_ms": round((t1 - t0) * 1000),
            "one_tool_change_swap_ms": round((t2 - t1) * 1000)}


# ---- parent -----------------------------------------------------------------------------------

def _child(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, __file__, "--child", *args, "--launched", repr(time.time())],
                         env=env, stdout=subprocess.PIPE, check=True)
    return json.loads(out.stdout)


def run(sizes: list[int], store_dir: Path, n_queries: int) -> dict[str, Any]:
    store_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for size in sizes:
        path = store_dir / f"scale_{size}.sqlite3"
        record_path = path.with_suffix(".build.json")
        record = json.loads(record_path.read_text()) if record_path.is_file() else {}
        if not record.get("done"):
            log(f"size {size}: cold index into {path} (vectors are committed as they come; a rerun resumes)")
            record = _child("build", str(size), str(path))
        log(f"size {size}: restart, {n_queries} searches, memory, one change")
        rebuilt = _child("rebuild", str(size), str(path), str(n_queries))  # saves the snapshot the others load
        first = _child("lexical-snapshot", str(size), str(path))
        result = _child("measure", str(size), str(path), str(n_queries))
        result.update(rebuilt)
        result.update(first)
        result.update(_child("lexical", str(size), str(path)))
        side = path.with_suffix(".splade.json")  # SPLADE filled by a second process during the dense build
        extra = json.loads(side.read_text())["splade_side_s"] if side.is_file() else 0.0
        result["cold_index_s"] = round(record["cold_index_s"] + extra, 1)
        result["cold_index_runs"] = record["runs"]
        result["cold_index_texts_embedded"] = record["embedded"]
        results[str(size)] = result
        log(f"size {size}: {json.dumps(result)}")
    return results


def run_restarts(sizes: list[int], store_dir: Path) -> dict[str, Any]:
    """Only the restart with the snapshot, per size (``--restart-only``): the stores must be built;
    when a store's snapshot is missing or stale (other code), it is rebuilt first, then timed."""
    results: dict[str, Any] = {}
    for size in sizes:
        path = store_dir / f"scale_{size}.sqlite3"
        if not json.loads(path.with_suffix(".build.json").read_text()).get("done"):
            raise SystemExit(f"size {size}: {path} is not built yet; run without --restart-only first")
        result = _child("restart", str(size), str(path), "1")
        if not result["restart_loaded_snapshot"]:
            log(f"size {size}: no usable index snapshot; rebuilding it, then timing the restart again")
            _child("rebuild", str(size), str(path), "1")
            result = _child("restart", str(size), str(path), "1")
        results[str(size)] = result
        log(f"size {size}: {json.dumps(result)}")
    return results


def write_reports(results: dict[str, Any], command: str) -> None:
    rows = list(results.values())
    lines = [
        "# Search at catalog scale",
        "",
        f"Made by `{command}` (eval/bench_scale.py; its docstring says what each column measures).",
        "Corpus: MCP-Zero, Smithery distractors and MSC-Bench tools, then synthetic tools (recombined real",
        "descriptions, servers named `synthetic-NNNNN`; eval/scale_corpus.py); queries: the dev split of the",
        "labelled sets in the corpus (no_tool rows too). The models search runs (MiniLM + USE dense; SPLADE is",
        "off in search since 2026-11-26, see RetrievalConfig.splade) in numpy, in process, one search at a time, on a 2-core machine shared",
        "with other jobs: wall times swing with the load average (last column), so CPU times are given too.",
        "From 20k tools the dense product runs a coarse pass first (index/coarse.py: each model's vectors on a quarter",
        "of their principal directions) and scores exactly the tools near the top of any list and every tool a search reads.",
        f"Goals at 100k: p95 <= {GOALS['p95_ms']:.0f} ms, RSS <= {GOALS['rss_mb']:.0f} MB, restart <= {GOALS['restart_s']:.0f} s.",
        "",
        "| tools | synthetic | queries | p50 ms | p95 ms | p99 ms | p50 / p95 CPU ms | RSS MB (peak) | load avg |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['tools']:,} | {r['synthetic_tools']:,} | {r['queries']} | {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | "
                     f"{r['p50_cpu_ms']} / {r['p95_cpu_ms']} | {r['rss_mb']} ({r['peak_rss_mb']}) | {r['load_average_1min']:.1f} |")
    lines += [
        "",
        "| tools | restart s (CPU s; load avg) | restart without snapshot s (CPU s) | first lexical answer s (CPU s): snapshot / none | index snapshot MB | cold index s | one-tool change ms (store + swap) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        load = f"; {r['restart_load_average_1min']:.1f}" if "restart_load_average_1min" in r else ""
        lines.append(f"| {r['tools']:,} | {r['restart_s']} ({r['restart_cpu_s']}{load}) | {r['restart_rebuild_s']} ({r['restart_rebuild_cpu_s']}) | "
                     f"{r['first_answer_lexical_snapshot_s']} ({r['first_answer_lexical_snapshot_cpu_s']}) / "
                     f"{r['first_answer_lexical_rebuild_s']} ({r['first_answer_lexical_rebuild_cpu_s']}) | {r['snapshot_mb']} | {r['cold_index_s']:.0f} | "
                     f"{r['one_tool_change_ms']} ({r['one_tool_change_store_ms']} + {r['one_tool_change_swap_ms']}) |")
    for key, title in (("restart_steps_s", "Restart with the index snapshot"), ("restart_rebuild_steps_s", "Restart without it")):
        names = list(dict.fromkeys(n for r in rows for n in r[key]))
        lines += ["", f"{title}, step by step (seconds):", "", "| tools | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for r in rows:
            lines.append(f"| {r['tools']:,} | " + " | ".join(str(r[key].get(n, "")) for n in names) + " |")
    lines += [
        "",
        "- **restart**: launch of a fresh process -> first answer with all three models, doing what",
        "  `votr-mcp serve --store` does (server/stored_index.py): read the index snapshot the previous run saved",
        "  beside the store (`<store>.index`, checked against the store's catalog, the model and the retrieval",
        "  code; its arrays are read in place from the mapped file and each tool is made when first read) while",
        "  the models load on a thread started at launch (USE from the tokenizer and weights it keeps parsed in",
        "  the user cache dir), attach them (the steps' models column is what was left to wait for). The timed",
        "  imports are the retrieval core, the store and the server package, not all that `serve` imports (its",
        "  runtime module and the CLI add more). **Without snapshot**: the same with the index rebuilt from the",
        "  stored catalog and vectors (nothing is embedded: vectors are reused by content hash), what every",
        "  restart cost before. **First lexical answer**: what a server without snapshot answers first while the",
        "  models load (BM25 + TF-IDF only).",
        "- **cold index**: seconds spent embedding the corpus from nothing with the three models, summed over",
        "  the build runs (a killed build resumes from its committed batches; at 100k SPLADE was filled by a",
        "  second process during the dense build, and its seconds are added).",
        "- **vectors in memory, not pgvector**: each replica (and the PostgreSQL store too) reads the vectors",
        "  into memory at start and searches them with numpy. Fusion reads every tool's cosine (rank fusion over",
        "  whole rankings; server cosines are read for the rerank's head only), which a KNN index (pgvector, sqlite-vec) does",
        "  not return without changing results, and eval/KNN.md measured sqlite-vec's KNN well behind numpy at",
        "  100k; the store keeps them only so that nothing is embedded twice.",
        "- **what a search reads at scale**: the dense scores of all of a search's texts (a whole task: the task",
        "  and each need) come from one product over the tool matrix (each model's columns apart; "
        + ", ".join(f"{r['dense_matrix_mb']} MB at {r['tools']:,} tools" for r in rows if "dense_matrix_mb" in r) + ");",
        "  BM25 and TF-IDF (and SPLADE, where switched on) sum the postings lists of the query's terms; each",
        "  ranking still cuts each list over every tool (argpartition). SPLADE terms indexed: "
        + ", ".join(f"{r['splade_terms']:,} at {r['tools']:,}" for r in rows if "splade_terms" in r) + ".",
        "- **one-tool change**: a re-harvest of one server with one tool's description changed: recorded in the",
        "  store and its one new text embedded (store), then swapped into the retriever with the null requests",
        "  rescored (swap).",
        "",
    ]
    (ROOT / "eval" / "SCALE.md").write_text("\n".join(lines))
    _plot(results)


def _plot(results: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["tools"] for r in results.values()]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for q, style in (("p50_ms", "o-"), ("p95_ms", "s-"), ("p99_ms", "^-")):
        axes[0].plot(sizes, [r[q] for r in results.values()], style, label=q.split("_")[0])
    axes[0].axhline(GOALS["p95_ms"], color="grey", linestyle=":", label="p95 goal")
    axes[0].set(xscale="log", xlabel="tools", ylabel="ms per search", title="search latency")
    axes[0].legend()
    axes[1].plot(sizes, [r["rss_mb"] for r in results.values()], "o-")
    axes[1].axhline(GOALS["rss_mb"], color="grey", linestyle=":")
    axes[1].set(xscale="log", xlabel="tools", ylabel="MB", title="resident memory")
    axes[2].plot(sizes, [r["restart_s"] for r in results.values()], "o-")
    axes[2].axhline(GOALS["restart_s"], color="grey", linestyle=":")
    axes[2].set(xscale="log", xlabel="tools", ylabel="s", title="restart to first answer")
    fig.tight_layout()
    fig.savefig(ROOT / "eval" / "scale.png", dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2800,12800,100000", help="catalog sizes, comma-separated")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--queries", type=int, default=300, help="searches timed per size")
    parser.add_argument("--store-dir", type=Path, default=None, help="where the per-size stores live (default: user cache dir)")
    parser.add_argument("--no-reports", action="store_true", help="do not rewrite eval/SCALE.md and eval/scale.png")
    parser.add_argument("--restart-only", action="store_true",
                        help="time only the restart with the index snapshot (stores already built); no reports")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--launched", type=float, default=_LAUNCHED, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        what, size, path, *rest = args.child
        if what == "build":
            out = build(int(size), Path(path))
        elif what in ("lexical", "lexical-snapshot"):
            out = measure_lexical(Path(path), args.launched, snapshot=what == "lexical-snapshot")
        else:
            out = measure(int(size), Path(path), int(rest[0]), args.launched, rebuild=what == "rebuild",
                          restart_only=what == "restart")
        print(json.dumps(out))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.restart_only:
        results = run_restarts(sizes, args.store_dir or _default_store_dir())
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        return 0
    results = run(sizes, args.store_dir or _default_store_dir(), args.queries)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if not args.no_reports:
        write_reports(results, "python eval/bench_scale.py " + " ".join(sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
