"""The operator's web page at ``/ui``: server-rendered HTML (``pages``), inline SVG plots
(``charts``) and the change-control decisions its buttons make (``actions``)."""

from votr_mcp.server.dashboard.actions import ACTIONS, HeldTool, decide, held_tools
from votr_mcp.server.dashboard.pages import dashboard_page, login_page

__all__ = ["ACTIONS", "HeldTool", "dashboard_page", "decide", "held_tools", "login_page"]
