"""Benchmarks of the MCP server surface, measured through a real client over stdio.

    python eval/bench_server.py [--bench ../shared/bench] [--searches 200] [--calls 200] [--startups 3]

1. search_tools round trip (client -> votr-mcp -> client) at ~2.8k tools: the mcpzero corpus
   served with ``--catalog``, dense retrieval on, queries = mcpzero task texts (text only).
   Also with ``--no-dense`` (the lexical floor: what the protocol and server add).
2. call_tool overhead: the same upstream tool (server-everything ``echo``) called directly by
   the SDK client, and through votr-mcp's call_tool; added p50 = proxied p50 - direct p50.
3. Start-up: launch of ``votr-mcp serve --config`` with the five real servers until the first
   search_tools answer arrives; cold (empty store) and warm (second start, same store).

Prints the figures and writes eval/SERVER_BENCH.md with this command line. Timings on a
shared 2-core machine are noisy: variants are measured in turn, query by query (call by call),
so load swings hit all alike; the report states the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

SERVE = [sys.executable, "-m", "votr_mcp.cli", "serve"]


def env(data_home: str) -> dict[str, str]:
    out = dict(os.environ)
    out.update({"OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "XDG_DATA_HOME": data_home})
    return out


def votr(args: list[str], data_home: str) -> StdioServerParameters:
    return StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], env=env(data_home))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values_ms: list[float]) -> dict[str, float]:
    return {"n": len(values_ms), "p50": statistics.median(values_ms), "p95": percentile(values_ms, 95), "mean": statistics.fmean(values_ms)}


async def timed(call: Any) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


async def bench_search(tools: Path, queries: list[str], cache: Path, data_home: str) -> dict[str, Any]:
    """Round trips through votr-mcp (dense, lexical) and the same searches in process, taken in
    turn for each query so that load swings hit every variant alike."""
    from votr_mcp.catalog import load_catalog
    from votr_mcp.index import MiniLMEmbedder
    from votr_mcp.retrieval import Retriever
    from votr_mcp.store import Store

    base = ["--catalog", str(tools), "--store", str(cache)]
    times: dict[str, list[float]] = {"dense": [], "lexical": [], "in_process_dense": [], "in_process_lexical": []}
    catalog = load_catalog(tools).catalog
    with anyio.fail_after(3600), Store.open(cache) as store:
        lexical = Retriever.build(catalog, cache=store.vectors)
        dense = await anyio.to_thread.run_sync(lambda: lexical.with_embedder(MiniLMEmbedder(), store.vectors))
        async with Client(votr([*base, "--wait-for-dense"], data_home)) as with_dense, Client(votr([*base, "--no-dense"], data_home)) as without:
            first = await with_dense.call_tool("search_tools", {"query": queries[0]})  # waits for the model and vectors
            assert first.structured_content["dense"] is True, first.structured_content
            runs = {
                "dense": lambda q: with_dense.call_tool("search_tools", {"query": q}),
                "lexical": lambda q: without.call_tool("search_tools", {"query": q}),
                "in_process_dense": lambda q: anyio.to_thread.run_sync(dense.search, q),
                "in_process_lexical": lambda q: anyio.to_thread.run_sync(lexical.search, q),
            }
            for query in queries[1:6]:  # warm-up: first calls pay for lazy imports
                for run in runs.values():
                    await run(query)
            for i, query in enumerate(queries):
                names = list(runs)
                for name in names[i % 4 :] + names[: i % 4]:  # rotate the order too
                    times[name].append(await timed(lambda name=name, query=query: runs[name](query)))
    return {name: summary(values) for name, values in times.items()}


async def bench_calls(calls: int, data_home: str, workdir: Path) -> dict[str, Any]:
    """The same echo call directly, through the upstream pool in process, and through votr-mcp, in turn."""
    from upstream_servers import servers_config, stdio_parameters, write_config

    from votr_mcp.upstream import Upstreams
    from votr_mcp.upstream.config import parse_upstreams

    config = servers_config(workdir, ["everything"])
    entry = config["mcpServers"]["everything"]
    path = write_config(workdir / "everything.json", config)
    times: dict[str, list[float]] = {"direct": [], "pool": [], "proxied": []}
    with anyio.fail_after(900):
        async with (
            Client(stdio_parameters(entry)) as direct,
            Upstreams(parse_upstreams(config)) as upstreams,
            Client(votr(["--config", str(path), "--no-dense", "--store", "none"], data_home)) as proxied,
        ):
            await upstreams.wait_started()
            runs = {
                "direct": lambda m: direct.call_tool("echo", {"message": m}),
                "pool": lambda m: upstreams.call("everything", "echo", {"message": m}),
                "proxied": lambda m: proxied.call_tool("call_tool", {"name": "everything__echo", "arguments": {"message": m}}),
            }
            for i in range(10):
                for run in runs.values():
                    await run(f"warm {i}")
            for i in range(calls):
                names = list(runs)
                for name in names[i % 3 :] + names[: i % 3]:
                    times[name].append(await timed(lambda name=name, i=i: runs[name](f"ping {i}")))
    d, p = summary(times["direct"]), summary(times["proxied"])
    return {"direct": d, "pool": summary(times["pool"]), "proxied": p, "added_p50": p["p50"] - d["p50"], "added_p95": p["p95"] - d["p95"]}


async def bench_startup(runs: int, workdir: Path) -> dict[str, Any]:
    from upstream_servers import servers_config, write_config

    path = write_config(workdir / "five.json", servers_config(workdir / "servers"))
    out: dict[str, Any] = {"cold": [], "warm": []}
    for _ in range(runs):
        data_home = tempfile.mkdtemp(prefix="votr-bench-startup-")
        for kind in ("cold", "warm"):  # warm: same data home, so the store remembers the tools
            start = time.perf_counter()
            with anyio.fail_after(300):
                async with Client(votr(["--config", str(path)], data_home)) as client:
                    result = await client.call_tool("search_tools", {"query": "what time is it in Tokyo"})
                    elapsed = time.perf_counter() - start
                    assert not result.is_error and result.structured_content["tools"], result.content
            out[kind].append(elapsed)
    return {kind: {"runs": values, "median_s": statistics.median(values)} for kind, values in out.items()}


def report(figures: dict[str, Any], command: str) -> str:
    search, c, st = figures["search"], figures["calls"], figures["startup"]
    s, sl = search["dense"], search["lexical"]
    ip = {"dense": search["in_process_dense"], "lexical": search["in_process_lexical"]}
    lines = [
        "# votr-mcp server benchmarks",
        "",
        f"Produced by `{command}` on {figures['date']} (load average at start {figures['load']}, "
        "2 shared cores: absolute times are noisy, compare within this table).",
        "",
        f"## search_tools round trip over stdio, {figures['tools']} tools (mcpzero), {s['n']} queries",
        "",
        "| retrieval | p50 ms | p95 ms | mean ms | goal |",
        "|---|---|---|---|---|",
        f"| dense + lexical (default) | {s['p50']:.1f} | {s['p95']:.1f} | {s['mean']:.1f} | p50 ≤ 25 ms |",
        f"| lexical only (`--no-dense`) | {sl['p50']:.1f} | {sl['p95']:.1f} | {sl['mean']:.1f} | |",
        f"| same query in process, Retriever.search dense (no server) | {ip['dense']['p50']:.1f} | {ip['dense']['p95']:.1f} | {ip['dense']['mean']:.1f} | |",
        f"| same query in process, Retriever.search lexical (no server) | {ip['lexical']['p50']:.1f} | {ip['lexical']['p95']:.1f} | {ip['lexical']['mean']:.1f} | |",
        "",
        f"What the server adds to a search at p50 (round trip minus in-process): dense {s['p50'] - ip['dense']['p50']:.1f} ms, "
        f"lexical {sl['p50'] - ip['lexical']['p50']:.1f} ms; the rest is retrieval (R1's pipeline).",
        "",
        f"## call_tool overhead, server-everything `echo`, {c['direct']['n']} calls each",
        "",
        "| path | p50 ms | p95 ms | mean ms |",
        "|---|---|---|---|",
        f"| SDK client -> upstream directly | {c['direct']['p50']:.2f} | {c['direct']['p95']:.2f} | {c['direct']['mean']:.2f} |",
        f"| upstream pool in process (`Upstreams.call`, no votr hop) | {c['pool']['p50']:.2f} | {c['pool']['p95']:.2f} | {c['pool']['mean']:.2f} |",
        f"| SDK client -> votr-mcp call_tool -> upstream | {c['proxied']['p50']:.2f} | {c['proxied']['p95']:.2f} | {c['proxied']['mean']:.2f} |",
        f"| **added by votr-mcp** | **{c['added_p50']:.2f}** | {c['added_p95']:.2f} | |",
        "",
        "Goal: ≤ 5 ms added at p50.",
        "",
        "## Start-up: launch to first answered search_tools, five real servers",
        "",
        "| store | median s | runs (s) |",
        "|---|---|---|",
        f"| cold (empty store) | {st['cold']['median_s']:.2f} | {', '.join(f'{v:.2f}' for v in st['cold']['runs'])} |",
        f"| warm (second start, same store) | {st['warm']['median_s']:.2f} | {', '.join(f'{v:.2f}' for v in st['warm']['runs'])} |",
        "",
        "Cold: the first search waits until every upstream has started once (or failed) and answers lexically while the",
        "embedding model loads. Warm: the remembered tools are searchable at once; calls wait for the upstreams.",
        "",
    ]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from votr_mcp.catalog import load_catalog

    bench = Path(args.bench)
    tools = bench / "mcpzero" / "tools.jsonl"
    if not tools.exists():
        raise SystemExit(f"benchmark data not found at {tools}; pass --bench PATH (the ../shared/bench folder)")
    rows = [json.loads(line) for line in (bench / "mcpzero" / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = list(dict.fromkeys(row["query"] for row in rows))[: args.searches]
    work = Path(tempfile.mkdtemp(prefix="votr-bench-server-"))
    cache = Path(args.cache)
    cache.parent.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": " ".join(f"{v:.1f}" for v in os.getloadavg()),
        "tools": len(load_catalog(tools).catalog),
    }
    data_home = str(work / "data")
    print(f"search_tools at {figures['tools']} tools ({len(queries)} queries)...", file=sys.stderr)
    figures["search"] = await bench_search(tools, queries, cache, data_home)
    print("call_tool overhead...", file=sys.stderr)
    figures["calls"] = await bench_calls(args.calls, data_home, work)
    print("start-up with five real servers...", file=sys.stderr)
    figures["startup"] = await bench_startup(args.startups, work)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default=str(ROOT.parent / "shared" / "bench"), help="the shared benchmark folder")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--startups", type=int, default=3)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "votr-bench-cache" / "mcpzero.sqlite3"),
                        help="store file caching the catalog's embeddings between runs")
    parser.add_argument("--out", default=str(ROOT / "eval" / "SERVER_BENCH.md"))
    args = parser.parse_args()
    figures = anyio.run(main_async, args)
    command = "python eval/bench_server.py" + "".join(
        f" --{name} {getattr(args, name)}" for name in ("searches", "calls", "startups") if getattr(args, name) != parser.get_default(name)
    )
    print(json.dumps(figures, indent=2))
    Path(args.out).write_text(report(figures, command), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
