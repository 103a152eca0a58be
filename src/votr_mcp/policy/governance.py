"""Governance in one object: who is asking, and which tools they may see and call.

A policy file (JSON) holds principals and rules::

    {"principals": {"local": {"user": "me", "roles": ["admin"]},
                    "tokens": {"${TEAM_TOKEN_BOB}": {"user": "bob", "roles": ["viewer"], "org": "acme"}}},
     "default": "allow",
     "rules": [{"deny": {"roles": ["viewer"], "annotations": {"destructiveHint": true}}}],
     "disabled": ["filesystem__write_file"]}

Over HTTP a request's bearer token names its principal; over stdio the principal is ``local``.
The file is read again when it changes (no restart); a change that does not parse is logged and
the policy in force stays. Hidden tools are computed once per (principal, catalog, policy).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, Tool
from votr_mcp.errors import ConfigError
from votr_mcp.policy.rules import Policy, Principal

__all__ = ["Governance", "LOCAL", "ANONYMOUS", "PolicyRefused"]

log = logging.getLogger(__name__)

LOCAL = Principal("local")
ANONYMOUS = Principal("anonymous", ("anonymous",))


class PolicyRefused(ConfigError):
    """A request the policy refuses (an unknown bearer token)."""


class Governance:
    """The policy in force (reloaded from ``path`` when it changes) and the principals."""

    def __init__(self, path: Path | None = None, *, data: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.path = path
        self._environ = dict(environ or {})
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self.version = 0
        self._masks: dict[tuple[Principal, int], tuple[Catalog, int, NDArray[np.bool_] | None]] = {}
        self.problem: str | None = None  # why the last change of the file was not applied
        if path is not None:
            self._stamp = _stamp(path)
            self._apply(_read(path), str(path))
        else:
            self._apply(data or {}, "the policy given")

    # ---- the policy file --------------------------------------------------------------------

    def _apply(self, data: Mapping[str, Any], source: str) -> None:
        try:
            policy = Policy.parse(data, source)
            local, tokens = _principals(data.get("principals") or {}, self._environ)
        except ValueError as exc:
            raise ConfigError(f"policy {source}: {exc}") from exc
        with self._lock:
            self.policy, self.local, self._tokens = policy, local, tokens
            self.version += 1
            self._masks.clear()

    def current(self) -> Policy:
        """The policy in force, re-read first when its file changed."""
        if self.path is not None:
            stamp = _stamp(self.path)
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    self._apply(_read(self.path), str(self.path))
                    self.problem = None
                    log.info("policy %s reloaded (%d rules, %d disabled)", self.path, len(self.policy.rules), len(self.policy.disabled))
                except ConfigError as exc:
                    self.problem = f"{exc}; the previous policy stays in force until the file is fixed"
                    log.error("%s", self.problem)
        return self.policy

    # ---- who is asking -----------------------------------------------------------------------

    def principal(self, bearer: str | None, over_http: bool) -> Principal:
        """The principal of a request: the token's over HTTP, else the local user."""
        self.current()
        if not over_http:
            return self.local
        if not self._tokens:
            return self.local  # no per-user tokens: one shared token (or none) guards the server
        if bearer:
            for token, p in self._tokens.items():
                if secrets.compare_digest(token.encode(), bearer.encode()):
                    return p
        raise PolicyRefused("this server maps bearer tokens to users, and the request's token is missing or unknown; "
                            "send 'Authorization: Bearer <your token>' (ask the operator for one)")

    # ---- what they may see and call ---------------------------------------------------------

    def hidden(self, p: Principal, catalog: Catalog) -> NDArray[np.bool_] | None:
        """A mask over catalog positions of the tools ``p`` may not see (None: none hidden)."""
        policy = self.current()
        key = (p, id(catalog))
        with self._lock:
            cached = self._masks.get(key)
            if cached is not None and cached[0] is catalog and cached[1] == self.version:
                return cached[2]
            version = self.version
        mask = np.fromiter((not policy.decide(p, t).allowed for t in catalog), dtype=bool, count=len(catalog))
        result = mask if mask.any() else None
        with self._lock:
            if len(self._masks) > 256:
                self._masks.clear()
            self._masks[key] = (catalog, version, result)
        return result

    def visible(self, p: Principal, tool: Tool) -> bool:
        return self.current().decide(p, tool).allowed

    def refusal(self, p: Principal, tool: Tool, call_name: str) -> str | None:
        """Why ``p`` may not call ``tool`` (None: allowed)."""
        decision = self.current().decide(p, tool)
        if decision.allowed:
            return None
        return f"'{call_name}' is not available to {p}: refused by {decision.why}. Ask the operator, or search_tools for another tool."


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"policy file '{path}' is not there; create it or drop --policy") from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"policy file '{path}' is not valid JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"policy file '{path}' must hold a JSON object with \"rules\", \"disabled\", \"principals\"")
    return data


def _principal(raw: Any, where: str) -> Principal:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("user"), str):
        raise ValueError(f"{where} must be an object with a \"user\" string, and optionally \"roles\" and \"org\"")
    roles = raw.get("roles", [])
    if isinstance(roles, str):
        roles = [roles]
    org = raw.get("org")
    return Principal(raw["user"], tuple(str(r) for r in roles), str(org) if org is not None else None)


def _principals(raw: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[Principal, dict[str, Principal]]:
    local = _principal(raw["local"], "principals.local") if "local" in raw else LOCAL
    tokens: dict[str, Principal] = {}
    for token, who in (raw.get("tokens") or {}).items():
        value = token
        if token.startswith("${") and token.endswith("}"):
            value = environ.get(token[2:-1], "")
            if not value:
                log.warning("policy: %s is not set, so the token of '%s' is off", token, who.get("user") if isinstance(who, Mapping) else who)
                continue
        tokens[value] = _principal(who, f"principals.tokens[{token if token.startswith('${') else '…'}]")
    return local, tokens
