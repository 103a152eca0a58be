"""A whole task's needs: the steps a request names in sequence ("read notes.txt, then email it to Bob"),
each searched on its own (retrieval/pipeline.py), read with the verbs of :mod:`votr_mcp.retrieval.intent`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from votr_mcp.retrieval.intent import lead_at
from votr_mcp.retrieval.request_object import object_words
from votr_mcp.retrieval.request_words import request_words
from votr_mcp.retrieval.values import last_reference, request_values
from votr_mcp.retrieval.verbs import ACTION_OF, SYNONYMS, action_word

__all__ = ["and_halves", "split_needs"]


# A whole task names its needs in sequence: "do X, then Y", "first X. Next, Y", "X and also Y".
# A sequencing word ("then", "after that", "finally") says a new step starts whatever follows;
# punctuation and "and also" only when the piece names an action of its own ("files of 2023. And
# their sizes" is one need). A bare "and" or comma is no connector: single requests are full of
# them ("download asset 12345 and type HDRI in 4K", "with offset 0, limit 10, sort by date").
_SEQUENCE = (r",?\s+(?:and\s+)?then,?\s+|,?\s+(?:and\s+)?after\s+that,?\s+|,?\s+(?:and\s+)?afterwards,?\s+|"
             r",?\s+(?:and\s+)?(?:finally|lastly),?\s+|,\s+next,?\s+|,?\s+once\s+(?:that's|that\s+is)\s+done,?\s+")
_OTHER = (r"[.;!?]\s+|\n+|,?\s+and\s+also\s+|,?\s+also,?\s+|,?\s+additionally,?\s+|,?\s+as\s+well\s+as\s+|"
          r",\s+and\s+")
_SPLIT = re.compile(f"({_SEQUENCE}|{_OTHER})", re.IGNORECASE)
_SEQUENCE_ONLY = re.compile(f"^(?:{_SEQUENCE})$", re.IGNORECASE)
_LEAD = re.compile(r"^(?:first(?:ly)?|second(?:ly)?|third|next|then|finally|lastly|also|and|additionally|moreover|"
                   r"furthermore|besides|please|could you|can you)(?:[,\s]+|$)", re.IGNORECASE)
_THEN_FIRST = re.compile(r"^(?:then|next|finally|lastly|after\s+that|afterwards)\b", re.IGNORECASE)
_MIN_WORDS = 3
# Verbs that start a step, beyond ACTIONS (which the rerank also reads): what people ask agents to do.
_STEP_VERBS = frozenset({"commit", "push", "pull", "switch", "checkout", "stage", "open", "visit", "navigate",
                         "click", "fill", "take", "capture", "copy", "sort", "zip", "compare", "jot", "grab", "bring",
                         "dedupe", "deduplicate"})


# Words that open a condition or a time clause, not a step: "if the file exists, then delete it".
_CONDITION = frozenset({"if", "when", "whenever", "once", "unless", "in", "after", "before", "while", "since", "as"})


# A question followed by an order is a step of its own ("what's the time in Berlin, and remember that
# my flight leaves at 6pm"). Followed by another question or by what the speaker wants, it is the
# request itself ("which columns does the orders table have, and what types are they?", "How can I
# optimize my website? I want more visitors").
_WH = frozenset({"what", "whats", "which", "who", "where", "how"})


def _asks(words: Sequence[str]) -> bool:
    at = lead_at(words)
    return at is not None and words[at] in _WH


def _ordered(connector: str, piece: str) -> bool:
    """Whether ``piece``, after ``connector``, is an order in the same sentence: it leads with a verb."""
    words = request_words(piece)
    at = lead_at(words)
    return not _SENTENCE_END.search(connector) and at is not None and _leads_step(words[at])


_SENTENCE_END = re.compile(r"[.;!?\n]")


def _is_verb(word: str) -> bool:
    return word in ACTION_OF or word in _STEP_VERBS


def _leads_step(word: str) -> bool:
    """Whether a piece's first word starts a step: a verb, or one read as another action ("tell me")."""
    return _is_verb(word) or word in _STEPSYNONYMS


# Verbs read as another action (SYNONYMS) that also start a step when they lead a piece ("tell me
# what tables the db has"); not "note" or "rm", which are more often nouns or names. Inside a piece
# they name no step: "I want to optimize my site. Can you give me suggestions?" is one request.
_STEPSYNONYMS = frozenset(SYNONYMS) - {"note", "rm"}

# In a task that has a sequencing word, a comma before a verb also starts a step: "open the shop
# page, search for 'usb-c hub', then take a screenshot" (three steps). Without one, a comma stays
# inside a request ("with offset 0, limit 10, sort by date").
_COMMA_VERB = re.compile(r"(,\s+)(?=(?:" + "|".join(sorted({*ACTION_OF, *_STEP_VERBS, *_STEPSYNONYMS}, key=len, reverse=True)) + r")\b)",
                         re.IGNORECASE)


def split_needs(query: str, max_needs: int = 5) -> list[str]:
    """The needs a whole-task query names, in order; a query naming one need gives ``[query]``.

    After a sequencing word ("then", "after that", "finally") a piece of two words or more is a
    need of its own (the first one too when it starts with a verb: "check git status and then
    commit"); after punctuation or "and also" only a piece of three words or more that names an
    action (:data:`ACTIONS` or a step verb). Anything else ("include the storage size", "it is for
    a report") is an object, condition or context and is glued to the need before it, or to the
    first need when it comes first. On dev rows the action check stopped splitting most single
    requests (MCP-Zero 5.6% -> 0.9% of queries; every split embeds more texts).
    """
    parts = _SPLIT.split(query)
    if any(_SEQUENCE_ONLY.match(p) for p in parts[1::2]):
        parts = [q for j, part in enumerate(parts) for q in (_COMMA_VERB.split(part) if j % 2 == 0 else [part])]
    pieces: list[tuple[str, str, bool]] = []  # (connector before it, text, a sequencing word came before it)
    sequenced, connector = False, ""
    for j, part in enumerate(parts):
        if j % 2 == 1:
            sequenced = sequenced or bool(_SEQUENCE_ONLY.match(part))
            connector += part
            continue
        text = _LEAD.sub("", part.strip(" ,.;")).strip()
        sequenced = sequenced or bool(_THEN_FIRST.match(part.strip(" ,.;")))  # "…? Then remember it"
        if text:  # a bare "First," or "Next," passes its connector on to what follows
            pieces.append((connector, text, sequenced))
            sequenced, connector = False, ""
    # The first piece starts a step by itself when the next one follows a sequencing word.
    first_sequenced = len(pieces) > 1 and pieces[1][2]
    needs: list[str] = []
    context: list[str] = []  # pieces before the first need
    for index, (connector, piece, after_sequence) in enumerate(pieces):
        words = request_words(piece)
        n = len(piece.split())
        # A step of two words is a verb and the page or file it acts on ("open https://…, take a screenshot").
        asked = _asks(words) and index + 1 < len(pieces) and _ordered(*pieces[index + 1][:2])
        named = n >= _MIN_WORDS and (any(_is_verb(w) for w in words) or asked) or (
            n == 2 and bool(words) and _leads_step(words[0]) and bool(request_values(piece) & {"url", "path"}))
        if index == 0 and first_sequenced:
            # Before "then", a piece of its own is a step ("what time is it in Tokyo, then remember
            # it"), unless it is a condition ("if it exists, then delete it").
            starts = n >= 2 and (bool(words) and _leads_step(words[0]) or named or
                                 n >= _MIN_WORDS and bool(words) and words[0] not in _CONDITION)
        else:
            starts = (after_sequence and n >= 2 and bool(needs)) or named
        if starts:
            needs.append(" ".join([*context, piece]) if not needs and context else piece)
            context = []
        elif needs:
            needs[-1] = f"{needs[-1]}{connector or ' '}{piece}"
        else:
            context.append(piece)
    if len(needs) <= 1:
        return [query]
    if len(needs) > max_needs:
        needs = needs[: max_needs - 1] + [" ".join(needs[max_needs - 1 :])]
    for i in range(1, len(needs)):
        needs[i] = _name_what_it_is(needs[i], needs[i - 1])
    return needs


_AND = re.compile(r",?\s+and\s+", re.IGNORECASE)


def and_halves(query: str) -> list[str] | None:
    """The two requests a bare "and" may join ("make a branch feature/x from develop and move me onto
    it"): the text before the first "and" whose next word starts a step, when that text names an
    action in three words or more, and the text after it (its "it" named, as for any need); None when
    no "and" does. A bare "and" joins objects and details as often as steps ("download asset 12345
    and type HDRI in 4K"), so :func:`split_needs` never splits on it: whether the halves are two
    needs is for retrieval to say (pipeline.py, ``Retriever._two_needs``)."""
    for found in _AND.finditer(query):
        before, after = query[: found.start()].strip(), query[found.end():].strip(" .!?")
        words, then = request_words(before), request_words(after)
        if (len(before.split()) >= _MIN_WORDS and any(_is_verb(w) for w in words) and len(after.split()) >= 2
                and bool(then) and _leads_step(then[0])):
            return [before, _name_what_it_is(after, before)]
    return None


_IT = re.compile(r"\b(?:it|them)\b", re.IGNORECASE)


def _name_what_it_is(need: str, before: str) -> str:
    """``need`` with the "it" its verb acts on replaced by what the need before acted on (the URL or file
    it named last, where its result is, else its object): alone, "move it to In Progress" says nothing
    of the Linear issue found one step before, nor "mark it as completed" of the todo item just created."""
    words = request_words(need)
    at = lead_at(words)
    if at is None or at + 1 >= len(words) or words[at + 1] not in ("it", "them") or action_word(words[at]) is None:
        return need
    written = {m.group().lower(): m.group() for m in re.finditer(r"\w+", before)}  # as the step wrote them
    thing = last_reference(before) or " ".join(["the", *(written.get(w, w) for w in object_words(request_words(before)) if action_word(w) is None)])
    return _IT.sub(thing, need, count=1) if thing != "the" else need
