"""Ends the server process groups of a votr-mcp that died without stopping them (SIGKILL, the OOM killer).

votr-mcp runs this file as a script (``python -I -S _reaper.py``, see ``_stdio.py``) in a
session of its own, its stdin the read end of a pipe whose write end only votr-mcp holds.
votr-mcp writes ``+PGID`` when it starts a server in a process group of its own and ``-PGID``
once it has stopped that group. End of file means votr-mcp has exited, however it exited: every
group still listed then gets SIGTERM, and SIGKILL after a grace period. After a clean exit none
is listed, so a graceful stop behaves exactly as without the reaper.

A pipe reaches end of file on every POSIX system; the parent-death signal of Linux
(``PR_SET_PDEATHSIG``) would reach only a direct child, not what npx, sh or uvx start below it.
Standard library only and imported by nothing, so that it starts in a few milliseconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable

GRACE = 1.0  # seconds between SIGTERM and SIGKILL, for servers that clean up on SIGTERM
POLL = 0.05


def read_groups(lines: Iterable[bytes]) -> set[int]:
    """The process groups still listed when ``lines`` (``+PGID`` or ``-PGID`` each) end."""
    groups: set[int] = set()
    for line in lines:
        sign, number = line[:1], line[1:].strip()
        if not number.isdigit():
            continue
        if sign == b"+":
            groups.add(int(number))
        elif sign == b"-":
            groups.discard(int(number))
    return groups


def reap(groups: set[int], grace: float = GRACE) -> None:
    """SIGTERM every group, then SIGKILL those still there after ``grace`` seconds."""
    live = {g for g in groups if _signal(g, signal.SIGTERM)}
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        time.sleep(POLL)
        live = {g for g in live if _signal(g, 0)}
    for group in live:
        _signal(group, signal.SIGKILL)


def _signal(pgid: int, sig: int) -> bool:
    """Whether group ``pgid`` still existed to receive ``sig``."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def main() -> None:
    # In a session of its own no terminal signal reaches it; a stray SIGINT must not either.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reap(read_groups(sys.stdin.buffer))


if __name__ == "__main__":
    main()
