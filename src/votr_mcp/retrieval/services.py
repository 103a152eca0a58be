"""Well-known services a request places its action on: "play it on Spotify", "cancel my Netflix
membership", "get me an Uber to JFK", "WhatsApp Leo happy birthday".

A catalog with no tool for such a service cannot do what is asked, however well the rest matches:
a media tool plays, a calendar tool adds events, a payments tool refunds, but not on Spotify, in
Google Calendar or through Venmo. Abstention reads this as the evidence ``service_offered``
(evidence.py): 0 when the request names a service of ``services.txt`` where it acts and no tool's
indexed text (name, description, parameters, server) names it, else 1.

Asks to change something: the request leads with a verb that is not reading (intent.request_action:
play, send, create, delete, order …), or asks for the service itself ("get me an Uber to JFK"). Asking about a service's content is served by tools that do
not name it (a streaming guide answers "is Breaking Bad on Netflix?", a product search "the
best-selling book on Amazon"), as an automation between services is by an integration tool
("whenever I get an email, add a task in Todoist"); acting on the user's own account there is not.

Where it acts: the service is written as a name, first in the request ("WhatsApp Leo …") or right
after a word that puts the action there: a preposition of place or means (on, in, from, via,
using …, and their German, French, Spanish, Italian and Portuguese equivalents), a possessive (my,
our) or an article ("an Uber", "a Slack message"); inside Chinese or Japanese text, any place. A
service named as a topic is not read: "Tesla's key stats", "a role at Figma", "the Lufthansa
booking email in my Gmail". Over the human-style sets of eval/queries, both splits, this reads 39
no-tool requests and no answerable one; over the shared benchmarks, 22 answerable MetaTool requests
of 21,538 ("create a Spotify playlist", served there by a playlist tool) and no no-tool one. The
evidence weighs it with the rest; it refuses nothing alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

from votr_mcp.index.tokenize import tokenize

__all__ = ["SERVICES", "named_services", "service_offered", "services"]

SERVICES = Path(__file__).with_name("services.txt")

# Words after which a service is where the action happens (lower-cased, the word right before it).
_PLACING = frozenset(
    "on in into onto from via through use using with my our your a an new "  # English ("a new Google Doc")
    "auf bei über mit von mein meine meinem meinen unser unsere unserem "  # German
    "sur dans avec mon ma mes notre "  # French
    "en con desde por mi mis nuestro nuestra "  # Spanish
    "su sul sulla nel nella mio mia "  # Italian
    "no na em pelo pela meu minha nosso nossa".split())  # Portuguese
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD_BEFORE = re.compile(r"(\w+)\W*$")
# An automation between services ("create a task in Todoist whenever I receive an email") is what an
# integration tool does without naming every service it connects.
# Services that act on other services: named with them, they are what the request acts through.
_INTEGRATIONS = frozenset({"Zapier", "IFTTT"})
_AUTOMATION = re.compile(r"\b(?:whenever|every time|each time|automatically)\b", re.IGNORECASE)


@cache
def services() -> tuple[str, ...]:
    """The services of ``services.txt``, longest first (so "Uber Eats" is read before "Uber")."""
    lines = (line.strip() for line in SERVICES.read_text(encoding="utf-8").splitlines())
    return tuple(sorted((s for s in lines if s and not s.startswith("#")), key=len, reverse=True))


def _plural_last(service: str) -> bool:
    """Whether a service's name ends with a plural said singular too ("a Google Doc", "my Google Sheet")."""
    return " " in service and service.endswith("s") and not service.endswith("ss")


@cache
def _pattern() -> re.Pattern[str]:
    names = "|".join(re.escape(s).replace(r"\ ", r"\s+") + ("?" if _plural_last(s) else "") for s in services())
    return re.compile(rf"(?<![A-Za-z0-9_.@#/-])({names})(?![A-Za-z0-9_-])", re.IGNORECASE)


@cache
def _spelling() -> dict[str, str]:
    """Each service by its lower-cased, space-normalised name (and singular, :func:`_plural_last`)."""
    out = {" ".join(s.lower().split()): s for s in services()}
    out.update({" ".join(s.lower().split())[:-1]: s for s in services() if _plural_last(s)})
    return out


@cache
def _by_first_word() -> dict[str, list[frozenset[str]]]:
    """Each service's lower-cased words, by its first word (a plural last word as said singular:
    :func:`_may_name_one` reads the request's words both ways)."""
    out: dict[str, list[frozenset[str]]] = {}
    for s in services():
        words = _ALNUM.findall((s[:-1] if _plural_last(s) else s).lower())
        out.setdefault(words[0], []).append(frozenset(words))
    return out


_ALNUM = re.compile(r"[a-z0-9]+")


def _may_name_one(text: str) -> bool:
    """Whether the request has all the words of some service's name, in any case: the cheap test that
    spares most requests the whole list's pattern (a search's hot path)."""
    said = _ALNUM.findall(text.lower())
    words = frozenset(said).union(w[:-1] for w in said if w.endswith("s"))
    by_first = _by_first_word()
    return any(names <= words for w in words & by_first.keys() for names in by_first[w])


def named_services(text: str) -> list[str]:
    """The services of ``services.txt`` the request names where it acts (see the module docstring)."""
    found: list[str] = []
    if not _may_name_one(text):
        return found
    for m in _pattern().finditer(text):
        written = m.group(1)
        service = _spelling()[" ".join(written.lower().split())]
        if written[0] != service[0] or text[m.end():m.end() + 2] in ("'s", "’s"):  # "uber", "Ebay"; "Tesla's"
            continue
        before = text[:m.start()]
        word = _WORD_BEFORE.search(before)
        placed = (not before.strip() or _CJK.match(before.rstrip()[-1:]) is not None
                  or (word is not None and word.group(1).lower() in _PLACING and not before[word.end(1):].strip(" ")))
        if placed and service not in found:
            found.append(service)
    return found


def service_offered(text: str, verb: str | None, named_by_a_tool: Callable[[list[str]], bool]) -> bool:
    """False when the request asks to change something (``verb``: its leading action, not reading)
    on a service it names where it acts (:func:`named_services`), writes the service as its verb
    ("WhatsApp Leo …") or asks for one ("get me an Uber"), and no tool names that service: ``named_by_a_tool`` says whether some tool's
    indexed text has all of a name's tokens. Else True."""
    if _AUTOMATION.search(text):
        return True
    changes = verb not in (None, "read")
    named = named_services(text)
    if _INTEGRATIONS.intersection(named):  # "through Zapier, add a new HubSpot lead": Zapier does it
        named = [s for s in named if s in _INTEGRATIONS]
    return all(named_by_a_tool(tokenize(s)) for s in named
               if changes or text.lstrip().startswith(s) or _ordered(text, s))


def _ordered(text: str, service: str) -> bool:
    """Whether the request asks for the service itself, as a thing one gets: "an Uber" ending the
    phrase ("get me an Uber to JFK", "call me a Lyft."), not naming a kind of thing ("a Spotify
    playlist", "an IKEA chest")."""
    return re.search(rf"\ban?\s+{re.escape(service)}(?:\s+(?:{_PHRASE_END})\b|\s*[.,;:!?]|\s*$)", text) is not None


# Words that end a noun phrase: what follows the thing asked for ("an Uber to the airport", "… home").
_PHRASE_END = "to|at|from|home|now|tonight|tomorrow|today|please|asap"
