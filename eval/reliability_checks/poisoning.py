"""Tool poisoning and late tools (issue 16): how many planted poisoned tools the detector flags,
how many real tools it flags by mistake, and whether a tool added to a known server is withheld.

The planted set is ``tests/catalog/data/poisoned_tools.jsonl`` (written for the tests after the
public write-ups of the attack; each line's ``kind`` says which); the benign set is every tool
of ``../shared/bench/*/tools.jsonl``. No process is started; the store is in memory.
"""

from __future__ import annotations

from pathlib import Path

from votr_mcp.catalog import Catalog, Tool, load_catalog
from votr_mcp.catalog.safety import injection_reasons
from votr_mcp.store import Store

from . import Finding

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "tests" / "catalog" / "data" / "poisoned_tools.jsonl"
BENCH = ROOT.parent / "shared" / "bench"
RECALL_FLOOR = 0.9
FPR_CEILING = 0.005


def planted_recall() -> Finding:
    tools = list(load_catalog(PLANTED).catalog)
    missed = [f"{t.name} ({t.extra.get('kind')})" for t in tools if not injection_reasons(t)]
    recall = 1 - len(missed) / len(tools)
    return Finding(f"planted poisoned tools flagged (recall >= {RECALL_FLOOR:.0%})",
                   f"{len(tools) - len(missed)} of {len(tools)} ({recall:.1%}); missed: {', '.join(missed) or 'none'}",
                   recall >= RECALL_FLOOR)


def bench_false_positives() -> Finding:
    files = sorted(BENCH.glob("*/tools.jsonl"))
    if not files:
        return Finding("bench tools flagged by mistake", f"no tools.jsonl under {BENCH}: not measured", False)
    flagged: list[str] = []
    total = 0
    for file in files:
        for tool in load_catalog(file).catalog:
            total += 1
            if reasons := injection_reasons(tool):
                flagged.append(f"{file.parent.name}/{tool.server}/{tool.name}: {reasons[0]}")
    rate = len(flagged) / total
    return Finding(f"real tools flagged by mistake, every tool of {len(files)} bench sets (< {FPR_CEILING:.1%})",
                   f"{len(flagged)} of {total} ({rate:.3%}){'; e.g. ' + flagged[0] if flagged else ''}", rate < FPR_CEILING)


def added_tool_withheld() -> Finding:
    first = Catalog([Tool("files", "read_file", "Read a file."), Tool("files", "list_dir", "List a folder.")])
    late = Tool("files", "move_file", "Move a file.")
    newcomer = Tool("calendar", "list_events", "List calendar events.")
    with Store.open(":memory:") as store:
        store.registry.sync(first)
        store.registry.sync(Catalog([*first, late, newcomer]))
        held_before = late.key in store.registry.withheld() and late.key not in store.registry.catalog()
        refused = store.registry.refusal(late.key) is not None
        newcomer_trusted = newcomer.key in store.registry.catalog()
        store.registry.accept("files__move_file")
        served_after = late.key in store.registry.catalog() and store.registry.refusal(late.key) is None
    ok = held_before and refused and newcomer_trusted and served_after
    return Finding("a tool added to a known server is withheld (search and call) until accepted; a new server's first harvest is trusted",
                   f"held {held_before}, call refused {refused}, new server trusted {newcomer_trusted}, serves after accept {served_after}", ok)


CHECKS = [planted_recall, bench_false_positives, added_tool_withheld]
