"""OpenTelemetry spans per search and per call, exported only when the operator asks.

The spans go through the OpenTelemetry API (``opentelemetry-api``, which the ``mcp`` SDK already
depends on). Without a configured SDK the API is a no-op: nothing is recorded and nothing leaves
the machine. ``votr-mcp serve --otlp-endpoint URL`` (or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT``, read by the CLI) installs the SDK's tracer provider with an OTLP
HTTP exporter; that needs the optional extra ``pip install 'votr-mcp[otel]'``.

Span attributes never carry the query text or tool arguments, only their shape: query length, k,
tier, server, outcome, and the rank of the called tool in the session's last search.
"""

from __future__ import annotations

import time
from typing import Any

from votr_mcp.errors import ConfigError

__all__ = ["Tracing", "configure_otlp"]


class Tracing:
    """Records spans through the OpenTelemetry API (no-op unless a provider is configured)."""

    def __init__(self, tracer: Any = None) -> None:
        if tracer is None:
            from opentelemetry import trace

            tracer = trace.get_tracer("votr_mcp")
        self._tracer = tracer

    def search(self, *, query_chars: int, k: int, tier: str | None, abstained: bool, seconds: float) -> None:
        self._span("votr.search_tools", seconds, {"votr.query.length": query_chars, "votr.k": k, "votr.tier": tier or "none",
                                                  "votr.abstained": abstained})

    def call(self, *, server: str, outcome: str, rank: int, seconds: float) -> None:
        self._span("votr.call_tool", seconds, {"votr.server": server, "votr.outcome": outcome, "votr.rank": rank})

    def _span(self, name: str, seconds: float, attributes: dict[str, Any]) -> None:
        # Recorded after the fact with its real start and end, so the request path carries no tracing code.
        end = time.time_ns()
        span = self._tracer.start_span(name, start_time=end - int(seconds * 1e9), attributes=attributes)
        span.end(end_time=end)


def configure_otlp(endpoint: str, *, service_name: str = "votr-mcp") -> Any:
    """Install a tracer provider that batches spans to an OTLP/HTTP collector at ``endpoint``; returns it
    (call ``shutdown()`` on exit to flush)."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(f"exporting traces to {endpoint} needs the OpenTelemetry SDK and OTLP exporter ({exc.name} is "
                          "missing); install them with: pip install 'votr-mcp[otel]'") from exc
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    url = endpoint.rstrip("/")
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url if url.endswith("/v1/traces") else f"{url}/v1/traces")))
    trace.set_tracer_provider(provider)
    return provider
