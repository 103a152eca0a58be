"""The mcpServers config: what loads, what is reported, and that one bad entry spares the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from votr_mcp.errors import ConfigError
from votr_mcp.upstream.config import DEFAULT_TIMEOUT, load_upstreams, parse_upstreams


def test_a_claude_desktop_config_loads_with_its_other_keys_ignored(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "legacy": {"transport": "sse", "url": "https://example.com/sse"},
        },
    }))
    config = load_upstreams(path, environ={})
    assert config.problems == ()
    memory, remote, legacy = config.servers
    assert (memory.name, memory.transport, memory.command) == ("memory", "stdio", "npx")
    assert memory.args == ("-y", "@modelcontextprotocol/server-memory")
    assert memory.env == {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}
    assert memory.timeout == DEFAULT_TIMEOUT and memory.pinned == () and memory.polling == () and memory.loop_hints == {}
    assert memory.trust == "manual"  # rug-pull protection is on unless a server opts out
    assert (remote.transport, remote.url, remote.headers) == ("http", "https://example.com/mcp", {"Authorization": "Bearer x"})
    assert legacy.transport == "sse"


def test_a_url_without_a_type_is_streamable_http_unless_it_ends_in_sse() -> None:
    config = parse_upstreams({"mcpServers": {"a": {"url": "http://h/mcp"}, "b": {"url": "http://h/sse"}, "c": {"type": "streamable-http", "url": "http://h/x"}}})
    assert [s.transport for s in config.servers] == ["http", "sse", "http"]


def test_a_bad_entry_names_the_entry_and_field_and_the_others_still_load() -> None:
    config = parse_upstreams({"mcpServers": {
        "good": {"command": "server-a"},
        "numbers": {"command": "server-b", "args": ["--port", 8080]},
        "nothing": {},
        "both": {"command": "x", "url": "http://h/mcp"},
        "wrongtype": {"type": "websocket", "url": "ws://h"},
        "slow": {"command": "server-c", "votr": {"timeout": -1}},
        "hints": {"command": "server-d", "votr": {"loop_hints": ["not", "a", "map"]}},
        "alsogood": {"url": "https://h/mcp"},
    }})
    assert [s.name for s in config.servers] == ["good", "alsogood"]
    messages = [str(p) for p in config.errors]
    assert messages[0].startswith("mcpServers.numbers.args[1]: must be a string, got 8080")
    assert messages[1].startswith("mcpServers.nothing.command: missing")
    assert messages[2].startswith("mcpServers.both.url: a stdio entry takes 'command', not 'url'")
    assert messages[3].startswith("mcpServers.wrongtype.type: 'websocket' is not a transport")
    assert messages[4].startswith("mcpServers.slow.votr.timeout: must be a positive number of seconds")
    assert messages[5].startswith("mcpServers.hints.votr.loop_hints: must map tool names of this server to advice text")
    assert all(m.endswith("this server was skipped") for m in messages)


def test_unknown_fields_are_warnings_and_the_entry_still_loads() -> None:
    config = parse_upstreams({"mcpServers": {"a": {"command": "x", "comand": "typo", "autoApprove": [], "votr": {"pinnned": []}}}})
    assert [s.name for s in config.servers] == ["a"]
    assert config.errors == ()
    assert [str(p) for p in config.problems] == [
        'warning: mcpServers.a.comand: unknown field, ignored (votr settings go under "votr")',
        "warning: mcpServers.a.votr.pinnned: unknown votr setting, ignored; known: ['categories', 'disabled', 'examples', 'hints', 'loop_hints', 'pinned', 'polling', 'startup_timeout', 'timeout', 'trust']",
    ]


def test_votr_settings_are_read_from_the_votr_block_and_cline_style_top_level_fields() -> None:
    config = parse_upstreams({"mcpServers": {
        "a": {"command": "x", "timeout": 5, "disabled": True},
        "b": {"command": "y", "votr": {
            "timeout": 7.5, "startup_timeout": 90, "trust": "auto", "pinned": ["search"],
            "polling": ["job_status"], "loop_hints": {"fetch": "Pages behind a login return 403: ask the user."},
        }},
    }})
    a, b = config.servers
    assert (a.timeout, a.disabled) == (5.0, True)
    assert (b.timeout, b.startup_timeout, b.trust, b.pinned) == (7.5, 90.0, "auto", ("search",))
    assert (b.polling, dict(b.loop_hints)) == (("job_status",), {"fetch": "Pages behind a login return 403: ask the user."})
    assert config.enabled == (b,)


def test_environment_variables_are_expanded_and_an_unset_one_is_an_error() -> None:
    document = {"mcpServers": {
        "a": {"command": "${BIN:-node}", "args": ["--root", "${HOME}/data"], "env": {"TOKEN": "${TOKEN}"}},
        "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${MISSING}"}},
    }}
    config = parse_upstreams(document, environ={"HOME": "/home/u", "TOKEN": "t0k"})
    (a,) = config.servers
    assert (a.command, a.args, dict(a.env)) == ("node", ("--root", "/home/u/data"), {"TOKEN": "t0k"})
    assert str(config.errors[0]).startswith("mcpServers.b.headers.Authorization: uses ${MISSING}, which is not set")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "must be a JSON object"),
        ('{"servers_typo": {}}', "has no 'mcpServers' object"),
        ('{"mcpServers": []}', "must be an object mapping server names"),
    ],
)
def test_a_file_that_cannot_be_used_at_all_raises_a_config_error_saying_why(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected):
        load_upstreams(path, environ={})


def test_a_missing_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist; pass a JSON file with an 'mcpServers' object"):
        load_upstreams(tmp_path / "nope.json")


def test_vs_code_servers_key_is_read_when_mcp_servers_is_absent() -> None:
    config = parse_upstreams({"servers": {"a": {"type": "stdio", "command": "x"}}})
    assert [s.name for s in config.servers] == ["a"]


def test_a_server_name_given_twice_is_reported_because_json_keeps_only_the_last(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"mcpServers": {"time": {"command": "old"}, "time": {"command": "new"}}}')
    config = load_upstreams(path, environ={})
    assert [(s.name, s.command) for s in config.servers] == [("time", "new")]
    assert [str(p) for p in config.problems] == [f"warning: config: the key 'time' appears more than once in '{path}'; only its last value is used"]


def test_credentials_in_a_url_are_kept_out_of_logs_and_messages() -> None:
    (server,) = parse_upstreams({"mcpServers": {"r": {"url": "https://me:s3cret@host.example/mcp"}}}).servers
    assert server.url == "https://me:s3cret@host.example/mcp"
    assert server.display_url == "https://host.example/mcp"
    assert "s3cret" not in server.describe()


@pytest.mark.parametrize("entry", [
    {"command": "votr-mcp", "args": ["serve", "--config", "claude_desktop_config.json"]},
    {"command": "/home/me/votr/.venv/bin/votr-mcp", "args": ["serve"]},
    {"command": "uvx", "args": ["votr-mcp", "serve"]},
    {"command": "python3", "args": ["-m", "votr_mcp.cli", "serve"]},
])
def test_an_entry_that_starts_votr_mcp_itself_is_skipped_saying_why(entry: dict) -> None:
    config = parse_upstreams({"mcpServers": {"votr": entry, "time": {"command": "uvx", "args": ["mcp-server-time"]}}})
    assert [s.name for s in config.servers] == ["time"]
    assert str(config.errors[0]).startswith("mcpServers.votr.command: this entry starts votr-mcp itself")


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from votr_mcp.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"votr-mcp {version('votr-mcp')}"


def test_example_requests_categories_and_hints_per_tool_are_read_and_bad_ones_named() -> None:
    config = parse_upstreams({"mcpServers": {
        "db": {"command": "x", "votr": {"examples": {"query": ["how many users signed up today"]}, "categories": ["data"],
                                        "hints": {"query": "call list_tables first"}}},
        "bad": {"command": "y", "votr": {"examples": {"query": "not a list"}}},
    }})
    db, = config.servers
    assert db.examples == {"query": ("how many users signed up today",)}
    assert db.categories == ("data",) and db.hints == {"query": "call list_tables first"}
    assert str(config.errors[0]).startswith("mcpServers.bad.votr.examples: must map tool names of this server to lists of example requests")


@pytest.mark.parametrize("entry,message", [
    ({"command": "x", "timeout": True}, "mcpServers.e.timeout: must be a positive number of seconds, got True"),
    ({"command": "x", "votr": {"startup_timeout": float("inf")}}, "mcpServers.e.votr.startup_timeout: must be a positive number of seconds"),
    ({"command": "x", "env": {"PORT": 8080}}, "mcpServers.e.env.PORT: must be a string, got 8080; quote numbers and booleans"),
    ({"command": "x", "votr": {"trust": "sometimes"}}, "mcpServers.e.votr.trust: must be \"manual\""),
    ({"command": "x", "votr": {"pinned": ["ok", ""]}}, "mcpServers.e.votr.pinned: must be a list of tool names of this server"),
    ({"command": "x", "votr": {"examples": {"query": ["   "]}}}, "mcpServers.e.votr.examples: must map tool names"),
    ({"command": "  "}, "mcpServers.e.command: must be a non-empty string"),
    ({"url": 5}, "mcpServers.e.url: must be a non-empty string, got 5"),
])
def test_each_field_is_checked_by_its_type_and_the_message_names_entry_field_and_value(entry, message):
    config = parse_upstreams({"mcpServers": {"e": entry, "fine": {"command": "y"}}})
    assert [s.name for s in config.servers] == ["fine"]
    assert str(config.errors[0]).startswith(message), str(config.errors[0])
