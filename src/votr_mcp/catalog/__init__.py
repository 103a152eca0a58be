"""Tool and server records, canonical form and content hash, catalog loading, call names."""

from votr_mcp.catalog.canonical import canonical_definition, canonical_json, content_hash, server_hash
from votr_mcp.catalog.loaders import LoadResult, Problem, load_catalog, tool_from_mapping, tools_from_tools_list
from votr_mcp.catalog.models import Catalog, Server, Tool, ToolKey
from votr_mcp.catalog.naming import call_names, slug
from votr_mcp.catalog.registry import default_registry_path

__all__ = [
    "Catalog",
    "LoadResult",
    "Problem",
    "Server",
    "Tool",
    "ToolKey",
    "call_names",
    "canonical_definition",
    "canonical_json",
    "content_hash",
    "default_registry_path",
    "load_catalog",
    "server_hash",
    "slug",
    "tool_from_mapping",
    "tools_from_tools_list",
]
