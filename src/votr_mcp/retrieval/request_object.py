"""What a request's leading verb acts on, read from its words ("zip the reports folder for me" ->
{report, folder}), and whether a tool's words name it: the object check of abstention's evidence
(retrieval/evidence.py) and of the rerank (retrieval/rerank.py), and the thing a need refers back to
(retrieval/needs.py). The verb itself is read in retrieval/intent.py."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from votr_mcp.index.tokenize import STOPWORDS, stem
from votr_mcp.retrieval.intent import lead_at
from votr_mcp.retrieval.quoted import without_quotes
from votr_mcp.retrieval.request_words import request_words
from votr_mcp.retrieval.values import VALUE_MARK, values_taken
from votr_mcp.retrieval.verbs import action_word

__all__ = ["names_object", "object_words", "request_object"]


# Words that end the object of a request's verb ("zip the reports folder | into ...") or belong to no object.
_OBJECT_END = frozenset({"for", "in", "from", "to", "into", "onto", "on", "at", "with", "by", "so", "because", "and",
                         "then", "that", "which", "before", "after", "as", "without", "about", "of", "if", "when",
                         "named", "called", "titled", "entitled", "labelled", "labeled"})
_NOT_OBJECT = frozenset({"a", "an", "the", "my", "our", "your", "this", "these", "those", "some", "any", "all", "every",
                         "each", "its", "their", "his", "her", "me", "us", "it", "them", "up", "down", "out", "off",
                         "everything", "anything", "something", "everyone", "anyone", "someone", "stuff", "thing",
                         "things", "new"})
_OBJECT_WORDS = 3


def request_object(text: str, without_values: str | None = None) -> frozenset[str]:
    """The stemmed words of what the request's leading verb acts on ("zip the reports folder for me" ->
    {report, folder}): up to three content words after the verb, before the first preposition, names
    and the values and titles it hands over left out ("delete the file old_notes.txt" -> {file}, not
    notes; "create a task 'Update pricing page'" -> {task}).
    Empty when the request does not lead with a verb. ``without_values``: the text with its values
    taken out (values.values_taken), when the caller has it."""
    rest = values_taken(text)[1] if without_values is None else without_values
    return frozenset(stem(w) for w in object_words(request_words(without_quotes(rest)), _names(text)))


_PART = 4  # the shortest word a longer one is read as built from ("page" in "homepage")


# What a calendar keeps, said as the occasion: "push back my dentist appointment", "call off the standup".
_KIND_OF = dict.fromkeys(("meeting", "appointment", "standup", "lunch", "dinner", "interview", "1:1", "sync"), "event")


def names_object(objects: Collection[str], words: Collection[str]) -> bool:
    """Whether a tool's stemmed ``words`` name what a request acts on (``objects``, from
    :func:`request_object`): a word in common, the kind of thing an object is (a meeting is an
    event), or an object word built on one of the tool's words of at least :data:`_PART` letters
    ("homepage" on page, "spreadsheet" on sheet, "filename" on file)."""
    if not objects or not words:
        return False
    if set(objects).intersection(words) or {_KIND_OF[o] for o in objects if o in _KIND_OF}.intersection(words):
        return True
    return any(len(o) > len(w) >= _PART and (o.endswith(w) or o.startswith(w)) for o in objects for w in words)


def object_words(words: Sequence[str], skip: Collection[str] = ()) -> list[str]:
    """What a request's leading verb acts on, as words in order (``words``: its :func:`request_words`):
    up to three content words after the verb, before the first preposition, none of ``skip``."""
    verb_at = lead_at(words)
    if verb_at is None or action_word(words[verb_at]) is None:
        return []
    out: list[str] = []
    given = False  # a value stood where the object is ("sort crm.xlsx by company name"): it is the object
    after = words[verb_at + 1 : verb_at + 12]
    for at, word in enumerate(after):
        if not out and _opens_clause(word, after[at + 1 : at + 2], skip):
            return []  # "remember that Alice works at Acme", "forget everything you know about X": no thing named
        if at == 0 and word in _POINTED and (len(after) == 1 or after[1] in _OBJECT_END):
            return []  # "send it to Tom", "read this out loud as an mp3": what it is was said before, not here
        if word == VALUE_MARK:
            given = True
            continue
        if word in _OBJECT_END:
            if out or given:
                break
            continue
        if word in _NOT_OBJECT or word in STOPWORDS or word.isdigit() or word in skip or len(word) == 1:
            continue  # (one letter: the "s" of "today's")
        out.append(word)
        if len(out) == _OBJECT_WORDS:
            break
    return out


# A pronoun standing for the whole object (not "this file").
_POINTED = frozenset({"it", "this", "that", "them", "these", "those"})

# What a verb takes when its object is a statement or is left open, not a kind of thing.
_UNSAID = frozenset({"everything", "anything", "something", "stuff", "things"})


def _opens_clause(word: str, next_word: Sequence[str], names: Collection[str]) -> bool:
    """Whether ``word``, the first after the verb, opens a statement ("that Alice works at Acme") or
    leaves the thing open ("everything you know"), where "that file" names one."""
    if word in _UNSAID:
        return True
    return word == "that" and (not next_word or next_word[0] in STOPWORDS or next_word[0] in _NOT_OBJECT
                               or next_word[0] in names)


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")


def _names(text: str) -> frozenset[str]:
    """Words a request writes capitalised within a sentence ("forget what you know about Bob"): names
    of people, places and products, which no tool's text says, so they are no kind of object."""
    return frozenset(m.group().lower() for m in _CAPITALISED.finditer(text)
                     if m.start() > 0 and text[:m.start()].rstrip()[-1:] not in ".!?:\n")
