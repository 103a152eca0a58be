"""Per-tool features read by the head rerank and by the request's outright signals, and a ranked list
with what calibration reads."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Tool
from votr_mcp.index.known_examples import examples_of
from votr_mcp.index.text import parameter_text
from votr_mcp.index.tokenize import words_of
from votr_mcp.retrieval.bulk import NumberPair, pair_bulk, pair_number, plural_first, query_bulk
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.named import NamedServers
from votr_mcp.retrieval.quoted import is_identifier, named_tools
from votr_mcp.retrieval.rerank import ToolView
from votr_mcp.retrieval.speech import speech_first, tool_direction

__all__ = ["ToolFeatures", "ToolViews", "Ranking", "by_request", "replacements"]


class ToolViews(Sequence[ToolView]):
    """Each tool's :class:`ToolView`, made when first read. A search reads the views of its head (20
    tools, and 5 for the evidence), so a catalog need not make all of them to serve: at 100k tools
    making them took 0.5 s of each start from the index snapshot (eval/SCALE.md), and pickling them
    most of a second more. A snapshot keeps the tools only; concurrent first reads of one view make
    it twice, harmlessly."""

    __slots__ = ("_tools", "_made")

    def __init__(self, tools: Sequence[Tool], made: dict[int, ToolView] | None = None) -> None:
        self._tools = tools
        self._made: dict[int, ToolView] = made if made is not None else {}

    def __len__(self) -> int:
        return len(self._tools)

    @overload
    def __getitem__(self, i: int) -> ToolView: ...
    @overload
    def __getitem__(self, i: slice) -> list[ToolView]: ...
    def __getitem__(self, i: int | slice) -> ToolView | list[ToolView]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        view = self._made.get(i)
        if view is None:
            view = self._made[i] = _view(self._tools[i])
        return view

    def __iter__(self) -> Iterator[ToolView]:
        return (self[i] for i in range(len(self)))

    def made(self, rows: Sequence[int | None]) -> dict[int, ToolView]:
        """The views already made, at their new positions when tool ``j`` was at ``rows[j]`` before."""
        return {j: self._made[r] for j, r in enumerate(rows) if r is not None and r in self._made}

    def __getstate__(self) -> tuple[Any, ...]:
        return (self._tools,)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._tools, self._made = state[0], {}


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """Per-tool views the head rerank reads, each tool's place in a singular/bulk pair
    (:func:`pair_bulk`) and in a pair of names saying one noun in both numbers (:func:`pair_number`),
    which way it turns speech (:func:`tool_direction`), the tools by the identifier names a request
    may quote, and the servers by the names a request may call them by."""

    views: Sequence[ToolView]
    bulk: NDArray[np.int8]
    numbers: Sequence[NumberPair | None]
    speech: Sequence[str | None]  # which way each tool turns speech (speech.tool_direction)
    names: dict[str, list[int]]
    servers: NamedServers
    replaced: dict[int, int] = field(default_factory=dict)  # a deprecated tool -> the one its server says to use

    @classmethod
    def of(cls, tools: Sequence[Tool], views: Sequence[ToolView] | None = None) -> ToolFeatures:
        names: dict[str, list[int]] = {}
        for i, t in enumerate(tools):
            if is_identifier(t.name):
                names.setdefault(t.name.lower(), []).append(i)
        named, words = [(t.server, t.name) for t in tools], [words_of(t.name) for t in tools]
        bulk = np.array(pair_bulk(named, words), dtype=np.int8)
        views = views if views is not None else ToolViews(tools)
        speech = [tool_direction(t.name, t.description) for t in tools]
        servers = NamedServers([t.server for t in tools], views)
        return cls(views, bulk, pair_number(named, words), speech, names, servers, replacements(tools))

    def restack(self, tools: Sequence[Tool], rows: Sequence[int | None]) -> ToolFeatures:
        """Features for ``tools``, where ``rows[i]`` is tool i's old position (None: a new tool).
        Views made already are kept; pairs and names are recomputed (a new tool may complete a pair)."""
        made = self.views.made(rows) if isinstance(self.views, ToolViews) else {
            j: self.views[r] for j, r in enumerate(rows) if r is not None}
        return ToolFeatures.of(tools, ToolViews(tools, made))


# "DEPRECATED: Use read_text_file instead." (server-filesystem's read_file)
_REPLACED_BY = re.compile(r"\bdeprecated\b[^.]{0,80}?\buse\s+[`'\"]?([A-Za-z_][\w.-]*[A-Za-z0-9_])", re.IGNORECASE)


def replacements(tools: Sequence[Tool]) -> dict[int, int]:
    """Deprecated tools whose description names the tool of their server to use instead: each one's
    position -> that tool's position. (A substring test first: the pattern alone took 0.25 s at 100k.)"""
    said = {i: found.group(1) for i, t in enumerate(tools) if "eprecat" in t.description or "EPRECAT" in t.description
            for found in [_REPLACED_BY.search(t.description)] if found}
    if not said:
        return {}
    at = {(t.server, t.name): i for i, t in enumerate(tools)}
    return {i: j for i, name in said.items() for j in [at.get((tools[i].server, name))] if j is not None and j != i}


def _view(tool: Tool) -> ToolView:
    return ToolView.of(tool.name, tool.server, tool.description, parameter_text(tool), examples_of(tool))


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # catalog positions, best first
    fused: NDArray[np.float64]  # fused (and reranked) score of each ranked position
    cosines: NDArray[np.float64]  # raw query-tool cosine of each, 0 without dense
    lexical: NDArray[np.float64]  # TF-IDF cosine of each
    evidence: Mapping[str, float] = field(default_factory=dict)  # query-level features abstention reads (evidence.py)


def by_request(text: str, ranked: NDArray[np.intp], features: ToolFeatures, server_of: NDArray[np.intp],
               cfg: RetrievalConfig, allowed: NDArray[np.bool_] | None) -> NDArray[np.intp]:
    """The ranked list reordered by what the request says outright: a tool it names as an identifier
    comes first (``exact_names``); when it asks for many at once (or for one) and a tool of a
    singular/bulk pair leads, its sibling on the same server that matches the count goes before it,
    and a tool saying in the plural what the request says in the plural goes before its singular
    sibling, and a tool turning speech the way the request asks (to text or to speech) leads
    (``intent``, :func:`plural_first`, :func:`speech_first`); a deprecated tool goes after the tool
    its server says to use instead (inserted when not ranked). Moving a tool that does the request's
    leading verb to the top lost top-1 on every dev set (window 3: human-registry .654 -> .636,
    MetaTool .650 -> .607), so that is not done."""
    out = [int(i) for i in ranked]
    named: list[int] = []
    if cfg.exact_names:
        named = [i for i in named_tools(text, features.names) if allowed is None or allowed[i]]
        if named:
            out = named + [i for i in out if i not in named]
    want = query_bulk(text) if cfg.intent else 0
    if want:
        window = out[: cfg.intent_window]
        for a, i in enumerate(window):
            if features.bulk[i] != -want:
                continue
            sibling = next((j for j in window[a + 1:] if features.bulk[j] == want and server_of[j] == server_of[i]), None)
            if sibling is not None:
                out.remove(sibling)
                out.insert(a, sibling)
            break
    if cfg.intent and not named:
        out = plural_first(text, out, features.numbers, cfg.intent_window)
        out = speech_first(text, out, features.speech, cfg.intent_window)
    for i, j in features.replaced.items():  # a deprecated tool goes after the one its server says to use
        if i in out and i not in named and (allowed is None or allowed[j]):
            if j in out:
                out.remove(j)
            out.insert(out.index(i), j)
    return np.array(out[: max(cfg.ranked_size, len(ranked))], dtype=np.intp)
