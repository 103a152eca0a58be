"""Incremental indexing and warm start over a real store (figures for eval/KNN.md).

    python eval/bench_store.py swap [--catalog ../shared/bench/mcpzero/tools.jsonl] [--repeats 7]
    python eval/bench_store.py load STORE... [--repeats 5]
    python eval/bench_store.py imports [--repeats 3]
    python eval/bench_store.py warm-start --store PATH [--repeats 5] [-- extra serve arguments]

``swap`` indexes the catalog into a copy of a store (vectors for it are reused when the store
at --store already has them), then times, with the model already loaded:
  - re-indexing the whole catalog when nothing changed;
  - re-indexing the whole catalog with one tool's description changed (1 text embedded);
  - re-harvesting only that tool's server with one change (what tools/list_changed does);
  - the retriever rebuild over the new catalog from the store's vectors (R1's with_catalog),
    and the retriever's one-tool swap (with_tools_changed), the in-memory part of swapping a
    changed tool in.

``load`` times what a restarted server reads from a store before it can search.

``imports`` measures the CPU cost of the imports `serve` needs before its first answer.

``warm-start`` launches ``votr-mcp serve --store PATH`` over stdio with a real MCP client and
times launch -> first search_tools answer, and reports whether dense retrieval took part.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CATALOG = ROOT.parent / "shared" / "bench" / "mcpzero" / "tools.jsonl"
DEFAULT_STORE = Path.home() / ".cache" / "votr-mcp" / "bench-knn" / "knn_2.8k.sqlite3"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def median_ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.1f}"


class _Timed:
    """The real embedder, timing its encode calls (to tell model time from store time)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.seconds = 0.0

    def encode(self, texts: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.seconds += time.perf_counter() - started


def _split(runs: list[tuple[float, float]]) -> tuple[str, str, str]:
    """Medians of (total, model, total - model) in ms."""
    return (median_ms([t for t, _ in runs]), median_ms([m for _, m in runs]), median_ms([t - m for t, m in runs]))


def swap(args: argparse.Namespace) -> int:
    from votr_mcp.catalog import Catalog, load_catalog
    from votr_mcp.index.dense import MiniLMEmbedder
    from votr_mcp.retrieval import Retriever
    from votr_mcp.store import Store, index_catalog

    catalog = load_catalog(args.catalog).catalog
    work = Path(tempfile.mkdtemp(prefix="votr-bench-store-"))
    path = work / "registry.sqlite3"
    if args.store.exists():
        shutil.copy(args.store, path)  # reuse its vectors: only missing texts get embedded
    embedder = _Timed(MiniLMEmbedder())
    embedder.encode(["warm up the model"])
    rows: list[tuple[str, str, str]] = []
    with Store.open(path) as store:
        first = index_catalog(store, catalog, embedder, prune_servers=True)
        log(f"indexed {first.tools} tools ({first.embedded} embedded) in {first.seconds:.1f} s")

        def timed(run: Any) -> tuple[float, float]:
            embedder.seconds = 0.0
            report = run()
            return report.seconds, embedder.seconds

        same = [timed(lambda: index_catalog(store, catalog, embedder)) for _ in range(args.repeats)]
        rows.append(("re-index, nothing changed", *_split(same), "0"))
        target = catalog[len(catalog) // 2]
        full, server_only = [], []
        for r in range(args.repeats):
            changed = dataclasses.replace(target, description=f"{target.description} (revision {r})")
            new = Catalog(changed if t.key == target.key else t for t in catalog)
            full.append(timed(lambda new=new: index_catalog(store, new, embedder, trust="auto")))
            again = dataclasses.replace(target, description=f"{target.description} (revision {r}b)")
            harvest = Catalog(again if t.key == target.key else t for t in catalog if t.server == target.server)
            server_only.append(timed(lambda harvest=harvest: index_catalog(store, harvest, embedder, trust="auto")))
        rows.append((f"re-index all {len(catalog)} tools, 1 changed", *_split(full), "1"))
        rows.append((f"re-harvest 1 server ({sum(t.server == target.server for t in catalog)} tools), 1 changed",
                     *_split(server_only), "1"))
        retriever = Retriever.build(catalog, embedder=embedder, cache=store.vectors)
        rebuild = []
        for r in range(args.repeats):
            changed = dataclasses.replace(target, description=f"{target.description} (revision {r}b)")
            new = Catalog(changed if t.key == target.key else t for t in catalog)
            started = time.perf_counter()
            retriever.with_catalog(new)
            rebuild.append((time.perf_counter() - started, 0.0))
        rows.append(("retriever rebuild from store vectors (R1's with_catalog)", *_split(rebuild), "0"))
        if hasattr(retriever, "with_tools_changed"):
            # The changed text is already in the store (embedded above), as it is after a re-harvest.
            swap_one = []
            for r in range(args.repeats):
                changed = dataclasses.replace(target, description=f"{target.description} (revision {r}b)")
                embedder.seconds = 0.0
                started = time.perf_counter()
                retriever.with_tools_changed([changed])
                swap_one.append((time.perf_counter() - started, embedder.seconds))
            rows.append(("retriever swap of the changed tool only (R1's with_tools_changed)", *_split(swap_one), "0"))
    shutil.rmtree(work, ignore_errors=True)
    print(f"| step ({len(catalog)} tools, median of {args.repeats}) | total ms | model ms | store ms | texts embedded |")
    print("|---|---|---|---|---|")
    for name, total, model, rest, n in rows:
        print(f"| {name} | {total} | {model} | {rest} | {n} |")
    return 0


def load(args: argparse.Namespace) -> int:
    """What a restarted server reads from the store before it can search: open + catalog
    (+ the vectors of every dense text, as the retriever's cache lookups do)."""
    from votr_mcp.index.dense import MINILM_ID
    from votr_mcp.store import Store, dense_texts
    from votr_mcp.store.indexing import text_hash

    print(f"| store | tools | open ms | catalog ms | vectors ms (texts) | (median of {args.repeats}) |")
    print("|---|---|---|---|---|---|")
    for path in args.stores:
        opened, listed, fetched = [], [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            store = Store.open(path)
            t1 = time.perf_counter()
            catalog = store.registry.catalog(include_held=True)
            t2 = time.perf_counter()
            tools, servers = dense_texts(catalog)
            found = store.vectors.get_many(MINILM_ID, [text_hash(t) for t in tools + servers])
            t3 = time.perf_counter()
            store.close()
            opened.append(t1 - t0)
            listed.append(t2 - t1)
            fetched.append(t3 - t2)
        print(f"| {path.name} | {len(catalog):,} | {median_ms(opened)} | {median_ms(listed)} | {median_ms(fetched)} ({len(found):,}) | |")
    return 0


IMPORT_STEPS = (
    ("python alone", "pass"),
    ("the store (apsw, sqlite-vec, numpy)", "import votr_mcp.store"),
    ("mcp SDK", "import mcp"),
    ("the server (mcp SDK + app, transports, runtime)", "import votr_mcp.server.runtime"),
    ("the server + the retrieval pipeline (BM25, TF-IDF: scipy, scikit-learn)", "import votr_mcp.server.runtime, votr_mcp.retrieval.pipeline"),
)


def imports(args: argparse.Namespace) -> int:
    """CPU seconds to import what `serve` needs before it can answer, each in a fresh process."""
    import resource
    import subprocess

    print(f"| imports (fresh process each; median of {args.repeats}) | CPU s |")
    print("|---|---|")
    for label, code in IMPORT_STEPS:
        runs = []
        for _ in range(args.repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        print(f"| {label} | {statistics.median(runs):.2f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} (1 min)")
    return 0


def warm_start(args: argparse.Namespace) -> int:
    import anyio

    return anyio.run(_warm_start, args)


async def _warm_start(args: argparse.Namespace) -> int:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "votr_mcp.cli", "serve", "--store", str(args.store), *args.serve_args]
    times: list[float] = []
    cpu: list[float] = []
    dense: list[Any] = []
    notes: list[str] = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        with anyio.fail_after(120):
            async with Client(params) as client:
                result = await client.call_tool("search_tools", {"query": "list open pull requests of a repository"})
                times.append(time.perf_counter() - started)
                cpu.append(_server_cpu_seconds())
                structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None) or {}
                dense.append(structured.get("dense"))
                notes.append(" ".join(structured.get("notes") or []))
    print(f"| launch -> first search_tools answer (median of {args.repeats}) | {statistics.median(times):.2f} s |")
    print(f"| max | {max(times):.2f} s |")
    print(f"| server process CPU time at that answer (median; all its threads) | {statistics.median(cpu):.2f} s |")
    print(f"| dense used in that first answer | {dense} |")
    print(f"| notes of the first answer | {sorted(set(notes))} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} (1 min)")
    print(f"\ncommand: {' '.join(command)}")
    return 0


def _server_cpu_seconds() -> float:
    """User + system CPU seconds of our `votr-mcp serve` child so far (Linux /proc).

    On a busy machine wall time mostly measures waiting for a core; CPU time is what the
    start-up itself costs, close to the wall time an idle machine would see."""
    ticks = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[1]) == os.getpid() and b"votr_mcp.cli" in cmdline:
            return (int(fields[11]) + int(fields[12])) / ticks
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("swap")
    s.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG)
    s.add_argument("--store", type=Path, default=DEFAULT_STORE, help="a store whose vectors to reuse (copied, not changed)")
    s.add_argument("--repeats", type=int, default=7)
    ld = sub.add_parser("load")
    ld.add_argument("stores", type=Path, nargs="+")
    ld.add_argument("--repeats", type=int, default=5)
    im = sub.add_parser("imports")
    im.add_argument("--repeats", type=int, default=3)
    w = sub.add_parser("warm-start")
    w.add_argument("--store", type=Path, required=True)
    w.add_argument("--repeats", type=int, default=5)
    w.add_argument("serve_args", nargs="*", help="extra arguments for votr-mcp serve (after --)")
    args = parser.parse_args()
    return {"swap": swap, "load": load, "imports": imports, "warm-start": warm_start}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
