"""Capture the known-servers/ catalog: real MCP servers from npm and PyPI that search only suggests.

    python scripts/capture_known_servers.py --dir DIR --install   # install the pinned packages into DIR
    python scripts/capture_known_servers.py --dir DIR [--only NAME ...] [--check]

``--install`` puts each npm server into ``DIR/npm`` (one ``package.json`` of exact versions) and each
PyPI server into a venv of its own, ``DIR/py/<package>`` (they pin different ``mcp`` versions), with
the dependency versions locked in scripts/known-servers-lock/ (``--update-lock`` re-resolves); it
reaches only npm and PyPI. No browser or other binary is downloaded (none is needed to list tools).
The capture then starts each installed server over stdio, harvests ``tools/list`` the way
scripts/capture_registry.py does, and writes ``known-servers/<server>.json`` in the registry's format
(registry/README.md): ``description`` is ours; ``config`` is the ``mcpServers`` entry a user adds,
with placeholders for the credentials it needs (``"<your GitHub token>"``); ``package`` is the exact
version captured. Servers that need an API key are started with a dummy one: they list their tools
without calling their service. ``--check`` writes nothing and exits 1 if a file would change.

These servers are not part of the default catalog (registry/) that ``serve`` searches and the
evaluation sets use: search names one, with its entry, only when nothing connected serves a request
or the request names it (src/votr_mcp/server/suggest.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import capture_registry  # (how a server's tools/list is harvested, and the file format)
from known_servers import KNOWN, Known  # (the table: packages, pins, descriptions)

ROOT = capture_registry.ROOT
OUT = ROOT / "known-servers"
LOCK = ROOT / "scripts" / "known-servers-lock"
"""What was installed when known-servers/ was captured: npm's package-lock.json, a pip freeze per PyPI server."""


def _log(message: str) -> None:
    print(f"capture_known_servers: {message}", file=sys.stderr)


# --- installing ------------------------------------------------------------------------------------


def install(root: Path, names: Sequence[str], parallel: int, *, update_lock: bool = False) -> int:
    """Install the pinned packages of ``names`` under ``root`` (npm: one folder; PyPI: a venv each),
    exactly as locked in scripts/known-servers-lock/ (``npm ci``; ``pip install -r <package>.txt``):
    the versions of the servers' own dependencies change what several of them list (a newer zod writes
    ``anyOf`` where an older one wrote a type list). ``update_lock`` resolves afresh and records it."""
    # npm: every npm server or none (one folder, one lock); PyPI: each chosen one.
    npm = sorted({k.package: k.version for k in KNOWN.values() if k.registry == "npm"}.items())
    npm = npm if any(KNOWN[n].registry == "npm" for n in names) else []
    pypi = [KNOWN[n] for n in names if KNOWN[n].registry == "pypi"]
    env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}  # no browsers

    def run(label: str, command: list[str], cwd: Path | None = None) -> str | None:
        done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            _log(f"{label}: install failed:\n{done.stdout[-3000:]}")
            return label
        return None

    def npm_install() -> str | None:
        folder = root / "npm"
        folder.mkdir(parents=True, exist_ok=True)
        manifest = {"name": "votr-known-servers", "private": True, "dependencies": dict(npm)}
        (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        locked = LOCK / "package-lock.json"
        _log(f"npm install of {len(npm)} servers in {folder} (several minutes)")
        if locked.exists() and not update_lock:
            shutil.copyfile(locked, folder / "package-lock.json")
            return run("npm", ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], folder)
        for stale in (folder / "package-lock.json", folder / "node_modules"):  # resolve afresh, not from the last install
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink(missing_ok=True)
        failed = run("npm", ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], folder)
        if not failed:
            LOCK.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "package-lock.json", locked)
        return failed

    def pip_install(known: Known) -> str | None:
        venv = root / "py" / known.package
        locked = LOCK / f"{known.package}.txt"
        if update_lock or not locked.exists():
            shutil.rmtree(venv, ignore_errors=True)  # a fresh venv: what pip resolves today, not what is left over
        if not (venv / "bin" / "python").exists():
            failed = run(known.package, [sys.executable, "-m", "venv", str(venv)])
            if failed:
                return failed
        pip = [str(venv / "bin" / "pip"), "--disable-pip-version-check"]
        if locked.exists() and not update_lock:
            if f"=={known.version}\n" not in locked.read_text(encoding="utf-8"):
                _log(f"{known.package}: {locked.name} does not lock version {known.version}; run --install --update-lock")
                return known.package
            return run(known.package, [*pip, "install", "--quiet", "-r", str(locked)])
        failed = run(known.package, [*pip, "install", "--quiet", f"{known.package}=={known.version}"])
        if not failed:
            frozen = subprocess.run([*pip, "freeze", "--exclude-editable"], env=env, capture_output=True, text=True, check=True)
            LOCK.mkdir(parents=True, exist_ok=True)
            locked.write_text(f"# {known.package} {known.version} and its dependencies, as captured (pip freeze)\n"
                              + frozen.stdout, encoding="utf-8")
        return failed

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        jobs = ([pool.submit(npm_install)] if npm else []) + [pool.submit(pip_install, k) for k in pypi]
        failed = [label for job in jobs if (label := job.result())]
    if failed:
        _log(f"install failed for: {', '.join(failed)}")
        return 1
    _log(f"installed under {root}")
    return 0


def executable(root: Path, known: Known) -> Path:
    if known.registry == "npm":
        return root / "npm" / "node_modules" / ".bin" / known.bin
    return root / "py" / known.package / "bin" / known.bin


def installed_version(root: Path, known: Known) -> str:
    """The version installed under ``root``; it must be the pinned one."""
    if known.registry == "npm":
        manifest = root / "npm" / "node_modules" / known.package / "package.json"
        return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    site = next((root / "py" / known.package).glob("lib/python*/site-packages"))
    stem = known.package.replace("-", "_").replace(".", "_").lower()
    for dist in site.glob("*.dist-info"):
        name, _, version = dist.name.removesuffix(".dist-info").rpartition("-")
        if name.replace("-", "_").replace(".", "_").lower() == stem:
            return version
    raise RuntimeError(f"{known.package} is not installed in {site}")


# --- capturing -------------------------------------------------------------------------------------


def capture_entry(root: Path, known: Known, workdir: Path) -> dict[str, Any]:
    """How the capture starts the server: its installed executable, dummy credentials, a private HOME."""
    workdir.mkdir(parents=True, exist_ok=True)
    args = [a.replace("{workdir}", str(workdir)) for a in (known.capture_args if known.capture_args is not None else known.args)]
    # A placeholder the user must fill ("<your token>") becomes a dummy; a usable default (a local URL) is kept.
    given = {var: f"dummy-{var.lower()}" if "<" in value else value for var, value in known.env.items()}
    env = {"HOME": str(workdir), "PYTHONHASHSEED": "0", **given, **known.capture_env}  # fixed set order in listings
    env = {key: value.replace("{workdir}", str(workdir)) for key, value in env.items()}
    return {"command": str(executable(root, known)), "args": args, "env": env}


async def harvest(root: Path, name: str, workdir: Path, errlog: Any) -> dict[str, Any]:
    known = KNOWN[name]
    version = installed_version(root, known)
    if version != known.version:
        raise RuntimeError(f"{known.package} {version} is installed, {known.version} is pinned; rerun with --install "
                           "(with --update-lock after changing a version)")
    tools, upstream = await capture_registry.list_server(name, capture_entry(root, known, workdir), workdir, errlog)
    return {
        "server": {
            "name": name,
            "description": known.description,
            "config": known.config(),
            "package": f"{known.package}@{version}",
            "upstream": upstream,
        },
        "tools": tools,
    }



EXAMPLES = Path(__file__).with_name("known_servers_examples.json")
"""Our example requests for the known servers' tools (as registry_examples.json for registry/)."""

async def capture(root: Path, names: Sequence[str], out: Path, *, check: bool, parallel: int) -> int:
    missing = [n for n in names if not executable(root, KNOWN[n]).exists()]
    if missing:
        _log(f"not installed under {root}: {', '.join(missing)}; run with --install first")
        return 2

    async def one(name: str, tmp: Path, errlog: TextIO) -> dict[str, Any]:
        return capture_registry.with_examples(await harvest(root, name, tmp, errlog), EXAMPLES)

    documents, failures = await capture_registry.harvest_all(names, one, parallel, "votr-known-")
    return capture_registry.write_captures(names, documents, failures, out, check, "known-servers/")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="folder the servers are installed in (outside the checkout)")
    parser.add_argument("--install", action="store_true", help="install the locked packages into --dir, then stop")
    parser.add_argument("--update-lock", action="store_true",
                        help="with --install: resolve the pinned packages' dependencies afresh and record them in "
                             "scripts/known-servers-lock/ (then capture, and review what changed)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write (default: known-servers/)")
    parser.add_argument("--only", nargs="+", choices=sorted(KNOWN), metavar="NAME", help="only these servers (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    parser.add_argument("--parallel", type=int, default=3, help="installs or servers at once (default 3)")
    args = parser.parse_args(argv)
    if args.parallel < 1:
        parser.error(f"--parallel must be at least 1, got {args.parallel}")
    names = [n for n in KNOWN if not args.only or n in args.only]
    root = args.dir.resolve()
    if args.update_lock and not args.install:
        parser.error("--update-lock goes with --install")
    if args.install:
        return install(root, names, args.parallel, update_lock=args.update_lock)
    return anyio.run(functools.partial(capture, root, names, args.out, check=args.check, parallel=args.parallel))


if __name__ == "__main__":
    sys.exit(main())
