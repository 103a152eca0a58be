"""Check call arguments against the tool's input schema before they travel upstream.

The schema comes from the upstream server, so it is treated as hostile input:

- no ``$ref`` is ever retrieved (network or file): the registry refuses every unknown URI;
- the check runs in a worker thread under a deadline (``DEADLINE`` s), never on the event loop;
  keyword evaluation also stops itself at the deadline, so an abandoned thread ends too;
- a schema larger than ``MAX_SCHEMA_BYTES`` serialized is not checked;
- ``pattern`` and ``patternProperties`` run on RE2, which does not backtrack; a pattern RE2
  cannot compile (backreferences, lookaround) counts as not checked;
- a failed check returns a short message (at most ``MAX_ECHO_CHARS``): the failing paths and
  what was expected there, never descriptions, the whole schema or the offending values.

Checking is a courtesy to the agent, not a guard for the upstream (which sees the arguments
either way). So a schema votr cannot use (too large, invalid, an unresolvable or cyclic
``$ref``) is the upstream's bug: the arguments go through unchecked and a warning goes to
stderr once per tool definition. Only a check over its deadline refuses the call, since it
cannot say whether the arguments fit.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
import anyio.to_thread
import jsonschema
import re2
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator
from mcp.server.mcpserver.exceptions import ToolError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable

from votr_mcp.catalog import Tool

__all__ = ["DEADLINE", "MAX_ECHO_CHARS", "MAX_SCHEMA_BYTES", "ArgumentsChecker"]

log = logging.getLogger(__name__)

DEADLINE = 2.0  # seconds one check may take, compiling the schema included
MAX_SCHEMA_BYTES = 256 * 1024  # serialized; real tools' schemas are a few KB
MAX_ECHO_CHARS = 2048
_MAX_ERRORS = 5  # named in the message
_MAX_SEEN_ERRORS = 50  # collected to pick the best from; a million-item array yields a million
_MAX_PARAMS = 20  # listed as the expected parameters
_THREADS = 4  # checks' own thread tokens: a runaway check never takes the shared pool's


class _Overtime(Exception):
    """Raised inside the worker thread when the check passes its deadline."""


_deadline = threading.local()  # the deadline of the check running in this thread


def _refuse(uri: str) -> Resource[Any]:
    log.debug("refused to retrieve $ref %s", uri[:200])
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs class; mypy misses its fields


# Anything but the schema itself is refused, never fetched (jsonschema adds the drafts' own
# metaschemas to it, from its package).
_REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


class ArgumentsChecker:
    """Validates arguments off the event loop; compiled validators are cached per tool definition."""

    def __init__(self, *, deadline: float = DEADLINE, max_schema_bytes: int = MAX_SCHEMA_BYTES) -> None:
        self.deadline = deadline
        self.max_schema_bytes = max_schema_bytes
        # Keyed by the Tool object itself (frozen; a re-harvested definition is a new object),
        # which is cheaper per call than hashing the definition.
        self._validators: dict[int, tuple[Tool, Validator | None]] = {}
        self._warned: dict[int, Tool] = {}
        self._limiter: anyio.CapacityLimiter | None = None

    async def check(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """None when ``arguments`` fit (or cannot be checked), else a message for the agent.

        Raises ToolError when the check does not finish within the deadline.
        """
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(_THREADS)
        stop = time.monotonic() + self.deadline
        overtime = ToolError(
            f"Checking the arguments of '{tool.name}' (server '{tool.server}') against its input schema took longer "
            f"than {self.deadline:g} s, so nothing was sent to the server. Retry with smaller arguments, or search_tools for another tool."
        )
        with anyio.move_on_after(self.deadline):
            try:
                return await anyio.to_thread.run_sync(self._check, tool, dict(arguments), stop, limiter=self._limiter, abandon_on_cancel=True)
            except _Overtime:
                raise overtime from None
        raise overtime  # only the deadline leaves the block without a return

    def _check(self, tool: Tool, arguments: dict[str, Any], stop: float) -> str | None:
        validator = self._validator(tool)
        if validator is None:
            return None
        _deadline.stop = stop
        try:
            errors = list(itertools.islice(validator.iter_errors(arguments), _MAX_SEEN_ERRORS))
        except _Overtime:
            raise
        except Unresolvable as exc:
            self._unchecked(tool, f"it has a $ref votr cannot resolve without fetching it ({_short(str(exc), 200)})")
            return None
        except RecursionError:
            self._unchecked(tool, "its $refs form a cycle (or these arguments nest deeper than votr follows)")
            return None
        except Exception as exc:  # noqa: BLE001 - a schema shape jsonschema trips on is the upstream's bug, not the agent's
            self._unchecked(tool, f"checking failed with {type(exc).__name__}: {_short(str(exc), 200)}")
            return None
        finally:
            _deadline.stop = None
        if not errors:
            return None
        return _message(tool, errors)

    def _validator(self, tool: Tool) -> Validator | None:
        cached = self._validators.get(id(tool))
        if cached is not None and cached[0] is tool:
            return cached[1]
        validator: Validator | None = None
        schema = dict(tool.input_schema or {})
        if schema:
            try:
                size = _serialized_size(schema, self.max_schema_bytes)
                if size > self.max_schema_bytes:
                    self._unchecked(tool, f"it is larger than {self.max_schema_bytes // 1024} KB serialized")
                else:
                    cls = _checker_class(jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator),
                                         skip_unevaluated=_mentions(schema, "patternProperties"))
                    cls.check_schema(schema, format_checker=None)  # its 'regex' format would compile patterns with re
                    validator = cls(schema, registry=_REGISTRY, format_checker=None)
            except SchemaError as exc:
                self._unchecked(tool, f"it is not a valid JSON Schema ({_short(exc.message, 200)})")
            except Exception as exc:  # noqa: BLE001 - e.g. RecursionError on a schema nested thousands deep
                self._unchecked(tool, f"votr cannot read it ({type(exc).__name__}: {_short(str(exc), 200)})")
        if len(self._validators) > 10_000:
            self._validators.clear()  # bounded: catalogs churn over a long-running process
            self._warned.clear()
        self._validators[id(tool)] = (tool, validator)  # holding the tool keeps its id unique
        return validator

    def _unchecked(self, tool: Tool, why: str) -> None:
        if self._warned.get(id(tool)) is not tool:
            self._warned[id(tool)] = tool
            log.warning("tool %s/%s: input schema not usable, its arguments are not checked: %s", tool.server, tool.name, why)


# -- the validator classes: RE2 for patterns, every keyword bounded by the deadline ----------


@functools.lru_cache(maxsize=16)
def _checker_class(base: type[Validator], *, skip_unevaluated: bool) -> type[Validator]:
    keywords: dict[str, Callable[..., Any]] = dict(base.VALIDATORS)
    for name, fn in (("pattern", _pattern), ("patternProperties", _pattern_properties), ("additionalProperties", _additional_properties)):
        if name in keywords:
            keywords[name] = fn
    if skip_unevaluated and "unevaluatedProperties" in keywords:
        # jsonschema's unevaluatedProperties matches patternProperties with Python's re.
        keywords["unevaluatedProperties"] = _not_checked
    return jsonschema.validators.extend(base, {name: _bounded(fn) for name, fn in keywords.items()})


def _bounded(keyword: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(keyword)
    def bounded(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        stop = getattr(_deadline, "stop", None)
        if stop is not None and time.monotonic() > stop:
            raise _Overtime
        return keyword(validator, value, instance, schema)

    return bounded


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a pattern RE2 rejects is expected here, not news for stderr


@functools.lru_cache(maxsize=1024)
def _regex(pattern: Any) -> Any:
    """The RE2 program of ``pattern``, or None when RE2 cannot run it (that keyword is not checked)."""
    if not isinstance(pattern, str):
        return None
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except Exception:  # noqa: BLE001 - re2.error, or a pattern too large for RE2's memory budget
        return None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    program = _regex(pattern)
    if program is not None and validator.is_type(instance, "string") and not program.search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        program = _regex(pattern)
        if program is None:
            continue
        for key, value in instance.items():
            if program.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    programs = [_regex(p) for p in schema.get("patternProperties", {})]
    if None in programs:
        return  # a key might match the pattern RE2 cannot run: which keys are extra is unknown
    extras = [k for k in instance if k not in properties and not any(p.search(k) for p in programs)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        yield ValidationError(f"Additional properties are not allowed ({', '.join(repr(e) for e in sorted(extras, key=str))} unexpected)")


def _not_checked(validator: Any, value: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    return ()


def _mentions(schema: Any, keyword: str) -> bool:
    if isinstance(schema, Mapping):
        return keyword in schema or any(_mentions(v, keyword) for v in schema.values())
    if isinstance(schema, list):
        return any(_mentions(v, keyword) for v in schema)
    return False


def _serialized_size(schema: Mapping[str, Any], cap: int) -> int:
    """Bytes of ``schema`` as JSON, counted up to just past ``cap`` (a 10 MB schema stops early)."""
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, default=str).iterencode(schema):
        size += len(chunk)
        if size > cap:
            break
    return size


# -- the message for the agent ---------------------------------------------------------------


def _message(tool: Tool, errors: list[ValidationError]) -> str:
    errors.sort(key=lambda e: [str(p) for p in e.absolute_path])
    first = best_match(errors)
    problems = [_describe(first), *(_describe(e) for e in errors if e is not first)]
    problems = list(dict.fromkeys(problems))[:_MAX_ERRORS]
    more = len(errors) - len(problems)
    head = f"Invalid arguments for '{tool.name}' (server '{tool.server}'): " + "; ".join(problems)
    head += f" (and {'more' if len(errors) >= _MAX_SEEN_ERRORS else more} more)" if more > 0 else ""
    tail = " Nothing was sent to the server; retry with arguments that fit."
    params = _parameters(tool.input_schema)
    if params:
        tail += f" Its parameters: {params}."
    room = MAX_ECHO_CHARS - len(tail) - 1
    if len(head) + 1 > room:
        head = head[: room - 2] + "…"
    return _short(head + "." + tail, MAX_ECHO_CHARS)


def _describe(error: ValidationError) -> str:
    where = "/".join(_short(str(part), 40) for part in error.absolute_path) or "arguments"
    return f"{_short(where, 120)}: {_expected(error)}"


def _expected(error: ValidationError) -> str:
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword == "type":
        wanted = " or ".join(str(t) for t in value) if isinstance(value, list) else str(value)
        return f"expected {_short(wanted, 60)}, got {_json_type(instance)}"
    if keyword == "required":
        name = error.message.removesuffix(" is a required property")
        return f"missing required {_short(name, 60)}"
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, Mapping):
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        extras = [repr(_short(str(k), 40)) for k in instance if k not in known][:5]
        return f"unexpected parameter {', '.join(extras)}" if extras else "unexpected parameters"
    if keyword == "enum" and isinstance(value, list):
        shown = ", ".join(_short(json.dumps(v, ensure_ascii=False, default=str), 40) for v in value[:8])
        return f"expected one of {shown}{', …' if len(value) > 8 else ''}"
    if keyword == "const":
        return f"expected {_short(json.dumps(value, ensure_ascii=False, default=str), 60)}"
    if keyword == "pattern":
        return f"does not match the pattern {_short(str(value), 60)}"
    if keyword in ("anyOf", "oneOf"):
        return f"fits none of the {len(value) if isinstance(value, list) else ''} allowed forms ({keyword})".replace("  ", " ")
    if keyword in ("not", None) or value is False:
        return "is not allowed here"
    if keyword in _BOUNDS and isinstance(value, (int, float)):
        return _BOUNDS[keyword].format(_short(json.dumps(value), 30))
    if isinstance(value, (int, float, str, bool)):
        return f"fails {keyword} {_short(json.dumps(value, ensure_ascii=False), 40)}"
    return f"fails {_short(str(keyword), 40)}"


_BOUNDS = {
    "minimum": "must be >= {}", "maximum": "must be <= {}", "exclusiveMinimum": "must be > {}", "exclusiveMaximum": "must be < {}",
    "minLength": "needs at least {} characters", "maxLength": "takes at most {} characters", "minItems": "needs at least {} items",
    "maxItems": "takes at most {} items", "multipleOf": "must be a multiple of {}",
}


def _parameters(schema: Mapping[str, Any]) -> str:
    """``name: type (required), ...`` of the top-level parameters: names and types only."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    shown = []
    for name, sub in itertools.islice(properties.items(), _MAX_PARAMS):
        kind = (sub.get("type") or ("enum" if "enum" in sub else "any")) if isinstance(sub, Mapping) else "any"
        kind = "|".join(str(k) for k in kind) if isinstance(kind, list) else str(kind)
        shown.append(f"{_short(str(name), 40)}: {_short(kind, 30)}{' (required)' if name in required else ''}")
    if len(properties) > _MAX_PARAMS:
        shown.append(f"… {len(properties) - _MAX_PARAMS} more")
    return ", ".join(shown)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
