"""votr-mcp: an MCP proxy that finds the right few tools among thousands.

The retrieval core (``votr_mcp.catalog``, ``votr_mcp.index``, ``votr_mcp.retrieval``) is
plain library code: it imports no ``mcp``, no SQLite and no ``anyio``, and loads no model
until asked.
"""

from votr_mcp.catalog import Catalog, Tool, load_catalog
from votr_mcp.errors import VotrError

__all__ = ["Catalog", "Tool", "VotrError", "load_catalog", "__version__"]
__version__ = "0.1.0"
