"""Switches and weights of the retrieval pipeline, so an ablation can turn any stage off."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Literal

from pydantic import ConfigDict, ValidationError
from pydantic.dataclasses import dataclass

from votr_mcp.settings import Count, NonNegative, Weight, describe

__all__ = ["RetrievalConfig", "STAGES", "naive_hybrid"]

STAGES = ("dense", "multilingual", "route_language", "query_adapter", "bm25", "sparse", "splade", "tool2vec", "rerank", "dice",
          "intent", "exact_names", "decompose", "adaptive_k", "action_gate")
"""Stage names accepted by :meth:`RetrievalConfig.without`, in pipeline order."""


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class RetrievalConfig:
    """Which stages run and how much each weighs. Defaults are the choice measured on dev rows
    (MSC-Bench + MCP-Zero dev split); stages that lost or tied there are off, not deleted.

    A pydantic dataclass: every field is checked when a config is made (a count of tools is a whole
    number of at least 1, a weight a finite number of at least 0), since ``depth=0`` or
    ``w_bm25=nan`` gave wrong answers without a word; strings from ``--set`` are read as the
    field's type ("5", "true", "off")."""

    dense: bool = True
    # The dense cosine as the mean of MiniLM's and multilingual USE's (index/models.py); off: MiniLM's alone.
    multilingual: bool = True
    # A request not in English (retrieval/language.py) is scored by the multilingual model alone.
    # Human-style dev rows in other languages (76): top-1 .526 -> .645, top-3 .776 -> .842; the
    # detector flags 0 of 10,656 English dev rows of the bench sets (and misses 5 short ones of 89).
    route_language: bool = True
    # The learned query-vector correction (query_adapter.npz, fit on our human-style dev rows) of a
    # one-need request's vector; abstention reads the vector before it (query_adapter.py: held-out
    # human-style top-1 .791 -> .818, .495 -> .571, .640 -> .706 on our first three sets' dev rows).
    query_adapter: bool = True
    bm25: bool = True
    sparse: bool = True
    # The learned sparse list (SPLADE-tiny), when the embedder builds it. Off, and not built for
    # serving (index/models.default_embedder): in the ablation of eval/RESULTS.md at 5be2a27 it
    # helped no set's dev rows (|effect| <= .005 on the four bench sets and human-registry) and hurt
    # human-mcpzero (-.006) and human-mscbench (-.014), while its query encoding took a third
    # thread beside MiniLM and USE on two cores and its tool vectors a third of the index's memory at
    # 100k tools. The evaluation's "+ splade" row keeps measuring it.
    splade: bool = False
    tool2vec: bool = True  # acts only on tools with example queries (none in the bench sets)
    rerank: bool = True  # the learned linear rerank of the head (rerank.json, fit on dev rows)
    dice: bool = True  # the rerank's name and server mention features
    intent: bool = True  # singular/bulk pairs ordered by the request's count, and the rerank's action/bulk features
    intent_window: Count = 5  # how far down the list a pair's matching sibling is looked for
    exact_names: bool = True  # a tool named as an identifier in the request ("git_log") comes first
    decompose: bool = True
    adaptive_k: bool = True
    action_gate: bool = True  # the calibration's action gate: refuse what no ranked tool does, unless it fits strongly

    # Fusion over lists cut at `depth`: "gap" sums w · rescaled score; "rrf" sums w / (rrf_k + rank).
    w_dense: Weight = 1.0
    w_bm25: Weight = 1.0
    w_sparse: Weight = 1.0
    w_splade: Weight = 1.0
    # The nearest-example list: each tool's best cosine with its own example requests (registry tools,
    # and harvested tools equal to one), when at least half the catalog's tools have examples
    # (index/catalog_index.EXAMPLE_COVERAGE). Human-registry dev top-1 0 -> 1/2/3/4: .647 -> .660/.693/
    # .700/.687; test at 3: .621 -> .719. The other sets have too few tools with examples to run it.
    w_examples: Weight = 3.0
    # The word-matching lists' weights scale by min(1, best TF-IDF cosine / lexical_trust); 0 keeps them whole.
    # Dev top-1, fusion alone, 0 -> 0.4: human-registry .344 -> .578, MCP-Zero .823 -> .837, MetaTool
    # .570 -> .623, MSC-Bench .923 -> .917 (0.3: .547 / .828 / MSC .928; 0.5: .594 / .819 / .925).
    lexical_trust: Weight = 0.4
    w_hint: Weight = 3.0  # an explicit hint from the agent outweighs any one list
    rrf_k: NonNegative = 10
    fusion: Literal["gap", "rrf"] = "gap"  # "rrf" (rank-based) or "gap" (each list's top scores rescaled to (0, 1])
    depth: Count = 20

    # The learned rerank reorders the `rerank_head` best fused candidates.
    rerank_head: Count = 20
    # Whether each need of a whole-task query is reranked too. The rerank is fit on whole single
    # requests; need texts are fragments of one. Dev task R@10 with the rerank off for needs (and
    # merge_server_weight 1): MSC L4 .727 -> .748, L3 .990 -> .990, ToolBench .827 -> .832,
    # MetaTool multi_step .845 -> .847; the needs' hand-offs and every single-need query unchanged.
    rerank_needs: bool = False

    # Whole-task decomposition: weight of the whole query's list against each need's list.
    w_whole: Weight = 1.0
    # RRF constant of that merge: 1 lets each need's best tool outrank tools that sit mid-list in
    # several lists (dev task R@10 with 10 -> 1: MSC L4 .721 -> .736, ToolBench .809 -> .817,
    # MSC L3 and MetaTool unchanged; with 10 a need's top tool could miss the merged top 10).
    merge_rrf_k: NonNegative = 1
    # Each listed tool also gets this weight times its server's mean best-tool RRF credit over the
    # lists: a task's steps mostly use a few servers (dev task R@10 with 0 -> 1, needs reranked:
    # MSC L4 .736 -> .748, L3 .984 -> .990, ToolBench .817 -> .821, MSC L2 and MetaTool unchanged;
    # 0.75 and 1.5 gained less on L4).
    merge_server_weight: Weight = 1.0
    # Each need's own list, before its hand-off, lifts by this weight times the share of the task's
    # other lists (whole query, other needs) that lead with the tool's server (merge.cohere_needs).
    # Dev, 0 -> 0.5: MSC-Bench chain success .711 -> .725, hand-off .891 -> .896 at mean k 2.99 ->
    # 2.93; ToolBench chain .443 -> .453, hand-off .639 -> .646; MetaTool and the human sets
    # unchanged; 1.0 cost MSC L4 hand-off .759 -> .741.
    need_server_weight: Weight = 0.5
    # MSC-Bench L4 tasks name up to 6 steps; the 6th need no longer shares a text with the 5th (dev
    # task R@10 5 -> 6, fusion-ranked needs with server support: L4 .748 -> .774, 7 and 8 gave .773;
    # L3, ToolBench, MetaTool unchanged). An earlier, reranked-needs pipeline saw +.006 only.
    max_needs: Count = 6
    # Each need hands off its calibrated k, at most this many (a confident need still gives 1 tool; an
    # uncertain one 3 rather than 5). Dev whole tasks, 1 -> 3: MSC hand-off .729 -> .804 at mean k
    # 3.58 -> 5.67, chain success .599 -> .690; ToolBench .585 -> .637 at k 3.40 -> 4.89, chain .337 ->
    # .410, 100 -> 143 tokens; MetaTool .552 -> .564. 2 gave about half of each gain for half the k.
    # (Uncapped, per-need k reached 5 and the whole task's k tripled.)
    need_k_max: Count = 3
    whole_hits: bool = True  # plus the whole query's own adaptive-k tools (keeps a wrongly split single query whole)

    # k when adaptive k is off or cannot run (no calibration, or dense not ready).
    default_k: Count = 3
    ranked_size: Count = 10

    def without(self, stage: str) -> RetrievalConfig:
        """This config with one stage switched off (for "full minus stage" ablations)."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage '{stage}'; choose one of {', '.join(STAGES)}")
        off: dict[str, Any] = {stage: False}  # the field is named at run time, so no per-field type to check here
        return replace(self, **off)

    def with_(self, **changes: object) -> RetrievalConfig:
        """This config with some fields changed (values are checked and read as the field's type);
        ValueError names each bad field, what it must be and what it got."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown RetrievalConfig fields {sorted(unknown)}; known: {', '.join(sorted(known))}")
        try:
            return replace(self, **changes)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise ValueError(describe(exc)) from None


def naive_hybrid() -> RetrievalConfig:
    """The naive hybrid every evaluation measures against: BM25 + TF-IDF + flat MiniLM fused by RRF, nothing after."""
    return RetrievalConfig(multilingual=False, splade=False, exact_names=False, tool2vec=False, rerank=False, dice=False, intent=False,
                           decompose=False, adaptive_k=False, action_gate=False, query_adapter=False, fusion="rrf",
                           rrf_k=60, depth=50, w_sparse=0.35, lexical_trust=0.0)
