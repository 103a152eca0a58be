"""The HTTP transports' Host/Origin check matches names exactly, ports included."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from votr_mcp.server.transports import HttpOptions, _StrictHost, allowed_names


def _client(**options: object) -> TestClient:
    app = Starlette(routes=[Route("/mcp", lambda request: PlainTextResponse("ok"), methods=["GET"])])
    app.add_middleware(_StrictHost, names=allowed_names(HttpOptions(**options)))  # type: ignore[arg-type]
    return TestClient(app)


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:51234", "[::1]:80", "LocalHost:1"])
def test_loopback_hosts_on_any_port_are_served(host: str) -> None:
    assert _client().get("/mcp", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["localhost:evil.com", "localhost.evil.com", "evil.com", "localhost:", "127.0.0.1:80:80",
                                  "localhost:123456", "[::1]x", ""])
def test_other_or_malformed_hosts_are_refused(host: str) -> None:
    assert _client().get("/mcp", headers={"host": host}).status_code == 421


@pytest.mark.parametrize("origin,status", [("http://localhost:3000", 200), ("http://localhost:evil.com", 403),
                                           ("https://evil.com", 403), ("null", 403)])
def test_an_origin_must_name_an_allowed_host_exactly(origin: str, status: int) -> None:
    assert _client().get("/mcp", headers={"host": "localhost:1", "origin": origin}).status_code == status


def test_allow_host_adds_a_name_and_its_port_pattern_does_not_widen_it() -> None:
    client = _client(allowed_hosts=("votr.internal:*",))
    assert client.get("/mcp", headers={"host": "votr.internal:9000"}).status_code == 200
    assert client.get("/mcp", headers={"host": "votr.internal:evil.com"}).status_code == 421
