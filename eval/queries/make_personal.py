"""Write eval/queries/human-personal/: human-registry's requests searched in a 30-tool personal catalog.

A user who installs a few servers asks for tools they do not have as often as for those they do, and
such a request should be refused as "no tool fits", not answered with the nearest file tool. The
catalog is five of registry/'s servers (filesystem, git, time, fetch, calculator: 30 tools, linked in
``servers/``, not copied). Each human-registry row is kept with its id, so it falls on the same side
of the dev/test split:

- a single-step row keeps the gold tools this catalog has; with none, it asks for a tool that is not
  installed: ``kind: no_tool``, ``meta.style: not_installed`` (its own style in ``meta.was``);
- chat and near-miss rows stay as they are;
- a multi-step task stays when every step has a gold tool here (gold cut to those), else it goes.

Run from the project root after human-registry changes (tests/evaluation/test_personal_set.py
checks the committed file is what this writes):

    python eval/queries/make_personal.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "human-registry" / "queries.jsonl"
TARGET = HERE / "human-personal"
SERVERS = ("filesystem", "git", "time", "fetch", "calculator")


def personal_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the personal set, in the source's order (see the module docstring)."""
    steps: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["kind"] == "multi_step":
            steps.setdefault(row["chain"], []).append(row)
    out: list[dict[str, Any]] = []
    for row in rows:
        kept = [g for g in row["gold"] if g["server"] in SERVERS]
        if row["kind"] == "multi_step":
            if all(any(g["server"] in SERVERS for g in s["gold"]) for s in steps[row["chain"]]):
                out.append({**row, "gold": kept})
        elif row["kind"] == "single" and not kept:
            meta = {**(row.get("meta") or {}), "style": "not_installed", "was": (row.get("meta") or {}).get("style")}
            out.append({**row, "gold": [], "kind": "no_tool", "meta": meta})
        else:
            out.append({**row, "gold": kept} if row["kind"] == "single" else row)
    return out


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> int:
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = personal_rows(rows)
    (TARGET / "servers").mkdir(parents=True, exist_ok=True)
    for name in SERVERS:
        link = TARGET / "servers" / f"{name}.json"
        if not link.is_symlink():
            link.symlink_to(Path("../../../../registry") / f"{name}.json")
    (TARGET / "catalog").write_text("servers\n", encoding="utf-8")
    (TARGET / "queries.jsonl").write_text(render(out), encoding="utf-8")
    styles = Counter((r.get("meta") or {}).get("style") for r in out)
    print(f"{len(out)} rows ({', '.join(f'{k} {v}' for k, v in sorted(styles.items()))}) -> {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
