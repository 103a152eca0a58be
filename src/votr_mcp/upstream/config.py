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
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from votr_mcp.errors import ConfigError
from votr_mcp.settings import describe

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
    # Example requests per tool (they join what votr learns from use, votr_mcp.learning), the
    # server's categories (search_tools' 'categories' filter) and a one-line workflow hint per tool.
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
        typed = _fields(raw)
        if transport == "stdio":
            if "url" in raw:
                raise _Bad("url", "a stdio entry takes 'command', not 'url'; drop one, or set \"type\": \"http\"/\"sse\"")
            if typed.command is None:
                raise _Bad("command", "missing; it must be a non-empty string")
            command = _expand(typed.command, env, "command")
            args = tuple(_expand(a, env, f"args[{i}]") for i, a in enumerate(typed.args))
            if launches_votr(command, args):
                raise _Bad("command", "this entry starts votr-mcp itself (is --config the file that launches votr-mcp?); "
                                      "proxying itself, it would start another votr-mcp with the same config, and so on")
            return UpstreamConfig(
                name=name,
                transport="stdio",
                command=command,
                args=args,
                env={k: _expand(v, env, f"env.{k}") for k, v in (typed.env or {}).items()},
                cwd=_expand_optional(typed.cwd, env, "cwd"),
                **settings,
            )
        if "command" in raw:
            raise _Bad("command", f"a {transport} entry takes 'url', not 'command'; drop one of them")
        if typed.url is None:
            raise _Bad("url", "missing; it must be a non-empty string")
        url = _expand(typed.url, env, "url")
        if not re.match(r"^https?://", url):
            raise _Bad("url", f"'{url}' is not an http:// or https:// URL")
        return UpstreamConfig(
            name=name,
            transport=transport,
            url=url,
            headers={k: _expand(v, env, f"headers.{k}") for k, v in (typed.headers or {}).items()},
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


# The fields of an entry and of its "votr" settings, checked by pydantic (as every settings surface
# is: votr_mcp/settings.py); the checks that span fields (stdio or remote, ${VAR} expansion, an
# entry that starts votr-mcp itself) are the code above. Each field's message says what it must be.
_Name = Annotated[str, Field(strict=True, min_length=1)]
_Text = Annotated[str, Field(strict=True, pattern=r"\S")]
_Seconds = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]


class _Fields(BaseModel):
    """The typed fields of an entry (unknown ones were already warned about)."""

    model_config = ConfigDict(extra="ignore")

    command: _Text | None = None
    args: list[Annotated[str, Field(strict=True)]] = []
    env: dict[str, Annotated[str, Field(strict=True)]] | None = None
    cwd: Annotated[str, Field(strict=True)] | None = None
    url: _Text | None = None
    headers: dict[str, Annotated[str, Field(strict=True)]] | None = None


class _Settings(BaseModel):
    """votr's settings of an entry: under "votr", or (timeout, startup_timeout, disabled) at its top."""

    model_config = ConfigDict(extra="ignore")

    timeout: _Seconds = DEFAULT_TIMEOUT
    startup_timeout: _Seconds = DEFAULT_STARTUP_TIMEOUT
    disabled: Annotated[bool, Field(strict=True)] = False
    trust: Literal["auto", "manual"] = "manual"
    pinned: list[_Name] = []
    polling: list[_Name] = []
    loop_hints: dict[_Name, Annotated[str, Field(strict=True)]] = {}
    examples: dict[_Name, list[_Text]] = {}
    categories: list[_Text] = []
    hints: dict[_Name, Annotated[str, Field(strict=True)]] = {}


_SAYS = {
    "timeout": "must be a positive number of seconds",
    "startup_timeout": "must be a positive number of seconds",
    "disabled": "must be true or false",
    "trust": "must be \"manual\" (hold changed tool definitions for review) or \"auto\" (accept them)",
    "pinned": "must be a list of tool names of this server",
    "polling": "must be a list of tool names of this server",
    "loop_hints": "must map tool names of this server to advice text",
    "examples": "must map tool names of this server to lists of example requests",
    "categories": "must be a list of category names (e.g. [\"code\", \"docs\"])",
    "hints": "must map tool names of this server to a short hint (e.g. \"call list_tables first\")",
    "command": "must be a non-empty string",
    "url": "must be a non-empty string",
    "cwd": "must be a string",
    "args": "must be a list of strings",
    "env": "must be an object of string values",
    "headers": "must be an object of string values",
}
_ITEM_SAYS = {"args": "must be a string, got {value!r}; quote numbers",
              "env": "must be a string, got {value!r}; quote numbers and booleans",
              "headers": "must be a string, got {value!r}; quote numbers and booleans"}


def _first_problem(exc: ValidationError, prefix: str) -> _Bad:
    """The first field pydantic refused, as the entry's problem: its place and what it must be."""
    error = exc.errors(include_url=False)[0]
    loc = [str(p) for p in error.get("loc", ())]
    top, value = loc[0] if loc else "", error.get("input")
    if top in _ITEM_SAYS and len(loc) == 2:
        place = f"{top}[{loc[1]}]" if top == "args" else f"{top}.{loc[1]}"
        return _Bad(prefix + place, _ITEM_SAYS[top].format(value=value))
    if top in ("command", "url") and error.get("type") == "missing":
        return _Bad(prefix + top, "missing; it must be a non-empty string")
    says = _SAYS.get(top, describe(exc))
    return _Bad(prefix + top, f"{says}, got {value!r}")


def _votr_settings(raw: Mapping[str, Any], votr: Mapping[str, Any]) -> dict[str, Any]:
    # Cline and Roo put timeout and disabled at the top of an entry: read there unless "votr" has them.
    given = {**{k: raw[k] for k in ("timeout", "startup_timeout", "disabled") if k in raw}, **votr}
    prefix = {k: "votr." if k in votr else "" for k in given}
    try:
        settings = _Settings.model_validate(given)
    except ValidationError as exc:
        bad = _first_problem(exc, "")
        raise _Bad(prefix.get(str(bad.field), "votr.") + str(bad.field), bad.message) from None
    return {
        "timeout": float(settings.timeout), "startup_timeout": float(settings.startup_timeout),
        "disabled": settings.disabled, "trust": settings.trust,
        "pinned": tuple(settings.pinned), "polling": tuple(settings.polling), "loop_hints": dict(settings.loop_hints),
        "examples": {k: tuple(v) for k, v in settings.examples.items()},
        "categories": tuple(c.strip() for c in settings.categories), "hints": dict(settings.hints),
    }


def _fields(raw: Mapping[str, Any]) -> _Fields:
    try:
        return _Fields.model_validate(raw)
    except ValidationError as exc:
        raise _first_problem(exc, "") from None


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
