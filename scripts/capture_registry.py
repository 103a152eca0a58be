"""Capture the embedded default catalog (registry/) from real MCP servers.

    bash scripts/install-test-servers.sh
    python scripts/capture_registry.py [--out registry] [--only NAME ...] [--check]

Starts each reference server installed in tests/servers (the same way the tests do, see
tests/upstream_servers.py) with the Python SDK client, harvests ``tools/list`` with
pagination, and writes ``registry/<server>.json``::

    {"server": {"name", "description", "config", "package", "upstream"},
     "tools": [{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}, ...]}

Tools keep the fields and order the server listed (empty ones left out); other wire fields
(``execution``, ``icons``, ``_meta``) are dropped. ``description`` is ours: a short, plain
account of what the server is for, which server-level retrieval scores against. ``config`` is
the ``mcpServers`` entry a user adds to run the server (call_tool shows it when the server is
not configured). Each tool's ``examples`` (scripts/registry_examples.json, ours too) are requests
written the way people ask for it; search embeds them beside the description (Tool2Vec). ``--check`` writes nothing and exits 1 if a file would change (registry drift
after the pins in tests/servers changed). Output is deterministic: no dates in the files.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import upstream_servers  # noqa: E402  (tests/upstream_servers.py: how each server is started)

TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
MAX_PAGES = 100  # a server that keeps returning cursors is broken; stop rather than loop forever
TIMEOUT = 90.0


@dataclass(frozen=True)
class About:
    """What we say about a server: its purpose (for retrieval) and how a user would run it."""

    description: str
    config: dict[str, Any]


def _npx(package: str, *args: str) -> dict[str, Any]:
    return {"command": "npx", "args": ["-y", package, *args]}


def _uvx(package: str, *args: str) -> dict[str, Any]:
    return {"command": "uvx", "args": [package, *args]}


ABOUT: dict[str, About] = {
    "everything": About(
        "Reference and test server that exercises every MCP feature: echo a message, add two numbers, "
        "return a sample image, annotated messages, structured content, resource links and embedded "
        "resources, environment variables, gzip a file, long-running operations with progress "
        "notifications, simulated logging and subscriptions, client roots, and sampling.",
        _npx("@modelcontextprotocol/server-everything")),
    "filesystem": About(
        "Local files and folders inside the allowed directories: read text, images and audio, read "
        "several files at once, write and edit files, create, list, move and rename directories and "
        "files, show a directory tree with sizes, search by glob pattern, and read file metadata.",
        _npx("@modelcontextprotocol/server-filesystem", "/path/to/allowed/folder")),
    "memory": About(
        "Long-term memory as a knowledge graph: remember people, organisations, projects and facts as "
        "entities with observations and relations between them, then search, open or read back the "
        "graph in later conversations; delete what is no longer true.",
        _npx("@modelcontextprotocol/server-memory")),
    "sequential-thinking": About(
        "Step-by-step reasoning for hard problems: think through a question as a numbered sequence of "
        "thoughts that can be revised, branched and extended before giving an answer.",
        _npx("@modelcontextprotocol/server-sequential-thinking")),
    "time": About(
        "Current date and time in any IANA time zone, and conversion of a time from one time zone to another.",
        _uvx("mcp-server-time")),
    "git": About(
        "A local git repository: status, staged and unstaged diffs, diff against a branch or commit, "
        "stage files, commit, unstage, commit log, create and check out branches, list branches, and "
        "show a commit.",
        _uvx("mcp-server-git", "--repository", "/path/to/repo")),
    "fetch": About(
        "Fetch a web page or other URL from the internet and return its content as simplified "
        "markdown (or raw HTML), page by page for long documents.",
        _uvx("mcp-server-fetch")),
    "excel": About(
        "Excel workbooks (.xlsx) without Microsoft Excel: create workbooks and sheets, read and write "
        "cell ranges and formulas, import and export CSV, sort, find and replace, format cells, "
        "conditional formatting, data validation, tables, charts, pivot tables, sparklines, notes and images.",
        _uvx("excel-mcp-server", "stdio")),
    "playwright": About(
        "Automate a real web browser: open a URL, click, type, fill forms, hover, drag, press keys, "
        "take screenshots and accessibility snapshots of the page, run JavaScript, upload files, handle "
        "dialogs, manage tabs, and inspect console messages and network requests.",
        _npx("@playwright/mcp")),
    "context7": About(
        "Up-to-date documentation and code examples for programming libraries and frameworks: resolve "
        "a library name to its Context7 id, then query its current docs for an API or how-to.",
        _npx("@upstash/context7-mcp")),
    "sqlite": About(
        "A local SQLite database: run SELECT queries and INSERT, UPDATE or DELETE statements, create "
        "tables, list tables, describe a table's columns, and note business insights from the data.",
        _uvx("mcp-server-sqlite", "--db-path", "/path/to/database.db")),
    "calculator": About(
        "Evaluate arithmetic and mathematical expressions and return the exact result.",
        _uvx("mcp-server-calculator")),
}


def _log(message: str) -> None:
    print(f"capture_registry: {message}", file=sys.stderr)


def _tool_record(tool: Any) -> dict[str, Any]:
    """The tool as the server listed it (wire names), keeping only the catalog's fields."""
    wire = tool.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return {key: wire[key] for key in wire if key in TOOL_FIELDS and wire[key] not in (None, {}, "")}


async def list_server(name: str, entry: dict[str, Any], workdir: Path, errlog: TextIO) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start the stdio server ``entry`` and return its tools (all pages) and what it said about itself.

    Shared with scripts/capture_known_servers.py. ``workdir`` (the folder the server was confined to)
    becomes ``<folder>`` in its instructions; a tool listing that still names it is an error.
    """
    from mcp import Client
    from mcp.client.stdio import stdio_client

    tools: list[dict[str, Any]] = []
    with anyio.fail_after(TIMEOUT):
        # stdio_client (not bare parameters) so the server's stderr goes to our log file.
        async with Client(stdio_client(upstream_servers.stdio_parameters(entry), errlog=errlog)) as client:
            info = client.server_info
            instructions = client.instructions
            protocol = client.protocol_version
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(_tool_record(tool) for tool in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            else:
                raise RuntimeError(f"{name}: tools/list still paginating after {MAX_PAGES} pages")
    names = [tool["name"] for tool in tools]
    if len(names) != len(set(names)):
        raise RuntimeError(f"{name}: tools/list repeats a tool name: {names}")
    if not tools:
        raise RuntimeError(f"{name}: tools/list is empty")
    upstream: dict[str, Any] = {"protocolVersion": protocol}
    if info is not None:
        upstream.update(info.model_dump(by_alias=True, exclude_none=True, mode="json"))
    if instructions:
        # Kept apart (the loader would take a top-level one as summary). Some servers name the folder
        # they were started in; that is this capture's temporary folder, so it becomes a placeholder.
        upstream["instructions"] = instructions.replace(str(workdir), "<folder>")
    if str(workdir) in json.dumps(tools):
        raise RuntimeError(f"{name}: its tool listing names the capture's temporary folder {workdir}; "
                           "start it without that folder in its descriptions")
    return tools, upstream


async def harvest(name: str, workdir: Path, errlog: TextIO) -> dict[str, Any]:
    """Start server ``name`` confined to ``workdir`` and return its registry document."""
    spec = upstream_servers.SERVERS[name]
    tools, upstream = await list_server(name, spec.entry(workdir), workdir, errlog)
    return {
        "server": {
            "name": name,
            "description": ABOUT[name].description,
            "config": ABOUT[name].config,
            "package": f"{spec.package}@{_installed_version(spec)}",
            "upstream": upstream,
        },
        "tools": tools,
    }


def _installed_version(spec: upstream_servers.ServerSpec) -> str:
    """The version of the server package installed in tests/servers (pinned there)."""
    if spec.package.startswith("@"):
        manifest = upstream_servers.SERVERS_DIR / "node_modules" / spec.package / "package.json"
        return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    site = next(spec.executable.parent.parent.glob("lib/python*/site-packages"))
    dist = next(site.glob(f"{spec.package.replace('-', '_')}-*.dist-info"))
    return dist.name.removesuffix(".dist-info").rsplit("-", 1)[1]


EXAMPLES = Path(__file__).with_name("registry_examples.json")


def with_examples(document: dict[str, Any], source: Path = EXAMPLES) -> dict[str, Any]:
    """Each tool with its example requests from ``source`` (scripts/registry_examples.json; ours, like
    the server description): how people ask for it, which search embeds beside the description (Tool2Vec)."""
    examples = json.loads(source.read_text(encoding="utf-8")).get(document["server"]["name"], {}) if source.exists() else {}
    tools = [{**tool, "examples": examples[tool["name"]]} if examples.get(tool["name"]) else tool
             for tool in document["tools"]]
    return {**document, "tools": tools}


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


async def capture(names: Sequence[str], out: Path, *, check: bool, parallel: int = 4) -> int:
    """Harvest ``names`` into ``out`` (``parallel`` servers at a time); returns the process exit code."""
    missing = upstream_servers.missing_servers(names)
    if missing:
        _log(f"not installed: {', '.join(missing)}; {upstream_servers.INSTALL_HINT}")
        return 2

    async def one(name: str, tmp: Path, errlog: TextIO) -> dict[str, Any]:
        return with_examples(await harvest(name, tmp, errlog))

    documents, failures = await harvest_all(names, one, parallel, "votr-capture-")
    return write_captures(names, documents, failures, out, check, "registry")


Harvest = Callable[[str, Path, TextIO], Awaitable[dict[str, Any]]]


async def harvest_all(names: Sequence[str], harvest_one: Harvest, parallel: int,
                      prefix: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """(documents, failures) of ``harvest_one(name, scratch folder, stderr log)`` for every name,
    ``parallel`` at a time; a failure keeps the end of the server's stderr, and every server is tried."""
    documents: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    limiter = anyio.CapacityLimiter(parallel)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:

        async def one(name: str) -> None:
            async with limiter:
                with open(Path(tmp) / f"{name}.log", "w+", encoding="utf-8") as errlog:
                    try:
                        documents[name] = await harvest_one(name, Path(tmp) / name, errlog)
                    except Exception as exc:  # report every server, then fail
                        errlog.flush()
                        errlog.seek(0)
                        failures[name] = f"{exc!r}\n--- its stderr ---\n{errlog.read()[-4000:]}"

        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(one, name)
    return documents, failures


def write_captures(names: Sequence[str], documents: dict[str, dict], failures: dict[str, str], out: Path,
                   check: bool, label: str) -> int:
    """Report every server in ``names`` order (whatever order they finished in), write each captured
    file into ``out`` (with ``check``: write nothing, exit 1 if any would change), then load ``out``."""
    changed = []
    for name in names:
        if name in failures:
            _log(f"{name}: FAILED: {failures[name]}")
            continue
        document = documents[name]
        target = out / f"{name}.json"
        text = render(document)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old != text:
            changed.append(name)
        if not check:
            out.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _log(f"{name}: {len(document['tools'])} tools ({document['server']['package']})"
             + (" CHANGED" if old != text else ""))
    if failures:
        _log(f"failed: {', '.join(failures)}")
        return 1
    if check:
        if changed:
            _log(f"{label} is out of date for: {', '.join(changed)}; rerun without --check")
            return 1
        return 0
    return _verify(out)


def _verify(out: Path) -> int:
    """Load the written folder with the project's own loader: the registry must load without problems."""
    from votr_mcp.catalog import load_catalog

    result = load_catalog(out)
    for problem in result.problems:
        _log(f"problem: {problem}")
    servers = sorted({tool.server for tool in result.catalog})
    _log(f"{out}: {len(result.catalog)} tools from {len(servers)} servers, {len(result.problems)} problems")
    return 1 if result.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "registry", help="folder to write (default: registry/)")
    parser.add_argument("--only", nargs="+", choices=sorted(upstream_servers.SERVERS), metavar="NAME",
                        help=f"capture only these servers (default: all: {', '.join(upstream_servers.EVERY)})")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    parser.add_argument("--parallel", type=int, default=4, help="servers started at once (default 4)")
    args = parser.parse_args(argv)
    if args.parallel < 1:
        parser.error(f"--parallel must be at least 1, got {args.parallel}")
    assert set(ABOUT) == set(upstream_servers.SERVERS), "every installed server needs an About entry"
    names = [n for n in upstream_servers.EVERY if n in args.only] if args.only else list(upstream_servers.EVERY)
    return anyio.run(functools.partial(capture, names, args.out, check=args.check, parallel=args.parallel))


if __name__ == "__main__":
    sys.exit(main())
