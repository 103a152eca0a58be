"""Per-session tool context (LRU/TTL, pins, binding modes) and the iteration guard.

Plain synchronous library code with an injectable clock: it imports no ``mcp`` and no
``anyio``. The server resolves a ``Session`` per request through ``SessionManager`` and calls
its three hooks (``after_search``, ``admit``, ``after_call``); see ``state.py``.
"""

from votr_mcp.session.clock import Clock, ManualClock
from votr_mcp.session.context import Binding, ToolContext
from votr_mcp.session.guard import IterationGuard, Trip, polling_tolerant
from votr_mcp.session.manager import SessionManager
from votr_mcp.session.normalize import fingerprint, normalize_arguments
from votr_mcp.session.policy import ToolPolicy
from votr_mcp.session.settings import BindingMode, ContextSettings, GuardSettings, SearchSettings, SessionSettings
from votr_mcp.session.state import SearchView, Session

__all__ = [
    "Binding",
    "BindingMode",
    "Clock",
    "ContextSettings",
    "GuardSettings",
    "IterationGuard",
    "ManualClock",
    "SearchSettings",
    "SearchView",
    "Session",
    "SessionManager",
    "SessionSettings",
    "ToolContext",
    "ToolPolicy",
    "Trip",
    "fingerprint",
    "normalize_arguments",
    "polling_tolerant",
]
