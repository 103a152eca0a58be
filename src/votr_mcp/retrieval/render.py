"""Compact one-line tool signatures and the exact cl100k token count of what a search returns.

``[server: github] list_pull_requests(owner: str, repo: str, state?: str) → List pull requests.``
Optional parameters carry ``?``; descriptions are cut at the first sentence (and at a length
bound), because the agent needs to tell tools apart, not read their manuals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from votr_mcp.catalog.models import Tool
from votr_mcp.catalog.safety import visible

__all__ = ["signature", "short_description", "schema_type", "count_tokens"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_BREAKING_SPACE = re.compile(r"[^\S ]+")  # white space other than the plain space: newlines, tabs, U+2028
_MAX_DESCRIPTION = 160
_MAX_PARAMS = 8
_MAX_DEPTH = 3
_JSON_TO_PY = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list", "object": "dict", "null": "None"}


def short_description(text: str, limit: int = _MAX_DESCRIPTION) -> str:
    """The first sentence of a description, collapsed to one line and cut at ``limit`` characters."""
    flat = " ".join(text.split())
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


def schema_type(schema: Any, depth: int = 0) -> str:
    """A short Python-like type for a JSON schema fragment (``str``, ``list[int]``, ``str|int``).

    Any value is accepted (upstream schemas are passed on unchecked); nesting deeper than
    ``_MAX_DEPTH`` shows as ``…``.
    """
    if depth > _MAX_DEPTH:
        return "…"
    if not isinstance(schema, Mapping):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list) and 0 < len(schema["enum"]) <= 4:
        return "|".join(repr(v) if isinstance(v, str) else str(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(_JSON_TO_PY.get(k, str(k)) if isinstance(k, str) else str(k) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"list[{schema_type(items, depth + 1)}]" if isinstance(items, Mapping) else "list"
    if isinstance(kind, str):
        return _JSON_TO_PY.get(kind, kind)
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            return "|".join(schema_type(s, depth + 1) for s in schema[union][:3])
    return "any"


def signature(tool: Tool) -> str:
    """``[server: S] name(p: type, q?: type) → short description``, always on one line.

    Robust to any input schema shape: ``properties`` that is not an object shows no
    parameters, a ``required`` that is not a list marks none required, and entries of
    ``required`` that are not strings are ignored.
    """
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    listed = schema.get("required")
    listed = listed if isinstance(listed, list) else []
    required = {p for p in listed if isinstance(p, str)}
    names = sorted(props, key=lambda p: (p not in required,))  # required first, order kept otherwise
    params = [f"{p}{'' if p in required else '?'}: {schema_type(props[p])}" for p in names[:_MAX_PARAMS]]
    if len(names) > _MAX_PARAMS:
        params.append("…")
    # White space inside a name or type (a newline in a tool name) would break the one-line form.
    line = _one_line(f"[server: {tool.server}] {tool.name}({', '.join(params)})")
    description = short_description(tool.description or "")
    # Loading already cleaned the texts; names, parameter names and enums stay as published
    # (a call must send them back), so what the model reads is cleaned once more here.
    return visible(f"{line} → {description}" if description else line)


def _one_line(text: str) -> str:
    return _BREAKING_SPACE.sub(" ", text)


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import warnings

    with warnings.catch_warnings():
        # bpe_openai reads its ranks with importlib.resources.open_binary, deprecated upstream.
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # imported lazily: only rendering needs it

        encoding = bpe_openai.get_encoding("cl100k_base")
        encoding.encode("warm up")  # the ranks load on first use, inside this guard
    return encoding


def count_tokens(text: str | Sequence[str]) -> int:
    """Exact cl100k_base token count of a text (or of lines joined by newlines)."""
    if not isinstance(text, str):
        text = "\n".join(text)
    return len(_encoding().encode(text))
