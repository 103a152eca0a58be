import subprocess
import sys


def test_importing_the_retrieval_core_loads_no_mcp_sqlite_anyio_or_model():
    code = (
        "import sys, votr_mcp.retrieval, votr_mcp.index\n"
        "bad = [m for m in ('mcp', 'sqlite3', 'apsw', 'anyio', 'torch', 'sentence_transformers', 'onnxruntime', 'tokenizers') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "", f"retrieval core imported {out.stdout.strip()}"
