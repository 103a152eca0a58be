"""Query-side rules: singular versus bulk intent, a request's lead clause, and splitting a whole task into its needs."""

from __future__ import annotations

import re

from votr_mcp.index.tokenize import stem, words_of

__all__ = ["ACTIONS", "ACTION_OF", "query_bulk", "tool_bulk", "lead_clause", "split_needs", "words_of"]

_BULK_QUERY = frozenset({"all", "every", "each", "multiple", "batch", "bulk", "many", "several"})
_SINGLE_QUERY = frozenset({"a", "an", "one", "single", "this", "that", "specific", "particular"})
_BULK_TOOL = frozenset({"all", "batch", "bulk", "many", "multiple"})
_WORD = re.compile(r"[a-z0-9]+")

# What a verb asks for: read by the need splitter (a need names an action) and by the rerank
# (does the tool name's action match the request's).
ACTIONS: dict[str, tuple[str, ...]] = {
    "create": ("create", "add", "new", "make", "insert", "write", "generate", "build", "register", "upload",
               "save", "put", "append", "compose", "draft", "schedule", "book", "record", "remember", "memorize",
               "store"),
    "read": ("get", "retrieve", "fetch", "read", "show", "view", "describe", "list", "find", "search", "query",
             "lookup", "look", "check", "display", "see", "browse", "download", "export", "inspect", "count"),
    "update": ("update", "edit", "modify", "change", "set", "rename", "patch", "replace", "move", "mark", "toggle",
               "enable", "disable", "configure", "assign", "merge", "resize", "upscale", "convert"),
    "delete": ("delete", "remove", "destroy", "drop", "clear", "erase", "cancel", "archive", "close", "revoke",
               "unsubscribe", "purge", "trash"),
    "send": ("send", "post", "notify", "email", "reply", "share", "publish", "tweet", "forward", "invite",
             "comment"),
    "run": ("run", "execute", "exec", "invoke", "start", "trigger", "launch", "call", "deploy", "stop",
            "restart", "test", "scan", "analyze", "analyse", "summarize", "summarise", "translate", "compute",
            "calculate", "evaluate"),
}
ACTION_OF = {verb: action for action, verbs in ACTIONS.items() for verb in verbs}


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
    words = words_of(name)
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
    r",?\s+and\s+also\s+|,?\s+also,?\s+|,?\s+additionally,?\s+|,\s+next,?\s+|,?\s+as\s+well\s+as\s+|,\s+and\s+)",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:first(?:ly)?|second(?:ly)?|third|next|then|finally|lastly|also|and|please|could you|can you)[,\s]+", re.IGNORECASE)
_MIN_WORDS = 3


def split_needs(query: str, max_needs: int = 5) -> list[str]:
    """The needs a whole-task query names, in order; a query naming one need gives ``[query]``.

    A piece is a need of its own only when it has at least three words and names an action
    (:data:`ACTIONS`); anything else ("include the storage size", "it is for a report") is an
    object, condition or context and is glued to the need before it, or to the first need when
    it comes first. On dev rows this left top-1 and task recall unchanged and stopped splitting
    most single requests (MCP-Zero 5.6% -> 0.9% of queries; every split embeds more texts).
    """
    pieces = [_LEAD.sub("", p.strip(" ,.;")).strip() for p in _SPLIT.split(query) if p and p.strip(" ,.;")]
    needs: list[str] = []
    context: list[str] = []  # pieces before the first need
    for piece in filter(None, pieces):
        words = words_of(piece)
        if len(piece.split()) >= _MIN_WORDS and any(w in ACTION_OF for w in words):
            needs.append(" ".join([*context, piece]) if not needs and context else piece)
            context = []
        elif needs:
            needs[-1] = f"{needs[-1]} {piece}"
        else:
            context.append(piece)
    if len(needs) <= 1:
        return [query]
    if len(needs) > max_needs:
        needs = needs[: max_needs - 1] + [" ".join(needs[max_needs - 1 :])]
    return needs or [query]


# Where a request's lead clause ends: a comma, colon or semicolon, or a word that starts its details.
_CLAUSE_END = re.compile(r"[,;:]|\s(?:with|using|via|from|located|where|which|that|whose|including|by|based on|so that|"
                         r"in order to|for)\b", re.IGNORECASE)


def lead_clause(text: str) -> str | None:
    """The request's first clause that names an action, when details follow it; None otherwise.

    "Read the contents of the file located at /var/log/app/system.log" leads with "Read the contents
    of the file": the action and its object, before paths, IDs, filters and purposes that the model
    otherwise weighs as much. With ``RetrievalConfig.lead_clause`` on (off by default: no gain on
    test rows), the search adds this clause's vector to the whole text's. A clause needs three words
    and an action (:data:`ACTIONS`), so "On Token Metrics, fetch ..." leads with "On Token Metrics,
    fetch detailed token data", not the service name alone.
    """
    for end in _CLAUSE_END.finditer(text):
        clause = text[: end.start()].strip()
        if len(clause.split()) >= _MIN_WORDS and any(w in ACTION_OF for w in words_of(clause)):
            return clause
    return None
