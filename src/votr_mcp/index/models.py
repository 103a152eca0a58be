"""The models search uses, made in one place: MiniLM and multilingual USE side by side as the
dense vector, SPLADE-tiny as the learned sparse list. Every caller (server, command line,
evaluation) gets the same ones from :func:`default_embedder`, so a cached vector means the same
thing everywhere. Nothing loads until the first encode."""

from __future__ import annotations

from votr_mcp.index.dense import JointEmbedder, MiniLMEmbedder
from votr_mcp.index.splade import SpladeEncoder
from votr_mcp.index.use import USEEmbedder

__all__ = ["default_embedder"]


def default_embedder(*, minilm: MiniLMEmbedder | None = None) -> JointEmbedder:
    """MiniLM (English, strongest on tool descriptions) + USE multilingual v3 (16 languages),
    with SPLADE-tiny's sparse vectors built beside them."""
    return JointEmbedder([minilm or MiniLMEmbedder(), USEEmbedder()], sparse=SpladeEncoder())
