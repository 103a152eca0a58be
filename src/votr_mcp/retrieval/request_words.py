"""A request's words as read: past a service it names first ("ClickUp: create all of these…"), with its
verbs of several words folded into the one verb they mean ("get rid of the folder" deletes it, "turn it
off", "take the data_steward role away from jlee"). The rules that read its action from them are
retrieval/intent.py."""

from __future__ import annotations

import re
from collections.abc import Sequence

from votr_mcp.index.tokenize import words_of

__all__ = ["named_first", "past_name", "request_words", "written_whole"]


# Verbs of two or three words, as people say them, read as the one verb they mean ("get rid of the
# folder" deletes it, "pull up order 5" shows it): their first word alone names another action or none.
_PHRASAL: dict[tuple[str, ...], str] = {
    ("get", "rid", "of"): "delete", ("throw", "away"): "delete", ("throw", "out"): "delete",
    ("take", "out"): "remove", ("take", "away"): "remove", ("pull", "up"): "show", ("bring", "up"): "show",
    ("look", "up"): "lookup", ("find", "out"): "find", ("turn", "on"): "enable", ("turn", "off"): "disable",
    ("switch", "on"): "enable", ("switch", "off"): "disable", ("set", "up"): "create", ("write", "down"): "record",
    ("note", "down"): "record", ("jot", "down"): "jot", ("fill", "in"): "fill", ("fill", "out"): "fill",
    ("sign", "up"): "register", ("bring", "back"): "restore", ("back", "up"): "backup", ("print", "out"): "print",
    ("go", "to"): "visit", ("shut", "down"): "shutdown", ("send", "over"): "send", ("hand", "over"): "send",
    ("go", "through"): "read", ("look", "through"): "read", ("read", "through"): "read", ("go", "over"): "read",
    ("look", "at"): "view", ("add", "up"): "calculate", ("work", "out"): "calculate", ("figure", "out"): "find",
    ("sum", "up"): "summarize", ("keep", "in", "mind"): "remember", ("tick", "off"): "mark", ("check", "off"): "mark",
    ("leave", "a", "comment"): "comment", ("kick", "off"): "start", ("cross", "off"): "mark", ("catch", "up"): "read",
    ("chime", "in"): "comment", ("pass", "along"): "forward", ("pass", "on"): "forward", ("fire", "off"): "send",
    ("spin", "up"): "create", ("dig", "up"): "find", ("dig", "out"): "find", ("track", "down"): "find",
    ("read", "out", "loud"): "speak", ("read", "aloud"): "speak",  # a voice, not a fetch (speech.py)
    ("tear", "down"): "delete", ("fire", "up"): "start", ("boot", "up"): "start",
    # A meeting moved or dropped: "push back the standup to 10", "call off Friday's 1:1" (not git's push,
    # not a call that runs something).
    ("push", "back"): "postpone", ("put", "off"): "postpone", ("call", "off"): "cancel",
    ("bring", "forward"): "reschedule",
    # A plan or a subscription ended: "she wants to stop paying for the Pro plan".
    ("stop", "paying", "for"): "cancel",
    # A package manager's command: "npm install zod", "pip install requests".
    ("npm", "install"): "install", ("pip", "install"): "install", ("brew", "install"): "install",
    ("apt", "install"): "install", ("yarn", "add"): "install",
    # A file or a database locked with a password.
    ("put", "a", "password", "on"): "lock", ("password", "protect"): "lock",
    # A verb said not to be done is not the one meant: "don't forget that Tom owes me 20" remembers it.
    ("don", "t", "forget"): "remember", ("do", "not", "forget"): "remember", ("dont", "forget"): "remember",
}
_PHRASAL_FIRST = frozenset(k[0] for k in _PHRASAL)


# A service named before a colon ("ClickUp: create all of these…", "Strava: how far did I run"): the
# request starts after it (read as words, "ClickUp" would lead with the verb "click").
_NAMED_FIRST = re.compile(r"^\s*[^\s:/]+(?: [^\s:/]+){0,2}:\s+(?=\S)")


def named_first(text: str) -> str | None:
    """The service a request names before a colon at its start ("ClickUp: create …" -> "ClickUp"), else None:
    not what it points at there ("proofread this: …", "fix the grammar: …")."""
    found = _naming(text)
    return found.group().strip().rstrip(":").strip() if found else None


def _naming(text: str) -> re.Match[str] | None:
    found = _NAMED_FIRST.match(text)
    return None if found is None or _POINTING.intersection(found.group().lower().replace(":", " ").split()) else found


def past_name(text: str) -> str:
    """The request after the service it names first (:func:`named_first`) and after a setting it
    opens with ("In Excel, add a sheet …", "On Discord, put a 👍 …", "use Firecrawl to scrape …"),
    else all of it."""
    found = _naming(text)
    rest = text[found.end():] if found else text
    setting = _SETTING.match(rest)
    return rest[setting.end():] if setting else rest


# Where a request says it happens before what it asks: a short phrase (a dot only inside a name,
# "on dub.co,") and a comma, or the service it is to use and "to" ("use Firecrawl to scrape …").
_SETTING = re.compile(r"\s*(?:(?:in|on|inside|within|using|with|via|over in|from)\s+(?:[^,.:;!?\n]|\.(?=\S)){1,40},"
                      r"|(?:please\s+)?use\s+(?:the\s+)?\S+(?:\s+\S+){0,2}?\s+to)\s+(?=[a-z])", re.IGNORECASE)


_POINTING = frozenset({"this", "these", "that", "those", "the", "it", "following", "below", "here", "my", "our", "me",
                       "them"})


def request_words(text: str) -> list[str]:
    """:func:`words_of` a request with its verbs of several words folded into the one they mean
    ("get rid of the empty folder" -> delete, the, empty, folder), past a service it names first
    ("ClickUp: …")."""
    words = words_of(past_name(text))
    if not _PHRASAL_FIRST.intersection(words):
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] not in _PHRASAL_FIRST:  # most words start no verb of several words
            out.append(words[i])
            i += 1
            continue
        size, verb = _said_together(words, i)
        if verb is not None:
            out.append(verb)
            i += size
            continue
        # A verb of several words said around what it acts on, a pronoun ("turn it off", "read this out
        # loud") or a longer object ("take the role away from jlee"): the verb, then that.
        size, verb = _said_around(words, i)
        if verb is not None:
            out += [verb, words[i + 1]]
            i += size + 1
            continue
        end, verb = _said_apart(words, i, text)
        if verb is not None:
            out += [verb, *words[i + 1:end]]
            i = end + 1
        else:
            out.append(words[i])
            i += 1
    return out


def _said_together(words: Sequence[str], i: int) -> tuple[int, str | None]:
    """The verb of several words written together from ``i`` ("get rid of", "pull up"), longest first, and its size."""
    for size in (4, 3, 2):
        verb = _PHRASAL.get(tuple(words[i:i + size]))
        if verb is not None:
            return size, verb
    return 0, None


def _said_around(words: Sequence[str], i: int) -> tuple[int, str | None]:
    """The verb of several words that starts at ``i`` with a pronoun after its first word, and its size."""
    if i + 2 >= len(words) or words[i + 1] not in _SAID_BETWEEN:
        return 0, None
    for size in (3, 2):
        verb = _PHRASAL.get((words[i], *words[i + 2:i + 1 + size]))
        if verb is not None:
            return size, verb
    return 0, None


_SAID_BETWEEN = frozenset({"it", "that", "this", "them", "those", "these", "everything"})  # one word, a pronoun


def _said_apart(words: Sequence[str], i: int, text: str) -> tuple[int, str | None]:
    """A verb of two words said around a longer object ("take the data_steward role away from jlee",
    "push the weekly sync back to Thursday"): where its particle stands and the verb. Read only when
    the object starts with a determiner and runs at most :data:`_APART` words with no joining word
    and no person ("find any brands, help me out" is helped, not found out), at the first particle
    after the verb, and when that particle is the verb's own: no nearer verb takes it ("add these
    tasks: write FAQ page, set up redirects"), ``text`` writes it as a word ("add a ClickUp task"
    adds: its "up" ends a name), and the verb is not one read only together (:data:`_TOGETHER_ONLY`)."""
    if i + 2 >= len(words) or words[i + 1] not in _OBJECT_START:
        return 0, None
    for j in range(i + 2, min(len(words), i + 2 + _APART)):
        if words[j] in _NOT_OBJECT:
            break
        if words[j] in _PARTICLES:  # "take everything back out of staging": "back" is no particle of take
            verb = _PHRASAL.get((words[i], words[j]))
            nearer = any((words[k], words[j]) in _PHRASAL for k in range(i + 1, j))
            if verb is None or nearer or not written_whole(text, words[j]) or (words[i], words[j]) in _TOGETHER_ONLY:
                return 0, None
            return j, verb
    return 0, None


_APART = 6  # at most so many words of object between a verb and its particle
_TOGETHER_ONLY = frozenset({("set", "up")})  # read only written together: "set the volume up" raises it
_PARTICLES = frozenset({"up", "down", "out", "off", "on", "in", "over", "back", "away", "along", "forward"})
_OBJECT_START = frozenset({"the", "a", "an", "this", "that", "these", "those", "my", "our", "your", "his", "her",
                           "their", "its", "all", "every", "each", "everything", "some", "any"})
_NOT_OBJECT = frozenset({"and", "then", "but", "or", "so", "because", "if", "when", "while", "after", "before", "once",
                         "to", "for", "me", "us", "you", "i"})


def written_whole(text: str, word: str) -> bool:
    """Whether ``word`` stands in ``text`` as a word of its own, not as the start or end of a longer
    one that words_of splits ("SwitchBot" gives "switch", which the text never says)."""
    return re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE) is not None
