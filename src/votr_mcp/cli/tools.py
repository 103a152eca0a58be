"""``votr-mcp tools``: review the registry and decide on changed tools (rug-pull control).

    votr-mcp tools list [--status active|held|removed] [--json]
    votr-mcp tools show NAME [--json]          definition; for a held tool, why, and a diff from the accepted version
    votr-mcp tools history NAME [--json]       every version, the fields that changed, and each decision
    votr-mcp tools accept NAME [--version N]   trust the version upstream serves now (or version N)
    votr-mcp tools rollback NAME VERSION       make an older version the accepted one

NAME is a call name (``server__tool``), ``server/tool``, or a tool name unique in the store.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from votr_mcp.cli.index import add_store_argument, store_path

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tools",
        help="list, inspect, accept or roll back tools in the store (change control)",
        description="Tools whose definition changed after they were accepted, tools added after their server's first "
        "harvest, and tools whose metadata looks poisoned are held back (not searchable, not callable) until accepted "
        "here. NAME is a call name (server__tool), server/tool, or a unique tool name.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="tools with their status and versions")
    listing.add_argument("--status", choices=("active", "held", "removed"), help="only tools with this status")
    for name, text in (("show", "a tool's definition (and, when held, what changed)"), ("history", "every version of a tool")):
        sub = actions.add_parser(name, help=text)
        sub.add_argument("name", metavar="NAME")
    accept = actions.add_parser("accept", help="accept a tool's current definition so it serves again")
    accept.add_argument("name", metavar="NAME")
    accept.add_argument("--version", type=int, metavar="N", help="accept version N instead of the current one")
    rollback = actions.add_parser("rollback", help="make an older version the accepted one")
    rollback.add_argument("name", metavar="NAME")
    rollback.add_argument("version", type=int, metavar="VERSION")
    for sub in actions.choices.values():
        add_store_argument(sub)
        sub.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from votr_mcp.errors import StoreError
    from votr_mcp.store import MEMORY
    from votr_mcp.store.backends import is_url, open_store

    path = store_path(args)
    if path != MEMORY and not is_url(path) and not Path(path).exists():
        raise StoreError(f"no store at '{path}'; run `votr-mcp index` first or pass --store PATH")
    with open_store(path) as store:
        handler = {"list": _list, "show": _show, "history": _history, "accept": _accept, "rollback": _rollback}[args.action]
        return handler(store, args)


def _list(store: Any, args: argparse.Namespace) -> int:
    from votr_mcp.catalog import call_names

    records = store.registry.records(status=args.status)
    names = call_names(r.key for r in store.registry.records())
    if args.json:
        print(json.dumps([{"call_name": names[r.key], "server": r.server, "name": r.name, "status": r.status,
                           "version": r.version, "accepted_version": r.accepted_version, "changed": list(r.changed),
                           "reasons": list(r.reasons)}
                          for r in records]))
        return 0
    for r in records:
        note = f"  changed: {', '.join(r.changed)}" if r.changed else ""
        note += f"  held because: {'; '.join(r.reasons)}" if r.reasons else ""
        print(f"{r.status:8} v{r.version:<3} {names[r.key]}{note}")
    counts = {s: sum(r.status == s for r in records) for s in ("active", "held", "removed")}
    print(f"{len(records)} tools: " + ", ".join(f"{n} {s}" for s, n in counts.items()), file=sys.stderr)
    return 0


def _show(store: Any, args: argparse.Namespace) -> int:
    record = store.registry.find(args.name)
    history = {v.version: v for v in store.registry.history(args.name)}
    current = history[record.version].definition
    accepted = history[record.accepted_version].definition if record.accepted_version else None
    if args.json:
        print(json.dumps({"server": record.server, "name": record.name, "status": record.status, "version": record.version,
                          "accepted_version": record.accepted_version, "changed": list(record.changed),
                          "reasons": list(record.reasons), "definition": current, "accepted_definition": accepted}))
        return 0
    print(f"{record.server}/{record.name}: {record.status}, version {record.version} "
          f"(accepted: {record.accepted_version or 'none'})")
    for reason in record.reasons:
        print(f"held because: {reason}")
    if accepted is not None and record.accepted_version != record.version:
        print(f"changed fields: {', '.join(record.changed) or 'none'}")
        print(_diff(accepted, current, f"accepted v{record.accepted_version}", f"upstream v{record.version}"))
    else:
        print(json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False))
    return 0


def _history(store: Any, args: argparse.Namespace) -> int:
    versions = store.registry.history(args.name)
    decisions = store.registry.decisions(args.name)
    if args.json:
        print(json.dumps({"versions": [{"version": v.version, "content_hash": v.content_hash, "seen_at": v.seen_at,
                                        "changed_fields": list(v.changed_fields), "definition": v.definition} for v in versions],
                          "decisions": [{"at": at, "version": ver, "action": act, "note": note} for at, ver, act, note in decisions]}))
        return 0
    for v in versions:
        fields = ", ".join(v.changed_fields) if v.version > 1 else "first seen"
        print(f"v{v.version}  {v.seen_at}  {v.content_hash[:12]}  {fields}")
    print("decisions:")
    for at, version, action, note in decisions:
        print(f"  {at}  v{version if version is not None else '-'}  {action}" + (f"  ({note})" if note else ""))
    return 0


def _accept(store: Any, args: argparse.Namespace) -> int:
    record = store.registry.accept(args.name, args.version)
    return _report(record, args, "accepted")


def _rollback(store: Any, args: argparse.Namespace) -> int:
    record = store.registry.rollback(args.name, args.version)
    return _report(record, args, "rolled back")


def _report(record: Any, args: argparse.Namespace, verb: str) -> int:
    if args.json:
        print(json.dumps({"server": record.server, "name": record.name, "status": record.status,
                          "version": record.version, "accepted_version": record.accepted_version}))
        return 0
    tail = "it serves again" if record.status == "active" else f"it stays {record.status} until upstream serves that version"
    print(f"{record.server}/{record.name}: {verb} version {record.accepted_version}; {tail}")
    return 0


def _diff(old: Any, new: Any, old_label: str, new_label: str) -> str:
    a = json.dumps(old, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    b = json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(a, b, old_label, new_label, lineterm=""))
