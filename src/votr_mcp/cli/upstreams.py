"""``votr-mcp upstreams``: check an mcpServers config by connecting to every server once.

    votr-mcp upstreams --config FILE [--tools] [--json] [--timeout SECONDS]

Prints one line per server (state, tool count, server and protocol version, or why it
failed) after the config's own problems; ``--tools`` adds each server's tool names and
``--json`` prints the same as one JSON object. Exits 0 when every enabled server answered,
1 otherwise. Server stderr and progress go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

log = logging.getLogger("votr_mcp.cli.upstreams")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "upstreams",
        help="check an mcpServers config: start each server once, list its tools, report what failed",
        description="Read an mcpServers config (e.g. claude_desktop_config.json), connect to every enabled server "
        "concurrently, harvest its tools and disconnect. Use it to debug a config before serving it.",
    )
    parser.add_argument("--config", type=Path, required=True, metavar="FILE", help="the mcpServers JSON file")
    parser.add_argument("--tools", action="store_true", help="also list every tool of each server")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="bound on the whole check (default: each server's startup_timeout)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from votr_mcp.upstream import harvest
    from votr_mcp.upstream.config import load_upstreams

    config = load_upstreams(args.config, os.environ)
    result = anyio.run(lambda: harvest(config, timeout=args.timeout, errlog=sys.stderr))
    tools: dict[str, list[str]] = {}
    for tool in result.tools:
        tools.setdefault(tool.server, []).append(tool.name)
    servers = []
    for server in config.servers:
        status = result.statuses[server.name]
        servers.append({
            "name": server.name,
            "transport": server.transport,
            "state": "ready" if status.state == "ready" else "disabled" if status.state == "disabled" else "failed",
            "error": None if status.state in ("ready", "disabled") else status.error or "did not answer in time",
            "server_info": status.server_info,
            "protocol_version": status.protocol_version,
            "tools": tools.get(server.name, []) if status.state == "ready" else [],
        })
    if args.json:
        print(json.dumps({"config": str(args.config), "problems": [str(p) for p in config.problems], "servers": servers}, indent=2))
    else:
        _print_text(args, config.problems, servers)
    return 0 if all(s["state"] != "failed" for s in servers) else 1


def _print_text(args: argparse.Namespace, problems: Any, servers: list[dict[str, Any]]) -> None:
    counted = f", {len(problems)} problem{'' if len(problems) == 1 else 's'} in the config" if problems else ""
    print(f"{args.config}: {len(servers)} server{'' if len(servers) == 1 else 's'}{counted}")
    for problem in problems:
        print(f"  {problem}")
    width = max((len(s["name"]) for s in servers), default=0)
    for s in servers:
        if s["state"] == "ready":
            detail = f"{len(s['tools'])} tools  ({s['server_info'] or 'unnamed server'}, protocol {s['protocol_version']})"
        elif s["state"] == "disabled":
            detail = "not started"
        else:
            detail = s["error"]
        print(f"{s['name']:<{width}}  {s['state']:<8}  {s['transport']:<5}  {detail}")
        if args.tools and s["tools"]:
            print("    " + ", ".join(s["tools"]))
