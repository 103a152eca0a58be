"""The scale benchmark's corpus and queries (used by eval/bench_scale.py).

Sizes are built from real tools first, then synthetic ones:

- MCP-Zero (2,792 tools), then Smithery distractors (9,970: 12.8k together), then MSC-Bench
  (2,375), in that order, cut at the size asked for;
- past the ~15k real tools, **synthetic** tools, clearly labelled: servers named
  ``synthetic-NNNNN`` whose tools recombine real ones (one real tool's name and schema, the
  first sentence of its description followed by the first sentence of another real tool's),
  ``extra={"synthetic": True}``. They make the index as large as 100k real tools would, with
  texts of the same vocabulary, so that latency, memory and start-up measure what they would;
  they are never gold for any query.

Queries are the dev split (votr_mcp.evaluation.data) of the labelled sets whose tools are in the
corpus (MCP-Zero, and MSC-Bench when it is in).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from votr_mcp.catalog import Catalog, Tool, load_catalog

__all__ = ["BENCH", "corpus", "dev_queries", "SYNTHETIC_PREFIX"]

import os

# ../shared/bench from the project's root (as every eval script reads it); VOTR_BENCH_DIR overrides
# (a git worktree of the project sits deeper than the main checkout).
BENCH = Path(os.environ.get("VOTR_BENCH_DIR") or Path(__file__).resolve().parents[2] / "shared" / "bench")
REAL_SETS = ("mcpzero", "smithery_distractors", "mscbench")
LABELLED_SETS = ("mcpzero", "mscbench")
SYNTHETIC_PREFIX = "synthetic-"
TOOLS_PER_SYNTHETIC_SERVER = 10
_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)", re.S)


def _real_tools(bench: Path) -> list[Tool]:
    seen: set[tuple[str, str]] = set()
    tools: list[Tool] = []
    for name in REAL_SETS:
        for tool in load_catalog(bench / name / "tools.jsonl").catalog:
            if tool.key not in seen:  # a few servers are in two sets: keep the first
                seen.add(tool.key)
                tools.append(tool)
    return tools


def _first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.replace("*", " ").split())
    found = _SENTENCE.match(text)
    return (found.group(1) if found else text)[:limit]


def _synthetic(real: list[Tool], count: int, seed: int = 20) -> list[Tool]:
    rng = random.Random(seed)
    described = [t for t in real if t.description.strip()]
    servers = sorted({t.server: t for t in described}.values(), key=lambda t: t.server)
    out: list[Tool] = []
    for i in range(count):
        number = i // TOOLS_PER_SYNTHETIC_SERVER
        rng_server = random.Random(seed * 1_000_003 + number)
        a, b = rng_server.choice(servers), rng_server.choice(servers)
        server_description = f"{_first_sentence(a.server_description)} {_first_sentence(b.server_description)}".strip()
        base, other = rng.choice(described), rng.choice(described)
        out.append(Tool(
            server=f"{SYNTHETIC_PREFIX}{number:05d}",
            name=f"{base.name}_{i % TOOLS_PER_SYNTHETIC_SERVER}",
            description=f"{_first_sentence(base.description)} {_first_sentence(other.description)}",
            input_schema=base.input_schema,
            server_description=server_description,
            extra={"synthetic": True, "from": [list(base.key), list(other.key)]},
        ))
    return out


def corpus(size: int, bench: Path = BENCH) -> Catalog:
    """``size`` tools: real ones first (in REAL_SETS order), then synthetic ones."""
    real = _real_tools(bench)
    if size <= len(real):
        return Catalog(real[:size])
    return Catalog([*real, *_synthetic(real, size - len(real))])


def dev_queries(catalog: Catalog, bench: Path = BENCH, limit: int | None = None) -> list[str]:
    """Dev-split query texts of the labelled sets whose gold tools are all in ``catalog``."""
    from votr_mcp.evaluation.data import load_queries, select_split

    keys = set(catalog.tool_keys())  # not the tools: a catalog from the index snapshot makes each when read
    out: list[str] = []
    for name in LABELLED_SETS:
        for row in select_split(load_queries(bench / name / "queries.jsonl"), "dev"):
            if all(tuple(k) in keys for k in row.gold):  # no_tool rows too: abstaining is a search
                out.append(row.query)
    rng = random.Random(7)
    rng.shuffle(out)  # mix the sets, so a cut keeps both
    return out[:limit] if limit else out


if __name__ == "__main__":  # python eval/scale_corpus.py SIZE: counts, for a quick look
    import sys

    c = corpus(int(sys.argv[1]))
    print(json.dumps({"tools": len(c), "servers": len(c.servers),
                      "synthetic": sum(t.server.startswith(SYNTHETIC_PREFIX) for t in c),
                      "queries": len(dev_queries(c))}))
