"""Export MiniLM's BERT encoder to ONNX, in a child process: ``python -m votr_mcp.index.onnx_export``.

Run as a subprocess on purpose: the export needs torch and transformers (seconds to import, GBs
of address space), and ONNX Runtime was measured ~6x slower (39 vs 6 ms per query) in a process
where a torch model had been loaded and exported. The serving process never imports torch.

The graph is the bare encoder (``input_ids, attention_mask, token_type_ids -> last_hidden_state``);
tokenizing, mean pooling and normalising stay in :mod:`votr_mcp.index.onnx_embed`, in numpy.
It is traced on a padded batch so the attention mask stays in the graph (transformers drops an
all-ones mask while tracing, which would make padded batches wrong). The file is written to a
temporary name beside ``out`` and renamed, so a reader never sees half a file and two processes
racing each rename a complete one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import warnings
from pathlib import Path

__all__ = ["export_minilm", "export_in_subprocess", "main"]

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_minilm(model_dir: Path, out: Path) -> None:
    """Write the ONNX graph of the BERT encoder under ``model_dir`` (a sentence-transformers folder) to ``out``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel

    torch.set_num_threads(1)
    bert = AutoModel.from_pretrained(str(model_dir)).eval()

    class Encoder(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
            # keywords: positional arguments collide with use_cache in BertModel.forward
            return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    # Two rows of different lengths: the mask has zeros, so tracing keeps it as a graph input.
    ids = torch.tensor([[101, 7592, 2088, 2003, 102], [101, 7592, 102, 0, 0]])
    mask = (ids != 0).long()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    try:
        with warnings.catch_warnings(), torch.no_grad():
            # The TorchScript exporter is deprecated (DeprecationWarning) and tracing warns about
            # Python branches on shapes that are constant for an encoder; neither changes the graph.
            warnings.simplefilter("ignore")
            torch.onnx.export(Encoder(bert), (ids, mask, torch.zeros_like(ids)), str(tmp), input_names=list(INPUTS),
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def export_in_subprocess(model_dir: Path, out: Path, *, timeout: float = 600.0) -> None:
    """Run :func:`export_minilm` in a fresh interpreter; raise ``RuntimeError`` with its stderr tail on failure.

    Both output streams are captured: stdout may be the MCP stdio channel of the parent.
    """
    cmd = [sys.executable, "-m", "votr_mcp.index.onnx_export", "--model", str(model_dir), "--out", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"ONNX export did not run: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"ONNX export exited {done.returncode}: {' | '.join(tail)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Export the MiniLM encoder to ONNX (run by votr-mcp on first use).")
    parser.add_argument("--model", type=Path, required=True, help="sentence-transformers model folder")
    parser.add_argument("--out", type=Path, required=True, help="the .onnx file to write (atomically)")
    args = parser.parse_args(argv)
    try:
        export_minilm(args.model, args.out)
    except ImportError as exc:
        sys.stderr.write(f"cannot export to ONNX: {exc}; pip install torch==2.13.0 onnx\n")
        return 3
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
