"""OpenTelemetry spans per search and per call: their attributes, and export to an OTLP collector
only when the operator names one (``serve --otlp-endpoint``)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest
from votr_serving import CATALOG, votr_client

from votr_mcp.server.observer import Observer
from votr_mcp.server.tracing import Tracing

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is the optional extra votr-mcp[otel]")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_observer import make_hub


def test_a_search_and_a_call_each_make_a_span_with_their_shape_but_not_their_text() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    hub, _ = make_hub()
    observer = Observer(hub, tracing=Tracing(provider.get_tracer("test")))
    answer = {"tools": [{"name": "github__create_issue", "tier": "high"}, {"name": "notes__write_note", "tier": "medium"}],
              "abstained": False}
    observer.searched(["s"], "file a secret bug", None, answer, 0.25)
    observer.called(["s"], "notes__write_note", "ok", 0.5)
    search, call = exporter.get_finished_spans()
    assert search.name == "votr.search_tools" and dict(search.attributes) == {
        "votr.query.length": len("file a secret bug"), "votr.k": 2, "votr.tier": "high", "votr.abstained": False}
    assert call.name == "votr.call_tool" and dict(call.attributes) == {"votr.server": "notes", "votr.outcome": "ok", "votr.rank": 2}
    assert abs((search.end_time - search.start_time) / 1e9 - 0.25) < 1e-3
    assert "secret" not in str(search.attributes)


@contextmanager
def collector() -> Iterator[tuple[int, list[tuple[str, bytes]]]]:
    """A local OTLP/HTTP endpoint that records what is posted to it: (its port, the posts)."""
    received: list[tuple[str, bytes]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.path, self.rfile.read(int(self.headers.get("Content-Length", 0)))))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.anyio
@pytest.mark.slow
async def test_serve_exports_spans_to_the_otlp_endpoint_it_was_given_and_flushes_them_on_exit() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the OTLP exporter is the optional extra votr-mcp[otel]")
    with collector() as (port, received):
        with anyio.fail_after(60):
            async with votr_client("stdio", "--catalog", str(CATALOG), "--no-dense", "--otlp-endpoint",
                                   f"http://127.0.0.1:{port}") as client:
                await client.call_tool("search_tools", {"query": "list pull requests"})
                await client.call_tool("call_tool", {"name": "github__list_pull_requests", "arguments": {"owner": "a", "repo": "b"}})
            # The client closed stdin: serve returns and the batched spans are flushed before the process exits.
    paths = {path for path, _ in received}
    body = b"".join(data for _, data in received)
    assert paths == {"/v1/traces"}
    assert b"votr.search_tools" in body and b"votr.call_tool" in body and b"list pull requests" not in body
