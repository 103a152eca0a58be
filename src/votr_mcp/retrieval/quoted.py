"""What a request quotes, and the tools it names exactly: the titles, messages and search terms it
hands over are no words of what it asks ("create a task 'Update pricing page'"), and an identifier
it writes (``git_log``, ``github__create_issue``) names a tool."""

from __future__ import annotations

import re
from functools import lru_cache

from votr_mcp.retrieval.values import bounded, file_kinds_only

__all__ = ["asked_words", "is_identifier", "named_tools", "without_quotes"]


def named_tools(query: str, names: dict[str, list[int]]) -> list[int]:
    """Catalog positions of tools the request names exactly as identifiers (``git_log``,
    ``browser_take_screenshot``, ``github__create_issue``), by the lower-cased names in ``names``."""
    found: list[int] = []
    for token in _IDENTIFIER.findall(bounded(query)):
        for variant in (token.lower(), token.lower().split("__", 1)[-1]):
            for i in names.get(variant, ()):
                if i not in found:
                    found.append(i)
    return found


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-]+[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+")


# Spans a request quotes: the title, message or search terms it hands over, not words of what it asks.
# An opening straight quote follows no letter and a closing one precedes none (I'm, Messi's).
# (An apostrophe inside a word does not end a single-quoted span: 'we'll start in five minutes'.)
_QUOTED = re.compile(r"(?<!\w)'((?:[^'\n]|(?<=\w)'(?=\w)){3,}?)'(?!\w)|\"([^\"\n]{3,}?)\"|«([^»\n]{3,}?)»|"
                     r"“([^”\n]{3,}?)”|‘([^’\n]{3,}?)’")


_COUNT_QUESTION = re.compile(r"\bhow (?:many|much)\b", re.IGNORECASE)
# A day of the week is a date ("due Monday", "every first Monday"), not Monday.com, which people
# write with its domain: as a word to match it would pull a board tool into any request with a date.
_WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b(?![.-]com\b)", re.IGNORECASE)


def asked_words(text: str) -> str:
    """What word matching reads of a request: :func:`without_quotes`, without the "how many" of a
    question that asks for a count ("how many docs are pending" is no match for ``update-many``),
    without the days of the week it names as dates ("due Monday" is no match for Monday.com's tools)
    and with each file path cut to its kind (values.file_kinds_only)."""
    return _WEEKDAY.sub(" ", _COUNT_QUESTION.sub(" ", file_kinds_only(without_quotes(text))))


# What a message says when the request writes it without quotes: after a label ("body: Hi Tom, ...")
# to the end of the line, or after "saying" / "that says" in a clause that names a message or a
# sending, to the end of that clause ("send a Slack message to #ops saying the deploy is done").
_LABELLED = re.compile(r"\b(?:body|message)\s*:\s+[^\n]*", re.IGNORECASE)
_SAYING = re.compile(r"\b(?:saying|that says|which says)\s+(?:[^.!?;\n]|[.!?](?=\S))*?(?=[.!?;](?:\s|$)|,?\s+(?:and\s+)?then\b|$)",
                     re.IGNORECASE)
_MESSAGE = re.compile(r"\b(?:messages?|notes?|comments?|alerts?|repl(?:y|ies)|texts?|e-?mails?|mails?|notifications?|sticky|post|"
                      r"dm|sms|whatsapp|telegram|send|tell|ping|notify|remind|respond|answer|write)\b", re.IGNORECASE)


_SENTENCE_END = re.compile(r"[.!?;\n]")


def _payload(m: re.Match[str]) -> str:
    """Blank for what follows "saying" when its clause (up to 80 characters back) names a message or a sending."""
    clause = _SENTENCE_END.split(m.string[max(0, m.start() - 80): m.start()])[-1]
    return " " if _MESSAGE.search(clause) else m.group()


@lru_cache(maxsize=4096)  # a search reads the same few texts about eight times (fusion, rerank, object, everyday)
def without_quotes(text: str) -> str:
    """``text`` with what it quotes taken out ("create a task 'Update pricing page'" -> "create a task"),
    but for a quoted identifier, which names a tool ("run 'git_log'"), and with a message it hands over
    without quotes (:data:`_LABELLED`, :data:`_SAYING`)."""
    text = _QUOTED.sub(lambda m: m.group() if is_identifier(next(g for g in m.groups() if g).strip()) else " ", text)
    if ":" in text:
        text = _LABELLED.sub(" ", text)
    return _SAYING.sub(_payload, text) if "ay" in text or "AY" in text else text  # (saying, says: most requests have neither)


def is_identifier(name: str) -> bool:
    """Whether a tool name is written as an identifier (snake, kebab or camel case), so that its
    exact occurrence in a request names the tool rather than a common word ("fetch", "echo")."""
    return _IDENTIFIER.fullmatch(name) is not None
