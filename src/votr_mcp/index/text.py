"""The texts each index sees for a tool or a server.

One place decides what is embedded and what is matched lexically, so the content hash of an
embedded text changes exactly when what the model would read changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from votr_mcp.catalog.models import Server, Tool
from votr_mcp.index.tokenize import split_identifier

__all__ = ["tool_dense_text", "tool_splade_text", "query_dense_text", "server_texts", "tool_lexical_text", "tool_name_text", "parameter_names",
           "parameter_text", "without_illustrations"]

# MiniLM reads at most 256 word pieces; longer descriptions only add noise past the first lines.
_DENSE_CHARS = 700
_PARAM_CHARS = 200


def tool_name_text(tool: Tool) -> str:
    """The tool name with identifier boundaries turned into spaces ("list_pull_requests" -> "list pull requests")."""
    return " ".join(split_identifier(tool.title or tool.name).split())


def parameter_names(tool: Tool) -> list[str]:
    """Names of the tool's input parameters (top level)."""
    props = tool.input_schema.get("properties") if isinstance(tool.input_schema, Mapping) else None
    return [str(k) for k in props] if isinstance(props, Mapping) else []


def tool_dense_text(tool: Tool) -> str:
    """What the embedding model reads for a tool: its name in words, then its description."""
    text = f"{tool_name_text(tool)}: {tool.description.strip()}"
    return text[:_DENSE_CHARS]


def tool_splade_text(tool: Tool) -> str:
    """What the learned sparse encoder reads for a tool: its server's name, then what the dense
    model reads (SPLADE weighs every word it reads; the server's name is what people call it by)."""
    return f"{split_identifier(tool.server)}: {tool_dense_text(tool)}"


def query_dense_text(query: str) -> str:
    """What the embedding model reads for a query: the text without its closing punctuation.

    A query's closing full stop matches punctuation, not meaning: over 100 MCP-Zero dev queries it
    raised the cosine with tools whose text ends with a stop by 0.011 on average and lowered it with
    the rest by 0.008 (half of that catalog's tools end with one). Dropping it raised the gold
    tool's cosine by 0.024 on average over MCP-Zero's dev rows, and with nothing refit dev top-1
    went MCP-Zero .823 -> .847, MSC-Bench .928 -> .936 (L2 whole-task R@10 .867 -> .904); MetaTool
    unchanged. Stripping the tools' stops too undid MSC-Bench's gain; stripping request wrappers
    ("can you", "I need you to") added nothing and lowered no-tool abstention. Lexical indexes never
    see punctuation anyway."""
    return query.rstrip().rstrip(".?!").rstrip() or query


def server_texts(server: Server) -> tuple[str, str]:
    """(name + description, name + summary) of a server; the summary falls back to the description."""
    name = " ".join(split_identifier(server.name).split())
    description = f"{name}: {server.description.strip()}"[:_DENSE_CHARS]
    summary = f"{name}: {server.summary.strip()}"[:_DENSE_CHARS] if server.summary.strip() else description
    return description, summary


_ILLUSTRATION = re.compile(r"\((?:e\.\s?g\.?|eg|for example|for instance|such as|examples?)[,:]?\s[^)]*\)"
                           r"|\b(?:e\.\s?g\.|for example|for instance)[,:]?\s[^;\n]*?(?=\.\s|$|;|\n)", re.IGNORECASE)


def without_illustrations(text: str) -> str:
    """A parameter description without its illustrative values ("(e.g., 'Asia/Tokyo')", "e.g. Paris").

    An example value says what an argument looks like, not what the tool does: with them, "what
    time is it in Tokyo" matched ``convert_time`` (its target zone's example is 'Asia/Tokyo') above
    ``get_current_time`` in both lexical lists. Dropped from what BM25, TF-IDF and the rerank read
    of parameters, on dev with nothing refit: human-registry top-1 .740 -> .747 (two rows won, the
    Context7 request quoting a '/org/project' id like the example lost), MCP-Zero .814 -> .819,
    MSC-Bench chain success .725 -> .718 (one chain), MetaTool and ToolBench unchanged."""
    return _ILLUSTRATION.sub(" ", text)


def parameter_text(tool: Tool, limit: int = _PARAM_CHARS) -> str:
    """Parameter names in words, each followed by the start of its description."""
    props = tool.input_schema.get("properties") if isinstance(tool.input_schema, Mapping) else None
    if not isinstance(props, Mapping):
        return ""
    out: list[str] = []
    for name, spec in props.items():
        out.append(split_identifier(str(name)))
        if isinstance(spec, Mapping) and isinstance(spec.get("description"), str):
            out.append(without_illustrations(spec["description"][:limit]))
    return " ".join(out)


def tool_lexical_text(tool: Tool, *, include_server_description: bool = True, include_parameters: bool = True) -> str:
    """Fields matched by BM25 and TF-IDF: tool name (twice: it is the strongest field), description,
    server name, and optionally parameters (names and descriptions) and the server description.

    Parameter descriptions earned their place on dev: queries name the arguments they supply
    ("for account ID 12345, limit 10"); MCP-Zero top-1 .758 -> .833, MSC L2 .883 -> .905, L1 .976 -> .962."""
    parts: list[Any] = [tool_name_text(tool), tool_name_text(tool), tool.description, split_identifier(tool.server)]
    if include_parameters:
        parts.append(parameter_text(tool))
    if include_server_description:
        parts.append(tool.server_description)
    return "\n".join(str(p) for p in parts if p)
