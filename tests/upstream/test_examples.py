"""The example upstream config shipped in examples/ loads cleanly."""

from __future__ import annotations

from pathlib import Path

from votr_mcp.upstream.config import load_upstreams

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "upstreams.json"


def test_the_example_config_loads_without_problems_and_names_the_five_real_servers() -> None:
    config = load_upstreams(EXAMPLE, environ={"HOME": "/home/someone"})
    assert config.problems == ()
    assert [s.name for s in config.enabled] == ["everything", "filesystem", "memory", "time", "git"]
    assert config.get("filesystem").args[-1] == "/home/someone/Documents"  # type: ignore[union-attr]
    assert config.get("time").args[-1] == "UTC"  # type: ignore[union-attr]
    assert config.get("team-search").headers == {"Authorization": "Bearer "}  # type: ignore[union-attr]
