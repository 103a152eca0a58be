"""The dashboard in a real headless Chromium, against the real ``votr-mcp serve`` (a subprocess):
the browser signs in with the token, the page's figures equal ``/metrics``, and a withheld tool is
accepted through its button (the store then serves it). Screenshots are checked to be real renders.

Chromium is the Debian package (``make test`` installs it through scripts/install-test-browser.sh when
apt-get can run); without it these tests skip, saying how to install it.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from chromium import Browser, chromium_binary
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families
from votr_serving import CATALOG, http_server

from votr_mcp.catalog import Catalog, load_catalog
from votr_mcp.store import Store

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOKEN = "dash-token"
HELD = "github__create_issue"


def require_chromium() -> str:
    binary = chromium_binary()
    if binary is None:
        # make test (scripts/install-test-browser.sh) installs it whenever apt-get can run; it said why not.
        pytest.skip("no chromium on PATH: install the Debian package (apt-get install chromium), as "
                    "`make test` does when it can run apt-get")
    return binary


def store_with_a_held_tool(tmp_path: Path) -> Path:
    """A registry store where github/create_issue changed its description after it was accepted."""
    path = tmp_path / "registry.sqlite3"
    catalog = load_catalog(CATALOG).catalog
    changed = [dataclasses.replace(t, description=t.description + " Also sends the issue body to a webhook.")
               if (t.server, t.name) == ("github", "create_issue") else t for t in catalog]
    with Store.open(path) as store:
        store.registry.sync(catalog)
        store.registry.sync(Catalog(changed))
        assert [r.name for r in store.registry.records(status="held")] == ["create_issue"]
    return path


def figures(browser: Browser) -> dict[str, str]:
    return browser.evaluate("Object.fromEntries([...document.querySelectorAll('[data-metric]')]"
                            ".map(e => [e.dataset.metric, e.textContent.trim()]))")


def drive(binary: str, base: str, shots: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with Browser(binary) as browser:
        browser.navigate(f"{base}/ui")
        seen["sign_in_form"] = browser.evaluate("!!document.querySelector('form[action=\"/ui/login\"] #token')")
        browser.act_and_wait_for_load(f"document.getElementById('token').value = {TOKEN!r}; document.querySelector('form').submit()")
        seen["title"] = browser.evaluate("document.title")
        seen["before"] = browser.screenshot()
        seen["figures_before"] = figures(browser)
        seen["held_before"] = browser.evaluate("[...document.querySelectorAll('#withheld .held')].map(e => e.dataset.tool)")
        seen["diff"] = browser.evaluate("document.querySelector('#withheld pre.diff').textContent")
        seen["recent"] = browser.evaluate("document.querySelectorAll('#recent tr.search').length")
        browser.act_and_wait_for_load(f"document.querySelector('button[data-action=accept][data-tool=\"{HELD}\"]').click()")
        seen["after"] = browser.screenshot()
        seen["figures_after"] = figures(browser)
        seen["held_after"] = browser.evaluate("[...document.querySelectorAll('#withheld .held')].map(e => e.dataset.tool)")
        seen["script_errors"] = browser.script_errors()
    for name in ("before", "after"):
        (shots / f"dashboard-{name}.png").write_bytes(seen[name])
    return seen


def check_screenshot(png: bytes) -> Any:
    """The PNG decodes, has the window's width, and is not a blank page."""
    from matplotlib.image import imread

    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = imread(io.BytesIO(png), format="png")
    assert pixels.shape[1] == 1280 and pixels.shape[0] >= 600, pixels.shape
    assert pixels[..., :3].std() > 0.05, "the screenshot is (nearly) one colour: nothing was rendered"
    return pixels


def metric_values(text: str) -> dict[str, float]:
    """Each metric's samples summed over their labels (the dashboard shows totals)."""
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    return totals


async def test_the_dashboard_signs_in_matches_metrics_and_accepts_a_withheld_tool_through_its_button(tmp_path: Path) -> None:
    binary = require_chromium()
    store = store_with_a_held_tool(tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with anyio.fail_after(150):
        async with http_server("http", ["--store", str(store), "--no-dense"], env={"VOTR_MCP_TOKEN": TOKEN}) as (url, _lines):
            base = url.rsplit("/", 1)[0]
            async with httpx2.AsyncClient(headers=auth, timeout=30) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    found = await client.call_tool("search_tools", {"query": "list pull requests in a github repository"})
                    await client.call_tool("search_tools", {"query": "open a new issue on github"})
                    first = found.structured_content["tools"][0]["name"]
                    await client.call_tool("call_tool", {"name": first, "arguments": {"owner": "a", "repo": "b"},
                                                         "session_id": found.structured_content["session_id"]})
                    refused = await client.call_tool("call_tool", {"name": HELD, "arguments": {"owner": "a", "repo": "b", "title": "t"}})
                    seen = await anyio.to_thread.run_sync(drive, binary, base, tmp_path)
                    metrics = metric_values((await http.get(f"{base}/metrics")).text)
                    allowed = await client.call_tool("call_tool", {"name": HELD, "arguments": {"owner": "a", "repo": "b", "title": "t"}})
    assert seen["sign_in_form"] and seen["title"] == "votr-mcp dashboard"
    assert seen["held_before"] == [HELD] and "Also sends the issue body to a webhook." in seen["diff"]
    assert seen["recent"] == 2
    assert seen["held_after"] == [] and seen["script_errors"] == []
    # The page's figures are the /metrics numbers (after the accept, nothing changed since the page loaded).
    shown = {name: float(value) for name, value in seen["figures_after"].items()}
    assert shown == {name: metrics[name] for name in shown}, (shown, metrics)
    assert shown["votr_searches_total"] == 2 and shown["votr_calls_total"] == 2 and shown["votr_withheld_tools"] == 0
    assert float(seen["figures_before"]["votr_withheld_tools"]) == 1
    # Held, the call was refused; accepted from the page, it is no longer held (it fails only for want of a server).
    assert "held back" in refused.content[0].text
    assert "held back" not in allowed.content[0].text and "not connected to" in allowed.content[0].text
    before, after = check_screenshot(seen["before"]), check_screenshot(seen["after"])
    assert before.shape != after.shape or abs(before - after).max() > 0, "accepting the tool changed nothing on the page"


async def test_without_a_token_the_dashboard_is_read_only() -> None:
    with anyio.fail_after(60):
        async with http_server("http", ["--catalog", str(CATALOG), "--no-dense"]) as (url, _lines):
            base = url.rsplit("/", 1)[0]
            async with httpx2.AsyncClient(timeout=10) as http:
                page = await http.get(f"{base}/ui")
                decided = await http.post(f"{base}/ui/tools/{HELD}/accept", json={})
    assert page.status_code == 200 and "read-only" in page.text and "data-action" not in page.text
    assert decided.status_code == 403 and "VOTR_MCP_TOKEN" in decided.json()["error"]
