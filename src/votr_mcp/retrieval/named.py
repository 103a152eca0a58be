"""Servers a request names, and whether any of their tools does what it asks.

"Delete the Heroku app old-staging-api", "ban troll#1234 from our Discord server", "reply to the
Intercom conversation from tom@…": each names a service the catalog has, and that service's tools
only list, read or create; other servers' tools do delete, ban and reply. Ranked by similarity, such
a near-miss finds the named service's tools first and another service's tool that does the action
next, so a check over the first ranked tools (evidence ``action_supported``) passes it. Read against
the named service's own tools, it does not.

A server is named by the distinctive words of its name (rerank.server_name_words), written as a
name: capitalized other than only to start a sentence ("the Heroku app", "GitHub"), or before a
colon at the start ("git: …"). That keeps common words that name servers ("everything", "time",
"create") from naming them in passing ("forget everything you know about Bob", "Create a new list");
a service named in lower case is not read as named, which only leaves the request to the other evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from votr_mcp.index.tokenize import content_tokens, words_of
from votr_mcp.retrieval.request_words import named_first
from votr_mcp.retrieval.rerank import QueryView, ToolView, server_name_words

__all__ = ["NamedServers"]

# A capitalized word, but for one that only starts a sentence ("Delete my comment …" names no server
# "MCP-Delete"; "GitHub", "Context7" and "monday.com" are names wherever they stand), or the service
# written before a colon at the start ("git: …", request_words.named_first).
_CAPITALIZED = re.compile(r"(?<![\w.-])[A-Z][\w.-]*")
_MARKED = re.compile(r"[A-Z0-9.]")
_BEFORE = 4  # the characters before a word that tell whether it starts a sentence (". ", "?\n")


def _written_as_names(text: str) -> list[str]:
    found = []
    lead = len(text) - len(text.lstrip())  # where the text's first word starts
    for m in _CAPITALIZED.finditer(text):
        before = text[max(0, m.start() - _BEFORE):m.start()].rstrip()
        starts = m.start() == lead or before[-1:] in (".", "!", "?")
        if not starts or _MARKED.search(m.group()[1:]):
            found.append(m.group())
    first = named_first(text)
    return found + ([first] if first else [])


# Words the stemmer reads as another ("news" as "new"): a server named by one is named only where
# the request writes it whole ("New York" names no server called "News").
_KEPT_WHOLE = frozenset({"news"})


class NamedServers:
    """The catalog's servers by the distinctive words of their names, and each one's actions (made
    from its tools' views when first asked: a search names a server rarely, and a catalog of 100k
    tools should not make every view to start)."""

    __slots__ = ("_words", "_whole", "_by_word", "_tools", "_views", "_does")

    def __init__(self, servers: Sequence[str], views: Sequence[ToolView]) -> None:
        self._words: dict[str, frozenset[str]] = {}
        self._whole: dict[str, frozenset[str]] = {}
        self._by_word: dict[str, list[str]] = {}
        self._tools: dict[str, list[int]] = {}
        for i, server in enumerate(servers):
            if server not in self._tools:
                words = server_name_words(server)
                self._words[server] = words
                self._whole[server] = _KEPT_WHOLE.intersection(words_of(server))
                for w in words:
                    self._by_word.setdefault(w, []).append(server)
            self._tools.setdefault(server, []).append(i)
        self._views = views
        self._does: dict[str, frozenset[str]] = {}

    def named(self, text: str, tokens: frozenset[str]) -> list[str]:
        """The servers whose every distinctive word the request writes as a name."""
        candidates = {s for t in tokens for s in self._by_word.get(t, ())}
        if not candidates:
            return []
        names = _written_as_names(text)
        as_name = set().union(*(content_tokens(m) for m in names))
        whole = set().union(*(words_of(m) for m in names))
        return sorted(s for s in candidates
                      if self._words[s] <= tokens and self._words[s] <= as_name and self._whole[s] <= whole)

    def supports(self, text: str, query: QueryView) -> bool:
        """False when the request leads with a verb other than reading and names servers of the
        catalog, none of whose tools says it does that (in its name or its description's first
        sentence); else True. A service named is there to be read from ("show me the latest
        HackerNews stories" names a news tool whose one stated action is to create), and a server
        none of whose tools says any action (MetaTool's "Agones": "Access soccer match results")
        may do any."""
        if query.verb is None or query.verb == "read":
            return True
        named = self.named(text, query.tokens)
        return not named or any(not acts or query.verb in acts for acts in map(self._actions, named))

    def _actions(self, server: str) -> frozenset[str]:
        found = self._does.get(server)
        if found is None:
            found = self._does[server] = frozenset().union(*(self._views[i].does for i in self._tools[server]))
        return found
