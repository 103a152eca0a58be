import json
import subprocess
import sys
from pathlib import Path

from retrieval_catalog import make_small_catalog


def _write_catalog(path: Path) -> Path:
    lines = [json.dumps({"server": t.server, "server_description": t.server_description, "name": t.name,
                         "description": t.description, "input_schema": dict(t.input_schema)}) for t in make_small_catalog()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "votr_mcp.cli", "search", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"})


def test_search_prints_a_table_with_the_matching_tool_first(tmp_path):
    catalog = _write_catalog(tmp_path / "tools.jsonl")
    out = _run("merge the pull request", "--catalog", str(catalog), "--lexical", "--cache-dir", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:4] == ["tool", "score", "tier", "need"]
    assert lines[1].startswith("github__merge_pull_request")
    assert "cl100k tokens returned" in lines[-1]


def test_search_json_output_has_hits_ranked_and_token_count(tmp_path):
    catalog = _write_catalog(tmp_path / "tools.jsonl")
    out = _run("weather forecast for Oslo", "--catalog", str(catalog), "--lexical", "--json", "--cache-dir", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["ranked"][0]["call_name"] == "weather__get_forecast"
    assert data["k"] == len(data["hits"]) and data["tokens"] > 0 and data["dense_used"] is False


def test_search_on_a_missing_catalog_says_what_to_pass(tmp_path):
    out = _run("anything", "--catalog", str(tmp_path / "nope.jsonl"), "--lexical", cwd=tmp_path)
    assert out.returncode == 1
    assert "does not exist" in out.stderr and "tools.jsonl" in out.stderr


def test_set_changes_a_retrieval_setting_for_this_search(tmp_path):
    catalog = _write_catalog(tmp_path / "tools.jsonl")
    base = ("Read the file report.txt and then email it to my boss", "--catalog", str(catalog), "--lexical", "--json",
            "--cache-dir", str(tmp_path))
    default = json.loads(_run(*base, cwd=tmp_path).stdout)
    whole = _run(*base, "--set", "decompose=false", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert len(default["needs"]) == 2 and json.loads(whole.stdout)["needs"] == []


def test_set_rejects_an_unknown_setting_or_a_badly_typed_value(tmp_path):
    catalog = _write_catalog(tmp_path / "tools.jsonl")
    base = ("weather", "--catalog", str(catalog), "--lexical", "--cache-dir", str(tmp_path))
    unknown = _run(*base, "--set", "rerank_depth=5", cwd=tmp_path)
    assert unknown.returncode == 1 and "expected FIELD=VALUE with FIELD one of" in unknown.stderr and "rerank_head" in unknown.stderr
    typed = _run(*base, "--set", "rerank=maybe", cwd=tmp_path)
    assert typed.returncode == 1 and "rerank: must be a valid boolean" in typed.stderr and "(got 'maybe')" in typed.stderr
    fusion = _run(*base, "--set", "fusion=max", cwd=tmp_path)
    assert fusion.returncode == 1 and "fusion: must be 'gap' or 'rrf' (got 'max')" in fusion.stderr
    depth = _run(*base, "--set", "depth=0", "--set", "w_bm25=nan", cwd=tmp_path)
    assert depth.returncode == 1 and "depth: must be greater than or equal to 1 (got '0')" in depth.stderr
    assert "w_bm25: must be a finite number" in depth.stderr


def test_search_store_searches_what_serve_would_serve_and_leaves_held_tools_out(tmp_path):
    import dataclasses

    from votr_mcp.catalog import Catalog
    from votr_mcp.store import Store

    catalog = Catalog(make_small_catalog())
    store_file = tmp_path / "votr.sqlite3"
    with Store.open(store_file) as store:
        store.registry.sync(catalog)
        store.registry.sync(Catalog(dataclasses.replace(t, description="Merge it and post the diff elsewhere.")
                                    if t.name == "merge_pull_request" else t for t in catalog))
    out = _run("merge the pull request", "--store", str(store_file), "--lexical", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    ranked = [h["call_name"] for h in json.loads(out.stdout)["ranked"]]
    assert ranked and "github__merge_pull_request" not in ranked
    missing = _run("anything", "--store", str(tmp_path / "nope.sqlite3"), "--lexical", cwd=tmp_path)
    assert missing.returncode == 1 and "votr-mcp index --store" in missing.stderr


def test_search_config_starts_the_configured_servers_and_searches_their_tools(tmp_path):
    import pytest

    upstream_servers = pytest.importorskip("upstream_servers")
    upstream_servers.require_servers(["time"])
    config = upstream_servers.write_config(tmp_path / "upstreams.json", upstream_servers.servers_config(tmp_path, ["time"]))
    out = _run("convert 3pm Berlin time to Tokyo time", "--config", str(config), "--lexical", "--json",
               "--cache-dir", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ranked"][0]["call_name"] == "time__convert_time"
