"""Logs on stderr, with timestamps: readable text by default, one JSON object per line on request.

    2026-11-26T03:12:45.123Z INFO votr_mcp.server.transports: serving streamable HTTP at http://127.0.0.1:8000/mcp
    {"time": "2026-11-26T03:12:45.123Z", "level": "INFO", "logger": "votr_mcp.server.transports", "message": "..."}

Times are UTC (ISO 8601 with milliseconds and ``Z``), so lines from several replicas sort together.
JSON lines carry the exception's traceback in ``exc_info`` when there is one, and any ``extra``
fields a log call passes.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

__all__ = ["FORMATS", "JsonFormatter", "TextFormatter", "setup_logging"]

FORMATS = ("text", "json")

# The attributes every LogRecord has; anything else was passed by the caller as ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def _utc(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """``<UTC time> LEVEL logger: message``."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_utc(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and exc_info, extras)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {"time": _utc(record), "level": record.levelname, "logger": record.name,
                                 "message": record.getMessage()}
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        return json.dumps(entry, ensure_ascii=False)


def setup_logging(*, verbose: bool = False, fmt: str = "text") -> None:
    """Send every log record to stderr in ``fmt`` ('text' or 'json'); replaces earlier handlers."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; use one of {', '.join(FORMATS)}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, handlers=[handler], force=True)
