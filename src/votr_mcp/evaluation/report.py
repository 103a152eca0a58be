"""Markdown tables from metric summaries. Every figure printed here comes from a summary dict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["COLUMNS", "ABLATION_COLUMNS", "fmt", "metrics_table", "ablation_table", "group_sort_key", "render_report", "ablation_note"]

# (summary key, column heading); latency is split into two columns.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "rows"), ("searches", "searches"), ("top1", "top-1"), ("top3", "top-3"), ("top5", "top-5"),
    ("mrr10", "MRR@10"), ("handoff", "hand-off"), ("mean_k", "mean k"), ("coverage", "coverage"),
    ("abstain_no_tool", "abstain (no-tool)"), ("false_abstain", "false abstain"),
    ("task_recall5", "task R@5"), ("task_recall10", "task R@10"), ("chain_success", "chain success"),
    ("latency_ms.p50", "p50 ms"), ("latency_ms.p95", "p95 ms"), ("latency_ms.no_embed_p50", "search-only p50 ms"),
    ("tokens_per_search", "tokens/search"),
)

ABLATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("top1", "top-1"), ("top5", "top-5"), ("mrr10", "MRR@10"), ("handoff", "hand-off"), ("mean_k", "mean k"),
    ("task_recall10", "task R@10"), ("abstain_no_tool", "abstain (no-tool)"), ("false_abstain", "false abstain"),
)

_COUNTS = {"n", "searches"}
_ONE_DECIMAL = {"latency_ms.p50", "latency_ms.p95", "latency_ms.no_embed_p50", "latency_ms.no_embed_p95",
                "tokens_per_search"}
_TWO_DECIMALS = {"mean_k"}


def _get(summary: Mapping[str, Any], key: str) -> Any:
    value: Any = summary
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def fmt(key: str, value: Any) -> str:
    """A figure as printed: rates to three decimals, counts whole, '–' where not applicable."""
    if value is None:
        return "–"
    if key in _COUNTS:
        return str(int(value))
    if key in _ONE_DECIMAL:
        return f"{value:.1f}"
    if key in _TWO_DECIMALS:
        return f"{value:.2f}"
    return f"{value:.3f}"


def group_sort_key(label: str) -> tuple[int, str]:
    """Kinds first, then levels, then style fields; alphabetical within each."""
    order = {"kind": 0, "task": 1, "level": 2, "flavor": 3, "group": 4, "style": 5}
    return (order.get(label.split(":", 1)[0], 9), label)


def _row(name: str, summary: Mapping[str, Any], columns: Sequence[tuple[str, str]]) -> str:
    return "| " + " | ".join([name] + [fmt(key, _get(summary, key)) for key, _ in columns]) + " |"


def _header(first: str, columns: Sequence[tuple[str, str]]) -> list[str]:
    return [
        "| " + " | ".join([first] + [head for _, head in columns]) + " |",
        "|" + "---|" + "".join("---:|" for _ in columns),
    ]


def _informative(columns: Sequence[tuple[str, str]], summaries: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Columns with at least one figure (a set without no-tool rows gets no abstention column)."""
    return [c for c in columns if any(_get(s, c[0]) is not None for s in summaries)]


def metrics_table(overall: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]], *, drop_empty: bool = True) -> str:
    """One row for all searches, then one per group."""
    labels = sorted(groups, key=group_sort_key)
    columns = list(COLUMNS)
    if drop_empty:
        columns = _informative(columns, [overall, *groups.values()])
    lines = _header("slice", columns)
    lines.append(_row("**all**", overall, columns))
    lines += [_row(label, groups[label], columns) for label in labels]
    return "\n".join(lines)


def ablation_table(variants: Mapping[str, Mapping[str, Any]], *, baseline: str = "full") -> str:
    """One row per pipeline variant, with the change against ``baseline`` in brackets.

    A variant that scores higher than the full pipeline shows a positive change: that stage did
    not earn its place on these rows.
    """
    summaries = list(variants.values())
    columns = _informative(ABLATION_COLUMNS, summaries)
    base = variants.get(baseline, {})
    lines = _header("variant", columns)
    for name, summary in variants.items():
        cells = [name]
        for key, _ in columns:
            value, ref = _get(summary, key), _get(base, key)
            cell = fmt(key, value)
            if name != baseline and value is not None and ref is not None:
                cell += f" ({value - ref:+.3f})"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _load_note(report: Mapping[str, Any]) -> str:
    load = report.get("load_average") or {}
    if load.get("before_timing") is None:
        return ""
    return (f" Load average while timing: {load['before_timing']:.1f} before, {load['after_timing']:.1f} after "
            "(the machine is shared; latency grows with load).")


def ablation_note(report: Mapping[str, Any]) -> str:
    """Which rows the ablation ran on, and which stages were left out and why."""
    counts = report.get("ablation_counts") or report.get("counts") or {}
    cap = report.get("ablation_limit_per_kind")
    note = f"{counts.get('searches', 0)} searches" + (
        f" (at most {cap} tasks per kind, chosen by SHA-256 of the task id)." if cap else " (every selected row).")
    skipped = report.get("not_ablated") or {}
    if skipped:
        note += " Not ablated, since they cannot act here: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()) + "."
    return note


def render_report(report: Mapping[str, Any], *, level: int = 3) -> str:
    """One evaluation (as returned by ``suite.evaluate``) as markdown: counts, metrics, ablation."""
    counts = report.get("counts", {})
    cap = report.get("limit_per_kind")
    head = "#" * level
    lines = [
        f"{head} {report['set']}, {report['split']} split",
        "",
        f"{counts.get('rows', 0)} query rows as {counts.get('searches', 0)} searches "
        f"({counts.get('whole_task_queries', 0)} whole-task queries, {counts.get('no_tool', 0)} no-tool rows)"
        + (f"; at most {cap} tasks per kind, chosen by SHA-256 of the task id" if cap else "")
        + f"; queries from `{report['queries']}`."
        + _load_note(report),
        "",
        metrics_table(report["overall"], report.get("groups", {})),
    ]
    if report.get("ablation"):
        lines += ["", f"Ablation on the {report['split']} split (change against the full pipeline in brackets). "
                  + ablation_note(report), "", ablation_table(report["ablation"])]
    return "\n".join(lines) + "\n"
