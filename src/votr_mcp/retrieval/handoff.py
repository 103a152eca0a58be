"""From ranked lists to what a search hands off: adaptive k or abstention, tiers, and a whole task's
tools grouped by need.

A :class:`HandOff` holds what one search decides with (catalog, call names, config, calibration,
the dense index when ready); the Retriever makes one per search, so a retriever copied with
another config or calibration is never read stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, ToolKey
from votr_mcp.index.catalog_index import DenseIndex
from votr_mcp.retrieval.calibration import Calibration, abstain_features, abstain_reason, choose_k, confidences
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.features import Ranking
from votr_mcp.retrieval.result import Hit, Need, SearchResult
from votr_mcp.retrieval.tiers import tier_of

__all__ = ["HandOff", "relative"]


def relative(ranking: Ranking) -> NDArray[np.float64]:
    """Each ranked score over the best one (empty for an empty list)."""
    return ranking.fused / ranking.fused[0] if len(ranking.order) else np.zeros(0)


@dataclass(frozen=True, slots=True)
class HandOff:
    catalog: Catalog
    call_names: Mapping[ToolKey, str]
    config: RetrievalConfig
    calibration: Calibration | None
    dense: DenseIndex | None
    use_dense: bool
    threshold: float | None = None  # the abstention score to reach in this catalog (Retriever.abstain_threshold)

    def hits(self, ranking: Ranking, limit: int, p: NDArray[np.float64] | None, threshold: float | None,
             need: int | None, margin: float | None = None) -> list[Hit]:
        out = []
        scores = relative(ranking)  # reranked lists already peak at 1; fusion scores (up to 3) do not
        margins = self.calibration.tier_margins if self.calibration is not None else None
        for j, i in enumerate(ranking.order[:limit]):
            tool = self.catalog[int(i)]
            conf = float(p[j]) if p is not None else None
            tier = "unknown"
            if conf is not None and margin is not None and margins is not None:
                tier = tier_of(margin, conf, margins)  # the search's evidence, read the same in every catalog
            elif conf is not None and threshold is not None:
                tier = "high" if conf >= max(0.5, threshold) else "medium" if conf >= threshold else "low"
            out.append(Hit(tool, self.call_names[tool.key], float(scores[j]), conf, tier, need))
        return out

    def confidences(self, ranking: Ranking) -> NDArray[np.float64] | None:
        """p over a non-empty ranked list, or None without a calibration or dense scores."""
        cal = self.calibration
        if not self.use_dense or cal is None:
            return None
        return confidences(ranking.cosines, relative(ranking), cal.temperature, cal.mix)

    def ranked(self, ranking: Ranking, p: NDArray[np.float64] | None, need: int | None) -> list[Hit]:
        """The whole ranked list as hits, each with its confidence and tier."""
        threshold = self.calibration.set_threshold if (self.calibration and p is not None) else None
        return self.hits(ranking, len(ranking.order), p, threshold, need, self.margin(ranking))

    def margin(self, ranking: Ranking) -> float | None:
        """How far the ranking's abstention score clears the catalog's threshold (None: no evidence)."""
        cal = self.calibration
        if cal is None or not ranking.evidence or not self.use_dense:
            return None
        threshold = cal.abstain_threshold if self.threshold is None else self.threshold
        return cal.abstain_score(ranking.evidence) - threshold

    def decide(self, ranking: Ranking, max_results: int | None) -> tuple[int, NDArray[np.float64] | None, str]:
        """(k, confidences, reason): k = 0 means abstain."""
        cfg, cal = self.config, self.calibration
        if len(ranking.order) == 0:
            return 0, None, "no tool shares a word or meaning with the query"
        p = self.confidences(ranking)
        if p is None or cal is None:
            k = cfg.default_k
            why = ("lexical scores only (no dense index yet, or none asked for); fixed k" if not self.use_dense
                   else "no calibration; fixed k")
            return min(k, max_results or k, len(ranking.order)), None, why
        score = cal.abstain_score(ranking.evidence)
        threshold = cal.abstain_threshold if self.threshold is None else self.threshold
        gated = score >= threshold and cfg.action_gate and cal.action_gated(ranking.evidence, score - threshold)
        if score < threshold or gated:
            return 0, p, abstain_reason(score, threshold, abstain_features(ranking.evidence),
                                        [self.call_names[self.catalog[int(i)].key] for i in ranking.order[:3]], gated)
        k = choose_k(p, cal.set_threshold) if cfg.adaptive_k else cfg.default_k
        return min(k, max_results or k, len(ranking.order)), p, f"adaptive k at {cal.coverage:.0%} coverage" if cfg.adaptive_k else "fixed k"

    def parts(self, ranking: Ranking, max_results: int | None, need: int | None) -> tuple[list[Hit], list[Hit], str]:
        """(handed-off hits, the whole ranked list as hits, reason) of one ranked list."""
        k, p, reason = self.decide(ranking, max_results)
        ranked = self.ranked(ranking, p, need)
        hits = ranked[:k]
        if max_results is not None:
            hits = hits[:max_results]
        return hits, ranked, reason

    def single(self, query: str, ranking: Ranking, max_results: int | None) -> SearchResult:
        hits, ranked, reason = self.parts(ranking, max_results, None)
        tier = hits[0].tier if hits else "none"
        return SearchResult(query, tuple(hits), tuple(ranked), len(hits), tier, not hits, reason, self.use_dense,
                            (), ranking.cosines, relative(ranking), ranking.lexical, ranking.evidence)

    def multi(self, query: str, needs: list[str], whole: Ranking, rankings: list[Ranking], merged: Ranking,
              max_results: int | None) -> SearchResult:
        """A whole task: the whole query's own hits (if ``whole_hits``), then each need's, grouped by need;
        ``merged`` (the task's merged list) is what the result ranks."""
        cfg = self.config
        groups: list[Need] = []
        for index, (text, ranking) in enumerate(zip(needs, rankings)):
            need_hits, need_ranked, _ = self.parts(ranking, cfg.need_k_max, index)
            groups.append(Need(text, tuple(need_hits), tuple(need_ranked), not need_hits))
        # A tool the whole query hands off names the first need that also hands it off.
        need_of: dict[ToolKey, int] = {}
        for index, group in enumerate(groups):
            for h in group.hits:
                need_of.setdefault(h.key, index)
        hits: list[Hit] = []
        seen: set[ToolKey] = set()
        if cfg.whole_hits:
            for h in self.parts(whole, None, None)[0]:
                seen.add(h.key)
                hits.append(replace(h, need=need_of.get(h.key)))
        for group in groups:
            for h in group.hits:
                if h.key not in seen:
                    seen.add(h.key)
                    hits.append(h)
        if max_results is not None:
            hits = hits[:max_results]
        # The merged list is only ranked, never handed off: no k or abstention to decide.
        ranked = self.ranked(merged, self.confidences(merged) if len(merged.order) else None, None)
        abstained = not hits
        reason = f"{len(needs)} needs; " + ("no need has a fitting tool" if abstained else "tools grouped by need")
        tier = hits[0].tier if hits else "none"
        return SearchResult(query, tuple(hits), tuple(ranked), len(hits), tier, abstained, reason, self.use_dense,
                            tuple(groups), merged.cosines, relative(merged), merged.lexical, whole.evidence)
