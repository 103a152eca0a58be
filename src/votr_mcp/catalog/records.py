"""One tool record (a bench line or an MCP ``tools/list`` entry) to a :class:`Tool`.

:func:`tool_from_mapping` raises ValueError when a record cannot make a tool at all.
:func:`input_schema_problems` names the parts of an input schema that are malformed but do
not stop the tool from loading: such a tool is still callable upstream, so it is kept and
its schema is kept *as given* (the content hash follows what the upstream publishes, and
the upstream, not votr, decides what its arguments mean). Rendering and argument checking
tolerate any schema shape; these problems only tell the user what search cannot show.

Every text a model reads (description, title, examples, server texts, and the ``description``
and ``title`` strings inside the schemas) loses its invisible characters here, the one door
through which harvested and loaded tools come in (:func:`votr_mcp.catalog.safety.visible`);
``Tool.hidden`` records where there were some. The content hash is therefore over the visible
text: an upstream that only adds or removes invisible characters has changed nothing the
agent can read, so it is not a new version (hidden characters in a tool seen for the first
time, or in a real change, still hold it back as evidence of poisoning).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from votr_mcp.catalog.models import Tool
from votr_mcp.catalog.safety import MAX_DEPTH, hidden_characters, visible, visible_schema

__all__ = ["input_schema_problems", "tool_from_mapping", "tools_from_tools_list"]

_KNOWN_KEYS = {
    "server", "server_description", "server_summary", "name", "title", "description",
    "input_schema", "inputSchema", "output_schema", "outputSchema", "annotations", "examples",
}
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}
_SHOWN = 40


def tools_from_tools_list(server: str, tools: Iterable[Mapping[str, Any]], *, description: str = "", summary: str = "") -> list[Tool]:
    """Tools from the ``tools`` of an MCP ``tools/list`` result; raises ValueError on a bad entry."""
    base = {"server": server, "server_description": description, "server_summary": summary}
    return [tool_from_mapping({**base, **dict(raw)}) for raw in tools]


def tool_from_mapping(record: Mapping[str, Any]) -> Tool:
    """Build a Tool from a bench-format or MCP-format mapping; ValueError says what is wrong.

    The tool name is kept verbatim: it is what a call must send back upstream.
    """
    server = record.get("server")
    name = record.get("name")
    if not isinstance(server, str) or not server.strip():
        raise ValueError("missing 'server' (a non-empty string naming the tool's server)")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("missing 'name' (a non-empty string)")
    description = record.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"tool '{name}': 'description' must be a string, got {type(description).__name__}")
    schema = _pick(record, "input_schema", "inputSchema")
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise ValueError(f"tool '{name}': 'input_schema' must be a JSON object, got {type(schema).__name__}")
    output = _pick(record, "output_schema", "outputSchema")
    if output is not None and not isinstance(output, dict):
        raise ValueError(f"tool '{name}': 'output_schema' must be a JSON object or null")
    annotations = record.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise ValueError(f"tool '{name}': 'annotations' must be a JSON object or null")
    examples = record.get("examples") or []
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ValueError(f"tool '{name}': 'examples' must be a list of strings")
    title = record.get("title")
    title = title if isinstance(title, str) and title else None
    # Server texts are cleaned but are no evidence against a tool: no model reads them (they
    # only rank), and real ones pad with bidi marks.
    texts = {"name": name, "description": description or "", "title": title or "", **{f"examples[{i}]": e for i, e in enumerate(examples)}}
    hidden = tuple(f"{where}: {note}" for where, text in texts.items() if (note := hidden_characters(text)))
    schemas = {"input_schema": schema, "output_schema": output}
    hidden += tuple(f"{where}: {note}" for where, text in _schema_texts(schemas) if (note := hidden_characters(text)))
    return Tool(
        server=server.strip(),
        name=name,
        description=visible(description or ""),
        input_schema=visible_schema(schema) if hidden else schema,
        server_description=visible(_text(record.get("server_description"))),
        server_summary=visible(_text(record.get("server_summary"))),
        title=visible(title) if title else None,
        output_schema=visible_schema(output) if hidden and output is not None else output,
        annotations=annotations or None,
        examples=tuple(visible(e) for e in examples),
        extra={k: v for k, v in record.items() if k not in _KNOWN_KEYS},
        hidden=hidden,
    )


def _schema_texts(value: Any, path: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(path, text) of the ``description`` and ``title`` strings of schemas (what visible_schema cleans)."""
    if depth > MAX_DEPTH:
        return []
    found: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in ("description", "title") and isinstance(item, str):
                found.append((f"{path}.{key}".lstrip("."), item))
            elif isinstance(item, (Mapping, list)):
                found.extend(_schema_texts(item, f"{path}.{key}".lstrip("."), depth + 1))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_schema_texts(item, f"{path}[{i}]", depth + 1))
    return found


def input_schema_problems(schema: Mapping[str, Any]) -> list[str]:
    """What is malformed in the ``properties`` and ``required`` of an input schema; [] when fine.

    ``null`` counts as absent. A property schema may be an object or a boolean (JSON Schema
    allows ``true``/``false``).
    """
    return [*_properties_problems(schema.get("properties")), *_required_problems(schema.get("required"))]


def _properties_problems(properties: Any) -> list[str]:
    if properties is None:
        return []
    if not isinstance(properties, dict):
        return [f"input_schema.properties must be an object mapping parameter names to schemas, got {_shown(properties)}; "
                "search shows this tool without parameters"]
    bad = [name for name, spec in properties.items() if not isinstance(spec, (dict, bool))]
    if not bad:
        return []
    names = ", ".join(f"'{name}'" for name in bad)
    return [f"input_schema.properties {names}: each must be a schema object such as {{\"type\": \"string\"}}, "
            f"got {_shown(properties[bad[0]])}; search shows their type as 'any'"]


def _required_problems(required: Any) -> list[str]:
    if required is None:
        return []
    if not isinstance(required, list):
        hint = f"; write [{json.dumps(required)}]" if isinstance(required, str) else ""
        return [f"input_schema.required must be a list of parameter names, got {_shown(required)}{hint}; "
                "search shows every parameter as optional"]
    bad = [entry for entry in required if not isinstance(entry, str)]
    if not bad:
        return []
    return [f"input_schema.required must hold parameter names (strings), got {_shown(bad[0])}; "
            "search ignores the entries that are not strings"]


def _shown(value: Any) -> str:
    """A JSON type and a short excerpt of a value, for messages."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    return f"{_JSON_TYPES.get(type(value), type(value).__name__)} {text}"


def _pick(record: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
