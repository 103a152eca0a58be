"""Argument normalization: calls that differ only trivially get the same fingerprint.

An agent stuck in a loop rarely sends byte-identical arguments: key order changes, a space
slips in, a URL gains a trailing slash. The guard compares fingerprints of the normalized
arguments instead, so these variations count as the same call:

- mapping key order (keys are sorted);
- whitespace at either end of a string and runs of whitespace inside it;
- a trailing ``/`` on a URL path, and the case of its scheme and host;
- ``2`` versus ``2.0``.

Anything else (letter case of ordinary text, list order, different values) is a different
call: those can change what the tool does.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["normalize_arguments", "fingerprint"]

_SPACE = re.compile(r"\s+")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")
_URL_PARTS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)(.*)$")
_MAX_DEPTH = 64  # deeper nesting than any real tool argument; stops pathological recursion


def _url(text: str) -> str:
    # A regex split rather than urllib.parse.urlsplit: that one keeps an LRU cache of recent
    # results, which holds on to memory of abandoned sessions (seen in the soak benchmark).
    match = _URL_PARTS.match(text)
    if match is None:
        return text
    scheme, netloc, path, rest = match.groups()
    return f"{scheme.lower()}://{netloc.lower()}{path.rstrip('/')}{rest}"


def _value(value: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return repr(value)
    if isinstance(value, str):
        text = _SPACE.sub(" ", value.strip())
        return _url(text) if _URL.match(text) else text
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k).strip(): _value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_value(v, depth + 1) for v in value]
    return repr(value)  # not JSON: compare by its repr rather than fail the call


def normalize_arguments(arguments: Mapping[str, Any] | None) -> Any:
    """The arguments with trivial differences removed (a JSON-compatible value)."""
    return _value(dict(arguments or {}), 0)


def fingerprint(tool: str, arguments: Mapping[str, Any] | None) -> str:
    """A short stable hash of ``tool`` and its normalized arguments."""
    canonical = json.dumps(
        [tool, normalize_arguments(arguments)], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]
