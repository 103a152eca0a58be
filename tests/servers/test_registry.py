"""The embedded default catalog (registry/) loads cleanly and is what the pinned real servers list."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import anyio
import pytest

import upstream_servers as us
from votr_mcp.catalog import call_names, load_catalog
from votr_mcp.catalog.embedded import default_registry_path

REGISTRY = Path(__file__).resolve().parents[2] / "registry"


def _capture_module():
    path = REGISTRY.parent / "scripts" / "capture_registry.py"
    spec = importlib.util.spec_from_file_location("capture_registry", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_the_default_catalog_is_the_checkouts_registry_and_loads_without_problems() -> None:
    # The installed package finds a registry with these files (its own checkout's, or the wheel's copy).
    assert sorted(p.name for p in default_registry_path().glob("*.json")) == sorted(p.name for p in REGISTRY.glob("*.json"))
    result = load_catalog(REGISTRY)
    assert result.problems == ()
    assert len(result.catalog) >= 50


def test_every_installed_test_server_has_a_registry_file_under_its_config_name() -> None:
    files = {path.stem for path in REGISTRY.glob("*.json")}
    assert files == set(us.SERVERS)
    servers = {tool.server for tool in load_catalog(REGISTRY).catalog}
    assert servers == files


def test_each_registry_server_says_what_it_is_for_and_how_a_user_runs_it() -> None:
    for path in sorted(REGISTRY.glob("*.json")):
        server = json.loads(path.read_text(encoding="utf-8"))["server"]
        assert server["name"] == path.stem
        assert len(server["description"].split()) >= 8, path.name
        assert server["config"]["command"] in ("npx", "uvx"), path.name
        assert us.SERVERS[path.stem].package in server["config"]["args"], path.name
        assert server["package"].startswith(us.SERVERS[path.stem].package + "@"), path.name


def test_registry_tools_get_their_plain_server_prefixed_call_names() -> None:
    catalog = load_catalog(REGISTRY).catalog
    names = call_names(tool.key for tool in catalog)
    # No collisions, so no tool needed a disambiguating suffix: names read as server__tool.
    assert sorted(names.values()) == sorted(f"{tool.server}__{tool.name}" for tool in catalog)


@pytest.mark.slow
def test_the_registry_still_matches_what_the_pinned_servers_list(tmp_path: Path) -> None:
    us.require_servers(us.EVERY)
    capture = _capture_module()
    code = anyio.run(functools.partial(capture.capture, list(us.EVERY), REGISTRY, check=True))
    assert code == 0, "registry/ differs from the installed servers: run python scripts/capture_registry.py"
