"""Singular versus bulk: whether a request asks for one thing or many at once, and which tools of a
server act on one item and which on many (``delete_email`` / ``batch_delete_emails``, ``get_incident`` /
``list_incidents``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from votr_mcp.index.tokenize import stem, words_of
from votr_mcp.retrieval.intent import is_question
from votr_mcp.retrieval.values import bounded
from votr_mcp.retrieval.verbs import action_word

__all__ = ["NumberPair", "pair_bulk", "pair_number", "plural_first", "query_bulk"]

_BULK_TOOL = frozenset({"all", "batch", "bulk", "many", "multiple", "multi"})

# How people ask for many at once: a quantifier, a demonstrative plural, "in one go", a count of a
# plural thing ("these 40 promo messages", "3 files"), or a list of items. Checked before the
# singular cues, so "in one go" is not read as "one". "Everything on it" asks all of one thing.
_BULK_CUES = re.compile(
    r"\b(?:all|every|everyone|everybody|everything(?!\s+(?:on|about|in|for|from)\s+(?:it|this|that)\b)|each|multiple|several|"
    r"(?<!how )many|batch|bulk|both|these|those|in one go|in one shot|at once|in (?:one|a single) (?:call|request|pass)|"
    r"in one batch|in a batch|together|en masse|alle|sämtliche|todos|todas|tous|toutes|tutti|tutte|все|всех)\b"
    r"|全部|すべて|全て|一括|所有|批量|모든|전부",
    re.IGNORECASE)
_NUMBER_WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|dozen|twenty|thirty|forty|fifty|hundred|[2-9]|[1-9]\d+)"
# A count stands on its own: the number in an id or a name ("record r-101 from the orders", "issue PROJ-4821",
# "COVID-19 cases") counts nothing.
_COUNTED = re.compile(rf"(?<![\w-]){_NUMBER_WORDS}\s+(?:[a-z-]+\s+){{0,2}}[a-z]+s\b", re.IGNORECASE)
_NOT_COUNTED = re.compile(r"\b(?:minutes|hours|days|weeks|months|years|seconds|times|percent|pixels|px|rows|columns|"
                          r"lines|words|characters|chars|results|items per page)\b", re.IGNORECASE)
# Two or more ids, paths, file names or quoted titles in a list: "a.txt, b.txt and c.txt", "#12, #13",
# "'write spec', 'review spec' and 'ship it'".
_ITEM = r"(?:[\w./-]+\.\w{1,5}|#?\d{2,}|[\w-]*\d[\w-]*)"
_QUOTED_ITEM = r"(?<!\w)(?:'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”)(?!\w)"
_LISTED = re.compile(rf"{_ITEM}\s*(?:,|and|&)\s*{_ITEM}|{_QUOTED_ITEM}\s*(?:,|and|&)\s*{_QUOTED_ITEM}", re.IGNORECASE)
_FILE = re.compile(r"[\w-]+\.[a-z][a-z0-9]{0,4}\b", re.IGNORECASE)
_SINGLE_CUES = re.compile(r"\b(?:a|an|one|single|this|that|specific|particular|just the)\b", re.IGNORECASE)


def query_bulk(query: str) -> int:
    """+1 when the request asks for many things at once ("delete all", "these 40 messages in one go",
    "read a.txt and b.txt"), −1 when it names one ("delete this file"), 0 when it does not say."""
    query = bounded(query)
    if _BULK_CUES.search(query) or _LISTED.search(query):
        return 1
    counted = _COUNTED.search(query)
    if counted and not _NOT_COUNTED.search(counted.group(0)):
        return 1
    if _SINGLE_CUES.search(query) or len(_FILE.findall(query)) == 1:
        return -1
    return 0


def _bulk_marked(words: list[str]) -> bool:
    """A tool name acting on many: a batch word, or a plural object after its verb (delete_emails)."""
    if set(words) & _BULK_TOOL:
        return True
    last = words[-1] if words else ""
    return len(words) >= 2 and stem(last) != last and not last.endswith("ss")


def pair_bulk(tools: list[tuple[str, str]], words: Sequence[list[str]] | None = None) -> list[int]:
    """For (server, name) pairs: +1 for a tool acting on many items that has a one-item sibling on its
    server (``batch_delete_emails`` beside ``delete_email``, ``read_multiple_files`` beside
    ``read_file``), −1 for that sibling, 0 for every tool without such a pair.

    Only pairs are marked: a name's grammar alone ("git_log", "list_tables") says nothing about
    whether the request's count should move it, and reading it as singular moved list tools down
    for "show the last 3 commits". ``words``: each name's :func:`words_of`, when already split."""
    core: dict[tuple[str, frozenset[str]], list[int]] = {}
    marked: list[bool] = []
    for i, (server, name) in enumerate(tools):
        said = words[i] if words is not None else words_of(name)
        marked.append(_bulk_marked(said))
        key = (server, frozenset(stem(w) for w in said if w not in _BULK_TOOL))
        core.setdefault(key, []).append(i)
    out = [0] * len(tools)
    for members in core.values():
        if len(members) < 2:
            continue
        kinds = {marked[i] for i in members}
        if kinds == {True, False}:
            for i in members:
                out[i] = 1 if marked[i] else -1
    _pair_named_batches(tools, core, marked, out)
    return out


def _pair_named_batches(tools: list[tuple[str, str]], core: dict[tuple[str, frozenset[str]], list[int]],
                        marked: list[bool], out: list[int]) -> None:
    """Pairs a batch tool whose name leaves its object unsaid with the one-item tools that say one
    more word: ``bulk_publish`` with ``publish_entry`` (not with ``publish_content_type``)."""
    singles: dict[str, list[tuple[frozenset[str], list[int]]]] = {}
    for (server, words), members in core.items():
        single = [i for i in members if not marked[i]]
        if single:
            singles.setdefault(server, []).append((words, single))
    for (server, words), members in core.items():
        for i in members:
            if out[i] != 0 or not words or not set(words_of(tools[i][1])) & _BULK_TOOL:
                continue
            paired = [j for other, single in singles.get(server, ()) if words < other and len(other - words) == 1
                      for j in single]
            if paired:
                out[i] = 1
                for j in paired:
                    out[j] = -1 if out[j] == 0 else out[j]


@dataclass(frozen=True, slots=True)
class NumberPair:
    """A tool whose identifier name ends in a noun another tool of its server ends in in the other
    number: ``get_incident`` (one) beside ``list_incidents`` (many)."""

    group: int  # the same for every tool of the server ending in that noun
    word: str  # the noun as this name says it ("incident", "incidents")
    plural: bool
    action: str | None  # the action the name's other words ask for (verbs.action_word), if any
    others: frozenset[str] = frozenset()  # the name's other words ("list", "get")


# A name of more words is a title ("Get a random fact about cats"): its last word is rarely its object.
_TITLE_WORDS = 3


def pair_number(tools: Sequence[tuple[str, str]], words: Sequence[list[str]] | None = None) -> list[NumberPair | None]:
    """For (server, name) pairs: each tool's :class:`NumberPair`, None for a tool whose server names its
    last noun in one number only. A short name may have spaces ("List Pools" beside "Get Pool"); a
    longer one is a title (:data:`_TITLE_WORDS`) and pairs with nothing. ``words`` as for :func:`pair_bulk`."""
    ends: dict[tuple[str, str], list[tuple[int, list[str]]]] = {}
    for i, (server, name) in enumerate(tools):
        said = (words[i] if words is not None else words_of(name)) if len(name.split()) <= _TITLE_WORDS else []
        if said and len(said[-1]) >= 3:
            ends.setdefault((server, stem(said[-1])), []).append((i, said))
    out: list[NumberPair | None] = [None] * len(tools)
    for group, members in enumerate(ends.values()):
        if len({_plural(said[-1]) for _, said in members}) == 2:
            for i, said in members:
                action = next((a for a in map(action_word, said[:-1]) if a), None)
                out[i] = NumberPair(group, said[-1], _plural(said[-1]), action, frozenset(said[:-1]))
    return out


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith("ss") and stem(word) != word


def plural_first(text: str, ranked: list[int], pairs: Sequence[NumberPair | None], window: int) -> list[int]:
    """``ranked`` with a tool naming its object in the plural moved before its server's tool naming it
    in the singular, when that one leads the pair in the first ``window``, the request says the
    object in the plural (as what it acts on, not as a place: "… in my contacts") and not in the
    singular, and what else it says takes the plural one's side (:func:`_plural_asked`): "list open
    incidents in Huntress" puts list_incidents before get_incident, "which datasets exist?"
    list_datasets before search_dataset. Read in this direction only: a noun in the singular often
    names one of the many a plural tool serves ("find the issue about the login loop" is a search),
    and on the dev rows moving singular tools up lost rows and won none."""
    head = ranked[:window]
    at, lead = next(((a, pair) for a, i in enumerate(head) if (pair := pairs[i]) is not None), (0, None))
    if lead is None or lead.plural:
        return ranked
    words = words_of(text)
    if lead.word in words:
        return ranked
    asked = next((a for a in map(action_word, words) if a), None)
    said, question = set(words), is_question(text)
    sibling = next((j for j in head[at + 1:] if (pair := pairs[j]) is not None and _plural_of(pair, lead, text)
                    and _plural_asked(pair, lead, said, asked, question)), None)
    if sibling is None:
        return ranked
    out = list(ranked)
    out.remove(sibling)
    out.insert(at, sibling)
    return out


# Where a plural names the place something goes or comes from, not what is acted on: "save +49151… as
# Jonas in my Telegram contacts" adds one contact. (Names are capitalized; the rest is read in any case.)
_PLACE = (r"(?i:\b(?:in|into|to|from|among|across|within|inside))\s+"
          r"(?:(?:(?i:my|our|your|the|his|her|their|its)|[A-Z][\w.-]*)\s+){0,2}")


def _acted_on(text: str, word: str) -> bool:
    """``word`` stands in ``text`` at least once other than as a place ("in my contacts")."""
    anywhere = len(re.findall(rf"(?i:\b{re.escape(word)}\b)", text))
    return anywhere > len(re.findall(rf"{_PLACE}(?i:{re.escape(word)}\b)", text))


def _plural_of(pair: NumberPair, lead: NumberPair, text: str) -> bool:
    """``pair`` is the plural sibling of ``lead`` that the request names as what it acts on."""
    return pair.group == lead.group and pair.plural and _acted_on(text, pair.word)


def _plural_asked(pair: NumberPair, lead: NumberPair, said: set[str], asked: str | None, question: bool) -> bool:
    """Whether the rest of the request takes the plural tool's side: it says a word of that tool's
    name the other's lacks ("list open incidents"), and none the other way round ("ignore error
    groups" is ignore_error_group's, "update catalog items" update_catalog_item's); failing both, it
    asks a question ("what tasks are on my board?": list_tasks, not create_task) or reads where the
    singular tool does something else or names no action. Descriptions' words in the plural are generic ("Retrieve build
    artifacts" is get_artifact's summary), so reading alone does not pass a tool that reads one. A
    batch tool (move_bulk_tasks) is left to the singular/bulk pairing (:func:`pair_bulk`)."""
    mine, theirs = pair.others - lead.others, lead.others - pair.others
    if mine & _BULK_TOOL:
        return False
    if said & mine or said & theirs:
        return bool(said & mine) and not said & theirs
    return question or (asked == "read" and lead.action != "read" and pair.action in ("read", None))
