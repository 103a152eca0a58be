"""Writes tests/index/minilm_reference.npz: all-MiniLM-L6-v2 vectors made by sentence-transformers.

    python tests/index/make_minilm_reference.py   # needs torch and sentence-transformers (not installed by setup)

The numpy encoder must reproduce these to <1e-4 per component (tests/index/test_minilm.py), so
vectors cached by the old sentence-transformers and ONNX paths stay valid under the same model id.
The texts cover the edge cases of the pipeline: empty, padded beside long texts, non-ASCII,
between tokenizer.json's own 128-token cap and max_seq_length (256), and past 256 (truncated).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

TEXTS = [
    "find the weather forecast for Paris tomorrow",
    "  Create a GitHub issue about the login bug  ",
    "Überprüfe die Wettervorhersage für 東京 und München",
    "list_pull_requests: List pull requests in a GitHub repository. owner (string), repo (string), state",
    "",
    "a " * 140,
    " ".join(f"parameter{i} describes the page size of a paginated search" for i in range(60)),
    "read the contents of a text file",
    "git_log(repo_path: str, max_count?: int) → Shows the commit logs",
    "wie spät ist es in Tokio",
]

OUT = Path(__file__).with_name("minilm_reference.npz")


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    from votr_mcp.index.minilm import minilm_model_dir

    model = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    vectors = model.encode(TEXTS, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    made_with = f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
    np.savez_compressed(OUT, texts=np.asarray(TEXTS, dtype=np.str_), vectors=vectors.astype(np.float32),
                        made_with=np.asarray(made_with))
    print(f"wrote {OUT} ({len(TEXTS)} vectors, {made_with})")


if __name__ == "__main__":
    main()
