"""Two replicas, one agent session, one replica killed: `python eval/scaleout.py --json OUT`.

Installs nothing. Starts, on loopback, from what setup installed (tests/services.py): a Redis
(sessions), a PostgreSQL (the registry, change control, vectors), a toy upstream MCP server per
replica (tests/upstream/toy_server.py), and two replicas of

    votr-mcp serve --transport http --config toy.json --store postgresql://… --sessions redis://…
                   --binding-mode strict --guard-max-repeats 2 --no-dense

with no sticky routing: the client sends each request to the replica the script names. Strict
binding makes a call succeed only in a session whose search returned the tool, so a call on B
right after a search on A shows that B sees A's session context. Then:

1. search on A (the server mints the session id; the client echoes it from then on);
2. call ``echo`` on B (context_kept: allowed in strict mode, and no "session_id was not used");
3. the same call on A, then A is killed (SIGKILL, mid-session);
4. the same call on B: the loop guard counts A's and B's calls together and trips on the 3rd
   (guard_kept), and refuses the 4th until a new search;
5. search on B with the session id (session_continued: same session, no note that it was replaced);
6. change control: before the replicas started, the store was seeded with an older definition of
   ``whoami``, so both replicas hold back the one their upstream serves now. An operator accepts it
   (``votr-mcp tools accept --store postgresql://…``); B must serve it within a second
   (change_propagated, with the seconds measured).

Writes ``{"session_continued", "context_kept", "guard_kept", "change_propagated", ...}`` with the
evidence of each, and exits 1 when one is false.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from services import postgres_server, redis_server

TOY = ROOT / "tests" / "upstream" / "toy_server.py"
_LISTENING = re.compile(r"serving .* at (http://\S+)")


def log(text: str) -> None:
    print(f"scaleout: {text}", file=sys.stderr, flush=True)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])})
    return env


@contextmanager
def replica(name: str, config: Path, store: str, sessions: str, home: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], list[str]]]:
    """``votr-mcp serve`` over streamable HTTP on a free port; yields (URL, process, stderr lines)."""
    env = _env()
    env["XDG_DATA_HOME"] = str(home / name)
    command = [sys.executable, "-m", "votr_mcp.cli", "serve", "--transport", "http", "--port", "0", "--config", str(config),
               "--store", store, "--sessions", sessions, "--binding-mode", "strict", "--guard-max-repeats", "2", "--no-dense"]
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    lines: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            lines.append(line)
            match = _LISTENING.search(line)
            if match and not found.is_set():
                url.append(match.group(1))
                found.set()
        found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not found.wait(60) or not url:
            raise RuntimeError(f"replica {name} did not start:\n" + "\n".join(lines[-30:]))
        log(f"replica {name} serves at {url[0]}")
        yield url[0], proc, lines
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        else:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what is left of its group: the toy upstream
            except ProcessLookupError:
                pass


def seed(store_url: str, config: Path) -> None:
    """Record the toy server's tools with an older ``whoami``: the replicas' harvest then holds it back."""
    import anyio

    from votr_mcp.catalog import Catalog
    from votr_mcp.store.postgres import PgStore
    from votr_mcp.upstream import harvest
    from votr_mcp.upstream.config import load_upstreams

    result = anyio.run(lambda: harvest(load_upstreams(config, os.environ), timeout=30, errlog=sys.stderr))
    tools = list(result.tools)
    if not any(t.name == "whoami" for t in tools):
        raise RuntimeError(f"the toy server listed no whoami tool: {[t.name for t in tools]}")
    import dataclasses

    older = Catalog(dataclasses.replace(t, description="Report the server's process id (an earlier definition).")
                    if t.name == "whoami" else t for t in tools)
    with PgStore.open(store_url) as store:
        store.registry.sync(older, trust="manual")
    log(f"seeded the store with {len(tools)} toy tools (whoami at an older definition)")


async def _search(url: str, query: str, session_id: str | None) -> dict[str, Any]:
    from mcp import Client

    args: dict[str, Any] = {"query": query}
    if session_id:
        args["session_id"] = session_id
    async with Client(url) as client:
        result = await client.call_tool("search_tools", args)
    return dict(result.structured_content or {})


async def _call(url: str, name: str, arguments: dict[str, Any], session_id: str) -> tuple[bool, str]:
    """(is_error, text) of call_tool on the replica at ``url``."""
    from mcp import Client

    async with Client(url) as client:
        result = await client.call_tool("call_tool", {"name": name, "arguments": arguments, "session_id": session_id})
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text


async def _wait_for(url: str, query: str, want: str, seconds: float) -> bool:
    import anyio

    with anyio.move_on_after(seconds):
        while True:
            found = await _search(url, query, None)
            if any(t["name"] == want for t in found.get("tools", [])):
                return True
            await anyio.sleep(0.2)
    return False


def scenario(out: dict[str, Any]) -> None:
    import anyio

    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="votr-scaleout-")))
        redis_url = stack.enter_context(redis_server())
        log(f"Redis at {redis_url}")
        pg_url = stack.enter_context(postgres_server())
        log(f"PostgreSQL at {pg_url.split('@')[-1]}")
        config = folder / "toy.json"
        config.write_text(json.dumps({"mcpServers": {"toy": {"command": sys.executable, "args": [str(TOY)], "votr": {"trust": "manual"}}}}))
        seed(pg_url, config)
        a_url, a_proc, a_lines = stack.enter_context(replica("A", config, pg_url, redis_url, folder))
        b_url, _b_proc, b_lines = stack.enter_context(replica("B", config, pg_url, redis_url, folder))

        async def run() -> None:
            # Both replicas have harvested their upstream once echo is searchable on each.
            for url in (a_url, b_url):
                if not await _wait_for(url, "echo a message back", "toy__echo", 60):
                    raise RuntimeError(f"{url} never served toy__echo")
            first = await _search(a_url, "echo a message back", None)
            sid = first["session_id"]
            names = [t["name"] for t in first["tools"]]
            out["search_on_A"] = {"tools": names, "whoami_held": "toy__whoami" not in names}
            error, text = await _call(b_url, "toy__echo", {"text": "hello"}, sid)
            out["call_on_B"] = {"is_error": error, "text": text[:300]}
            # The control: a session whose search did not return echo is refused it (strict binding).
            other = await _search(b_url, "report the process id whoami", None)
            refused, why = await _call(b_url, "toy__echo", {"text": "hello"}, other["session_id"])
            out["control_unbound_call_refused"] = refused and "not bound to this session" in why
            out["context_kept"] = (not error and text.strip() == "hello" and "was not used" not in text
                                   and out["control_unbound_call_refused"])
            error2, text2 = await _call(a_url, "toy__echo", {"text": "hello"}, sid)
            out["second_call_on_A"] = {"is_error": error2, "guard_note": "loop guard" in text2}
            os.killpg(a_proc.pid, signal.SIGKILL)
            a_proc.wait(10)
            out["A_killed"] = a_proc.returncode is not None
            error3, text3 = await _call(b_url, "toy__echo", {"text": "hello"}, sid)
            error4, text4 = await _call(b_url, "toy__echo", {"text": "hello"}, sid)
            out["third_call_on_B"] = {"is_error": error3, "guard_note": "loop guard" in text3}
            out["fourth_call_on_B"] = {"is_error": error4, "text": text4[:300]}
            out["guard_kept"] = (not error2 and "loop guard" not in text2 and not error3 and "loop guard" in text3
                                 and error4 and "removed from this session by the loop guard" in text4)
            again = await _search(b_url, "echo a message back", sid)
            replaced = [n for n in again.get("notes", []) if "was not used" in n]
            out["search_on_B_after_kill"] = {"session_id_same": again.get("session_id") == sid, "notes": again.get("notes", [])}
            out["session_continued"] = again.get("session_id") == sid and not replaced and out["context_kept"]
            # Change control across replicas: the operator accepts whoami in the shared store.
            held_before = not await _wait_for(b_url, "report the process id whoami", "toy__whoami", 0.5)
            env = _env()
            accepted = subprocess.run([sys.executable, "-m", "votr_mcp.cli", "tools", "accept", "toy__whoami", "--store", pg_url],
                                      env=env, capture_output=True, text=True, timeout=60)
            started = time.perf_counter()
            served = await _wait_for(b_url, "report the process id whoami", "toy__whoami", 5)
            seconds = time.perf_counter() - started
            out["change"] = {"held_on_B_before": held_before, "accept_exit": accepted.returncode,
                             "served_on_B": served, "seconds_to_serve_on_B": round(seconds, 3)}
            out["change_propagated"] = held_before and accepted.returncode == 0 and served and seconds <= 1.0

        try:
            anyio.run(run)
        except Exception:
            log("replica A log:\n" + "\n".join(a_lines[-20:]))
            log("replica B log:\n" + "\n".join(b_lines[-20:]))
            raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    out: dict[str, Any] = {"session_continued": False, "context_kept": False, "guard_kept": False, "change_propagated": False}
    started = time.perf_counter()
    try:
        scenario(out)
    except Exception as exc:  # the JSON still says what failed
        out["error"] = f"{type(exc).__name__}: {exc}"
        log(out["error"])
    out["seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if all(out[k] for k in ("session_continued", "context_kept", "guard_kept", "change_propagated")) else 1


if __name__ == "__main__":
    sys.exit(main())
