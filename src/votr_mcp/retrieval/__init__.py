"""Hybrid tool retrieval: dense + BM25 + TF-IDF fused by RRF, reranked near the head, with
adaptive k and abstention. Pure library code: imports no mcp, no SQLite driver, no anyio, and
loads no model until a MiniLMEmbedder first encodes."""

from votr_mcp.retrieval.calibration import SHIPPED_PATH, Calibration, shipped_calibration
from votr_mcp.retrieval.calibration_fit import fit
from votr_mcp.retrieval.config import STAGES, RetrievalConfig, naive_hybrid
from votr_mcp.retrieval.pipeline import Exclude, Retriever
from votr_mcp.retrieval.render import count_tokens, signature
from votr_mcp.retrieval.result import Hit, Need, SearchResult

__all__ = [
    "Calibration",
    "Exclude",
    "Hit",
    "Need",
    "RetrievalConfig",
    "Retriever",
    "SHIPPED_PATH",
    "STAGES",
    "SearchResult",
    "count_tokens",
    "fit",
    "naive_hybrid",
    "shipped_calibration",
    "signature",
]
