"""MiniLM in numpy against sentence-transformers' own vectors, and search without torch.

The reference vectors (tests/index/minilm_reference.npz) were made by sentence-transformers on
torch (tests/index/make_minilm_reference.py); the oracle test recomputes them live when
sentence-transformers happens to be installed (setup no longer installs it).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import MINILM_ID, MiniLMEmbedder
from votr_mcp.index.minilm import NumpyMiniLM, minilm_model_dir

pytestmark = pytest.mark.slow

REFERENCE = Path(__file__).with_name("minilm_reference.npz")
# The contract that keeps every cached vector valid under the same model id.
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    with np.load(REFERENCE, allow_pickle=False) as data:
        return [str(t) for t in data["texts"]], data["vectors"]


@pytest.fixture(scope="module")
def model() -> NumpyMiniLM:
    return NumpyMiniLM(threads=1)


def test_numpy_vectors_match_sentence_transformers_reference_including_truncated_long_texts(model, reference):
    texts, expected = reference
    max_seq = json.loads((model.model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    lengths = [len(e.ids) for e in model._tokenizer.encode_batch(texts)]
    assert max(lengths) == max_seq, "the long text must be cut at max_seq_length"
    assert any(128 < n < max_seq for n in lengths), "a text between tokenizer.json's 128 and 256 must be read whole"
    assert "" in texts
    vectors = model.encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == expected.shape == (len(texts), 384)
    assert np.abs(vectors - expected).max() < TOLERANCE
    assert (vectors * expected).sum(axis=1).min() > 0.9999


def test_padding_batch_size_and_threads_do_not_change_any_vector(model, reference):
    texts, _ = reference
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.abs(model.encode(texts) - alone).max() < 1e-5
    threaded = NumpyMiniLM(model.model_dir, threads=2, batch_size=3).encode(texts * 3)
    assert np.abs(threaded - np.vstack([alone] * 3)).max() < 1e-5


def test_a_few_texts_encoded_end_to_end_without_padding_equal_their_padded_batches(model, reference):
    from votr_mcp.index import minilm

    texts, expected = reference  # 10 texts: at most PACKED_TEXTS, so encode packs them
    assert len(texts) <= minilm.PACKED_TEXTS
    packed = model.encode(texts)
    two_threads = NumpyMiniLM(model.model_dir, threads=2).encode(texts)
    batched = model.encode(texts + texts)[: len(texts)]  # more than PACKED_TEXTS: padded batches
    assert len(texts) * 2 > minilm.PACKED_TEXTS
    assert np.abs(packed - batched).max() < 1e-5 and np.abs(two_threads - packed).max() < 1e-5
    assert np.abs(packed - expected).max() < TOLERANCE


def test_the_embedder_keeps_the_model_id_and_dimension_of_the_cached_vectors(reference):
    texts, expected = reference
    embedder = MiniLMEmbedder()
    assert embedder.model_id == MINILM_ID == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.encode([]).shape == (0, embedder.dimension)
    assert np.abs(embedder.encode(texts) - expected).max() < TOLERANCE


def test_a_folder_without_the_weights_says_how_to_install_them(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(RetrievalError, match="tokenizer"):
        NumpyMiniLM(tmp_path)
    assert minilm_model_dir().name == "model"


def test_numpy_vectors_match_live_sentence_transformers_when_installed(model, reference):
    """The oracle itself (runs only where torch and sentence-transformers are importable)."""
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    texts = reference[0] + ["send an email to my boss", "Wie spät ist es?\nZeile zwei\t mit Tab", "🙂 " * 30]
    oracle = st.SentenceTransformer(str(model.model_dir), device="cpu")
    expected = oracle.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    assert np.abs(model.encode(texts) - expected).max() < TOLERANCE


def test_search_is_dense_with_torch_sentence_transformers_and_onnx_blocked(tmp_path):
    """The README's search command, in a process where importing any of them would fail."""
    blocked = ("torch", "sentence_transformers", "transformers", "onnxruntime", "onnx")
    code = (
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None  # import now raises ImportError\n"
        "from votr_mcp.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**os.environ, "VOTR_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code, "search", "read the contents of a text file", "--json"],
                         capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["dense_used"] is True, out.stderr
    assert result["ranked"][0]["call_name"].endswith("read_text_file") or result["ranked"][0]["call_name"].endswith("read_file")
