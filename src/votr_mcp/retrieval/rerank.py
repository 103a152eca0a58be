"""The learned head rerank: a linear model over a few readable features of each head candidate.

Fusion ranks by how strongly the lists agree; it cannot see what a person reads first when two
tools of one server look alike: whether the query *names* the tool or its server, whether the
action matches (``create_event`` versus ``update_event`` for "create a new event"), and whether
it asks for one thing or many (``read_xmind`` versus ``read_multiple_xmind_files`` for "three
XMind files"). Each head candidate gets a feature row; the score is ``((x − mean) / scale) · w``.

The weights are fit on dev rows only (``votr-mcp fit-rerank``) by a listwise softmax loss: for
each query, minus the log of the probability mass the model puts on its gold tools among the
head, with an L2 penalty. Each set's share of the loss grows with the square root of its size:
equal shares gave ToolBench's 15 single queries the say of MetaTool's 600, and shares by query
count let the biggest set decide alone. Every weight has the sign its feature's meaning gives it
(:data:`SIGNS`: agreement counts for a tool, conflict against it): unconstrained, the fit bought
noise with implausible signs (bulk_conflict +0.34, name_cover −0.15) that, for example, ranked
``summarize_multiple_urls`` above ``summarize_url`` for one URL. Since 2026-11-25 the fit also reads
our human-style dev rows (eval/queries/human-*). Held-out top-1 on halves of the dev rows
(``votr-mcp fit-rerank ... --cv 3``, the shipped recipe), rerank against the fusion alone, on
2026-11-26: human-registry .762 / .733, human-mcpzero .543 / .413, human-mscbench .505 / .405,
MetaTool .638 / .615, ToolBench .889 / .867, MSC-Bench .926 / .931, MCP-Zero .822 / .814: one linear
model cannot serve benchmark phrasing and human phrasing alike, and it is kept for the human rows.
The last two features earned their place in that check. ``value_agree`` (the request gives a URL, a
path, an address or a clock time, and the tool has a parameter for it): without it .749, .522, .495,
.636, .889, .928, .816 in the same order. ``does_agree`` (the request's leading verb is an action
the tool's description states, where ``action_agree`` reads only its name): without it .751, .543,
.505, .637, .889, .926, .817. And a question asks to be told: a request that asks one (who, what,
is there..., or a closing question mark) and leads with no verb of its own reads as "read"
whatever verb it uses ("who changed the payment module?"); before that: .762, .543, .505, .638,
.889, .926, .822; with it .789, .551, .577, .636, .889, .926, .823 ("everyone" as a bulk cue then
took human-mcpzero to .558). Requests in other languages read their verb from a table
(foreign_verbs.py), "summarize <a URL>" reads the page, "open a ticket" creates, and the object check
reads names and files as people write them: .802, .558, .577, .636, .889, .925, .828; word matching
that skips what a request quotes, "it" named from the step before and a service named first with a
colon: .807, .558, .577, .637, .911, .934, .843. The fit is shipped
as ``rerank.json`` next to ``calibration.json``. Feature groups double as the pipeline's ``dice``
(name and server mentions) and ``intent`` (action, singular/bulk and value agreement) stages: switching
one off sets its columns to their training mean, i.e. zero contribution, without refitting.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from votr_mcp.errors import RetrievalError
from votr_mcp.index.tokenize import content_tokens, stem, words_of
from votr_mcp.retrieval.bulk import query_bulk
from votr_mcp.retrieval.foreign_verbs import foreign_verb
from votr_mcp.retrieval.intent import (
    action_at,
    class_at,
    clause_verb_words,
    is_question,
    lead_at,
    reads_first,
    request_action,
    text_actions,
)
from votr_mcp.retrieval.language import is_english
from votr_mcp.retrieval.quoted import without_quotes
from votr_mcp.retrieval.request_object import request_object
from votr_mcp.retrieval.request_words import request_words, written_whole
from votr_mcp.retrieval.values import taken_values, values_taken
from votr_mcp.retrieval.verbs import ACTIONS, action_word, specific_operations
from votr_mcp.settings import describe

Finite = Annotated[float, Field(allow_inf_nan=False)]

__all__ = [
    "FEATURES",
    "GROUPS",
    "QueryView",
    "RerankModel",
    "SHIPPED_RERANK",
    "SIGNS",
    "action_of",
    "fit_rerank",
    "head_features",
    "shipped_rerank",
]

log = logging.getLogger(__name__)

SHIPPED_RERANK = Path(__file__).with_name("rerank.json")

FEATURES = (
    "fused",            # the fusion score (sum of rescaled list scores)
    "cosine",           # query-tool dense cosine
    "cosine_gap",       # cosine minus the best cosine in the head
    "server_cosine_gap",  # best server-text cosine of the tool's server minus the head's best
    "bm25",             # BM25 over the catalog's best BM25 for this query
    "tfidf",            # TF-IDF cosine
    "use_cosine",       # the multilingual model's own cosine (0 when the vectors are one model's)
    "splade",           # learned sparse score over the catalog's best for this query
    "name_cover",       # share of the tool name's words that occur in the query
    "name_mention",     # the tool's name occurs in the query as a phrase ("use get_submission")
    "server_mention",   # share of the server name's distinctive words that occur in the query
    "action_agree",     # the tool name's action (create/read/update/...) is the query's first action
    "action_conflict",  # the query states actions and the tool's is none of them
    "bulk_agree",       # the query asks for many and the tool acts on many, or one and one
    "bulk_conflict",    # the opposite
    "value_agree",      # share of the kinds of value the query gives (URL, path, email, time, IP, ...) the tool takes
    "does_agree",       # the query's leading verb is an action the tool's name or first sentence states
)
SIGNS: Mapping[str, int] = {name: -1 if name.endswith("_conflict") else 1 for name in FEATURES}
"""The sign each feature's weight must have: +1 evidence for the tool, −1 evidence against it."""
GROUPS: Mapping[str, tuple[str, ...]] = {
    "dice": ("name_cover", "name_mention", "server_mention"),
    "intent": ("action_agree", "action_conflict", "bulk_agree", "bulk_conflict", "value_agree", "does_agree"),
}
"""Feature groups that a pipeline stage switches (see RetrievalConfig.dice / .intent)."""

_GENERIC_SERVER_WORDS = frozenset({"mcp", "server", "servers", "api", "tool", "tools", "model", "context", "protocol",
                                   "integration", "client", "service", "official", "advanced", "enhanced", "extended",
                                   "simple", "basic", "lite", "pro", "unofficial", "community", "plugin"})


def server_name_words(server: str) -> frozenset[str]:
    """The words of a server's name that tell it apart ("Heroku", "GitHub"; not "mcp", "server", "api")."""
    return frozenset(t for t in content_tokens(server) if t not in _GENERIC_SERVER_WORDS and len(t) > 2)


def action_of(words: Sequence[str]) -> str | None:
    """The action of the first word that names one (``todoist_create_task`` -> "create",
    ``git_commit`` -> "commit": a specific verb is its own action, see verbs.action_word).
    "log" names none: in a name it is the thing read (``git_log``, ``get_log``), and read as the
    verb it set ``git_log`` against "show the last 3 commits"."""
    for i, word in enumerate(words):
        action = action_at(words, i) if word not in _NOUN_FIRST else None  # "open a ticket", ``open_issue``
        if action is not None:
            return action
    return None


_NOUN_FIRST = frozenset({"log"})
_CELLS = frozenset(stem(w) for w in ("cell", "range"))  # what a spreadsheet range given as a value is


@dataclass(frozen=True, slots=True)
class QueryView:
    """What the rerank reads of one query text, computed once per search."""

    tokens: frozenset[str]
    phrase: str  # lower-cased words joined by single spaces, padded with spaces
    first_action: str | None
    actions: frozenset[str]
    bulk: int
    verb: str | None = None  # the action of the request's leading verb (intent.request_action)
    objects: frozenset[str] = frozenset()  # the stemmed words of what that verb acts on (request_object.request_object)
    values: frozenset[str] = frozenset()  # the kinds of value it gives (values.request_values)
    digest: str = ""  # the verb read as "read" first ("summarize" in "summarize https://…"), else ""
    begun: bool = False  # it leads with "start" and something to run: a tool that creates it starts it too
    english: bool = True  # language.is_english: what it acts on is read from its words only in English

    @classmethod
    def of(cls, text: str, tokens: Sequence[str] | None = None) -> QueryView:
        """``tokens``: the text's :func:`tokenize` tokens when the caller has them already."""
        words = request_words(text)
        lead = lead_at(words)
        verb = request_action(text, words)
        # "create tasks 'review spec' and 'ship it' in the Launch list" reviews, ships, launches and lists
        # nothing, and "delete /tmp/build_cache" builds nothing: quotes and values are no verbs
        values, without_values = values_taken(text)
        asked = clause_verb_words(without_quotes(without_values))
        first = action_of(asked)
        # "lösche die Datei", "crea una carpeta", "report 폴더에 있는 pdf 파일 전부 찾아줘" (a folder, then find)
        english = is_english(text)
        said = foreign_verb(text) if verb is None or not english else None
        if said is not None:
            verb = first = action_word(said)
        elif verb is not None and lead is not None and not english and not written_whole(text, words[lead]):
            verb = None  # "SwitchBotの湿度は？": the English word a name is built on is no verb (written_whole)
        classes = (class_at(asked, i) for i in range(len(asked)))
        actions = frozenset(a for a in classes if a is not None) | ({verb} if verb else set())
        if actions:  # and a tool named by a specific operation the request says anywhere does one of them
            actions |= specific_operations(words)
        if verb is None and is_question(text, words):
            first, actions = "read", frozenset({"read"})  # a question asks to be told (intent.is_question)
        said_first = words[lead] if lead is not None else ""  # the leading word as said
        begun = verb == "run" and said_first == "start"  # "start a scan", "start a conversation"
        digest = ""
        if verb is not None and reads_first(words, values):
            verb, actions = "read", actions | {"read"}  # "summarize https://…" needs the page read (intent.reads_first)
            digest = said_first
        objects = request_object(text, without_values)
        if verb is not None and "path" in values:
            objects |= {"file", "path"}  # "stage a.py": the file names are taken out of the object, a file is it
        if verb is not None and "cells" in values:
            objects |= _CELLS  # "merge A1:D1": the range is taken out of the object, cells are it
        return cls(frozenset(tokens if tokens is not None else content_tokens(text)), f" {' '.join(words)} ",
                   first, actions, query_bulk(text), verb, objects, values, digest, begun, english)

    def done_by(self, tool: ToolView) -> bool:
        """Whether ``tool`` says it does what the request's leading verb asks: that action (to start
        a thing, running or creating it: start_scan, create_thread), or, for a request to read,
        extracting (what "pull the prices from these pages" reads is extracted) or the verb the
        request was read from ("summarize these articles: https://…" reads them, and a tool that
        summarizes pages reads them too; its word in any form: summary, summarise)."""
        if self.verb is None:
            return False
        if self.verb in tool.does:
            return True
        if (self.verb == "read" and "extract" in tool.does) or (self.begun and "create" in tool.does):
            return True
        root = self.digest[:6]
        return len(root) == 6 and any(word.startswith(root) for word in tool.words)


@dataclass(frozen=True, slots=True)
class ToolView:
    """What the rerank reads of one tool, computed once per catalog and kept across swaps."""

    name_tokens: frozenset[str]
    name_phrase: str
    server_tokens: frozenset[str]
    action: str | None
    does: frozenset[str] = frozenset()  # actions its name and description's first sentence state
    words: frozenset[str] = frozenset()  # stemmed words of its name and description (what it acts on)
    takes: frozenset[str] = frozenset()  # the kinds of value its parameters take (values.taken_values)

    @classmethod
    def of(cls, name: str, server: str, description: str = "", parameters: str = "",
           examples: Sequence[str] = ()) -> ToolView:
        """``parameters``: the tool's parameter names and descriptions in words (index.text.parameter_text);
        ``examples``: requests people make of it (index.known_examples), whose leading verbs it does too."""
        words = words_of(name)
        distinct = server_name_words(server)
        phrase = " ".join(words)
        said = frozenset(stem(w) for w in words_of(f"{name} {description}"))
        does = text_actions(name, description) | example_actions(examples)
        return cls(frozenset(content_tokens(name)), f" {phrase} " if len(phrase) >= 6 else "", distinct, action_of(words),
                   does, said, taken_values(parameters))


def example_actions(examples: Sequence[str]) -> frozenset[str]:
    """The specific operations (verbs.action_word: undo, stage, switch, …, not a class such as
    create or delete) that an English example request leads with: what people ask the tool to do in
    their own words, which its terse description may not say (``git_reset``, "Unstages all staged
    changes", is asked to "undo git add"). A class is read from the tool's own texts only: an
    example's loose verb ("clear out everything I've staged") would make the tool one that deletes,
    and a near-miss ("delete the branch") look served."""
    return frozenset(a for e in examples if is_english(e) for a in [request_action(e)] if a is not None and a not in ACTIONS)


def head_features(query: QueryView, tools: Sequence[ToolView], bulk: NDArray[np.int8], *, fused: NDArray[np.float64],
                  cosine: NDArray[np.float64], server_cosine: NDArray[np.float64], bm25: NDArray[np.float64],
                  tfidf: NDArray[np.float64], use_cosine: NDArray[np.floating] | None = None,
                  splade: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The (head size × len(FEATURES)) feature matrix; every array argument is aligned with ``tools``."""
    h = len(tools)
    x = np.zeros((h, len(FEATURES)), dtype=np.float64)
    if h == 0:
        return x
    x[:, 0] = fused
    x[:, 1] = cosine
    x[:, 2] = cosine - cosine.max()
    x[:, 3] = server_cosine - server_cosine.max()
    best_bm25 = float(bm25.max())
    x[:, 4] = bm25 / best_bm25 if best_bm25 > 0 else 0.0
    x[:, 5] = tfidf
    if use_cosine is not None:
        x[:, 6] = use_cosine
    if splade is not None:
        x[:, 7] = splade
    q = query.tokens
    for j, tool in enumerate(tools):
        if tool.name_tokens:
            x[j, 8] = len(tool.name_tokens & q) / len(tool.name_tokens)
        x[j, 9] = 1.0 if tool.name_phrase and tool.name_phrase in query.phrase else 0.0
        if tool.server_tokens:
            x[j, 10] = len(tool.server_tokens & q) / len(tool.server_tokens)
        if tool.action is not None and query.actions:
            x[j, 11] = 1.0 if tool.action == query.first_action else 0.0
            x[j, 12] = 0.0 if tool.action in query.actions else 1.0
    if query.bulk:
        x[:, 13] = (bulk == query.bulk).astype(np.float64)
        x[:, 14] = (bulk == -query.bulk).astype(np.float64)
    if query.values:
        x[:, 15] = [len(query.values & tool.takes) / len(query.values) for tool in tools]
    if query.verb is not None:
        x[:, 16] = [1.0 if query.done_by(tool) else 0.0 for tool in tools]
    return x


@pydantic_dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class RerankModel:
    """Standardisation and weights of the linear rerank, with where they came from. A pydantic
    dataclass: a file with unknown fields, non-finite numbers or a zero scale is refused."""

    weights: tuple[Finite, ...]
    mean: tuple[Finite, ...]
    scale: tuple[Annotated[float, Field(gt=0.0, allow_inf_nan=False)], ...]
    features: tuple[str, ...] = FEATURES
    head: Annotated[int, Field(ge=1)] = 20
    l2: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.0
    source: str = ""
    dev_loss: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.features != FEATURES:
            raise RetrievalError(f"rerank model features {list(self.features)} differ from this version's {list(FEATURES)}; "
                                 "refit it with votr-mcp fit-rerank")
        if not len(self.weights) == len(self.mean) == len(self.scale) == len(FEATURES):
            raise RetrievalError(f"rerank model needs {len(FEATURES)} weights, means and scales")

    def score(self, x: NDArray[np.float64], off: Collection[str] = ()) -> NDArray[np.float64]:
        """Linear score per row; features of the groups in ``off`` contribute nothing."""
        w = np.array(self.weights)
        for group in off:
            for name in GROUPS.get(group, ()):
                w[FEATURES.index(name)] = 0.0
        return ((x - np.array(self.mean)) / np.array(self.scale)) @ w

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": list(self.weights), "mean": list(self.mean),
                "scale": list(self.scale), "head": self.head, "l2": self.l2, "source": self.source,
                "dev_loss": dict(self.dev_loss)}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> RerankModel:
        if not isinstance(data, Mapping):
            raise RetrievalError(f"a rerank model is a JSON object, got {type(data).__name__}; refit it with votr-mcp fit-rerank")
        try:
            return cls(**data)
        except ValidationError as exc:
            raise RetrievalError(f"bad rerank model: {describe(exc)}; it needs features, weights, mean and scale lists "
                                 "(votr-mcp fit-rerank writes one)") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> RerankModel:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RetrievalError(f"cannot read rerank model '{path}': {exc}") from exc
        return cls.from_mapping(data)


def shipped_rerank() -> RerankModel | None:
    """The rerank model shipped with the package, or None when absent or fit for other features
    (a version whose features changed, before ``votr-mcp fit-rerank`` refits it): search then
    ranks by the fusion alone, and says so on stderr."""
    if not SHIPPED_RERANK.is_file():
        return None
    try:
        return RerankModel.load(SHIPPED_RERANK)
    except RetrievalError as exc:
        if str(exc) not in _WARNED:
            _WARNED.add(str(exc))
            log.warning("the shipped rerank is not used: %s", exc)
        return None


_WARNED: set[str] = set()


def fit_rerank(groups: Sequence[tuple[NDArray[np.float64], NDArray[np.bool_], str]], *, l2: float = 1e-2,
               head: int = 20, source: str = "") -> RerankModel:
    """Fit weights on (features, gold mask, set name) per query: listwise softmax loss, each set's
    share proportional to the square root of its query count, plus ``l2``·|w|², every weight held
    to its sign in :data:`SIGNS`. Queries without a gold tool in their head carry no signal and are
    skipped."""
    from scipy.optimize import minimize

    usable = [(x, g, s) for x, g, s in groups if len(x) and g.any() and not g.all()]
    if len(usable) < 20:
        raise RetrievalError(f"only {len(usable)} queries have a gold tool among other head candidates; at least 20 are needed")
    stacked = np.vstack([x for x, _, _ in usable])
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    sets = sorted({s for _, _, s in usable})
    per_set = {s: sum(1 for _, _, t in usable if t == s) for s in sets}
    root_total = sum(math.sqrt(n) for n in per_set.values())
    # A set's share of the loss is sqrt(n_set) / Σ sqrt(n), spread evenly over its queries.
    rows = [((x - mean) / scale, g, 1.0 / (math.sqrt(per_set[s]) * root_total)) for x, g, s in usable]

    def loss(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        total, grad = l2 * float(w @ w), 2.0 * l2 * w
        for z, g, weight in rows:
            s = z @ w
            s = s - s.max()
            e = np.exp(s)
            p = e / e.sum()
            pg = p[g].sum()
            total -= weight * math.log(max(pg, 1e-300))
            # d/dw −log Σ_gold p = E_p[z] − E_{p | gold}[z]
            grad += weight * (p @ z - (p[g] / pg) @ z[g])
        return total, grad

    start = np.zeros(len(FEATURES))
    start[0] = 1.0  # begin at the fusion ranking
    bounds = [(0.0, None) if SIGNS[name] > 0 else (None, 0.0) for name in FEATURES]
    result = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds)
    if not result.success:
        raise RetrievalError(f"the rerank fit did not converge: {result.message}")
    w = result.x
    losses = {s: float(np.mean([-math.log(max(_gold_mass(z @ w, g), 1e-300)) for z, g, _ in
                               [r for r, (_, _, t) in zip(rows, usable) if t == s]])) for s in sets}
    return RerankModel(tuple(float(v) for v in w), tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                       FEATURES, head, l2, source, losses)


def _gold_mass(s: NDArray[np.float64], g: NDArray[np.bool_]) -> float:
    e = np.exp(s - s.max())
    return float(e[g].sum() / e.sum())
