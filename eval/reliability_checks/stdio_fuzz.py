"""stdio: malformed lines are answered as JSON-RPC 2.0 §5 requires, and a large result crosses in linear time.

The lines and their expected answers come from tests/server/stdio_raw.py (seeded), so the test
suite and this report measure the same thing.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "server"))

from stdio_raw import KINDS, exchange, make_cases, time_big_call
from votr_serving import CATALOG, HERE, http_server

from reliability_checks import Finding

CASES, SEED = 1_500, 16
BIG = 50_000_000


def malformed_lines_answered() -> Finding:
    cases = make_cases(CASES, SEED)
    started = time.monotonic()
    outcome = anyio.run(lambda: exchange(cases, ["--catalog", str(CATALOG), "--no-dense", "--store", "none"], timeout=120))
    served = outcome.tools_after == ["search_tools", "call_tool"]
    figure = (f"{outcome.answered} of {outcome.due} due answers right ({CASES} lines of {len(KINDS)} kinds, seed {SEED}, "
              f"{time.monotonic() - started:.1f} s); tools/list after: {'answered' if served else 'NOT answered'}")
    if outcome.problems:
        figure += f"; {len(outcome.problems)} problems, first: {outcome.problems[0]}"
    return Finding("stdio: every malformed line that deserves an answer gets exactly one, as JSON-RPC 2.0 §5 requires "
                   "(-32700; -32600 with the id when readable; -32601), none for notifications; serving goes on",
                   figure, outcome.answered == outcome.due and not outcome.problems and served)


def big_result_linear() -> Finding:
    with tempfile.TemporaryDirectory(prefix="votr-reliability-") as tmp:
        config = Path(tmp) / "upstreams.json"
        config.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": [str(HERE / "big_server.py")]}}}))
        args = ["--config", str(config), "--no-dense", "--store", "none"]
        stdio = anyio.run(time_big_call, args, BIG)
        http = anyio.run(_time_big_call_http, args, BIG)
    return Finding(f"stdio: a {BIG // 1_000_000} MB upstream result through call_tool costs about what HTTP costs",
                   f"stdio {stdio:.2f} s, streamable HTTP {http:.2f} s (SDK client)", stdio < max(3 * http, 2.0))


async def _time_big_call_http(args: list[str], size: int) -> float:
    from mcp import Client

    async with http_server("http", args) as (url, _lines), Client(url) as client:
        with anyio.fail_after(60):
            while (await client.call_tool("call_tool", {"name": "big__blob", "arguments": {"size": 10}})).is_error:
                await anyio.sleep(0.1)  # the upstream is still starting
            started = time.perf_counter()
            result = await client.call_tool("call_tool", {"name": "big__blob", "arguments": {"size": size}})
            seconds = time.perf_counter() - started
    text = result.content[0].text  # type: ignore[union-attr]
    assert len(text) == size, f"HTTP returned {len(text)} characters, not {size}"
    return seconds


CHECKS = [malformed_lines_answered, big_result_linear]
