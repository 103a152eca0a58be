"""What the upstream config says, as records: one server's settings (:class:`UpstreamConfig`), one
problem met (:class:`ConfigProblem`), the whole file (:class:`UpstreamsConfig`), and the limits on
votr-mcp starting itself. :mod:`votr_mcp.upstream.config` reads the file into them."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

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
    "nesting",
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


_VOTR_NAMES = re.compile(r"^votr[-_]mcp(?:\.exe|\.cli(?:\.__main__)?|[=@<>~].*)?$", re.IGNORECASE)


def launches_votr(command: str, args: tuple[str, ...] = ()) -> bool:
    """Whether a stdio entry starts votr-mcp: its command is votr-mcp, or an argument names it as a
    program, module or package (``uvx votr-mcp``, ``python -m votr_mcp.cli``, ``pipx run votr-mcp==1.0``)."""
    return any(_VOTR_NAMES.match(Path(part).name) for part in (command, *args) if part and not part.startswith("-"))


def nesting(environ: Mapping[str, str] | None = None) -> int:
    """How many votr-mcp processes started this one (0 when none did; see :data:`NESTING_ENV`)."""
    value = (os.environ if environ is None else environ).get(NESTING_ENV, "0")
    return int(value) if value.isdigit() else 0
