"""The real reference servers start as tests/upstream_servers.py says, through two independent clients
(the Python SDK and the Inspector CLI)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

import upstream_servers as us


# One tool each server must list, to tell a real listing from an empty or wrong one.
EXPECTED_TOOL = {
    "everything": "echo", "filesystem": "read_text_file", "memory": "create_entities",
    "sequential-thinking": "sequentialthinking", "time": "get_current_time", "git": "git_status",
    "fetch": "fetch", "excel": "create_workbook", "playwright": "browser_navigate",
    "context7": "resolve-library-id", "sqlite": "read_query", "calculator": "calculate",
}


def test_every_server_in_the_table_has_an_expected_tool_named() -> None:
    assert set(EXPECTED_TOOL) == set(us.SERVERS)


def test_each_servers_registry_listing_has_its_expected_tool() -> None:
    # That the installed servers still list exactly these files is the (slow) drift test in
    # test_registry.py, which starts every server; this keeps the table above honest cheaply.
    registry = Path(__file__).resolve().parents[2] / "registry"
    for name, tool in EXPECTED_TOOL.items():
        listed = json.loads((registry / f"{name}.json").read_text(encoding="utf-8"))["tools"]
        assert tool in [entry["name"] for entry in listed], name


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_filesystem_server_reads_its_own_folder_and_refuses_others(tmp_path: Path) -> None:
    entry = us.servers_config(tmp_path, ["filesystem"])["mcpServers"]["filesystem"]
    folder = Path(entry["args"][0])
    with anyio.fail_after(60):
        async with Client(us.stdio_parameters(entry)) as client:
            inside = await client.call_tool("read_text_file", {"path": str(folder / "hello.txt")})
            outside = await client.call_tool("read_text_file", {"path": str(tmp_path.parent / "elsewhere.txt")})
    assert not inside.is_error and "hello from the votr-mcp tests" in inside.content[0].text
    assert outside.is_error


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_git_server_sees_the_fresh_repository_with_its_first_commit(tmp_path: Path) -> None:
    entry = us.servers_config(tmp_path, ["git"])["mcpServers"]["git"]
    repo = entry["args"][entry["args"].index("--repository") + 1]
    with anyio.fail_after(60):
        async with Client(us.stdio_parameters(entry)) as client:
            log = await client.call_tool("git_log", {"repo_path": repo})
    assert not log.is_error and "first commit" in log.content[0].text


@pytest.mark.slow
def test_the_inspector_cli_writes_and_reads_back_the_memory_servers_graph(tmp_path: Path, inspector: Any) -> None:
    entry = us.servers_config(tmp_path, ["memory"])["mcpServers"]["memory"]
    entity = {"name": "Alice", "entityType": "person", "observations": ["works at Acme"]}
    created = inspector(us.stdio_target(entry), "tools/call", tool_name="create_entities",
                        arguments={"entities": [entity]}, env=entry["env"])
    assert created.returncode == 0 and not created.is_error, created.stderr
    # A second process reads the file the first one wrote: env reached the server both times.
    graph = inspector(us.stdio_target(entry), "tools/call", tool_name="read_graph", env=entry["env"])
    assert graph.returncode == 0, graph.stderr
    assert "works at Acme" in graph.text()
    assert Path(entry["env"]["MEMORY_FILE_PATH"]).exists()


@pytest.mark.slow
def test_the_inspector_cli_reports_a_tool_error_result_without_raising(inspector: Any, tmp_path: Path) -> None:
    entry = us.servers_config(tmp_path, ["memory"])["mcpServers"]["memory"]
    bad = inspector(us.stdio_target(entry), "tools/call", tool_name="create_entities",
                    arguments={"entities": "not a list"}, env=entry["env"])
    assert bad.is_error and bad.returncode != 0
    assert "expected array" in bad.text()
    assert bad.error is not None and bad.error["code"] == "tool_is_error"


def test_the_inspector_cli_passes_flags_after_the_target_to_the_server_not_to_itself() -> None:
    command = us.inspector_command(["votr-mcp", "serve", "--config", "c.json"], "tools/list", env={"A": "1"})
    assert command[command.index("--") + 1:] == ["votr-mcp", "serve", "--config", "c.json"]
    assert command.index("-e") < command.index("--")


def test_a_missing_server_skips_with_the_install_hint_or_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    gone = dataclasses.replace(us.SERVERS["time"], executable=tmp_path / "no-such-server")
    monkeypatch.setitem(us.SERVERS, "time", gone)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="install-test-servers.sh"):
        us.servers_config(tmp_path, ["time"])
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must install them"):
        us.servers_config(tmp_path, ["time"])


def test_an_unknown_server_name_is_refused_with_the_known_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="known: everything"):
        us.servers_config(tmp_path, ["nope"])


def test_a_written_config_is_the_mcpservers_json_given(tmp_path: Path) -> None:
    config = us.servers_config(tmp_path, us.CORE)
    path = us.write_config(tmp_path / "c.json", config)
    assert json.loads(path.read_text(encoding="utf-8")) == config
    assert list(config["mcpServers"]) == list(us.CORE)
