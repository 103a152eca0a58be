"""One stdio line read as a JSON-RPC 2.0 message, or the error that answers it (JSON-RPC 2.0 §5).

The SDK's stdio reader hands a line it cannot validate to the session as an exception, which
logs it and moves on: the client waits forever for an answer. Here every line is either a
message to serve, an error to answer with, or nothing to do:

- not JSON: ``-32700 Parse error``, id null;
- JSON that is not a request: ``-32600 Invalid Request``, with the request's id when it is a
  string or an integer, else null (a batch, a non-object, a wrong ``jsonrpc``, a method that is
  not a string, an id of another type, params that are not an object);
- a blank line, a notification (a well-formed request without id: the server must never answer
  one), or a malformed *response* (answering a response with an error could make two peers
  answer each other forever): nothing.

Unknown methods are the session's to answer (-32601), as over HTTP.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import ValidationError

__all__ = ["Reply", "read_line"]

log = logging.getLogger(__name__)

_HINT = "send one JSON-RPC 2.0 object per line"


@dataclass(frozen=True, slots=True)
class Reply:
    """The error that answers a line which is not a valid request (a peer's own error response
    is a message, not a reply)."""

    error: types.JSONRPCError


def read_line(line: str | bytes) -> types.JSONRPCMessage | Reply | None:
    """The message on ``line``; or the error to answer it with; or None when nothing is due."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _rejection(line, _first_problem(exc))
    if isinstance(message, types.JSONRPCNotification) and _mentions_id(line):
        # A request whose id is neither string nor integer validates as a notification (the
        # model ignores the unknown key), and would never be answered.
        return _rejection(line, "")
    return message


def _rejection(line: str | bytes, problem: str) -> Reply | None:
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return _error(None, types.PARSE_ERROR, f"Parse error: {_reason(exc)}; {_HINT}")
    if isinstance(value, list):
        what = "an empty batch" if not value else "a batch; batches are not supported in MCP"
        return _error(None, types.INVALID_REQUEST, f"Invalid Request: {what}; {_HINT}")
    if not isinstance(value, dict):
        return _error(None, types.INVALID_REQUEST, f"Invalid Request: a JSON {_json_type(value)} is not a request; {_HINT}")
    if "method" not in value and ("result" in value or "error" in value):
        log.warning("ignored a malformed JSON-RPC response (id %.80r): %s", value.get("id"), problem)
        return None
    request_id = value.get("id") if _is_id(value.get("id")) else None
    if value.get("jsonrpc") != "2.0":
        fault = f'"jsonrpc" must be "2.0", not {_shown(value, "jsonrpc")}'
    elif not isinstance(value.get("method"), str):
        fault = f'"method" must be a string, not {_shown(value, "method")}'
    elif "id" not in value:
        log.debug("ignored a notification that is not valid MCP: %s", problem)
        return None  # a notification is never answered, even a faulty one
    elif request_id is None:
        fault = f'"id" must be a string or an integer, not {_shown(value, "id")}'
    elif "params" in value and not isinstance(value["params"], dict | None):
        fault = f'"params" must be an object, not {_shown(value, "params")}'
    else:
        fault = problem or "not a valid JSON-RPC request"
    return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: {fault}")


def _error(request_id: types.RequestId | None, code: int, message: str) -> Reply:
    return Reply(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)))


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _mentions_id(line: str | bytes) -> bool:
    if not (b'"id"' in line if isinstance(line, bytes) else '"id"' in line):
        return False
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "id" in value


def _first_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    return str(errors[0]["msg"])[:200] if errors else str(exc)[:200]


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (character {exc.pos})"
    return str(exc)[:200]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    kinds: dict[type, str] = {str: "string", int: "number", float: "number", dict: "object", list: "array"}
    return kinds.get(type(value), "value")


def _shown(value: dict[str, Any], key: str) -> str:
    if key not in value:
        return "missing"
    shown = json.dumps(value[key])[:40] if isinstance(value[key], str | bool | int | float) or value[key] is None else ""
    return f"{shown} (a {_json_type(value[key])})" if shown else f"a JSON {_json_type(value[key])}"
