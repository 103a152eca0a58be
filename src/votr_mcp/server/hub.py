"""The two meta-tools, as plain async methods: search the live index, forward a call.

:class:`Hub` owns no transport. ``app.py`` turns MCP requests into calls on it; tests and
benchmarks can drive it directly. Every failure the agent can act on is raised as
``ToolError`` with a message that says what to do next; only that text reaches the model.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import logging
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver.exceptions import ToolError

from votr_mcp.catalog import Tool
from votr_mcp.catalog.models import ToolKey
from votr_mcp.errors import UpstreamError, UpstreamTimeout, VotrError
from votr_mcp.learning import Learning
from votr_mcp.policy import Governance, Principal
from votr_mcp.retrieval.render import signature
from votr_mcp.retrieval.result import Hit, SearchResult
from votr_mcp.retrieval.searcher import Searcher
from votr_mcp.server.filters import SearchFilter
from votr_mcp.server.hooks import ChangeControl, NoChangeControl, NoSessions, Resolved, SearchedTool, SessionHooks
from votr_mcp.server.live_index import LiveIndex, Snapshot
from votr_mcp.server.render import Found, search_structured, search_text
from votr_mcp.server.status import down_server_message, intent_note
from votr_mcp.server.suggest import Suggester, Suggestion
from votr_mcp.server.validation import ArgumentsChecker

if TYPE_CHECKING:
    from votr_mcp.server.stored_index import StoredIndex

__all__ = ["Hub", "Upstreams", "SearchAnswer", "ToolError"]

log = logging.getLogger(__name__)

MAX_RESULTS_CAP = 20


class Upstreams(Protocol):
    """What the server needs from the upstream connections (:mod:`votr_mcp.upstream`'s pool)."""

    def configured(self, server: str) -> bool:
        """Whether ``server`` is in the upstream config at all."""
        ...

    def unavailable(self, server: str) -> str | None:
        """Why ``server`` cannot take calls now (None when it can)."""
        ...

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Forward a call; the upstream's result unchanged. Raises UpstreamError/UpstreamTimeout."""
        ...


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """A search_tools answer: the text for the model and the same data structured."""

    text: str
    structured: dict[str, Any]
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds per stage, for metrics


@dataclass
class Hub:
    """search_tools and call_tool over a live index and (optionally) upstream servers.

    ``upstreams`` is None when votr-mcp serves a catalog with no servers behind it (the
    embedded registry, or a benchmark catalog): search works, calls explain how to
    configure the server. ``setup_hints`` maps a server name to an ``mcpServers`` entry that
    starts it, for that explanation.
    """

    index: LiveIndex
    upstreams: Upstreams | None = None
    sessions: SessionHooks = field(default_factory=NoSessions)
    change_control: ChangeControl = field(default_factory=NoChangeControl)
    setup_hints: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_max_results: int | None = None
    startup_wait: float = 60.0
    dense_pending: bool = False
    wait_for_dense: bool = False
    dense_done: anyio.Event = field(default_factory=anyio.Event)
    answered: anyio.Event = field(default_factory=anyio.Event)  # set once the first search is answered
    # Set unless a runtime is still starting upstreams (it passes an unset event).
    upstreams_started: anyio.Event = field(default_factory=lambda: _set(anyio.Event()))
    ready: anyio.Event = field(default_factory=anyio.Event)
    learning: Learning | None = None  # records outcomes and ranks by them (votr_mcp.learning)
    governance: Governance | None = None  # who may see and call what (votr_mcp.policy)
    categories: Mapping[str, Sequence[str]] = field(default_factory=dict)  # server -> its categories (config)
    hints: Mapping[ToolKey, str] = field(default_factory=dict)  # a workflow hint per tool (config)
    stored_index: StoredIndex | None = None  # the index snapshot a store-served catalog saves and reloads
    suggester: Suggester | None = None  # known servers not connected, for requests nothing connected serves
    _checker: ArgumentsChecker = field(default_factory=ArgumentsChecker)
    _filter: SearchFilter = field(default_factory=SearchFilter)

    # -- search_tools -------------------------------------------------------------------

    async def search(
        self,
        query: Any,
        *,
        server_intent: Any = None,
        tool_intent: Any = None,
        max_results: Any = None,
        session_id: Any = None,
        transport_key: str | None = None,
        servers: Any = None,
        categories: Any = None,
        bearer: str | None = None,
        over_http: bool = False,
    ) -> SearchAnswer:
        principal = self._principal(bearer, over_http)
        query = _text_argument("query", query, required=True)
        server_intent = _text_argument("server_intent", server_intent)
        tool_intent = _text_argument("tool_intent", tool_intent)
        limit = _limit_argument(max_results, self.default_max_results)
        resolved = self._session(transport_key, session_id)
        session = resolved.id
        await self.wait_ready()
        if self.wait_for_dense and self.dense_pending:
            # Embedding a large catalog the first time takes minutes on a small machine.
            with anyio.move_on_after(max(self.startup_wait, 900.0)):
                await self.dense_done.wait()
        snap = self.index.current
        withheld = self.change_control.withheld()
        exclude = self._exclude(snap, withheld, principal, _servers_argument(servers, "servers"),
                                _servers_argument(categories, "categories"))
        learning = self.learning
        search = functools.partial(
            _learned_search, learning, snap.searcher,
            query,
            server_intent=server_intent,
            tool_intent=tool_intent,
            max_results=limit,
            exclude=exclude,
        )
        # Retrieval is CPU work (a query embedding); keep the event loop free for other requests.
        started = time.perf_counter()
        result = await anyio.to_thread.run_sync(search)
        retrieval = time.perf_counter() - started
        hits = list(result.hits)
        if limit is not None:
            hits = hits[:limit]
        needs = [n.text for n in result.needs]
        found = [self._found(snap, hit, result.tier, needs) for hit in hits]
        if learning is not None:
            learning.searched(session, query, [(f.tool.key, f.call_name, f.score) for f in found],
                              [h.tool.server for h in result.ranked], result.abstained)
        # A request of several steps reads step by step: tools grouped by need, in the needs' order.
        found.sort(key=lambda f: needs.index(f.need) if f.need in needs else len(needs))
        found += self._pinned(snap, found, withheld, principal)
        notes: list[str] = [resolved.note] if resolved.note else []
        session_notes = self.sessions.after_search(session, query, [SearchedTool(f.call_name, f.tool) for f in found])
        if session_notes.bound:
            found = [_replace_bound(f, f.call_name in session_notes.bound) for f in found]
        found = [self._with_hint(snap, f, principal) for f in found]
        if session_notes.note:
            notes.append(session_notes.note)
        down = intent_note(self, server_intent, (f.tool.server for f in found))
        if down:
            notes.append(down)
        if self.upstreams is None and found:
            notes.append("No upstream servers are configured, so these tools cannot be called yet; call_tool says how to add their server.")
        dense = result.dense_used
        if dense is False and self.dense_pending:
            notes.append("Lexical results only: the embedding model is still loading.")
        searched = [f for f in found if f.tier != "pinned"]
        abstained = result.abstained and not searched
        suggestions = await self._suggest(snap, query, searched, abstained, principal)
        notes += [_suggestion_note(s) for s in suggestions]
        reason = (result.reason or None) if not searched else None
        sid = None if isinstance(self.sessions, NoSessions) else session
        text_notes = list(notes)
        if sid is not None and transport_key is None and session_id is None:
            # No connection identity (stateless HTTP): the id must reach models that see only the text.
            text_notes.append(f"session_id: {sid} (pass it to search_tools and call_tool to keep this session)")
        structured = search_structured(found, abstained=abstained, reason=reason, session_id=sid, notes=notes, dense=dense)
        if suggestions:
            structured["suggestions"] = [s.as_dict() for s in suggestions]
        answer = SearchAnswer(
            search_text(found, abstained=abstained, reason=reason, notes=text_notes, mark_unavailable=self.upstreams is not None),
            structured,
            {"retrieval": retrieval},
        )
        self.answered.set()
        return answer

    def _found(self, snap: Snapshot, hit: Hit, result_tier: str | None, needs: Sequence[str] = ()) -> Found:
        tool = hit.tool
        reason = self._unavailable(tool.server)
        need = hit.need
        return Found(
            call_name=snap.names[tool.key],
            tool=tool,
            score=float(hit.score),
            tier=hit.tier or result_tier,
            signature=hit.signature,
            available=reason is None,
            unavailable_reason=reason,
            need=needs[need] if need is not None and 0 <= need < len(needs) else None,
        )

    async def _suggest(self, snap: Snapshot, query: str, searched: Sequence[Found], abstained: bool,
                       principal: Principal | None) -> list[Suggestion]:
        """Known servers not connected that would serve the request, when nothing connected does well
        or the request names such a server (then only the named ones)."""
        if self.suggester is None or self.upstreams is None:
            return []
        upstreams = self.upstreams
        connected = {s for s in self.suggester.entries if upstreams.configured(s)}
        weak = abstained or all(f.tier == "low" for f in searched)
        only = None if weak else self.suggester.named(query, connected, (f.tool for f in searched))
        if only is not None and not only:
            return []
        visible = functools.partial(self._visible, principal)
        try:
            return await anyio.to_thread.run_sync(
                lambda: self.suggester.suggest(query, snap.searcher, connected, visible, only=only) if self.suggester else [])
        except VotrError as exc:
            log.warning("no server suggestions: %s", exc)
            return []

    def _with_hint(self, snap: Snapshot, found: Found, principal: Principal | None) -> Found:
        """``found`` with its workflow hint: the operator's, else the tool usually called next (when
        the caller may see it)."""
        hint = self.hints.get(found.tool.key)
        if hint is None and self.learning is not None:
            following = self.learning.usually_next(found.tool.key)
            name = snap.names.get(following) if following is not None else None
            if name is not None and self._visible(principal, snap.by_name[name]):
                hint = f"usually called next: {name}"
        return dataclasses.replace(found, hint=hint) if hint else found

    def _pinned(self, snap: Snapshot, found: Sequence[Found], withheld: Collection[ToolKey], principal: Principal | None = None) -> list[Found]:
        """The pinned tools the answer does not list yet (withheld and hidden ones excepted), tier "pinned"."""
        listed = {f.call_name for f in found}
        out: list[Found] = []
        for name in self.sessions.pinned():
            tool = snap.by_name.get(name)
            if tool is None or name in listed or tool.key in withheld or not self._visible(principal, tool):
                continue
            reason = self._unavailable(tool.server)
            out.append(Found(name, tool, 0.0, "pinned", signature(tool), reason is None, reason))
        return out

    def _unavailable(self, server: str) -> str | None:
        if self.upstreams is None or not self.upstreams.configured(server):
            return f"server '{server}' is not configured"
        return self.upstreams.unavailable(server)

    # -- call_tool ----------------------------------------------------------------------

    async def call(self, name: Any, arguments: Any, *, session_id: Any = None, transport_key: str | None = None,
                   bearer: str | None = None, over_http: bool = False) -> types.CallToolResult:
        principal = self._principal(bearer, over_http)
        if not isinstance(name, str) or not name.strip():
            raise ToolError("call_tool needs 'name': the call name of a tool, as search_tools returned it (e.g. 'github__list_issues').")
        arguments = _arguments(arguments)
        resolved = self._session(transport_key, session_id)
        if resolved.note is None:
            return await self._call(name, arguments, resolved.id, principal)
        try:
            return _with_note(await self._call(name, arguments, resolved.id, principal), resolved.note)
        except ToolError as exc:
            raise ToolError(f"{exc}\n\n{resolved.note}") from exc

    async def _call(self, name: str, arguments: dict[str, Any], session: str, principal: Principal | None = None) -> types.CallToolResult:
        await self.wait_ready()
        if not self.upstreams_started.is_set():
            # Searches may be served from the store while upstreams start; a call needs the
            # upstream, and its change-control verdict needs the fresh harvest.
            with anyio.move_on_after(self.startup_wait):
                await self.upstreams_started.wait()
        snap = self.index.current
        tool = snap.by_name.get(name.strip())
        if tool is None:
            raise ToolError(down_server_message(self, name.strip()) or self._unknown_message(snap, name.strip(), principal))
        call_name = snap.names[tool.key]
        if self.governance is not None and principal is not None:
            refusal = self.governance.refusal(principal, tool, call_name)
            if refusal:
                raise ToolError(refusal)
        refusal = self.change_control.refusal(tool.key)
        if refusal:
            raise ToolError(refusal)
        try:
            self.sessions.before_call(session, call_name, tool)
        except VotrError as exc:
            raise ToolError(str(exc)) from exc
        try:
            problem = await self._checker.check(tool, arguments)
        except ToolError as exc:  # the check ran out of time
            note = self.sessions.after_call(session, call_name, tool, arguments, True)
            raise ToolError(f"{exc}\n\n{note}" if note else str(exc)) from exc
        if problem is not None:
            # Failed calls count for the loop guard too: retrying one bad call is the commonest loop.
            note = self.sessions.after_call(session, call_name, tool, arguments, True)
            return _with_note(types.CallToolResult(content=[types.TextContent(type="text", text=problem)], is_error=True), note)
        try:
            result = await self._forward(tool, call_name, arguments)
        except _NotSent:
            raise  # nothing ran: retrying as told ("try again shortly") is not a loop
        except ToolError as exc:
            if self.learning is not None:  # a timeout or a server failure: the tool never answered the request
                self.learning.called(session, tool.key, call_name, False, answered=False)
            note = self.sessions.after_call(session, call_name, tool, arguments, True)
            raise ToolError(f"{exc}\n\n{note}" if note else str(exc)) from exc
        if self.learning is not None:
            self.learning.called(session, tool.key, call_name, not result.is_error)
            await anyio.to_thread.run_sync(self.learning.refresh, self.index.current.searcher)
        note = self.sessions.after_call(session, call_name, tool, arguments, bool(result.is_error))
        return _with_note(result, note)

    async def _forward(self, tool: Tool, call_name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if self.upstreams is None or not self.upstreams.configured(tool.server):
            raise _NotSent(self._not_configured_message(tool, call_name))
        reason = self.upstreams.unavailable(tool.server)
        if reason is not None:
            raise _NotSent(f"'{call_name}' cannot run now: {reason}. votr-mcp keeps retrying the server; try again shortly, or search_tools for another tool.")
        try:
            return await self.upstreams.call(tool.server, tool.name, arguments)
        except UpstreamTimeout as exc:
            raise ToolError(f"'{call_name}' timed out: {exc}. The request was cancelled upstream; retry, or use another tool.") from exc
        except UpstreamError as exc:
            raise ToolError(f"'{call_name}' failed in its server '{tool.server}': {exc}") from exc

    def _unknown_message(self, snap: Snapshot, name: str, principal: Principal | None = None) -> str:
        visible = {n: t for n, t in snap.by_name.items() if self._visible(principal, t)}
        names = list(visible)
        bare = name.split("__")[-1].lower()
        same_tool = [n for n, t in visible.items() if t.name.lower() == bare]
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
        # Nothing alike: the agent likely guessed a tool of the right server, so name that server's tools.
        prefix = name.split("__")[0] + "__" if "__" in name else None
        same_server = sorted(n for n in names if prefix and n.startswith(prefix)) if not (same_tool or close) else []
        suggestions = list(dict.fromkeys([*same_tool, *close, *same_server]))[:5]
        hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        return f"Unknown tool '{name}'.{hint} Call search_tools to find the right tool and use the call name it returns."

    def _not_configured_message(self, tool: Tool, call_name: str) -> str:
        entry = self.setup_hints.get(tool.server) or {"command": "<command that starts the server>", "args": ["<its arguments>"]}
        snippet = json.dumps({"mcpServers": {tool.server: entry}}, indent=2)
        return (
            f"'{call_name}' belongs to the MCP server '{tool.server}', which votr-mcp is not connected to. "
            f"Add it to the upstream config file passed to `votr-mcp serve --config FILE`, e.g.:\n{snippet}\n"
            "then restart votr-mcp."
        )

    # -- governance and filters ---------------------------------------------------------

    def _principal(self, bearer: str | None, over_http: bool) -> Principal | None:
        if self.governance is None:
            return None
        try:
            return self.governance.principal(bearer, over_http)
        except VotrError as exc:
            raise ToolError(str(exc)) from exc

    def _visible(self, principal: Principal | None, tool: Tool) -> bool:
        return self.governance is None or principal is None or self.governance.visible(principal, tool)

    def _exclude(self, snap: Snapshot, withheld: Collection[ToolKey], principal: Principal | None,
                 servers: Sequence[str] | None, categories: Sequence[str] | None = None) -> Any:
        """What a search must not score: withheld tools, tools the principal may not see, tools of
        servers outside ``servers`` or ``categories`` (:mod:`votr_mcp.server.filters`)."""
        hidden = self.governance.hidden(principal, snap.catalog) if self.governance is not None and principal is not None else None
        return self._filter.exclude(snap.catalog, withheld, hidden, servers, categories, self.categories)

    # -- shared -------------------------------------------------------------------------

    def _session(self, transport_key: str | None, session_id: Any) -> Resolved:
        if session_id is not None and not isinstance(session_id, str):
            raise ToolError("'session_id' must be a string returned by search_tools; leave it out to use this connection's session.")
        try:
            return self.sessions.resolve(transport_key, session_id)
        except VotrError as exc:
            raise ToolError(str(exc)) from exc

    async def wait_ready(self) -> None:
        """Wait (bounded) until the first index is built; the first harvest may still run
        when the first request arrives."""
        if not self.ready.is_set():
            with anyio.move_on_after(self.startup_wait):
                await self.ready.wait()


def _suggestion_note(s: Suggestion) -> str:
    entry = json.dumps({"mcpServers": {s.server: dict(s.entry)}})
    return (f"Not connected: the MCP server '{s.server}' (tool {s.tool}) would serve this. "
            f"To use it, add to the upstream config: {entry}")


def _learned_search(learning: Learning | None, searcher: Searcher, query: str, **options: Any) -> SearchResult:
    """A search by the live retriever, with what was learned applied (in the worker thread: a
    changed set of learned requests is embedded here)."""
    return searcher.search(query, **options) if learning is None else learning.search(searcher, query, **options)


class _NotSent(ToolError):
    """A call refused before it reached any upstream (its server is not configured or not up)."""


def _with_note(result: types.CallToolResult, note: str | None) -> types.CallToolResult:
    if not note:
        return result
    return result.model_copy(update={"content": [*result.content, types.TextContent(type="text", text=note)]})


def _set(event: anyio.Event) -> anyio.Event:
    event.set()
    return event


def _replace_bound(found: Found, bound: bool) -> Found:
    return dataclasses.replace(found, bound=bound)  # keeps the need and hint it serves


def _text_argument(name: str, value: Any, *, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolError(f"search_tools needs '{name}': a short description of what you want to do, e.g. 'list open pull requests'.")
        return None
    if not isinstance(value, str):
        raise ToolError(f"'{name}' must be a string, got {type(value).__name__}.")
    return value.strip()


def _servers_argument(value: Any, name: str) -> list[str] | None:
    if value is None or value == []:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        example = '["github", "git*"]' if name == "servers" else '["code"]'
        raise ToolError(f"'{name}' must be a list of names (e.g. {example}), got {value!r}.")
    return [v.strip() for v in value]


def _limit_argument(value: Any, default: int | None) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RESULTS_CAP:
        raise ToolError(f"'max_results' must be a whole number from 1 to {MAX_RESULTS_CAP}, got {value!r}; leave it out to let votr-mcp choose.")
    return value


def _arguments(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        # Models often send the arguments object as a JSON string; accept it when it is one.
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise ToolError("'arguments' must be a JSON object of the tool's parameters, e.g. {\"path\": \"/tmp\"}; got a string that is not JSON.") from None
    if not isinstance(value, dict):
        raise ToolError(f"'arguments' must be a JSON object of the tool's parameters, got {type(value).__name__}.")
    return value
