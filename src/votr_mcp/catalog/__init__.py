"""Tool and server records, canonical form and content hash, catalog loading, call names."""

from votr_mcp.catalog.canonical import canonical_definition, canonical_json, content_hash, server_hash
from votr_mcp.catalog.embedded import default_registry_path, known_servers_path, setup_entries
from votr_mcp.catalog.formats import Problem
from votr_mcp.catalog.loaders import LoadResult, load_catalog
from votr_mcp.catalog.models import Catalog, Server, Tool, ToolKey
from votr_mcp.catalog.naming import call_names, slug
from votr_mcp.catalog.records import input_schema_problems, tool_from_mapping, tools_from_tools_list

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
    "input_schema_problems",
    "known_servers_path",
    "setup_entries",
    "load_catalog",
    "server_hash",
    "slug",
    "tool_from_mapping",
    "tools_from_tools_list",
]
