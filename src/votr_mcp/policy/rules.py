"""Who may see and call which tools: principals, rules, and the decision for one tool.

A rule allows or denies; it matches a principal (by user, role or org; none listed: everybody), a
server glob, a tool glob and annotations (``destructiveHint``, ``readOnlyHint``, ... read with the
MCP defaults: an unannotated tool may be destructive). Rules are read in order and the first that
matches decides; a tool no rule matches gets the policy's ``default``. Tools listed under
``disabled`` (call-name globs, ``server__tool`` or ``server/tool``) are off for everybody, before
any rule. Every refusal names what refused it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from votr_mcp.catalog.models import Tool

__all__ = ["ANNOTATION_DEFAULTS", "Decision", "Policy", "Principal", "Rule"]

ANNOTATION_DEFAULTS: Mapping[str, bool] = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                                           "openWorldHint": True}
"""What an annotation means when a tool does not set it (the MCP specification's defaults)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking: a user, their roles and their org."""

    user: str
    roles: tuple[str, ...] = ()
    org: str | None = None

    def __str__(self) -> str:
        roles = f" (roles {', '.join(self.roles)})" if self.roles else ""
        return f"{self.user}{roles}"


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    why: str  # the rule (or default) that decided, for the refusal and the operator


@dataclass(frozen=True, slots=True)
class Rule:
    effect: str  # "allow" or "deny"
    label: str  # how a refusal names it: "rule 2 (deny role viewer, destructiveHint)"
    users: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    orgs: frozenset[str] = frozenset()
    servers: tuple[str, ...] = ("*",)
    tools: tuple[str, ...] = ("*",)
    annotations: Mapping[str, bool] = field(default_factory=dict)

    def applies_to(self, p: Principal) -> bool:
        if not (self.users or self.roles or self.orgs):
            return True
        return p.user in self.users or bool(self.roles.intersection(p.roles)) or (p.org is not None and p.org in self.orgs)

    def matches(self, tool: Tool) -> bool:
        if not any(fnmatchcase(tool.server, g) for g in self.servers):
            return False
        if not any(fnmatchcase(tool.name, g) for g in self.tools):
            return False
        return all(annotation(tool, name) == want for name, want in self.annotations.items())


def annotation(tool: Tool, name: str) -> bool:
    """A tool's annotation with the MCP defaults; a read-only tool is never destructive."""
    given = dict(tool.annotations or {})
    if name == "destructiveHint" and given.get("readOnlyHint") is True:
        return False
    value = given.get(name, ANNOTATION_DEFAULTS.get(name, False))
    return bool(value)


@dataclass(frozen=True)
class Policy:
    """Rules, disabled tools and the default; ``source`` names where they came from."""

    rules: tuple[Rule, ...] = ()
    disabled: tuple[str, ...] = ()
    default: str = "allow"
    source: str = "no policy"

    def decide(self, p: Principal, tool: Tool) -> Decision:
        names = (f"{tool.server}__{tool.name}", f"{tool.server}/{tool.name}")
        for pattern in self.disabled:
            if any(fnmatchcase(n, pattern) for n in names):
                return Decision(False, f"'{pattern}' under \"disabled\" in {self.source}")
        for rule in self.rules:
            if rule.applies_to(p) and rule.matches(tool):
                return Decision(rule.effect == "allow", f"{rule.label} in {self.source}")
        return Decision(self.default == "allow", f"the default ({self.default}) of {self.source}")

    @classmethod
    def parse(cls, data: Mapping[str, Any], source: str) -> Policy:
        """A policy from its JSON form; raises ValueError naming the bad field."""
        default = data.get("default", "allow")
        if default not in ("allow", "deny"):
            raise ValueError(f"\"default\" must be \"allow\" or \"deny\", got {default!r}")
        disabled = _strings(data.get("disabled", []), "disabled")
        rules = tuple(_rule(i, r) for i, r in enumerate(data.get("rules", []) or [], 1))
        return cls(rules, tuple(disabled), default, source)


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a string or a list of strings, got {value!r}")
    return list(value)


def _rule(i: int, raw: Any) -> Rule:
    if not isinstance(raw, Mapping) or len([k for k in ("allow", "deny") if k in raw]) != 1:
        raise ValueError(f"rule {i} must be an object with exactly one of \"allow\" or \"deny\", e.g. "
                         "{\"deny\": {\"roles\": [\"viewer\"], \"annotations\": {\"destructiveHint\": true}}}")
    effect = "allow" if "allow" in raw else "deny"
    spec = raw[effect] or {}
    known = {"users", "roles", "orgs", "servers", "tools", "annotations"}
    if not isinstance(spec, Mapping) or set(spec) - known:
        raise ValueError(f"rule {i}: unknown fields {sorted(set(spec) - known) if isinstance(spec, Mapping) else spec!r}; "
                         f"use {', '.join(sorted(known))}")
    annotations = spec.get("annotations", {})
    if isinstance(annotations, (str, list)):
        annotations = {a: True for a in _strings(annotations, f"rule {i} annotations")}
    if not isinstance(annotations, Mapping) or not all(isinstance(v, bool) for v in annotations.values()):
        raise ValueError(f"rule {i}: annotations must map names to true/false, e.g. {{\"destructiveHint\": true}}")
    parts = [f"{k} {', '.join(_strings(spec[k], f'rule {i} {k}'))}" for k in ("users", "roles", "orgs", "servers", "tools") if k in spec]
    parts += [f"{k}={str(v).lower()}" for k, v in annotations.items()]
    label = str(raw.get("name") or f"rule {i} ({effect}{': ' + '; '.join(parts) if parts else ''})")
    return Rule(effect, label,
                frozenset(_strings(spec.get("users", []), f"rule {i} users")),
                frozenset(_strings(spec.get("roles", []), f"rule {i} roles")),
                frozenset(_strings(spec.get("orgs", []), f"rule {i} orgs")),
                tuple(_strings(spec.get("servers", "*"), f"rule {i} servers")),
                tuple(_strings(spec.get("tools", "*"), f"rule {i} tools")),
                dict(annotations))


