"""Indexes over a tool catalog: the shared tokenizer, BM25, TF-IDF (SPLADE-lite), dense vectors."""

from votr_mcp.index.bm25 import BM25Index
from votr_mcp.index.catalog_index import DenseIndex, LexicalIndex, build_dense, build_lexical, dense_texts
from votr_mcp.index.dense import (
    MINILM_ID,
    Embedder,
    EmbeddingCache,
    FileEmbeddingCache,
    MemoryEmbeddingCache,
    MiniLMEmbedder,
    embed_cached,
    text_hash,
)
from votr_mcp.index.sparse import SparseIndex
from votr_mcp.index.tokenize import tokenize

__all__ = [
    "BM25Index",
    "DenseIndex",
    "Embedder",
    "EmbeddingCache",
    "FileEmbeddingCache",
    "LexicalIndex",
    "MINILM_ID",
    "MemoryEmbeddingCache",
    "MiniLMEmbedder",
    "SparseIndex",
    "build_dense",
    "build_lexical",
    "dense_texts",
    "embed_cached",
    "text_hash",
    "tokenize",
]
