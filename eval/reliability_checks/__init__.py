"""Attack and fault checks run by ``python eval/reliability.py``: one module per concern.

Each module defines ``CHECKS``: a list of callables ``check() -> Finding``, each bounded in time,
on loopback only, cleaning up every process it starts (an exception is reported as a failed
finding with its message, never a hang: the runner gives each check a deadline).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One measured property: what must hold, the figure measured, and whether it held."""

    prop: str  # e.g. "stdio: malformed JSON-RPC lines answered with -32700/-32600"
    figure: str  # e.g. "1473 of 1473 answered"
    ok: bool
    command: str = ""  # how to reproduce this one figure (empty: the runner's own command)
