"""Check call arguments against the tool's input schema before they travel upstream.

A failed check returns text for the agent with what was wrong and the full schema, so it
can retry in one step instead of guessing. An upstream schema that is itself invalid is
not our call to reject: the arguments then go through and the upstream decides.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator

from votr_mcp.catalog import Tool

__all__ = ["ArgumentsChecker"]

log = logging.getLogger(__name__)

_MAX_ERRORS = 3


class ArgumentsChecker:
    """Validates arguments; compiled validators are cached per tool definition."""

    def __init__(self) -> None:
        # Keyed by the Tool object itself (frozen; a re-harvested definition is a new object),
        # which is cheaper per call than hashing the definition.
        self._validators: dict[int, tuple[Tool, Validator | None]] = {}

    def check(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """None when ``arguments`` fit the tool's input schema, else a message for the agent."""
        validator = self._validator(tool)
        if validator is None:
            return None
        errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        first = best_match(errors)
        problems = [_describe(first), *(_describe(e) for e in errors if e is not first)][:_MAX_ERRORS]
        schema = json.dumps(tool.input_schema, indent=None, sort_keys=True, ensure_ascii=False)
        return (
            f"Invalid arguments for '{tool.name}' (server '{tool.server}'): "
            + "; ".join(problems)
            + f". Nothing was sent to the server. Retry with arguments that match its input schema: {schema}"
        )

    def _validator(self, tool: Tool) -> Validator | None:
        cached = self._validators.get(id(tool))
        if cached is not None and cached[0] is tool:
            return cached[1]
        schema = dict(tool.input_schema or {})
        validator: Validator | None = None
        if schema:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(schema)
                validator = cls(schema, format_checker=None)
            except SchemaError as exc:
                log.warning("tool %s/%s has an invalid input schema (%s); its arguments are not checked", tool.server, tool.name, exc.message)
        if len(self._validators) > 10_000:
            self._validators.clear()  # bounded: catalogs churn over a long-running process
        self._validators[id(tool)] = (tool, validator)  # holding the tool keeps its id unique
        return validator


def _describe(error: ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where or 'arguments'}: {error.message}"
