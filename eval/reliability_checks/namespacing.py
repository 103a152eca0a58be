"""Namespacing: upstreams with the same tool names, and server names whose call names collide,
behind a real ``votr-mcp serve --config``; every answer must come from the server the call named.

Each upstream is ``_fault_server.py`` answering ``whoami(nonce)`` with its own name and the nonce,
so an answer from the wrong server (a misroute) or for another request (a mix-up) shows.
"""

from __future__ import annotations

import random
import re
import time

import anyio

from . import Finding
from ._proxy import call, fault_entry, leftover, percentile, proxy, text, wait_ready

TWINS = [f"twin{i}" for i in range(8)]
CALLS = 200
IN_FLIGHT = 8


async def twins() -> list[Finding]:
    order = [TWINS[i % len(TWINS)] for i in range(CALLS)]
    random.Random(16).shuffle(order)  # no fixed rhythm between servers
    wrong: list[str] = []
    errors: list[str] = []
    latencies: list[float] = []
    pids: dict[str, set[int]] = {name: set() for name in TWINS}
    limiter = anyio.Semaphore(IN_FLIGHT)
    async with proxy({name: fault_entry(name) for name in TWINS}) as (client, seen):
        await wait_ready(client, TWINS, seen)

        async def one(i: int, target: str) -> None:
            nonce = f"{target}-{i}"  # unique arguments: the loop guard never sees a repeat
            async with limiter:
                began = time.monotonic()
                result = await call(client, f"{target}__whoami", {"nonce": nonce})
                latencies.append(time.monotonic() - began)
            if result.is_error:
                errors.append(f"{target}: {text(result)[:120]}")
                return
            answer = result.structured_content or {}
            pids[target].add(int(answer.get("pid", -1)))
            if answer.get("name") != target or answer.get("nonce") != nonce:
                wrong.append(f"{target}__whoami({nonce}) answered by {answer.get('name')} for {answer.get('nonce')}")

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for i, target in enumerate(order):
                    group.start_soon(one, i, target)
        seen.update(p for found in pids.values() for p in found)
    left = leftover(seen)
    distinct = {p for found in pids.values() for p in found}
    shared = sum(len(found) != 1 for found in pids.values())
    return [
        Finding(f"{CALLS} calls over 8 upstreams with the same tool names, {IN_FLIGHT} in flight: none misrouted or mixed up",
                f"{len(wrong)} misrouted, {len(errors)} errors of {CALLS}; p50 {percentile(latencies, 0.5) * 1000:.0f} ms, "
                f"p95 {percentile(latencies, 0.95) * 1000:.0f} ms{'; e.g. ' + (wrong + errors)[0] if wrong or errors else ''}",
                not wrong and not errors),
        Finding("each of the 8 call-name prefixes reaches one process of its own",
                f"{len(distinct)} distinct pids for 8 servers; {shared} servers answered from more than one pid",
                len(distinct) == len(TWINS) and shared == 0),
        Finding("every upstream process is stopped when votr-mcp exits", f"{left} of {len(seen)} left running", left == 0),
    ]


# Server names whose call names collide: by case (Dup, dup), by slug folding ("dup x", dup_x), and
# by the separator inside a tool name (pre + tool a__whoami, pre__a + tool whoami: both pre__a__whoami).
COLLIDING = {
    "Dup": fault_entry("Dup"), "dup": fault_entry("dup"),
    "dup x": fault_entry("dup x"), "dup_x": fault_entry("dup_x"),
    "pre": fault_entry("pre", "--tool-prefix", "a__"), "pre__a": fault_entry("pre__a"),
}
_SERVER = re.compile(r"^\[server: (.+?)\]")
PER_NAME = 20


async def collisions() -> list[Finding]:
    async with proxy(COLLIDING, "stdio", "--expose", "all") as (client, seen):
        with anyio.fail_after(60):
            holders: dict[str, str] = {}
            while len(holders) < len(COLLIDING):  # until every server's whoami is listed
                listed = await client.list_tools()
                holders = {t.name: m.group(1) for t in listed.tools
                           if t.name.endswith("whoami") or "__whoami-" in t.name
                           if (m := _SERVER.match(t.description or ""))}
                await anyio.sleep(0.2)
            wrong: list[str] = []
            reached: dict[str, set[str]] = {}
            for name, server in sorted(holders.items()):
                for i in range(PER_NAME):
                    result = await call(client, name, {"nonce": f"{name}-{i}"})
                    answer = result.structured_content or {}
                    if result.is_error:
                        wrong.append(f"{name}: error {text(result)[:100]}")
                        continue
                    seen.add(int(answer["pid"]))
                    reached.setdefault(name, set()).add(str(answer.get("name")))
                    if answer.get("name") != server:
                        wrong.append(f"{name} (listed for {server!r}) answered by {answer.get('name')!r}")
            # The plain names every pair would have had: none of them may quietly pick one holder.
            bare = ["Dup__whoami", "dup__whoami", "dup_x__whoami", "pre__a__whoami"]
            picked = []
            for name in bare:
                result = await call(client, name, {"nonce": "bare"})
                if not result.is_error:
                    picked.append(f"{name} -> {(result.structured_content or {}).get('name')}")
    left = leftover(seen)
    servers_reached = {s for found in reached.values() for s in found}
    return [
        Finding(f"6 servers whose call names collide (case, slug, '__' in a tool name) get 6 distinct call names, "
                f"each reaching its own server ({PER_NAME} calls each)",
                f"{len(holders)} call names for 6 whoami tools, {len(servers_reached)} servers reached, "
                f"{len(wrong)} misrouted or failed of {len(holders) * PER_NAME}{'; e.g. ' + wrong[0] if wrong else ''}",
                len(holders) == 6 and len(servers_reached) == 6 and not wrong),
        Finding("a colliding name without its suffix is refused, never routed to one of its holders",
                f"{len(picked)} of {len(bare)} bare names ran{': ' + ', '.join(picked) if picked else ''}", not picked),
        Finding("every upstream process is stopped when votr-mcp exits (colliding names)", f"{left} of {len(seen)} left running",
                left == 0),
    ]


def check_twins() -> list[Finding]:
    return anyio.run(twins)


def check_collisions() -> list[Finding]:
    return anyio.run(collisions)


CHECKS = [check_twins, check_collisions]
