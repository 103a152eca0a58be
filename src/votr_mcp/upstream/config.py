"""The upstream config file: which MCP servers votr-mcp connects to, and how.

The file uses the ``mcpServers`` shape of Claude Desktop and Claude Code, so an existing
``claude_desktop_config.json`` can be pointed at directly (other top-level keys are
ignored; VS Code's ``servers`` key is read when ``mcpServers`` is absent)::

    {"mcpServers": {
        "time":   {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "remote": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "slow":   {"command": "slow-server", "timeout": 120,
                   "votr": {"trust": "auto", "pinned": ["search"], "polling": ["job_status"],
                            "loop_hints": {"fetch": "Pages behind a login return 403: ask the user."}}}
    }}

An entry with ``url`` is remote: ``type``/``transport`` ``"http"`` (also
``"streamable-http"``) or ``"sse"``; without one, a URL ending in ``/sse`` means SSE and
anything else streamable HTTP. ``${VAR}`` and ``${VAR:-default}`` in command, args, env,
cwd, url and headers are expanded from the environment given to :func:`load_upstreams`.

votr's own per-server settings live under ``"votr"`` (``timeout``, ``startup_timeout``,
``disabled``, ``trust``, ``pinned``, ``polling``, ``loop_hints``); ``timeout`` and
``disabled`` are also read at the top of an entry, where other clients (Cline, Roo) put
them. ``trust`` defaults to ``"manual"``: a tool whose definition changes after it was
indexed, or that the server adds after its first harvest, is held back until accepted;
``"auto"`` is the per-server opt-out (not for tools that look poisoned).

A bad entry becomes a :class:`ConfigProblem` naming the entry and the field, and is left
out; the other entries still load. Unknown fields are reported as warnings and ignored.
Only a file that cannot be read at all raises :class:`~votr_mcp.errors.ConfigError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from votr_mcp.errors import ConfigError
from votr_mcp.upstream.config_entry import parse_entry
from votr_mcp.upstream.config_model import (
    DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    MAX_NESTING,
    NESTING_ENV,
    ConfigProblem,
    Transport,
    Trust,
    UpstreamConfig,
    UpstreamsConfig,
    launches_votr,
    nesting,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "MAX_NESTING",
    "NESTING_ENV",
    "ConfigProblem",
    "Transport",
    "Trust",
    "UpstreamConfig",
    "UpstreamsConfig",
    "launches_votr",
    "load_upstreams",
    "nesting",
    "parse_upstreams",
]


def load_upstreams(path: str | Path, environ: Mapping[str, str] | None = None) -> UpstreamsConfig:
    """Read an ``mcpServers`` config file; ``environ`` (default: the process's) fills ``${VAR}``."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file '{file}' does not exist; pass a JSON file with an 'mcpServers' object") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file '{file}': {exc}") from exc
    repeated: list[str] = []

    def keep_last(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # JSON lets a key repeat and keeps the last value: two servers with one name would
        # silently become one, so say so.
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        return dict(pairs)

    try:
        document = json.loads(text, object_pairs_hook=keep_last)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config file '{file}' is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc
    config = parse_upstreams(document, environ=os.environ if environ is None else environ, source=str(file))
    if not repeated:
        return config
    notes = tuple(
        ConfigProblem(None, None, f"the key '{key}' appears more than once in '{file}'; only its last value is used", "warning")
        for key in dict.fromkeys(repeated)
    )
    return UpstreamsConfig(config.servers, notes + config.problems, config.source)


def parse_upstreams(document: Any, environ: Mapping[str, str] | None = None, source: str | None = None) -> UpstreamsConfig:
    """Validate an already-parsed config document; see the module docstring for the shape."""
    where = f"'{source}'" if source else "the config"
    if not isinstance(document, dict):
        raise ConfigError(f"{where} must be a JSON object with an 'mcpServers' object, got {type(document).__name__}")
    key = "mcpServers" if "mcpServers" in document else "servers" if "servers" in document else None
    if key is None:
        raise ConfigError(f"{where} has no 'mcpServers' object; add one mapping server names to their settings")
    entries = document[key]
    if not isinstance(entries, dict):
        raise ConfigError(f"'{key}' in {where} must be an object mapping server names to settings, got {type(entries).__name__}")
    env = environ if environ is not None else {}
    servers: list[UpstreamConfig] = []
    problems: list[ConfigProblem] = []
    for name, raw in entries.items():
        entry_problems: list[ConfigProblem] = []
        server = parse_entry(name, raw, env, entry_problems)
        problems.extend(entry_problems)
        if server is not None and not any(p.severity == "error" for p in entry_problems):
            servers.append(server)
    return UpstreamsConfig(tuple(servers), tuple(problems), source)
