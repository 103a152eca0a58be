"""Replay: does votr-mcp get better with use, and does it harm requests nobody made?

A stream of requests goes through the real MCP surface (an in-memory ``mcp.Client`` on the server
``votr-mcp serve`` builds, with its Hub) to a simulated agent: it calls the gold tool when the answer
lists it, else the first tool listed, which fails (the upstream is simulated: the gold tool
succeeds, any other returns an error result). The stream revisits needs: each dev row of the set is
a need, visited ``--visits`` times at random points of the stream, first with its own text, then
alternately with a paraphrase (a row of ``queries_intents.jsonl`` with the same gold, when the set
has one) and its own text again. The same stream runs with learning off and on; then the set's
test rows, which were never in the stream (nor are their gold tools), are searched once each
(``held_back``), and once more in a paraphrase's short style (``held_back_short``: the paraphrase of
the row's gold, where the set has one: a request nobody made, in the words a revisit's paraphrase
uses). Reported: top-1 and hand-off (a gold tool among those handed off) on the stream's
repeated visits (the headline ``top1``/``handoff``), on first visits, per quarter of the stream,
and held back; what reordering the hand-off could still reach on the paraphrases missed at top-1
(``paraphrase_misses``); and the search round trip's p50/p95. Learning's settings are chosen on one half of
the rows (``fit``: the SHA-256 of the row id is even) and read on the other (``report``), both given.

    python eval/replay.py --data ../shared/bench/mcpzero --json /tmp/replay.json [--limit N] [--visits 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse
import hashlib
import json
import logging
import random
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import numpy as np
from mcp import Client

from votr_mcp.catalog import Catalog, load_catalog
from votr_mcp.catalog.models import ToolKey
from votr_mcp.cli.eval import cache_dir
from votr_mcp.errors import VotrError
from votr_mcp.evaluation.data import QueryRow, catalog_of, load_queries, split_of
from votr_mcp.index.dense import FileEmbeddingCache
from votr_mcp.index.models import default_embedder
from votr_mcp.learning import Bandit, Learning
from votr_mcp.learning.bandit import DEFAULT_BOUND
from votr_mcp.learning.learner import NEAR_FLOOR
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.app import build_server
from votr_mcp.server.hub import Hub
from votr_mcp.server.live_index import LiveIndex

log = logging.getLogger("replay")


@dataclass(frozen=True, slots=True)
class Visit:
    """One request of the stream: a need (its dev row), which visit of it, and the text sent."""

    row: QueryRow
    visit: int
    text: str
    kind: str  # "first", "repeat" (the same text again) or "paraphrase"


def build_stream(needs: Sequence[QueryRow], paraphrases: Mapping[tuple[ToolKey, ...], str], visits: int, seed: int) -> list[Visit]:
    """Every need ``visits`` times at random points; a need's visits keep their order."""
    slots = [(row, v) for row in needs for v in range(visits)]
    random.Random(seed).shuffle(slots)
    seen: dict[str, int] = {}
    out: list[Visit] = []
    for row, _ in slots:
        v = seen.get(row.id, 0)
        seen[row.id] = v + 1
        para = paraphrases.get(row.gold)
        if v == 0:
            out.append(Visit(row, v, row.query, "first"))
        elif v % 2 == 1 and para:
            out.append(Visit(row, v, para, "paraphrase"))
        else:
            out.append(Visit(row, v, row.query, "repeat"))
    return out


class SimulatedUpstreams:
    """Every server is up; a call succeeds when it is of the current request's gold tool."""

    def __init__(self) -> None:
        self.gold: frozenset[ToolKey] = frozenset()
        self.calls = 0

    def configured(self, server: str) -> bool:
        return True

    def unavailable(self, server: str) -> str | None:
        return None

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        self.calls += 1
        ok = (server, tool) in self.gold
        text = "done" if ok else "this tool cannot do that"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=not ok)


def arguments_for(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The smallest arguments an input schema accepts, as far as its top level says (required only)."""
    if not isinstance(schema, Mapping):
        return {}
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        out[name] = _value(props.get(name) if isinstance(props, Mapping) else None)
    return out


def _value(spec: Any) -> Any:
    if not isinstance(spec, Mapping):
        return "x"
    if spec.get("enum"):
        return spec["enum"][0]
    if "const" in spec:
        return spec["const"]
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    for options in ("anyOf", "oneOf"):
        if kind is None and spec.get(options):
            return _value(spec[options][0])
    if kind == "object":
        return arguments_for(spec)
    if kind == "array":
        items = spec.get("items")
        return [_value(items)] * int(spec.get("minItems", 0) or 0)
    if kind in ("integer", "number"):
        return int(spec.get("minimum", 1) or 1) if kind == "integer" else float(spec.get("minimum", 1) or 1)
    if kind == "boolean":
        return True
    return "x" * max(1, int(spec.get("minLength", 1) or 1))


HALVES = ("fit", "report")
HALF_GROUPS = ("revisit", "held_back", "held_back_short")


def half_of(row: QueryRow) -> str:
    """Which half of the rows ``row`` is in: settings are chosen on "fit" and read on "report"."""
    return HALVES[int(hashlib.sha256(row.id.encode()).hexdigest(), 16) % 2]


@dataclass
class Tally:
    """Top-1 and hand-off counts of one group of requests."""

    n: int = 0
    top1: int = 0
    handoff: int = 0

    def add(self, top1: bool, handoff: bool) -> None:
        self.n += 1
        self.top1 += top1
        self.handoff += handoff

    def report(self) -> dict[str, Any]:
        return {"n": self.n, "top1": round(self.top1 / self.n, 4) if self.n else None,
                "handoff": round(self.handoff / self.n, 4) if self.n else None}


class Mode:
    """One server (learning off or on) behind an in-memory client, and what the simulated agent saw."""

    def __init__(self, retriever: Retriever, catalog: Catalog, learning: Learning | None, stream_size: int, quarters: int = 4) -> None:
        self.upstreams = SimulatedUpstreams()
        self.hub = Hub(LiveIndex(catalog, retriever), self.upstreams, learning=learning)
        self.hub.ready.set()
        self.learning = learning
        self.by_key = {t.key: t for t in catalog}
        self.groups = {k: Tally() for k in ("all", "first", "revisit", "repeat", "paraphrase", "held_back", "held_back_short")}
        self.over_time = [Tally() for _ in range(quarters)]
        self.halves = {(half, name): Tally() for half in HALVES for name in HALF_GROUPS}
        self.seen: list[tuple[Visit, list[ToolKey]]] = []  # each visit and what it handed off, in order
        self.stream_size = stream_size
        self.latency: list[float] = []
        self.not_called = 0

    async def search(self, client: Client, text: str, timed: bool = True) -> list[dict[str, Any]]:
        started = time.perf_counter()
        with anyio.fail_after(60):
            answer = await client.call_tool("search_tools", {"query": text})
        if timed:
            self.latency.append((time.perf_counter() - started) * 1000)
        return [t for t in (answer.structured_content or {}).get("tools", []) if t.get("tier") != "pinned"]

    async def visit(self, client: Client, i: int, visit: Visit) -> None:
        gold = set(visit.row.gold)
        tools = await self.search(client, visit.text)
        keys = [(t["server"], t["tool"]) for t in tools]
        self.seen.append((visit, keys))
        top1, handoff = bool(keys) and keys[0] in gold, any(k in gold for k in keys)
        self.groups["all"].add(top1, handoff)
        self.groups["first" if visit.kind == "first" else "revisit"].add(top1, handoff)
        if visit.kind != "first":
            self.groups[visit.kind].add(top1, handoff)
            quarters = len(self.over_time)
            self.over_time[min(quarters - 1, i * quarters // self.stream_size)].add(top1, handoff)
            self.halves[(half_of(visit.row), "revisit")].add(top1, handoff)
        if not tools:
            self.not_called += 1
            return  # the agent got nothing to call
        chosen = next((t for t, k in zip(tools, keys) if k in gold), tools[0])
        self.upstreams.gold = frozenset(gold)
        schema = self.by_key[(chosen["server"], chosen["tool"])].input_schema
        with anyio.fail_after(60):
            result = await client.call_tool("call_tool", {"name": chosen["name"], "arguments": arguments_for(schema)})
        if result.is_error and self.upstreams.calls == 0:
            self.not_called += 1  # refused before the upstream (e.g. arguments the schema rejects)
        self.upstreams.calls = 0

    async def held_back(self, client: Client, row: QueryRow, text: str | None = None, group: str = "held_back") -> None:
        """Search a row never streamed, by its own text or (``text``) in another style."""
        keys = [(t["server"], t["tool"]) for t in await self.search(client, row.query if text is None else text, timed=False)]
        top1, handoff = bool(keys) and keys[0] in set(row.gold), any(k in set(row.gold) for k in keys)
        self.groups[group].add(top1, handoff)
        self.halves[(half_of(row), group)].add(top1, handoff)

    def report(self) -> dict[str, Any]:
        revisit = self.groups["revisit"].report()
        return {
            "top1": revisit["top1"], "handoff": revisit["handoff"], "n": revisit["n"],
            **{name: g.report() for name, g in self.groups.items()},
            "over_time": [q.report() for q in self.over_time],
            "halves": {half: {name: self.halves[(half, name)].report() for name in HALF_GROUPS} for half in HALVES},
            "paraphrase_misses": paraphrase_misses(self.seen),
            "calls_refused_before_upstream": self.not_called,
            "search_ms": {"p50": round(float(np.percentile(self.latency, 50)), 2),
                          "p95": round(float(np.percentile(self.latency, 95)), 2), "n": len(self.latency)},
            "learned_tools": len(self.learning.examples) if self.learning is not None else 0,
        }


def learning_of(settings: Sequence[str], seed: int) -> Learning:
    """The 'on' run's Learning, with ``--set NAME=VALUE`` settings (for ablations)."""
    values = dict(s.split("=", 1) for s in settings)
    floats = ("near_bonus", "near_floor", "near_half", "reject_drop", "reject_floor")
    unknown = set(values) - {*floats, "bound", "examples", "mix"}
    if unknown:
        raise SystemExit(f"unknown --set {sorted(unknown)}; choose {', '.join(floats)}, bound, examples or mix")
    options: dict[str, Any] = {k: float(v) for k, v in values.items() if k in floats}
    if "mix" in values:
        options["mix"] = values["mix"]
    return Learning(seed=seed, examples=values.get("examples", "1") != "0",
                    bandit=Bandit(bound=float(values.get("bound", DEFAULT_BOUND)), seed=seed), **options)


def paraphrase_misses(seen: Sequence[tuple[Visit, Sequence[ToolKey]]]) -> dict[str, int]:
    """What reordering the hand-off could reach on the paraphrase visits missed at top-1, and what the
    need's first visit (the request learning had of it) said about each: ``missed``; of those, the
    gold handed off (``gold_handed_off``), and of these, the first visit had the gold at top-1
    (``first_gold_top1``: its request was learned, nothing passed over), ranked this paraphrase's
    top-1 above the gold it called (``first_passed_over_this_top1``: the pair skip-above feedback,
    as in click models, would have), or neither (``first_other``: it missed the gold, or ranked
    other tools above it)."""
    first: dict[str, Sequence[ToolKey]] = {}
    out = dict.fromkeys(("missed", "gold_handed_off", "first_gold_top1", "first_passed_over_this_top1", "first_other"), 0)
    for visit, keys in seen:
        gold = set(visit.row.gold)
        if visit.kind == "first":
            first[visit.row.id] = keys
        if visit.kind != "paraphrase" or (keys and keys[0] in gold):
            continue
        out["missed"] += 1
        if not any(k in gold for k in keys):
            continue
        out["gold_handed_off"] += 1
        before = first.get(visit.row.id, [])
        at = next((i for i, k in enumerate(before) if k in gold), None)
        if at == 0:
            out["first_gold_top1"] += 1
        elif at is not None and keys[0] in before[:at]:
            out["first_passed_over_this_top1"] += 1
        else:
            out["first_other"] += 1
    return out


async def replay(retriever: Retriever, catalog: Catalog, stream: Sequence[Visit], held: Sequence[QueryRow],
                 learning: Learning, held_short: Mapping[str, str] | None = None) -> dict[str, Mode]:
    """Both servers take each request in turn (alternating which goes first), so the machine's load
    falls on both alike and their latencies compare."""
    modes = {"off": Mode(retriever, catalog, None, len(stream)), "on": Mode(retriever, catalog, learning, len(stream))}
    async with Client(build_server(modes["off"].hub)) as off, Client(build_server(modes["on"].hub)) as on:
        pairs = [(modes["off"], off), (modes["on"], on)]
        for i, visit in enumerate(stream):
            for mode, client in pairs[:: 1 if i % 2 else -1]:
                await mode.visit(client, i, visit)
        for row in held:
            for mode, client in pairs:
                await mode.held_back(client, row)
        short = held_short or {}
        for row in (r for r in held if r.id in short):  # after all held-back rows: those search as they did without these
            for mode, client in pairs:
                await mode.held_back(client, row, short[row.id], "held_back_short")
    return modes


def _stable(rows: Sequence[QueryRow]) -> list[QueryRow]:
    return sorted(rows, key=lambda r: hashlib.sha256(r.id.encode()).hexdigest())


def paraphrase_nearness(retriever: Retriever, needs: Sequence[QueryRow],
                        paraphrases: Mapping[tuple[ToolKey, ...], str]) -> dict[str, Any]:
    """How near each paraphrase is to its need's own text (the request learned at its first visit):
    the cosine the learned-request lift reads, against the floor where it starts to act."""
    pairs = [(row.query, paraphrases[row.gold]) for row in needs if row.gold in paraphrases]
    vectors = retriever.embed([t for pair in pairs for t in pair])
    cos = np.array([float(vectors[a] @ vectors[b]) for a, b in pairs if a in vectors and b in vectors])
    if not len(cos):
        return {"n": 0}
    return {"n": len(cos), "median": round(float(np.median(cos)), 3), "floor": NEAR_FLOOR,
            "share_at_floor": round(float(np.mean(cos >= NEAR_FLOOR)), 3)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a labelled set folder (queries.jsonl + its catalog)")
    parser.add_argument("--json", type=Path, required=True, help="where to write the report")
    parser.add_argument("--out", type=Path, help="also write the figures as markdown here (e.g. eval/REPLAY.md)")
    parser.add_argument("--visits", type=int, default=3, help="visits per need in the stream (default 3)")
    parser.add_argument("--limit", type=int, help="at most this many needs (dev rows), and held-back rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a learning setting for the 'on' run: near_bonus, near_floor, bound, examples (0/1)")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache folder (as for votr-mcp eval)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if args.visits < 2:
        parser.error("--visits must be at least 2: a stream that never revisits a need cannot show learning")
    started = time.perf_counter()
    try:
        catalog = load_catalog(catalog_of(args.data)).require_tools(log, most=5)
        rows = [r for r in load_queries(args.data / "queries.jsonl") if r.kind == "single" and r.gold]
    except VotrError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    needs = _stable([r for r in rows if split_of(r) == "dev"])
    dev_gold = {k for r in needs for k in r.gold}
    held = _stable([r for r in rows if split_of(r) == "test" and not dev_gold & set(r.gold)])
    if args.limit:
        needs, held = needs[: args.limit], held[: args.limit]
    paraphrases: dict[tuple[ToolKey, ...], str] = {}
    intents = args.data / "queries_intents.jsonl"
    if intents.is_file():
        for r in load_queries(intents):
            if r.gold and r.query.strip():
                paraphrases.setdefault(r.gold, r.query)
    stream = build_stream(needs, paraphrases, args.visits, args.seed)
    print(f"replay: {len(catalog)} tools, {len(needs)} needs x {args.visits} visits = {len(stream)} requests, "
          f"{len(held)} held-back rows", file=sys.stderr)
    retriever = Retriever.build(catalog, embedder=default_embedder(), cache=FileEmbeddingCache(cache_dir(args.cache_dir)))
    retriever.abstain_threshold()  # the server warms this before its first search (server/runtime.py)
    nearness = paraphrase_nearness(retriever, needs, paraphrases)
    held_short = {r.id: paraphrases[r.gold] for r in held if r.gold in paraphrases}
    modes = anyio.run(replay, retriever, catalog, stream, held, learning_of(args.set, args.seed), held_short)
    report: dict[str, Any] = {name: mode.report() for name, mode in modes.items()}
    for mode in ("off", "on"):
        print(f"  learning {mode}: revisits top-1 {report[mode]['top1']}, hand-off {report[mode]['handoff']}; "
              f"held back top-1 {report[mode]['held_back']['top1']}; search p50 {report[mode]['search_ms']['p50']} ms",
              file=sys.stderr)
    report["held_back"] = {mode: report[mode].pop("held_back") for mode in ("off", "on")}
    report["held_back_short"] = {mode: report[mode].pop("held_back_short") for mode in ("off", "on")}
    report["paraphrase_nearness"] = nearness
    report["setup"] = {"data": str(args.data), "tools": len(catalog), "needs": len(needs), "visits": args.visits,
                       "stream": len(stream), "paraphrased_needs": sum(1 for r in needs if r.gold in paraphrases),
                       "held_back_rows": len(held), "held_back_short_rows": len(held_short), "seed": args.seed, "learning": args.set,
                       "seconds": round(time.perf_counter() - started, 1),
                       "command": "python eval/replay.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.out is not None:
        args.out.write_text(markdown(report), encoding="utf-8")
    return 0


def markdown(report: Mapping[str, Any]) -> str:
    """The report as the tables of eval/REPLAY.md."""
    setup = report["setup"]
    off, on = report["off"], report["on"]

    def row(name: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
        def pts(x: float | None, y: float | None) -> str:
            return "n/a" if x is None or y is None else f"{100 * (y - x):+.1f}"
        return (f"| {name} | {a['n']} | {a['top1']:.3f} | {b['top1']:.3f} | {pts(a['top1'], b['top1'])} | "
                f"{a['handoff']:.3f} | {b['handoff']:.3f} | {pts(a['handoff'], b['handoff'])} |")

    lines = [
        "# Replay: learning from use",
        "",
        "Produced by:",
        "",
        f"    {setup['command']}",
        "",
        f"{setup['tools']} tools; {setup['needs']} dev requests (needs) x {setup['visits']} visits = {setup['stream']} "
        f"searches in the stream ({setup['paraphrased_needs']} needs have a paraphrase); {setup['held_back_rows']} "
        f"test rows held back (never streamed, nor their tools), {setup.get('held_back_short_rows', 0)} of them searched "
        f"again in a paraphrase's short style (their gold's paraphrase); seed {setup['seed']}; {setup['seconds']} s.",
        "Each visit: search_tools through an in-memory MCP client, then call_tool of the gold tool when listed, "
        "else of the first (which fails). Learning off and on take each request in turn.",
        "",
        "| requests | n | top-1 off | top-1 on | points | hand-off off | hand-off on | points |",
        "|---|---|---|---|---|---|---|---|",
        row("revisits (headline)", {**off, "n": off["n"]}, on),
        row("  same text again", off["repeat"], on["repeat"]),
        row("  paraphrase", off["paraphrase"], on["paraphrase"]),
        row("first visits", off["first"], on["first"]),
        row("held back", report["held_back"]["off"], report["held_back"]["on"]),
        *([row("  held back, short style", report["held_back_short"]["off"], report["held_back_short"]["on"])]
          if report.get("held_back_short", {}).get("off", {}).get("n") else []),
        "",
        "Revisits by quarter of the stream (top-1 off / on): "
        + ", ".join(f"{a['top1']:.3f} / {b['top1']:.3f}" for a, b in zip(off["over_time"], on["over_time"])),
        "",
        "By half of the rows (SHA-256 of the row id; learning's settings were chosen on the fitting half), top-1 off / on: "
        + "; ".join(f"{half}: revisits {off['halves'][half]['revisit']['top1']:.3f} / {on['halves'][half]['revisit']['top1']:.3f}, "
                    f"held back {off['halves'][half]['held_back']['top1']:.3f} / {on['halves'][half]['held_back']['top1']:.3f}"
                    + (f", short style {off['halves'][half]['held_back_short']['top1']:.3f} / {on['halves'][half]['held_back_short']['top1']:.3f}"
                       if off['halves'][half]['held_back_short']['n'] else "")
                    for half in HALVES),
        "",
        f"Search round trip p50 / p95: off {off['search_ms']['p50']} / {off['search_ms']['p95']} ms, "
        f"on {on['search_ms']['p50']} / {on['search_ms']['p95']} ms (the two servers alternate on one machine).",
        "",
    ]
    near = report.get("paraphrase_nearness", {})
    if near.get("n"):
        lines += [
            f"Paraphrases and what was learned: a paraphrase's cosine with its need's own text (the request learned at "
            f"its first visit) has median {near['median']}; {100 * near['share_at_floor']:.1f}% of the {near['n']} reach "
            f"{near['floor']}, where a learned request starts to lift its tool. The paraphrases are short requests "
            "in a tool description's words; the learned requests are whole tasks.",
            "",
        ]
    miss = {mode: report[mode].get("paraphrase_misses") for mode in ("off", "on")}
    if all(m and m["missed"] for m in miss.values()):
        lines += [
            "What reordering the hand-off could still reach on the paraphrases missed at top-1 (learning off / on): "
            + "; ".join(f"{label} {miss['off'][key]} / {miss['on'][key]}" for key, label in (
                ("missed", "missed"), ("gold_handed_off", "gold handed off below another"),
                ("first_gold_top1", "of which the need's first visit had the gold at top-1"),
                ("first_passed_over_this_top1", "passed over this top-1 for the gold"),
                ("first_other", "neither"))) + ".",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
