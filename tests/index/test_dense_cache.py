import numpy as np

from votr_mcp.index.dense import FileEmbeddingCache, MemoryEmbeddingCache, embed_cached, l2_normalise, text_hash


class CountingEmbedder:
    """A deterministic stand-in at the model edge: vectors from the text's hash, counting encodes."""

    model_id = "counting-test"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts):
        self.encoded.extend(texts)
        rows = [np.frombuffer(bytes.fromhex(text_hash(t))[:16], dtype=np.uint8).astype(np.float32) for t in texts]
        return l2_normalise(np.stack(rows))


def test_embed_cached_encodes_each_distinct_text_once_and_keeps_order():
    embedder, cache = CountingEmbedder(), MemoryEmbeddingCache()
    first = embed_cached(embedder, ["a", "b", "a"], cache)
    assert embedder.encoded == ["a", "b"]
    second = embed_cached(embedder, ["b", "c"], cache)
    assert embedder.encoded == ["a", "b", "c"]
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_array_equal(first[0], first[2])


def test_file_cache_survives_a_new_process_object_and_separates_models(tmp_path):
    embedder = CountingEmbedder()
    embed_cached(embedder, ["hello", "world"], FileEmbeddingCache(tmp_path))
    reopened = FileEmbeddingCache(tmp_path)
    hashes = [text_hash("hello"), text_hash("world")]
    assert set(reopened.get_many(embedder.model_id, hashes)) == set(hashes)
    assert reopened.get_many("another-model", hashes) == {}
    assert not list(tmp_path.glob("*.tmp.npz")), "the atomic write left a temp file behind"


def test_an_unreadable_cache_file_is_ignored_and_rebuilt(tmp_path):
    cache = FileEmbeddingCache(tmp_path)
    cache._file("counting-test").parent.mkdir(parents=True, exist_ok=True)
    cache._file("counting-test").write_bytes(b"not an npz")
    embedder = CountingEmbedder()
    embed_cached(embedder, ["x"], cache)
    assert embedder.encoded == ["x"]
    assert text_hash("x") in FileEmbeddingCache(tmp_path).get_many("counting-test", [text_hash("x")])
