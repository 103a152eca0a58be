"""What the outcome log says about search: how often the tool the agent called was the first
returned (hit rate), where it ranked, how often searches abstained, and the commonest requests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["outcome_stats", "stats_text"]


def outcome_stats(searches: Iterable[tuple[str | None, bool, Sequence[Any]]], calls: Iterable[Any], top: int = 10) -> dict[str, Any]:
    """Figures over stored searches ((query, abstained, returned)) and calls (``StoredCall``)."""
    n_search = abstained = 0
    queries: Counter[str] = Counter()
    for query, did_abstain, _ in searches:
        n_search += 1
        abstained += did_abstain
        if query:
            queries[" ".join(query.split()).lower()] += 1
    ranks: Counter[int] = Counter()
    n_calls = unlisted = linked_ok = 0
    for call in calls:
        n_calls += 1
        if call.rank is None:
            unlisted += 1
            continue
        ranks[call.rank] += 1
        linked_ok += call.success
    linked = sum(ranks.values())
    return {
        "searches": n_search,
        "abstained": abstained,
        "abstain_rate": round(abstained / n_search, 4) if n_search else None,
        "calls": n_calls,
        "calls_after_search": linked,
        "calls_of_unlisted_tools": unlisted,
        "hit_rate": round(ranks[1] / linked, 4) if linked else None,
        "mean_rank": round(sum(r * c for r, c in ranks.items()) / linked, 3) if linked else None,
        "rank_counts": {str(r): ranks[r] for r in sorted(ranks)},
        "success_rate": round(linked_ok / linked, 4) if linked else None,
        "top_queries": [[q, c] for q, c in queries.most_common(top)],
    }


def stats_text(s: dict[str, Any]) -> str:
    """The figures as a few readable lines."""
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    lines = [
        f"searches: {s['searches']}, abstained: {s['abstained']} ({pct(s['abstain_rate'])})",
        f"calls: {s['calls']}, of a tool the session's last search returned: {s['calls_after_search']}, "
        f"of another: {s['calls_of_unlisted_tools']}",
        f"hit rate (the called tool was the first returned): {pct(s['hit_rate'])}; mean rank {s['mean_rank'] or 'n/a'}; "
        f"ranks {', '.join(f'{r}: {c}' for r, c in s['rank_counts'].items()) or 'none'}",
        f"calls that succeeded: {pct(s['success_rate'])}",
    ]
    if s["top_queries"]:
        lines.append("top queries:")
        lines += [f"  {c:5d}  {q}" for q, c in s["top_queries"]]
    elif s["searches"]:
        lines.append("top queries: none kept (the server ran with --no-query-log)")
    return "\n".join(lines)
