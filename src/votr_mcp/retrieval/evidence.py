"""Query-level evidence that some tool in the catalog does what a request asks: what abstention reads.

Near-misses (the right domain, no tool for the action: "delete the file old.log" where the
filesystem server has no delete) score high on any one similarity, since the words of the domain
match. What separates them from answerable requests is read across the whole catalog and across
channels, each feature oriented so that more means "a tool fits":

- ``top_cosine``, ``mean_cosine_10``: the best joint cosine of the ranked list and the mean of its 10 best;
- ``top_minilm``, ``top_use``: each dense model's own best cosine over the catalog (USE reads 16
  languages, MiniLM reads English better);
- ``cosine_z``: the best cosine in standard deviations above the catalog's mean cosine for this query,
  which reads the same on 30 tools as on 3,000;
- ``splade_top``: the best learned-sparse cosine (shared and expanded terms);
- ``agreement``: the share of the channels (each dense model, SPLADE, BM25) whose own best tool is the
  ranked list's first;
- ``action_fit``: 0 when the request names an action (delete, send, create, ...) and the first tool's
  name names another one, else 1;
- ``action_supported``: 0 when the request leads with a verb ("delete the file old.log", "push my
  commits") and none of the first five tools says it does that (in its name or the first sentence
  of its description), else 1: the mark of a near-miss, where the domain matches and the action
  does not. A specific operation (verbs.LITERAL_OPERATIONS: merge, copy, book…) counts as done
  only by a tool that also names what it acts on ("merge the feature branch" where only cells merge: 0);
- ``object_supported``: 0 when such a verb changes something (delete, send, create, ...) and none of
  the first five tools that do it says what the request acts on ("delete the file old.log" where
  only spreadsheet tools delete, and they delete sheets and notes), else 1. Reading is checked by
  its action only: a search tool says "products", not every product one looks for. A word the
  request joins from a tool's word names it too ("the homepage" is a page, "a spreadsheet" a sheet:
  request_object.names_object);
- ``unlike_chat``: one minus the request's best cosine with the shipped requests no tool serves
  (null_requests.txt): everyday chat reads like chat in any catalog and any of USE's languages;
- ``tool_request``: the log-odds that the request asks to act at all rather than to talk
  (tool_request.py), read from the request alone; 0 when no model reads it;
- ``server_supported``: 0 when the request leads with a verb other than reading and names servers
  of the catalog (named.py) none of whose tools says it does that ("delete the Heroku app …" where
  Heroku's tools list and read; a server whose tools say no action at all is not judged), else 1;
- ``verb_offered``: 0 when an English request leads with a specific operation (push, stash, rebase,
  zip, print, ...: verbs.LITERAL_OPERATIONS) that none of the first five ranked tools names
  anywhere in its texts, nor leads its example requests with (rerank.example_actions), else 1:
  "push my commits to origin" where the git server only commits (a tool that does it deep in a
  big catalog is not what this search hands on). Explaining,
  brainstorming and rewriting count as such operations: "explain recursion like I'm five" is chat
  where no tool says it explains (and "explain https://…" reads the page: intent.reads_first).
  Booking counts where a ranked tool books or reserves, or any tool names what is booked ("book a
  flight to Paris" on a catalog with no travel tool: 0). So do requests the assistant answers from what it knows:
  what a word means, how two ideas differ, how one says a thing (in six languages), a synonym, a
  poem, a joke or a story ("what's the difference between a list and a tuple" where no tool gives
  meanings, "tell me a joke about programmers" where none tells jokes: knowledge.py), and those a
  phone or a smart home serves: an alarm, a timer, a reminder, the calendar, a lamp, the heating,
  the weather ("set a timer for 12 minutes" where no tool keeps timers: everyday.py).
- ``service_offered``: 0 when the request names a well-known service where it acts and no tool
  names it ("play my Discover Weekly on Spotify" where a media tool plays, but nothing is Spotify:
  services.py), else 1.

Besides these, ``object_given`` (1 when an English request changes a file or a path it gives) is
read by the action gate only (calibration.action_unsupported), not weighed: "delete
/tmp/old_report.pdf" where only spreadsheet tools delete, and they delete sheets and images.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.retrieval.fusion import Fused
from votr_mcp.retrieval.request_object import names_object
from votr_mcp.retrieval.rerank import QueryView, ToolView
from votr_mcp.retrieval.verbs import LITERAL_OPERATIONS

__all__ = ["EVIDENCE", "SUPPORT_DEPTH", "evidence", "no_evidence", "object_given"]

EVIDENCE = ("top_cosine", "mean_cosine_10", "top_minilm", "top_use", "cosine_z", "splade_top", "agreement",
            "action_fit", "action_supported", "object_supported", "server_supported", "unlike_chat", "tool_request",
            "verb_offered", "service_offered")
SUPPORT_DEPTH = 5  # how many of the first ranked tools may show the request's action


def no_evidence() -> dict[str, float]:
    """The evidence of an empty ranked list: nothing fits."""
    return {name: -1.0 for name in EVIDENCE}


def evidence(f: Fused, order: NDArray[np.intp], query: QueryView, views: Sequence[ToolView],
             splade_norms: NDArray[np.float64] | None, chat_similarity: float = 0.0,
             tool_request: float = 0.0, verb_offered: bool = True, server_supported: bool = True,
             service_offered: bool = True) -> dict[str, float]:
    """The features of :data:`EVIDENCE` for one query's ranked list ``order`` (catalog positions)."""
    if len(order) == 0:
        return no_evidence()
    first = int(order[0])
    cos = f.cosine
    ranked_cos = np.sort(cos[order])[::-1]
    top = float(ranked_cos[0])
    spread = float(np.sqrt(max(0.0, cos.var() + f.hidden_variance)))
    models = f.model_cosines or (cos,)
    channels: list[NDArray[np.float64]] = [*models]
    splade_top = 0.0
    if f.splade is not None and splade_norms is not None:
        # f.splade is the dot product with the unit-length query: over the tool's norm, a cosine.
        norm = np.where(splade_norms > 0, splade_norms, 1.0)
        splade_cos = f.splade / norm
        splade_top = float(splade_cos.max(initial=0.0))
        channels.append(f.splade)
    if float(f.bm25.max(initial=0.0)) > 0:
        channels.append(f.bm25)
    agree = float(np.mean([int(np.argmax(c)) == first for c in channels])) if channels else 0.0
    tool = views[first]
    conflict = bool(query.actions) and tool.action is not None and tool.action not in query.actions
    head = [views[int(i)] for i in order[:SUPPORT_DEPTH]]
    # A specific operation (merge, copy, book…) done to another kind of thing is not the one asked:
    # merging cells merges no branch, booking a table books no flat.
    specific = query.verb in LITERAL_OPERATIONS and bool(query.objects)
    doing = [v for v in head if query.done_by(v)]  # the head tools that say they do the verb
    supported = query.verb is None or any(not specific or names_object(query.objects, v.words) for v in doing)
    object_supported = query.verb in (None, "read") or not query.objects or any(
        names_object(query.objects, v.words) for v in doing)
    return {
        "top_cosine": top,
        "mean_cosine_10": float(ranked_cos[:10].mean()),
        "top_minilm": float(models[0].max()),
        "top_use": float(models[-1].max()),
        "cosine_z": (top - float(cos.mean())) / spread if spread > 1e-9 else 0.0,
        "splade_top": splade_top,
        "agreement": agree,
        "action_fit": 0.0 if conflict else 1.0,
        "action_supported": 1.0 if supported else 0.0,
        "object_supported": 1.0 if object_supported else 0.0,
        "server_supported": 1.0 if server_supported else 0.0,
        "unlike_chat": 1.0 - chat_similarity,
        "tool_request": tool_request,
        "verb_offered": 1.0 if verb_offered else 0.0,
        "service_offered": 1.0 if service_offered else 0.0,
        # Read by the action gate alone, not weighed (calibration.action_unsupported).
        "object_given": 1.0 if object_given(query) else 0.0,
    }


def object_given(query: QueryView) -> bool:
    """Whether an English request changes a file or a path it gives ("delete /tmp/old_report.pdf"):
    what it acts on is then named outright, and tools that do its verb to other things do not do
    it. Other languages' objects are read from their values alone ("Cria uma planilha nova em
    /docs/orcamento.xlsx" names a spreadsheet in words no tool's English says)."""
    return query.english and "path" in query.values and query.verb not in (None, "read")
