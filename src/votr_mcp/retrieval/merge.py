"""One ranked list for a whole task: its whole query's list and each need's list, merged.

Reciprocal rank fusion with a small constant (``merge_rrf_k``), so each need's best tool can
outrank tools that sit mid-list in several lists; plus server support, since the steps of one
task tend to use tools of the same few servers; the whole query's best tool stays first, so a
single request wrongly split into needs keeps its top-1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.features import Ranking
from votr_mcp.retrieval.formulas import rrf, server_rrf, top_k

__all__ = ["cohere_needs", "merge_task", "server_support"]


def server_support(whole: Ranking, rankings: Sequence[Ranking], server_of: NDArray[np.intp], n_servers: int,
                   cfg: RetrievalConfig) -> NDArray[np.float64]:
    """Per server, the mean over the merged lists of its best tool's RRF credit in each.

    A tool a need ranks low is more likely its step when its server also serves the other needs;
    the support only reorders tools some list already holds."""
    support = server_rrf(whole.order, cfg.w_whole, server_of, n_servers, cfg.merge_rrf_k)
    for r in rankings:
        support += server_rrf(r.order, 1.0, server_of, n_servers, cfg.merge_rrf_k)
    return support / (len(rankings) + 1)


def merge_task(whole: Ranking, rankings: Sequence[Ranking], server_of: NDArray[np.intp], n_servers: int,
               cfg: RetrievalConfig) -> Ranking:
    """RRF over the whole query's list (weight ``w_whole``) and each need's list, plus
    ``merge_server_weight`` times each listed tool's :func:`server_support`; the whole query's
    best tool stays first. ``server_of[i]`` is tool i's server row."""
    n = len(server_of)
    merged = rrf(whole.order, cfg.w_whole, n, cfg.merge_rrf_k)
    for r in rankings:
        merged += rrf(r.order, 1.0, n, cfg.merge_rrf_k)
    if cfg.merge_server_weight > 0:
        support = server_support(whole, rankings, server_of, n_servers, cfg)[server_of]
        merged = np.where(merged > 0, merged + cfg.merge_server_weight * support, 0.0)
    if len(whole.order):
        merged[whole.order[0]] = merged.max() + 1.0
    order = top_k(np.where(merged > 0, merged, -np.inf), cfg.ranked_size)
    order = order[merged[order] > 0]
    cos_all = {int(i): float(c) for r in [whole, *rankings] for i, c in zip(r.order, r.cosines)}
    lex_all = {int(i): float(c) for r in [whole, *rankings] for i, c in zip(r.order, r.lexical)}
    return Ranking(order, merged[order], np.array([cos_all.get(int(i), 0.0) for i in order]),
                   np.array([lex_all.get(int(i), 0.0) for i in order]))


LEAD_DEPTH = 3
"""How many of a list's first tools say which servers it leads with."""


def cohere_needs(whole: Ranking, rankings: Sequence[Ranking], server_of: NDArray[np.intp],
                 weight: float) -> list[Ranking]:
    """Each need's list with its tools scored up by ``weight`` times the share of the task's other lists
    (the whole query's and the other needs') that lead with the tool's server: "total the orders" after
    two database steps is a database step, "search for 'usb-c hub'" after opening a page a browser step."""
    if weight <= 0 or len(rankings) < 2:
        return list(rankings)
    leads = [frozenset(server_of[r.order[:LEAD_DEPTH]].tolist()) for r in (whole, *rankings)]
    out: list[Ranking] = []
    for i, r in enumerate(rankings):
        others = [leads[0], *(lead for j, lead in enumerate(leads[1:]) if j != i)]
        share = np.array([sum(int(s) in lead for lead in others) / len(others) for s in server_of[r.order]])
        score = r.fused + weight * share
        order = np.argsort(-score, kind="stable")
        out.append(Ranking(r.order[order], score[order], r.cosines[order], r.lexical[order], r.evidence))
    return out
