"""Environment isolation: each stdio upstream gets the SDK's safe defaults (HOME, PATH, ...) and its
own ``env`` entries, nothing of votr-mcp's environment and nothing of another upstream's ``env``.

Secrets sit in votr-mcp's own environment (``VOTR_TEST_SECRET``, ``VOTR_MCP_TOKEN``, a cloud key)
and in one upstream's ``env`` (another value of ``VOTR_TEST_SECRET``, and a token of its own). Each
upstream reports its ``os.environ``; a leak is a secret value seen by an upstream it was not given to,
under any variable name. The same count is taken again after one upstream is killed and restarted.
"""

from __future__ import annotations

import itertools
import os
import secrets
import signal

import anyio
from mcp import Client
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from . import Finding
from ._proxy import call, fault_entry, leftover, proxy, text, wait_ready

NAMES = [f"env{i}" for i in range(4)]
OWNER = "env0"
NESTING = "VOTR_MCP_DEPTH"  # votr-mcp's own marker against launching itself (src/votr_mcp/upstream/config.py)
# Set by the child Python itself when the locale is C (PEP 538), not passed by votr-mcp.
SELF_SET = {"LC_CTYPE"}


async def environments(client: Client, names: list[str]) -> dict[str, dict[str, str]]:
    found = {}
    for name in names:
        result = await call(client, f"{name}__environment")
        if result.is_error:
            raise AssertionError(f"{name}__environment failed: {text(result)}")
        found[name] = dict(result.structured_content["env"])
    return found


def leaks(seen: dict[str, dict[str, str]], votr_secrets: set[str], owned: dict[str, dict[str, str]]) -> list[str]:
    """Secret values an upstream holds that were not given to it: votr's own, or another entry's."""
    found = []
    for name, env in seen.items():
        foreign = votr_secrets | {v for other, given in owned.items() if other != name for v in given.values()}
        foreign -= set(owned.get(name, {}).values())
        for key, value in env.items():
            for secret in foreign:
                if secret in value:
                    found.append(f"{name} sees {key}=<{'votr' if secret in votr_secrets else 'another upstream'}'s secret>")
    return found


def unexpected_keys(seen: dict[str, dict[str, str]], owned: dict[str, dict[str, str]]) -> list[str]:
    allowed = set(DEFAULT_INHERITED_ENV_VARS) | {NESTING} | SELF_SET
    return [f"{name}:{key}" for name, env in seen.items() for key in env if key not in allowed | set(owned.get(name, {}))]


async def isolation() -> list[Finding]:
    votr_env = {"VOTR_TEST_SECRET": "votr-" + secrets.token_hex(8), "VOTR_MCP_TOKEN": "token-" + secrets.token_hex(8),
                "AWS_SECRET_ACCESS_KEY": "aws-" + secrets.token_hex(8)}
    owned = {OWNER: {"VOTR_TEST_SECRET": "own-" + secrets.token_hex(8), "OWNER_TOKEN": "owner-" + secrets.token_hex(8)}}
    servers = {name: fault_entry(name, env=owned.get(name)) for name in NAMES}
    async with proxy(servers, env=votr_env) as (client, pids):
        with anyio.fail_after(60):
            await wait_ready(client, NAMES, pids)
            first = await environments(client, NAMES)
            # A restarted upstream is started from the same entry: it must get no more than the first time.
            victim = (await call(client, "env1__whoami", {"nonce": "victim"})).structured_content["pid"]
            os.kill(int(victim), signal.SIGKILL)
            for attempt in itertools.count():
                result = await call(client, "env1__whoami", {"nonce": f"again-{attempt}"})
                if not result.is_error and result.structured_content["pid"] != victim:
                    pids.add(int(result.structured_content["pid"]))
                    break
                await anyio.sleep(0.2)
            again = await environments(client, ["env1"])
    left = leftover(pids)
    secrets_votr = set(votr_env.values())
    before, after = leaks(first, secrets_votr, owned), leaks(again, secrets_votr, owned)
    extra = unexpected_keys(first, owned) + unexpected_keys(again, owned)
    given = first[OWNER]
    own_ok = all(given.get(k) == v for k, v in owned[OWNER].items())
    defaults = sum(k in first["env2"] for k in DEFAULT_INHERITED_ENV_VARS if k in os.environ)
    expected_defaults = sum(k in os.environ for k in DEFAULT_INHERITED_ENV_VARS)
    return [
        Finding(f"no secret of votr-mcp's environment ({len(votr_env)}) or of {OWNER}'s env ({len(owned[OWNER])}) reaches another upstream "
                f"({len(NAMES)} upstreams, then 1 restarted)",
                f"{len(before)} leaks at start, {len(after)} after a restart{'; e.g. ' + (before + after)[0] if before or after else ''}",
                not before and not after),
        Finding("an upstream's environment holds only the SDK's safe defaults, its own env and votr's nesting marker",
                f"{len(extra)} other variables{': ' + ', '.join(sorted(set(extra))[:8]) if extra else ''}", not extra),
        Finding(f"{OWNER} gets its own env entries (its value of VOTR_TEST_SECRET over votr's) and the safe defaults",
                f"{sum(given.get(k) == v for k, v in owned[OWNER].items())} of {len(owned[OWNER])} own entries, "
                f"{defaults} of {expected_defaults} defaults present",
                own_ok and defaults == expected_defaults),
        Finding("every upstream process is stopped when votr-mcp exits (env isolation)", f"{left} of {len(pids)} left running", left == 0),
    ]


def check_isolation() -> list[Finding]:
    return anyio.run(isolation)


CHECKS = [check_isolation]
