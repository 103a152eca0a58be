"""The session layer is plain library code: the protocol and async layers stay out of it."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_session_layer_loads_no_mcp_anyio_or_sqlite() -> None:
    code = (
        "import sys, votr_mcp.session; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'mcp', 'anyio', 'apsw', 'sqlite3', 'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
