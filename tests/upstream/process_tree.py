"""Start a real ``votr-mcp serve`` over stdio, stop it one way or another, and count the processes
it started that are still alive afterwards (read from /proc, so Linux only).

Shared by tests/upstream/test_orphans.py and eval/reliability_checks/orphans.py:

    outcome = serve_and_stop(served_config(workdir), workdir, SERVED, how="kill")
    outcome.left   # processes votr-mcp started (children, grandchildren) alive `within` seconds later

A process is named by (pid, start time), so a pid the kernel hands out again is not taken for
one of ours. Everything still alive at the end is SIGKILLed, whatever happened.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import upstream_servers

__all__ = ["HOW", "SERVED", "Outcome", "Proc", "alive", "descendants", "serve_and_stop", "served_config", "serving"]

Proc = tuple[int, int]
"""(pid, start time in clock ticks since boot): one process, even after its pid is reused."""

HOW = ("kill", "term", "eof")
"""How ``serve_and_stop`` stops votr-mcp: SIGKILL, SIGTERM, or closing its stdin (the client went away)."""

SERVED: dict[str, str] = {
    "memory": "mcp-server-memory",  # through npx: npm exec -> sh -> node
    "everything": "mcp-server-everything",  # node
    "time": "mcp-server-time",  # python (PyPI)
    "helper": "toy_server.py",  # python, with a helper process of its own that does not read the MCP pipe
    "helper's child": "sleep",
}
"""What :func:`served_config` starts, each named by the program its process runs (see :func:`serving`)."""

TOY = Path(__file__).resolve().parent / "toy_server.py"
_POLL = 0.05


def served_config(workdir: Path) -> Path:
    """A config file starting :data:`SERVED` as users configure them (memory through npx); skips when not installed.

    The real servers all exit when their stdin closes, so on their own they outlive a killed
    votr-mcp only by their exit time. What a server starts that does not read its stdin (a browser,
    a language server; here toy_server.py's ``sleep``) has nothing to notice.
    """
    config = upstream_servers.servers_config(workdir / "upstreams", ["everything", "time", "memory"])
    config["mcpServers"]["memory"] |= {"command": "npx", "args": ["--no-install", "mcp-server-memory"],
                                        "cwd": str(upstream_servers.SERVERS_DIR)}
    config["mcpServers"]["helper"] = {"command": sys.executable, "args": [str(TOY), "--grandchild"]}
    return upstream_servers.write_config(workdir / "upstreams.json", config)


@dataclass
class Outcome:
    """One serve-and-stop: what votr-mcp had started, and what of it outlived it."""

    started: list[Proc] = field(default_factory=list)
    left: list[Proc] = field(default_factory=list)
    seconds: float = 0.0
    """From stopping votr-mcp until its last process was gone (or ``within`` ran out)."""
    exited: bool = False
    """Whether votr-mcp exited by itself (a graceful stop) rather than being killed after waiting."""

    commands: dict[int, str] = field(default_factory=dict)
    """The command line of each process in ``left``, read before the clean-up killed it."""

    def describe(self) -> str:
        return ", ".join(f"{pid} {self.commands.get(pid, '')[:120]!r}" for pid, _ in self.left)


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def _table() -> dict[int, list[str]]:
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            table[int(entry)] = fields
    return table


def descendants(pid: int) -> list[Proc]:
    """Every live (non-zombie) process below ``pid``: children, grandchildren and so on."""
    table = _table()
    children: dict[int, list[int]] = {}
    for child, fields in table.items():
        children.setdefault(int(fields[1]), []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if table[child][0] not in ("Z", "X"):
                found.append((child, int(table[child][19])))
    return found


def alive(procs: Iterable[Proc], sessions: Iterable[int] = ()) -> list[Proc]:
    """Those of ``procs`` still running (not zombies), plus any live member of ``sessions``.

    The sessions catch what a server started after the snapshot was taken: it shares its session.
    """
    wanted = set(procs)
    sids = set(sessions)
    found = []
    for pid, fields in _table().items():
        if fields[0] in ("Z", "X"):
            continue
        proc = (pid, int(fields[19]))
        if proc in wanted or int(fields[3]) in sids:
            found.append(proc)
    return found


def _kill(procs: Iterable[Proc]) -> None:
    for pid, _ in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def serving(procs: Iterable[Proc], programs: Mapping[str, str]) -> set[str]:
    """Which ``programs`` (name -> program, e.g. ``{"memory": "mcp-server-memory"}``) run among ``procs``.

    A process runs a program when it is its executable or the script its interpreter runs (argv 0
    or 1). Wrappers that merely name it (``npx ... mcp-server-memory``, ``sh -c``) do not count.
    """
    found = set()
    for pid, _ in procs:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = [a.decode("utf-8", errors="replace") for a in cmdline.read().split(b"\0") if a]
        except OSError:
            continue
        ran = {Path(a).name for a in argv[:2]}
        found |= {name for name, program in programs.items() if program in ran}
    return found


def serve_and_stop(config: Path, workdir: Path, programs: Mapping[str, str], how: str = "kill", *,
                   start_within: float = 90.0, within: float = 5.0) -> Outcome:
    """Start ``votr-mcp serve --config config`` over stdio, wait until every one of ``programs`` runs
    (see :func:`serving`), stop votr-mcp ``how`` (one of :data:`HOW`), and wait up to ``within`` seconds for
    everything it started to go once votr-mcp is gone (a graceful stop that has not ended votr-mcp
    within ``within + 15`` seconds is ended by SIGKILL). Raises TimeoutError when the servers do not all start in time.
    """
    if how not in HOW:
        raise ValueError(f"how={how!r}; choose one of {HOW}")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "XDG_DATA_HOME": str(workdir / "data")}
    env.pop("VOTR_MCP_DEPTH", None)
    command = [sys.executable, "-m", "votr_mcp.cli", "serve", "--config", str(config), "--no-dense",
               "--store", str(workdir / "store.sqlite3")]
    outcome = Outcome()
    sessions: set[int] = set()
    with open(workdir / "serve.log", "ab") as log:
        top = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log, env=env)
    try:
        deadline = time.monotonic() + start_within
        while serving(outcome.started, programs) != set(programs):
            if time.monotonic() > deadline or top.poll() is not None:
                raise TimeoutError(f"after {start_within:.0f} s votr-mcp runs {sorted(serving(outcome.started, programs))} "
                                   f"of {sorted(programs)} (exit code {top.returncode}; log in {workdir / 'serve.log'})")
            time.sleep(0.2)
            outcome.started = sorted(set(outcome.started) | set(descendants(top.pid)))
        time.sleep(0.5)  # let what the servers start in turn appear too
        outcome.started = sorted(set(outcome.started) | set(descendants(top.pid)))
        # Sessions other than votr-mcp's own (a server's): whatever joins them later is the server's too.
        own = os.getsid(top.pid)
        sessions = {sid for pid, _ in outcome.started if (sid := _session(pid)) not in (None, own)}
        stopped = time.monotonic()
        if how == "kill":
            top.kill()
        elif how == "term":
            top.terminate()
        else:
            assert top.stdin is not None
            top.stdin.close()
        try:
            top.wait(within + 15)  # a graceful stop may take its own grace periods
            outcome.exited = how != "kill"
        except subprocess.TimeoutExpired:
            top.kill()
            top.wait()
        end = time.monotonic() + within  # from votr-mcp's exit: a graceful stop may take its own time
        while (left := alive(outcome.started, sessions)) and time.monotonic() < end:
            time.sleep(_POLL)
        outcome.left = left
        outcome.commands = {pid: _cmdline(pid) for pid, _ in left}
        outcome.seconds = time.monotonic() - stopped
        return outcome
    finally:
        if top.poll() is None:
            top.kill()
            top.wait()
        if top.stdin is not None:
            top.stdin.close()
        _kill(alive(outcome.started, sessions))


def _session(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[3]) if fields is not None else None
