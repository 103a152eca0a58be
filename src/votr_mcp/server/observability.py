"""The operator's HTTP endpoints beside ``/mcp`` and ``/sse``, and the wiring of the observer.

    GET  /metrics                      Prometheus text (votr_* metrics)        token
    GET  /health                       200 ready / 503 starting, with checks  open (probes)
    GET  /health/live                  200 while the process serves            open
    GET  /ui                           the dashboard                          token (header or cookie)
    POST /ui/login                     form with the token -> cookie           open
    POST /ui/tools/{name}/{action}     accept / reject / rollback a held tool  token, operator only

The token check itself is the transport's (``transports._BearerToken``); it marks a request
that carried the token as the operator's. Without ``VOTR_MCP_TOKEN`` the dashboard is
read-only: on a shared machine anyone who reaches the port would otherwise decide on tools.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from votr_mcp.errors import StoreError
from votr_mcp.server import status
from votr_mcp.server.hub import Hub
from votr_mcp.server.metrics import CONTENT_TYPE
from votr_mcp.server.observe_requests import ObservedUpstreams
from votr_mcp.server.observer import Observer
from votr_mcp.server.transports import UI_COOKIE, HttpOptions, ui_cookie_value

__all__ = ["observe", "web_routes"]

log = logging.getLogger(__name__)


def observe(hub: Hub, sessions: Any = None, observer: Observer | None = None) -> Observer:
    """An observer of ``hub``, wired to its upstream calls and to the session layer's guard and count."""
    observer = observer or Observer(hub)
    if hub.upstreams is not None and not isinstance(hub.upstreams, ObservedUpstreams):
        hub.upstreams = ObservedUpstreams(hub.upstreams, observer)
    if hasattr(sessions, "on_trip"):
        sessions.on_trip = observer.guard_trip
    manager = getattr(sessions, "manager", None)
    if manager is not None and hasattr(manager, "__len__"):
        observer.sessions = lambda: len(manager)
    return observer


def web_routes(observer: Observer, options: HttpOptions) -> list[BaseRoute]:
    """The routes above, for ``transports.http_app``."""
    hub = observer.hub

    async def metrics(request: Request) -> Response:
        return Response(observer.metrics.exposition(), media_type=CONTENT_TYPE)

    async def health(request: Request) -> Response:
        checks = status.readiness(hub)
        ready = all(checks.values())
        return JSONResponse({"status": "ready" if ready else "starting", "checks": checks}, status_code=200 if ready else 503)

    async def live(request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def ui(request: Request) -> Response:
        from votr_mcp.server.dashboard import dashboard_page, held_tools

        store = _store(hub)
        held = await anyio.to_thread.run_sync(held_tools, store) if store is not None else None
        return dashboard_page(observer, operator=_operator(request), held=held)

    async def login(request: Request) -> Response:
        from votr_mcp.server.dashboard import login_page

        if not options.token:
            return RedirectResponse("/ui", status_code=303)
        if request.method == "GET":
            return login_page() if not _operator(request) else RedirectResponse("/ui", status_code=303)
        form = await request.form()
        given = str(form.get("token") or "")
        if not secrets.compare_digest(given.encode(), options.token.encode()):
            log.warning("dashboard sign-in with a wrong token from %s", request.client.host if request.client else "?")
            return login_page("That is not the server's token.")
        response = RedirectResponse("/ui", status_code=303)
        response.set_cookie(UI_COOKIE, ui_cookie_value(options.token), httponly=True, samesite="strict", path="/ui")
        return response

    async def decide(request: Request) -> Response:
        from votr_mcp.server.dashboard import ACTIONS
        from votr_mcp.server.dashboard import decide as apply

        if not _operator(request):
            return JSONResponse({"error": "only the operator may decide on tools: set VOTR_MCP_TOKEN on the server and sign in"},
                                status_code=403)
        name, action = request.path_params["name"], request.path_params["action"]
        store = _store(hub)
        if store is None:
            return JSONResponse({"error": "this server has no registry store, so nothing is withheld"}, status_code=404)
        if action not in ACTIONS:
            return JSONResponse({"error": f"unknown action '{action}'; use one of {', '.join(ACTIONS)}"}, status_code=404)
        try:
            body = await request.json() if await request.body() else {}
        except ValueError:
            return JSONResponse({"error": "the body must be JSON, e.g. {\"version\": 2}"}, status_code=400)
        version = body.get("version") if isinstance(body, dict) else None
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            return JSONResponse({"error": f"'version' must be a whole number, got {version!r}"}, status_code=400)
        try:
            record = await anyio.to_thread.run_sync(apply, store, name, action, version)
        except StoreError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        log.warning("dashboard: the operator chose %s for %s (now %s, accepted v%s)", action, name, record["status"],
                    record["accepted_version"])
        return JSONResponse(record)

    return [
        Route("/metrics", metrics, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/health/live", live, methods=["GET"]),
        Route("/ui", ui, methods=["GET"]),
        Route("/ui/login", login, methods=["GET", "POST"]),
        Route("/ui/tools/{name}/{action}", decide, methods=["POST"]),
    ]


def _operator(request: Request) -> bool:
    return bool(request.scope.get("votr.operator"))


def _store(hub: Hub) -> Any:
    return getattr(hub.change_control, "store", None)
