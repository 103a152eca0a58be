"""How to start the real reference MCP servers that scripts/install-test-servers.sh installs.

Shared by the tests (through fixtures in tests/conftest.py, or imported as ``upstream_servers``)
and by scripts/capture_registry.py, so the registry and the tests start each server the same way.

    config = servers_config(tmp_path)                     # {"mcpServers": {name: entry, ...}}
    config = servers_config(tmp_path, ["memory", "git"])  # only some
    path = write_config(tmp_path / "upstreams.json", config)
    result = run_inspector(stdio_target(config["mcpServers"]["memory"]), "tools/list")

Every server is confined to a folder the caller owns (files, git repository, memory file,
SQLite database), so tests never touch the checkout or the user's home. Names are the
``mcpServers`` keys, which are also the server names in registry/ and in call names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CORE",
    "EVERY",
    "INSTALL_HINT",
    "InspectorResult",
    "SERVERS",
    "ServerSpec",
    "VOTR_ENV",
    "VOTR_SERVE",
    "inspect_votr",
    "inspector_command",
    "make_git_repo",
    "missing_servers",
    "require_servers",
    "run_inspector",
    "servers_config",
    "stdio_parameters",
    "stdio_target",
    "write_config",
]

ROOT = Path(__file__).resolve().parent.parent
SERVERS_DIR = ROOT / "tests" / "servers"
NODE_BIN = SERVERS_DIR / "node_modules" / ".bin"
PY_BIN = SERVERS_DIR / ".venv" / "bin"
PY_MCP1_BIN = SERVERS_DIR / "mcp1" / ".venv" / "bin"
INSPECTOR = NODE_BIN / "mcp-inspector"
INSTALL_HINT = "run scripts/install-test-servers.sh (needs node + npm and python3; reaches only npm and PyPI)"


@dataclass(frozen=True)
class ServerSpec:
    """One real server: the executable the install script puts in place, and how to start it in a folder."""

    name: str
    executable: Path
    package: str
    """Registry package (npm ``@scope/name`` or PyPI name), pinned in tests/servers."""
    build: Callable[[Path], dict[str, Any]]
    """Given a folder the server may own, the extra ``mcpServers`` fields (args, env) that start it there."""

    def entry(self, workdir: Path) -> dict[str, Any]:
        """The ``mcpServers`` entry that starts this server over stdio, confined to ``workdir``."""
        workdir.mkdir(parents=True, exist_ok=True)  # servers such as memory do not create their folder
        return {"command": str(self.executable), **self.build(workdir)}


def make_git_repo(path: Path) -> Path:
    """A git repository at ``path`` with one commit (README.md), as mcp-server-git needs."""
    path.mkdir(parents=True, exist_ok=True)
    if not (path / ".git").exists():
        git = ["git", "-C", str(path), "-c", "user.name=votr tests", "-c", "user.email=tests@votr.invalid"]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
        (path / "README.md").write_text("# a test repository\n", encoding="utf-8")
        subprocess.run([*git, "add", "README.md"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    return path


def _files_dir(workdir: Path) -> Path:
    files = workdir / "files"
    files.mkdir(parents=True, exist_ok=True)
    hello = files / "hello.txt"
    if not hello.exists():
        hello.write_text("hello from the votr-mcp tests\n", encoding="utf-8")
    return files


SERVERS: dict[str, ServerSpec] = {
    spec.name: spec
    for spec in (
        ServerSpec("everything", NODE_BIN / "mcp-server-everything", "@modelcontextprotocol/server-everything",
                   lambda d: {"args": ["stdio"]}),
        ServerSpec("filesystem", NODE_BIN / "mcp-server-filesystem", "@modelcontextprotocol/server-filesystem",
                   lambda d: {"args": [str(_files_dir(d))]}),
        ServerSpec("memory", NODE_BIN / "mcp-server-memory", "@modelcontextprotocol/server-memory",
                   lambda d: {"env": {"MEMORY_FILE_PATH": str(d / "memory.jsonl")}}),
        ServerSpec("sequential-thinking", NODE_BIN / "mcp-server-sequential-thinking",
                   "@modelcontextprotocol/server-sequential-thinking",
                   lambda d: {"env": {"DISABLE_THOUGHT_LOGGING": "true"}}),
        ServerSpec("time", PY_BIN / "mcp-server-time", "mcp-server-time",
                   lambda d: {"args": ["--local-timezone", "UTC"]}),
        ServerSpec("git", PY_BIN / "mcp-server-git", "mcp-server-git",
                   lambda d: {"args": ["--repository", str(make_git_repo(d / "repo"))]}),
        ServerSpec("fetch", PY_BIN / "mcp-server-fetch", "mcp-server-fetch", lambda d: {}),
        ServerSpec("excel", PY_BIN / "excel-mcp-server", "excel-mcp-server",
                   lambda d: {"args": ["stdio", "--allow-dir", str(d)]}),
        # These two start and list offline; their calls need a browser (not installed) or the internet.
        ServerSpec("playwright", NODE_BIN / "playwright-mcp", "@playwright/mcp",
                   lambda d: {"args": ["--headless", "--isolated", "--output-dir", str(d)]}),
        ServerSpec("context7", NODE_BIN / "context7-mcp", "@upstash/context7-mcp", lambda d: {}),
        ServerSpec("sqlite", PY_MCP1_BIN / "mcp-server-sqlite", "mcp-server-sqlite",
                   lambda d: {"args": ["--db-path", str(d / "sqlite.db")]}),
        ServerSpec("calculator", PY_MCP1_BIN / "mcp-server-calculator", "mcp-server-calculator", lambda d: {}),
    )
}
CORE: tuple[str, ...] = ("everything", "filesystem", "memory", "time", "git")
"""The five servers issue 4 names; the default of :func:`servers_config`."""
EVERY: tuple[str, ...] = tuple(SERVERS)
"""Every installed server (the registry captures all of them). playwright and context7 only list
offline: calling their tools needs a browser or the internet."""


def missing_servers(names: Iterable[str] = EVERY) -> list[str]:
    """Paths (relative to the checkout) of the named servers' executables that are not installed."""
    return [_shown(SERVERS[n].executable) for n in _known(names) if not SERVERS[n].executable.exists()]


def require_servers(names: Iterable[str] = CORE, *, inspector: bool = False) -> None:
    """Skip the calling test when a named server (or the Inspector) is missing; fail instead when CI=true."""
    missing = missing_servers(names)
    if inspector and not INSPECTOR.exists():
        missing.append(_shown(INSPECTOR))
    if not missing:
        return
    import pytest  # only tests call this; capture_registry.py checks missing_servers itself

    message = f"real MCP servers not installed ({', '.join(missing)}); {INSTALL_HINT}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}. CI must install them before running the tests.", pytrace=False)
    pytest.skip(message)


def servers_config(workdir: Path, names: Iterable[str] = CORE, *, check: bool = True) -> dict[str, Any]:
    """An ``mcpServers`` config starting the named servers, each confined to ``workdir/<name>``.

    With ``check`` (the default) a missing server skips the calling test (fails under CI=true).
    """
    chosen = _known(names)
    if check:
        require_servers(chosen)
    return {"mcpServers": {n: SERVERS[n].entry(workdir / n) for n in chosen}}


def write_config(path: Path, config: Mapping[str, Any]) -> Path:
    """Write an ``mcpServers`` config as JSON at ``path`` (for ``votr-mcp serve --config``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def stdio_target(entry: Mapping[str, Any]) -> list[str]:
    """An ``mcpServers`` stdio entry as a command line (its env goes to :func:`run_inspector`'s ``env``)."""
    return [str(entry["command"]), *map(str, entry.get("args", []))]


def stdio_parameters(entry: Mapping[str, Any]) -> Any:
    """An ``mcpServers`` stdio entry as the Python SDK's ``StdioServerParameters`` (for ``mcp.Client``)."""
    from mcp.client.stdio import StdioServerParameters  # lazy: the helpers above need no mcp

    return StdioServerParameters(command=str(entry["command"]), args=[str(a) for a in entry.get("args", [])],
                                 env=dict(entry.get("env") or {}) or None, cwd=entry.get("cwd"))


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _known(names: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple([names] if isinstance(names, str) else names)
    unknown = [n for n in chosen if n not in SERVERS]
    if unknown:
        raise ValueError(f"unknown test server(s) {unknown}; known: {', '.join(SERVERS)}")
    return chosen


# --- MCP Inspector CLI: an independent (TypeScript) client ---------------------------------------


@dataclass(frozen=True)
class InspectorResult:
    """What one Inspector CLI run printed: parsed JSON on stdout (``output``) and its error report."""

    returncode: int
    output: Any
    """The JSON result the Inspector printed (tools/list or tools/call result), or None."""
    error: dict[str, Any] | None
    """The Inspector's ``{"code", "message"}`` report from stderr (e.g. ``tool_is_error``), or None."""
    stderr: str
    command: tuple[str, ...]

    @property
    def is_error(self) -> bool:
        """True when a tools/call result came back with ``isError`` (the Inspector then exits non-zero)."""
        return isinstance(self.output, dict) and bool(self.output.get("isError"))

    @property
    def structured(self) -> Any:
        """The ``structuredContent`` of a tools/call result, or None."""
        return self.output.get("structuredContent") if isinstance(self.output, dict) else None

    def text(self) -> str:
        """The text parts of a tools/call result, joined by newlines."""
        content = self.output.get("content", []) if isinstance(self.output, dict) else []
        return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def inspector_command(
    target: str | Sequence[str],
    method: str,
    *,
    tool_name: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    transport: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[str]:
    """The Inspector CLI command line for one request against a stdio command line or a URL."""
    command = ["node", str(INSPECTOR), "--cli", "--method", method]
    if transport:
        command += ["--transport", transport]
    if tool_name is not None:
        command += ["--tool-name", tool_name, "--tool-args-json", json.dumps(dict(arguments or {}))]
    for key, value in (env or {}).items():
        command += ["-e", f"{key}={value}"]
    for key, value in (headers or {}).items():
        command += ["--header", f"{key}: {value}"]
    if cwd is not None:
        command += ["--cwd", str(cwd)]
    # After "--" the target's own flags (votr-mcp's --config, say) are not taken as the Inspector's.
    return [*command, "--", *([target] if isinstance(target, str) else target)]


def run_inspector(
    target: str | Sequence[str],
    method: str = "tools/list",
    *,
    tool_name: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    transport: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120.0,
) -> InspectorResult:
    """Run ``mcp-inspector --cli`` once against ``target`` and parse what it printed.

    ``target`` is a stdio command line (a list) or a URL (``.../mcp`` is streamable HTTP,
    ``.../sse`` legacy SSE; ``transport`` overrides). A stdio child gets only a minimal
    environment (HOME, PATH, ...) plus ``env``: pass what it needs (for votr-mcp e.g.
    ``HF_HUB_OFFLINE=1``, ``OPENBLAS_NUM_THREADS=1``) explicitly. Blocking: call it from async tests with ``anyio.to_thread.run_sync``. A
    tools/call whose result has ``isError`` exits non-zero by design; that is reported in the
    result, not raised. Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
    """
    require_servers((), inspector=True)
    command = inspector_command(target, method, tool_name=tool_name, arguments=arguments, transport=transport,
                                env=env, headers=headers, cwd=cwd)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return InspectorResult(done.returncode, _first_json(done.stdout), _error_report(done.stderr), done.stderr,
                           tuple(command))


def _first_json(text: str) -> Any:
    """The JSON document the Inspector printed (it may follow server noise on the same stream)."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError:
        return None
    return value


def _error_report(stderr: str) -> dict[str, Any] | None:
    for line in reversed(stderr.splitlines()):
        line = line.strip()
        if line.startswith('{"error"'):
            try:
                report = json.loads(line)["error"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
            return report if isinstance(report, dict) else None
    return None


# --- votr-mcp itself under the Inspector ------------------------------------------------------

VOTR_SERVE: tuple[str, ...] = (sys.executable, "-m", "votr_mcp.cli", "serve")
VOTR_ENV: dict[str, str] = {"HF_HUB_OFFLINE": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
"""What a votr-mcp child needs beyond the Inspector's minimal environment (offline model, one BLAS thread)."""


def inspect_votr(
    method: str = "tools/list",
    serve_args: Sequence[str] = (),
    *,
    url: str | None = None,
    tool_name: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    transport: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 180.0,
) -> InspectorResult:
    """One Inspector request to votr-mcp: over stdio, the Inspector starts ``votr-mcp serve *serve_args``
    itself (a fresh server per call); with ``url``, it talks to a server already running there
    (``.../mcp`` streamable HTTP, ``.../sse`` SSE; start one with tests/server/votr_serving.py's
    ``http_server``).

        inspect_votr("tools/call", ["--config", str(cfg)], tool_name="search_tools", arguments={"query": "..."})
        inspect_votr("tools/list", url="http://127.0.0.1:PORT/mcp")
    """
    if url is not None:
        return run_inspector(url, method, tool_name=tool_name, arguments=arguments, transport=transport,
                             headers=headers, timeout=timeout)
    return run_inspector([*VOTR_SERVE, *serve_args], method, tool_name=tool_name, arguments=arguments,
                         env={**VOTR_ENV, **(env or {})}, timeout=timeout)
