"""Query-side rules: singular versus bulk intent, and splitting a whole task into its needs."""

from __future__ import annotations

import re

from votr_mcp.index.tokenize import split_identifier, stem

__all__ = ["query_bulk", "tool_bulk", "split_needs"]

_BULK_QUERY = frozenset({"all", "every", "each", "multiple", "batch", "bulk", "many", "several"})
_SINGLE_QUERY = frozenset({"a", "an", "one", "single", "this", "that", "specific", "particular"})
_BULK_TOOL = frozenset({"all", "batch", "bulk", "many", "multiple"})
_WORD = re.compile(r"[a-z0-9]+")


def query_bulk(query: str) -> int:
    """+1 when the query asks for many things ("delete all", "list every"), −1 when it names one
    ("delete this file"), 0 when it does not say."""
    words = set(_WORD.findall(query.lower()))
    if words & _BULK_QUERY:
        return 1
    if words & _SINGLE_QUERY:
        return -1
    return 0


def tool_bulk(name: str) -> int:
    """+1 for a tool acting on many items (``list_files``, ``batchDelete``, ``delete_all``), −1 for
    one acting on a single item (``get_file``, ``delete_file``), 0 when the name is not a verb phrase."""
    words = _WORD.findall(split_identifier(name).lower())
    if not words:
        return 0
    if set(words) & _BULK_TOOL:
        return 1
    last = words[-1]
    if len(words) >= 2 and stem(last) != last and not last.endswith("ss"):
        return 1  # a plural object: delete_files
    return -1 if len(words) >= 2 else 0


# A whole task names its needs in sequence: "do X, then Y", "first X. Next, Y", "X and also Y".
_SPLIT = re.compile(
    r"(?:[.;!?]\s+|\n+|,?\s+(?:and\s+)?then\s+|,?\s+after\s+that,?\s+|,?\s+afterwards,?\s+|,?\s+finally,?\s+|"
    r",?\s+and\s+also\s+|,?\s+also,?\s+|,?\s+additionally,?\s+|,?\s+next,?\s+|,?\s+as\s+well\s+as\s+|,\s+and\s+)",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:first(?:ly)?|second(?:ly)?|third|next|then|finally|lastly|also|and|please|could you|can you)[,\s]+", re.IGNORECASE)
_MIN_WORDS = 3


def split_needs(query: str, max_needs: int = 5) -> list[str]:
    """The needs a whole-task query names, in order; a query naming one need gives ``[query]``.

    Pieces shorter than three words are glued to the piece before them (they are usually an
    object or a condition, not a need of their own).
    """
    pieces = [p.strip(" ,.;") for p in _SPLIT.split(query) if p and p.strip(" ,.;")]
    needs: list[str] = []
    for piece in pieces:
        piece = _LEAD.sub("", piece).strip()
        if not piece:
            continue
        if needs and len(piece.split()) < _MIN_WORDS:
            needs[-1] = f"{needs[-1]} {piece}"
        else:
            needs.append(piece)
    if len(needs) > max_needs:
        needs = needs[: max_needs - 1] + [" ".join(needs[max_needs - 1 :])]
    return needs or [query]
