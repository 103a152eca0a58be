"""The one tokenizer shared by BM25, TF-IDF and the Dice rerank.

Tool names arrive as ``listPullRequests``, ``list_pull_requests``, ``list-pull-requests`` or
``List Pull Requests``; queries say "list the pull requests". Splitting identifiers on case
changes and separators, lower-casing, folding simple plurals and dropping function words makes
all of these meet on the same tokens.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["STOPWORDS", "split_identifier", "stem", "words_of", "tokenize", "content_tokens"]

# Case boundaries: "HTTPServer" -> "HTTP Server", "listPRs2" -> "list PRs 2".
_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    """a an the and or of to in on for with by from at as is are was were be been being it its this that these
    those i me my we our you your he she they them their do does did can could would should will shall may might
    must please want need like just also then than so if into about over via using use all any some each what
    which who whom how when where why there here not no yes get""".split()
)
# "get" is a stopword because nearly every tool name starts with it and it carries no need;
# "all", "any", "each" are dropped here but read by the singular/bulk intent rule on raw text.


def split_identifier(text: str) -> str:
    """Insert spaces at camelCase boundaries and replace ``_``/``-``/``.``/``/`` by spaces."""
    text = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", text))
    return re.sub(r"[_\-./:]+", " ", text)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Fold common English plural/verb endings so 'files'/'file', 'queries'/'query' meet."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def words_of(text: str) -> list[str]:
    """Lower-cased words with identifier boundaries split, stopwords kept ("listPullRequests" -> list, pull, requests)."""
    return _WORD.findall(split_identifier(text).lower())


def tokenize(text: str) -> list[str]:
    """Lower-cased, identifier-split, stemmed tokens without stopwords (order kept)."""
    return [stem(w) for w in words_of(text) if w not in STOPWORDS]


def content_tokens(text: str) -> set[str]:
    """The set of :func:`tokenize` tokens, for overlap measures."""
    return set(tokenize(text))
