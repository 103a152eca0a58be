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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from votr_mcp.errors import ConfigError

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

NESTING_ENV = "VOTR_MCP_DEPTH"
"""Set in every stdio upstream's environment to one more than votr-mcp's own: how many votr-mcp
processes stand above a process. A config that starts votr-mcp through a wrapper the entry check
cannot see (a shell script, ``uv run``) would otherwise start a chain of them without end."""
MAX_NESTING = 2
"""A votr-mcp this deep (an upstream of an upstream of votr-mcp) starts no upstreams of its own."""

Transport = Literal["stdio", "sse", "http"]
Trust = Literal["auto", "manual"]

DEFAULT_TIMEOUT = 60.0
"""Seconds one upstream request (tools/call, tools/list) may take."""
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds to start a server, finish the handshake and harvest its tools (npx may download)."""

_TRANSPORTS: Mapping[str, Transport] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
}
_ENTRY_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "timeout", "disabled", "votr"}
# Fields other MCP clients write into the same file; they mean nothing here but are not mistakes.
_FOREIGN_KEYS = {"autoApprove", "alwaysAllow", "description", "envFile", "oauth", "icon", "name"}
_VOTR_KEYS = {"timeout", "startup_timeout", "disabled", "trust", "pinned", "polling", "loop_hints", "examples", "categories", "hints"}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class UpstreamConfig:
    """One upstream MCP server: how to reach it and votr's settings for it.

    ``name`` is the ``mcpServers`` key; it is the ``server`` of every tool harvested from it.
    ``pinned`` (always returned by search), ``polling`` (may be called repeatedly without the
    loop guard tripping) and ``loop_hints`` (advice added when the guard trips) name tools
    of this server by their upstream names.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    disabled: bool = False
    trust: Trust = "manual"
    pinned: tuple[str, ...] = ()
    polling: tuple[str, ...] = ()
    loop_hints: Mapping[str, str] = field(default_factory=dict)
    # Issue 18: example requests per tool (they join what votr learns from use), the server's
    # categories (search_tools' 'categories' filter) and a one-line workflow hint per tool.
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    categories: tuple[str, ...] = ()
    hints: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """A one-line description for logs: the command, or the URL without credentials."""
        if self.transport == "stdio":
            return " ".join((self.command or "", *self.args)).strip()
        return f"{self.transport} {self.display_url}"

    @property
    def display_url(self) -> str | None:
        """The URL with any ``user:password@`` removed, for logs and messages."""
        if self.url is None:
            return None
        parts = urlsplit(self.url)
        if "@" not in parts.netloc:
            return self.url
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong with the config: which entry, which field, and what to do."""

    entry: str | None
    field: str | None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        place = "config"
        if self.entry is not None:
            place = f"mcpServers.{self.entry}"
            if self.field:
                place += f".{self.field}"
        elif self.field:
            place = self.field
        lead = "" if self.severity == "error" else "warning: "
        return f"{lead}{place}: {self.message}"


@dataclass(frozen=True, slots=True)
class UpstreamsConfig:
    """Every upstream that loaded (disabled ones included) and every problem met."""

    servers: tuple[UpstreamConfig, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()
    source: str | None = None

    @property
    def enabled(self) -> tuple[UpstreamConfig, ...]:
        return tuple(s for s in self.servers if not s.disabled)

    @property
    def errors(self) -> tuple[ConfigProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    def get(self, name: str) -> UpstreamConfig | None:
        return next((s for s in self.servers if s.name == name), None)


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
        server = _parse_entry(name, raw, env, entry_problems)
        problems.extend(entry_problems)
        if server is not None and not any(p.severity == "error" for p in entry_problems):
            servers.append(server)
    return UpstreamsConfig(tuple(servers), tuple(problems), source)


_VOTR_NAMES = re.compile(r"^votr[-_]mcp(?:\.exe|\.cli(?:\.__main__)?|[=@<>~].*)?$", re.IGNORECASE)


def launches_votr(command: str, args: tuple[str, ...] = ()) -> bool:
    """Whether a stdio entry starts votr-mcp: its command is votr-mcp, or an argument names it as a
    program, module or package (``uvx votr-mcp``, ``python -m votr_mcp.cli``, ``pipx run votr-mcp==1.0``)."""
    return any(_VOTR_NAMES.match(Path(part).name) for part in (command, *args) if part and not part.startswith("-"))


def nesting(environ: Mapping[str, str] | None = None) -> int:
    """How many votr-mcp processes started this one (0 when none did; see :data:`NESTING_ENV`)."""
    value = (os.environ if environ is None else environ).get(NESTING_ENV, "0")
    return int(value) if value.isdigit() else 0


class _Bad(Exception):
    """Raised inside entry parsing: one field is wrong and the entry is skipped."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _parse_entry(name: str, raw: Any, env: Mapping[str, str], problems: list[ConfigProblem]) -> UpstreamConfig | None:
    if not name.strip():
        problems.append(ConfigProblem(name, None, "the server name is empty; give every entry a non-empty name"))
        return None
    if not isinstance(raw, dict):
        problems.append(ConfigProblem(name, None, f"expected an object with 'command' or 'url', got {type(raw).__name__}"))
        return None
    for unknown in sorted(set(raw) - _ENTRY_KEYS - _FOREIGN_KEYS):
        problems.append(ConfigProblem(name, unknown, "unknown field, ignored (votr settings go under \"votr\")", "warning"))
    try:
        votr = raw.get("votr", {})
        if not isinstance(votr, dict):
            raise _Bad("votr", f"must be an object with any of {sorted(_VOTR_KEYS)}, got {type(votr).__name__}")
        for unknown in sorted(set(votr) - _VOTR_KEYS):
            problems.append(ConfigProblem(name, f"votr.{unknown}", f"unknown votr setting, ignored; known: {sorted(_VOTR_KEYS)}", "warning"))
        settings = _votr_settings(raw, votr)
        transport = _transport(raw)
        if transport == "stdio":
            if "url" in raw:
                raise _Bad("url", "a stdio entry takes 'command', not 'url'; drop one, or set \"type\": \"http\"/\"sse\"")
            command = _expand(_string(raw, "command", required=True), env, "command")
            args = tuple(_expand(a, env, f"args[{i}]") for i, a in enumerate(_strings(raw, "args")))
            if launches_votr(command, args):
                raise _Bad("command", "this entry starts votr-mcp itself (is --config the file that launches votr-mcp?); "
                                      "proxying itself, it would start another votr-mcp with the same config, and so on")
            return UpstreamConfig(
                name=name,
                transport="stdio",
                command=command,
                args=args,
                env={k: _expand(v, env, f"env.{k}") for k, v in _string_map(raw, "env").items()},
                cwd=_expand_optional(_string(raw, "cwd"), env, "cwd"),
                **settings,
            )
        if "command" in raw:
            raise _Bad("command", f"a {transport} entry takes 'url', not 'command'; drop one of them")
        url = _expand(_string(raw, "url", required=True), env, "url")
        if not re.match(r"^https?://", url):
            raise _Bad("url", f"'{url}' is not an http:// or https:// URL")
        return UpstreamConfig(
            name=name,
            transport=transport,
            url=url,
            headers={k: _expand(v, env, f"headers.{k}") for k, v in _string_map(raw, "headers").items()},
            **settings,
        )
    except _Bad as bad:
        problems.append(ConfigProblem(name, bad.field, bad.message + "; this server was skipped"))
        return None


def _transport(raw: Mapping[str, Any]) -> Transport:
    field_name = "type" if "type" in raw else "transport" if "transport" in raw else None
    if field_name is None:
        if "command" in raw:
            return "stdio"
        if "url" in raw:
            url = raw["url"]
            return "sse" if isinstance(url, str) and url.rstrip("/").endswith("/sse") else "http"
        raise _Bad("command", "missing: give 'command' (a stdio server) or 'url' (a remote server)")
    value = raw[field_name]
    if not isinstance(value, str) or value.lower() not in _TRANSPORTS:
        raise _Bad(field_name, f"{value!r} is not a transport; use \"stdio\", \"http\" (streamable HTTP) or \"sse\"")
    return _TRANSPORTS[value.lower()]


def _votr_settings(raw: Mapping[str, Any], votr: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, default in (("timeout", DEFAULT_TIMEOUT), ("startup_timeout", DEFAULT_STARTUP_TIMEOUT)):
        source, value = ("votr." + key, votr[key]) if key in votr else (key, raw.get(key, default))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise _Bad(source, f"must be a positive number of seconds, got {value!r}")
        out[key] = float(value)
    source, disabled = ("votr.disabled", votr["disabled"]) if "disabled" in votr else ("disabled", raw.get("disabled", False))
    if not isinstance(disabled, bool):
        raise _Bad(source, f"must be true or false, got {disabled!r}")
    out["disabled"] = disabled
    trust = votr.get("trust", "manual")
    if trust not in ("auto", "manual"):
        raise _Bad("votr.trust", f"must be \"manual\" (hold changed tool definitions for review) or \"auto\" (accept them), got {trust!r}")
    out["trust"] = trust
    for key in ("pinned", "polling"):
        names = votr.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise _Bad(f"votr.{key}", f"must be a list of tool names of this server, got {names!r}")
        out[key] = tuple(names)
    hints = votr.get("loop_hints", {})
    if not isinstance(hints, dict) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in hints.items()):
        raise _Bad("votr.loop_hints", f"must map tool names of this server to advice text, got {hints!r}")
    out["loop_hints"] = dict(hints)
    examples = votr.get("examples", {})
    if not isinstance(examples, dict) or not all(isinstance(k, str) and k and isinstance(v, list) and all(isinstance(e, str) and e.strip() for e in v)
                                                 for k, v in examples.items()):
        raise _Bad("votr.examples", f"must map tool names of this server to lists of example requests, got {examples!r}")
    out["examples"] = {k: tuple(v) for k, v in examples.items()}
    categories = votr.get("categories", [])
    if not isinstance(categories, list) or not all(isinstance(c, str) and c.strip() for c in categories):
        raise _Bad("votr.categories", f"must be a list of category names (e.g. [\"code\", \"docs\"]), got {categories!r}")
    out["categories"] = tuple(c.strip() for c in categories)
    tool_hints = votr.get("hints", {})
    if not isinstance(tool_hints, dict) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in tool_hints.items()):
        raise _Bad("votr.hints", f"must map tool names of this server to a short hint (e.g. \"call list_tables first\"), got {tool_hints!r}")
    out["hints"] = dict(tool_hints)
    return out


def _string(raw: Mapping[str, Any], key: str, required: bool = False) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise _Bad(key, "missing; it must be a non-empty string")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise _Bad(key, f"must be a non-empty string, got {value!r}")
    return value


def _strings(raw: Mapping[str, Any], key: str) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise _Bad(key, f"must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _Bad(f"{key}[{i}]", f"must be a string, got {item!r}; quote numbers")
    return value


def _string_map(raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(key, f"must be an object of string values, got {type(value).__name__}")
    for k, v in value.items():
        if not isinstance(v, str):
            raise _Bad(f"{key}.{k}", f"must be a string, got {v!r}; quote numbers and booleans")
    return dict(value)


def _expand(text: str, env: Mapping[str, str], field_name: str) -> str:
    """Replace ``${VAR}`` / ``${VAR:-default}``; an unset variable without default is an error."""

    def one(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        if variable in env:
            return env[variable]
        if default is not None:
            return default
        raise _Bad(field_name, f"uses ${{{variable}}}, which is not set; set it or write ${{{variable}:-default}}")

    return _VARIABLE.sub(one, text)


def _expand_optional(text: str | None, env: Mapping[str, str], field_name: str) -> str | None:
    return None if text is None else _expand(text, env, field_name)
