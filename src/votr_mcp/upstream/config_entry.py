"""One ``mcpServers`` entry read into an :class:`~votr_mcp.upstream.config_model.UpstreamConfig`, or
into the :class:`~votr_mcp.upstream.config_model.ConfigProblem` that says which field is wrong and how."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from votr_mcp.settings import describe
from votr_mcp.upstream.config_model import (
    DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    ConfigProblem,
    Transport,
    UpstreamConfig,
    launches_votr,
)

__all__ = ["parse_entry"]

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


class _Bad(Exception):
    """Raised inside entry parsing: one field is wrong and the entry is skipped."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def parse_entry(name: str, raw: Any, env: Mapping[str, str], problems: list[ConfigProblem]) -> UpstreamConfig | None:
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

