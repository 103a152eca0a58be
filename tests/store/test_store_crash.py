"""A real `votr-mcp index` process killed with SIGKILL part way: the store stays consistent
and the next run embeds only what the killed one had not stored."""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from votr_mcp.store import Store

pytestmark = pytest.mark.slow

VERBS = ["create", "delete", "list", "update", "export", "archive", "share", "search"]
THINGS = ["invoice", "calendar event", "pull request", "spreadsheet row", "support ticket",
          "playlist", "DNS record", "shipping label", "vector index", "payroll entry"]


def write_catalog(path: Path) -> int:
    """160 distinct tools (8 verbs x 10 things x 2 servers) in the bench JSONL format."""
    lines = []
    for server in ("acme", "globex"):
        for verb in VERBS:
            for thing in THINGS:
                name = f"{verb}_{thing.replace(' ', '_').lower()}"
                lines.append(json.dumps({"server": server, "server_description": f"{server.title()} business suite.",
                                         "name": name, "description": f"{verb.title()} a {thing} in {server.title()}.",
                                         "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}}}))
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def index_command(catalog: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "votr_mcp.cli", "index", "--catalog", str(catalog), "--store", str(store),
            "--batch-size", "8", "--json"]


def kill_after_progress(command: list[str], done_at_least: int, timeout: float) -> None:
    """Run ``command`` and SIGKILL it once its progress bar reports ``done_at_least`` texts."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stderr, selectors.EVENT_READ)  # type: ignore[arg-type]
            while True:
                left = deadline - time.monotonic()
                assert left > 0, f"no progress to {done_at_least} within {timeout} s; stderr: {seen[-2000:]!r}"
                if not selector.select(left):
                    continue
                chunk = os.read(proc.stderr.fileno(), 65536)  # type: ignore[union-attr]
                assert chunk, f"index exited (code {proc.wait()}) before it was killed; stderr: {seen[-2000:]!r}"
                seen += chunk
                counts = [int(m) for m in re.findall(rb"embedding:[^|]*\|[^|]*\| *(\d+)/\d+ \[", seen)]
                if counts and max(counts) >= done_at_least:
                    break
    finally:
        proc.kill()  # SIGKILL: no cleanup handlers run
        proc.wait(timeout=30)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -9


def test_an_index_run_killed_part_way_leaves_a_consistent_store_and_the_next_run_resumes(tmp_path: Path) -> None:
    catalog, store_file = tmp_path / "tools.jsonl", tmp_path / "registry.sqlite3"
    total = write_catalog(catalog)
    kill_after_progress(index_command(catalog, store_file), done_at_least=24, timeout=180)

    with Store.open(store_file) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = store.conn.execute("SELECT count(*) FROM embeddings").fetchall()[0][0]
        assert 24 <= stored < total and stored % 8 == 0  # whole batches only
        assert store.conn.execute("SELECT count(*) FROM tools").fetchall()[0][0] == 0  # harvest not half recorded
        assert store.interrupted_runs() == 1

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(index_command(catalog, store_file), capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["tools"] == total
    assert figures["embedded"] == total - stored  # only what the killed run had not stored
    assert figures["new"] == total
    with Store.open(store_file) as store:
        assert [r.status for r in store.registry.records()] == ["active"] * total
        assert store.interrupted_runs() == 1  # the killed one; this one finished
