"""The operator's page at ``/ui``: plain server-rendered HTML and one small script.

Every figure in the summary is read from the same Prometheus registry ``/metrics`` serves and
carries its metric name (``data-metric``), so the two can be compared. Every text that came from
an upstream or an agent (tool definitions, queries) is HTML-escaped. The accept / reject /
rollback buttons are shown only to the operator (a request that carried the token).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from starlette.responses import HTMLResponse

from votr_mcp.server import status
from votr_mcp.server.dashboard.charts import heatmap, rate_chart

if TYPE_CHECKING:
    from votr_mcp.server.dashboard.actions import HeldTool
    from votr_mcp.server.observer import Observer

__all__ = ["dashboard_page", "login_page"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#111;background:#f7f7f8}
header{background:#111827;color:#fff;padding:10px 20px;display:flex;gap:16px;align-items:baseline}
header h1{font-size:18px;margin:0} header .mode{opacity:.8}
main{padding:12px 20px;display:grid;gap:16px}
section{background:#fff;border:1px solid #e5e7eb;border-radius:6px;padding:10px 14px}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%} th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eee;vertical-align:top}
.figures{display:flex;flex-wrap:wrap;gap:10px}
.figure{border:1px solid #e5e7eb;border-radius:6px;padding:6px 12px;min-width:110px}
.figure b{display:block;font-size:20px}
.up{color:#059669} .down{color:#dc2626} .muted{color:#6b7280} .empty{color:#6b7280;font-style:italic}
pre.diff{background:#f3f4f6;padding:6px;max-height:260px;overflow:auto;font-size:12px;white-space:pre-wrap}
button{margin-right:6px;padding:3px 10px;cursor:pointer}
.heatmap td.cell{width:18px;text-align:center;font-size:11px;border:1px solid #fff}
.heatmap th.hour{font-size:10px;font-weight:normal} #message{min-height:1.2em}
"""

# Auto-refresh, off by default (a reload in the middle of reading a diff is unwelcome); remembered per browser.
_REFRESH = """
const auto = document.getElementById('autorefresh');
auto.checked = localStorage.getItem('votr-autorefresh') === '1';
auto.addEventListener('change', function () { localStorage.setItem('votr-autorefresh', auto.checked ? '1' : '0'); });
setInterval(function () { if (auto.checked) window.location.reload(); }, 15000);
"""

_SCRIPT = """
document.querySelectorAll('button[data-action]').forEach(function (button) {
  button.addEventListener('click', async function () {
    const tool = button.dataset.tool, action = button.dataset.action;
    const body = {};
    if (button.dataset.version) body.version = parseInt(button.dataset.version, 10);
    const message = document.getElementById('message');
    message.textContent = action + ' ' + tool + '…';
    const response = await fetch('/ui/tools/' + encodeURIComponent(tool) + '/' + action,
      {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body), credentials: 'same-origin'});
    const answer = await response.json();
    if (response.ok) { window.location.reload(); }
    else { message.textContent = answer.error || ('failed: ' + response.status); }
  });
});
"""


def dashboard_page(observer: Observer, *, operator: bool, held: Sequence[HeldTool] | None) -> HTMLResponse:
    """The whole page; ``held`` is None when the server has no store (no change control)."""
    hub = observer.hub
    checks = status.readiness(hub)
    mode = "operator: decisions enabled" if operator else "read-only (sign in with the token to accept or reject tools)"
    body = [
        f'<header><h1>votr-mcp</h1><span class="{"up" if all(checks.values()) else "down"}" id="readiness">'
        f'{"ready" if all(checks.values()) else "starting: " + ", ".join(k for k, v in checks.items() if not v)}</span>'
        f'<span class="mode">{escape(mode)}</span>'
        '<label class="mode"><input type="checkbox" id="autorefresh"> refresh every 15 s</label></header><main>',
        _summary(observer),
        _servers(observer),
        _held(held, operator),
        _plots(observer),
        _recent(observer),
        _usage(observer),
        _drift(observer),
        "</main>",
    ]
    script = f"<script>{_REFRESH}{_SCRIPT if operator else ''}</script>"
    return HTMLResponse(_document("votr-mcp dashboard", "".join(body) + script))


def login_page(error: str | None = None) -> HTMLResponse:
    """The 401 answer of ``/ui`` without the token: a form that signs the browser in (sets the cookie)."""
    note = f'<p class="down">{escape(error)}</p>' if error else ""
    form = ('<main><section><h2>Sign in</h2><p>This dashboard is behind the server\'s token (VOTR_MCP_TOKEN).</p>'
            f'{note}<form method="post" action="/ui/login"><input type="password" name="token" id="token" '
            'placeholder="token" autocomplete="current-password" required> <button type="submit" id="signin">Sign in</button>'
            "</form></section></main>")
    return HTMLResponse(_document("votr-mcp: sign in", form), status_code=401)


def _document(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{_STYLE}</style></head><body>{body}</body></html>')


def _figure(label: str, value: float, metric: str, fmt: str = "{:.0f}") -> str:
    return f'<div class="figure">{escape(label)}<b data-metric="{metric}">{fmt.format(value)}</b></div>'


def _summary(observer: Observer) -> str:
    m = observer.metrics
    searches = m.total("votr_searches_total")
    abstained = m.value("votr_search_abstentions_total")
    hits = m.value("votr_search_hits_total")
    answered = m.value("votr_searches_total", {"outcome": "answered"})
    figures = [
        _figure("searches", searches, "votr_searches_total"),
        _figure("abstained", abstained, "votr_search_abstentions_total"),
        _figure("hits", hits, "votr_search_hits_total"),
        _figure("calls", m.total("votr_calls_total"), "votr_calls_total"),
        _figure("guard trips", m.value("votr_guard_trips_total"), "votr_guard_trips_total"),
        _figure("indexed tools", m.value("votr_indexed_tools"), "votr_indexed_tools"),
        _figure("withheld tools", m.value("votr_withheld_tools"), "votr_withheld_tools"),
    ]
    if observer.sessions is not None:
        figures.append(_figure("sessions", m.value("votr_sessions"), "votr_sessions"))
    rates = (f'<p class="muted">hit rate {_pct(hits, answered)} of answered searches; abstention {_pct(abstained, searches)} '
             "of searches</p>")
    return f'<section id="summary"><h2>Now</h2><div class="figures">{"".join(figures)}</div>{rates}</section>'


def _servers(observer: Observer) -> str:
    calls: dict[str, dict[str, float]] = {}
    for family in observer.metrics.registry.collect():
        for sample in family.samples:
            if sample.name == "votr_calls_total":
                per = calls.setdefault(sample.labels["server"], {})
                per[sample.labels["outcome"]] = per.get(sample.labels["outcome"], 0.0) + sample.value
    rows = []
    for s in status.servers(observer.hub):
        health = '<span class="up">up</span>' if s.available else f'<span class="down">{escape(s.state)}</span>'
        outcomes = calls.get(s.name, {})
        ok = outcomes.get("ok", 0.0)
        other = ", ".join(f"{n:.0f} {escape(o)}" for o, n in sorted(outcomes.items()) if o != "ok" and n)
        rows.append(f'<tr data-server="{escape(s.name)}"><td>{escape(s.name)}</td><td>{health}</td><td>{s.indexed_tools}</td>'
                    f'<td>{s.withheld_tools}</td><td>{s.restarts}</td><td>{ok:.0f} ok{", " + other if other else ""}</td>'
                    f'<td>{escape(s.reason or "")}</td></tr>')
    table = ("<table><thead><tr><th>server</th><th>health</th><th>indexed tools</th><th>withheld</th><th>restarts</th>"
             f"<th>calls</th><th>why down</th></tr></thead><tbody>{''.join(rows)}</tbody></table>") if rows else \
        '<p class="empty">No servers.</p>'
    return f'<section id="servers"><h2>Servers</h2>{table}</section>'


def _held(held: Sequence[HeldTool] | None, operator: bool) -> str:
    if held is None:
        return ('<section id="withheld"><h2>Withheld tools</h2><p class="empty">No registry store: change control is off '
                "(serve with --config, or --store PATH).</p></section>")
    items = []
    for tool in held:
        why = "; ".join([*tool.reasons, *([f"changed: {', '.join(tool.changed)}"] if tool.changed else [])]) or "held"
        buttons = ""
        if operator:
            name = escape(tool.call_name)
            buttons = (f'<button data-action="accept" data-tool="{name}">Accept v{tool.version}</button>'
                       f'<button data-action="reject" data-tool="{name}">Reject</button>')
            buttons += "".join(f'<button data-action="rollback" data-tool="{name}" data-version="{v}">Roll back to v{v}</button>'
                               for v in tool.versions if v != tool.version)
        words = f'<p>description: <code>{escape(tool.description_change)}</code></p>' if tool.description_change else ""
        last = f'<p class="muted">last decision: {escape(tool.last_decision)}</p>' if tool.last_decision else ""
        items.append(f'<div class="held" data-tool="{escape(tool.call_name)}"><h3>{escape(tool.call_name)} '
                     f'<span class="muted">v{tool.version}, accepted v{tool.accepted_version or "none"}</span></h3>'
                     f"<p>{escape(why)}</p>{words}<pre class=\"diff\">{escape(tool.diff)}</pre>{last}<div>{buttons}</div></div>")
    content = "".join(items) or '<p class="empty">No tool is withheld.</p>'
    return f'<section id="withheld"><h2>Withheld tools ({len(held)})</h2><p id="message"></p>{content}</section>'


def _plots(observer: Observer) -> str:
    minutes = _rates("hit rate and abstention per minute, last hour", observer.timeline(60), 60, "%H:%M")
    hours = _rates("hit rate and abstention per hour, last 24 hours", observer.hourly(24), 3600, "%H:00")
    return (f'<section id="plots"><h2>Hit rate and abstention over time</h2><p class="muted">Hit rate: share of answered '
            "searches after which the agent called a tool they returned. Abstention: share of searches that returned "
            f"no tool.</p>{minutes}{hours}</section>")


def _rates(title: str, rows: Sequence[tuple[int, int, int, int]], seconds: int, fmt: str) -> str:
    labels = [time.strftime(fmt, time.localtime(at * seconds)) for at, *_ in rows]
    answered = [s - a for _, s, a, _ in rows]
    hit = [h / n if n else None for (_, _, _, h), n in zip(rows, answered)]
    abstain = [a / s if s else None for _, s, a, _ in rows]
    return rate_chart(title, labels, [("hit rate", hit), ("abstention", abstain)])


def _recent(observer: Observer, limit: int = 30) -> str:
    rows = []
    for s in list(observer.recent)[-limit:][::-1]:
        returned = ", ".join(f"{escape(n)} ({escape(t or '?')})" for n, t in zip(s.returned, s.tiers)) or "<i>abstained</i>"
        called = ", ".join(f"{escape(c.name)} → {escape(c.outcome)}" + (f" (rank {c.rank})" if c.rank else " (not returned)")
                           for c in s.calls) or '<span class="muted">nothing</span>'
        at = time.strftime("%H:%M:%S", time.localtime(s.at))
        intent = f' <span class="muted">[server: {escape(s.server_intent)}]</span>' if s.server_intent else ""
        rows.append(f'<tr class="search"><td>{at}</td><td>{escape(s.query)}{intent}</td><td>{returned}</td><td>{called}</td>'
                    f"<td>{s.seconds * 1000:.0f} ms</td></tr>")
    table = ("<table><thead><tr><th>time</th><th>query</th><th>returned (tier)</th><th>then called</th><th>latency</th></tr>"
             f"</thead><tbody>{''.join(rows)}</tbody></table>") if rows else '<p class="empty">No searches yet.</p>'
    return f'<section id="recent"><h2>Recent searches</h2>{table}</section>'


def _usage(observer: Observer) -> str:
    hours, rows = observer.usage(24)
    columns = [time.strftime("%H", time.localtime(h * 3600)) for h in hours]
    return f'<section id="usage"><h2>Tool usage (calls per hour, last 24 h)</h2>{heatmap(columns, rows)}</section>'


def _drift(observer: Observer) -> str:
    rows = "".join(f"<tr><td>{escape(name)}</td><td>{before:.0%} of {n0}</td><td>{after:.0%} of {n1}</td></tr>"
                   for name, before, after, n0, n1 in observer.drift())
    table = ("<table><thead><tr><th>tool</th><th>hit rate before</th><th>hit rate recently</th></tr></thead>"
             f"<tbody>{rows}</tbody></table>") if rows else '<p class="empty">No tool\'s hit rate fell (or too few searches yet).</p>'
    return (f'<section id="drift"><h2>Drift</h2><p class="muted">Tools returned at least 5 times in each half of the last '
            f"searches whose share of being called fell by 20 points or more.</p>{table}</section>")


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"
