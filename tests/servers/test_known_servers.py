"""The shipped catalog of known servers (known-servers/) loads cleanly, says how to run each server,
stays out of the default catalog, and (with the servers installed) is what they list."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from votr_mcp.catalog import load_catalog
from votr_mcp.catalog.embedded import default_registry_path, known_servers_path

ROOT = Path(__file__).resolve().parents[2]
KNOWN_DIR = ROOT / "known-servers"
REGISTRY = ROOT / "registry"
LOCK = ROOT / "scripts" / "known-servers-lock"


def _script(name: str):
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_the_known_servers_catalog_is_the_checkouts_and_loads_without_problems() -> None:
    assert sorted(p.name for p in known_servers_path().glob("*.json")) == sorted(p.name for p in KNOWN_DIR.glob("*.json"))
    result = load_catalog(KNOWN_DIR)
    assert result.problems == ()
    assert len(result.catalog.servers) >= 25 and len(result.catalog) >= 300


def test_known_servers_are_none_of_the_default_catalogs_and_not_inside_it() -> None:
    # registry/ is read with its subfolders: the known servers must not join what serve searches.
    assert not KNOWN_DIR.is_relative_to(default_registry_path())
    registry = load_catalog(REGISTRY).catalog.servers
    assert not set(load_catalog(KNOWN_DIR).catalog.servers) & set(registry)


def test_each_known_server_is_captured_from_its_pinned_package_with_the_entry_a_user_adds() -> None:
    known = _script("known_servers").KNOWN
    assert {p.stem for p in KNOWN_DIR.glob("*.json")} == set(known)
    for path in sorted(KNOWN_DIR.glob("*.json")):
        server = json.loads(path.read_text(encoding="utf-8"))["server"]
        row = known[path.stem]
        assert server["name"] == path.stem
        assert len(server["description"].split()) >= 8, path.name
        assert server["package"] == f"{row.package}@{row.version}", path.name
        config = server["config"]
        assert config == row.config(), path.name
        assert config["command"] in ("npx", "uvx") and row.package in config["args"], path.name
        # Credentials are placeholders for the user to fill, never the capture's dummy values.
        assert not any("dummy" in value for value in config.get("env", {}).values()), path.name


def test_the_install_lock_holds_exactly_the_pinned_servers_and_their_captured_dependencies() -> None:
    known = _script("known_servers").KNOWN
    lock = json.loads((LOCK / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"][""]["dependencies"] == {k.package: k.version for k in known.values() if k.registry == "npm"}
    pypi = [k for k in known.values() if k.registry == "pypi"]
    assert {p.stem for p in LOCK.glob("*.txt")} == {k.package for k in pypi}
    for row in pypi:
        lines = (LOCK / f"{row.package}.txt").read_text(encoding="utf-8").splitlines()
        pins = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1] for line in lines if "==" in line}
        assert pins[row.package.lower()] == row.version, row.package
        assert len(pins) == len([line for line in lines if line and not line.startswith("#")]), f"{row.package}: unpinned lines"


@pytest.mark.slow
def test_the_known_servers_still_match_what_their_pinned_packages_list() -> None:
    folder = os.environ.get("VOTR_KNOWN_SERVERS_DIR")
    if not folder:
        pytest.skip("the known servers are not installed: set VOTR_KNOWN_SERVERS_DIR to a folder filled by "
                    "python scripts/capture_known_servers.py --dir DIR --install (npm and PyPI, several minutes)")
    capture = _script("capture_known_servers")
    code = anyio.run(functools.partial(capture.capture, Path(folder).resolve(), list(capture.KNOWN), KNOWN_DIR,
                                       check=True, parallel=3))
    assert code == 0, "known-servers/ differs from the installed servers: run python scripts/capture_known_servers.py"
