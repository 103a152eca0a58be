"""Connections to upstream MCP servers: start them, harvest their tools, forward calls.

    async with Upstreams(load_upstreams(path), on_tools=reindex, on_status=mark) as upstreams:
        await upstreams.wait_started()
        result = await upstreams.call("time", "get_current_time", {"timezone": "UTC"})

``harvest(config)`` is the one-shot form for indexing.
"""

from votr_mcp.upstream._connection import StatusCallback, ToolsCallback, Upstream
from votr_mcp.upstream._manager import HarvestResult, Upstreams, harvest
from votr_mcp.upstream._status import Backoff, State, UpstreamStatus
from votr_mcp.upstream._stdio import kill_all_process_groups

__all__ = [
    "Backoff",
    "HarvestResult",
    "State",
    "StatusCallback",
    "ToolsCallback",
    "Upstream",
    "UpstreamStatus",
    "Upstreams",
    "harvest",
    "kill_all_process_groups",
]
