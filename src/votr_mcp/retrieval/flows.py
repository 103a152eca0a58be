"""Which way a request moves data between kinds of file, and which way a converting tool does.

"bring data.csv into the workbook" wants ``import_csv`` (CSV into the spreadsheet), not
``export_csv`` (the spreadsheet out to CSV), and "turn docs/README.md into a PDF" does not want
``pdf-to-markdown``: the two tools of each pair share every content word with the request, and
only the direction tells them apart. A request's flow is read only when it names both ends, a kind
it starts from (a file it gives, a YouTube link, "from the report.xlsx") and a kind it wants ("into
the workbook", "as text", "to a PDF"), and they differ; a tool's is read from its name: ``a_to_b``,
``a2b``, ``import_x`` (x into the kind its server keeps) and ``export_x`` (out of it to x).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from votr_mcp.index.tokenize import words_of
from votr_mcp.retrieval.needs import split_needs
from votr_mcp.retrieval.values import bounded

__all__ = ["Flow", "flow_fit", "request_flow", "tool_flow"]

# Kinds of file by the words and extensions that name them. Speech is audio ("text to speech").
_KIND_WORDS = {
    "csv": ("csv", "tsv"),
    "sheet": ("xlsx", "xls", "xlsm", "excel", "spreadsheet", "workbook"),
    "markdown": ("md", "markdown"),
    "pdf": ("pdf",),
    "word": ("docx", "doc"),
    "slides": ("pptx", "ppt", "powerpoint"),
    "html": ("html", "htm", "webpage"),
    "json": ("json",),
    "text": ("txt", "text"),
    "audio": ("mp3", "m4a", "wav", "ogg", "flac", "audio", "speech"),
    "video": ("mp4", "mov", "mkv", "webm", "video", "youtube"),
    "image": ("png", "jpg", "jpeg", "gif", "webp", "image"),
    "xml": ("xml",),
    "yaml": ("yaml", "yml"),
    "mindmap": ("mindmap", "xmind"),
}
KIND_OF = {word: kind for kind, words in _KIND_WORDS.items() for word in words}

# The words that lead to the kind a request wants ("into the workbook", "as text", "to a PDF"), and to the one it starts from.
_TO = frozenset({"into", "as", "to", "in"})
_FROM = frozenset({"from"})
_REACH = 4  # how many words a preposition's kind may stand after it ("into a nicely formatted PDF")
_FILE = re.compile(r"[\w~/-]\.([a-z0-9]{2,4})\b", re.IGNORECASE)
_YOUTUBE = re.compile(r"\b(?:youtube\.com|youtu\.be)/", re.IGNORECASE)
_FILLERS = frozenset({"a", "an", "the", "my", "our", "your", "this", "that", "its", "plain", "clean", "nice", "nicely",
                      "formatted", "proper", "new", "single", "one", "it", "them"})


class Flow(NamedTuple):
    """Data moving from kind ``source`` to kind ``target`` (either None when not said)."""

    source: str | None
    target: str | None


def _kind_after(leads: frozenset[str], words: list[str]) -> list[str]:
    """The kind of each word of ``leads`` that leads to one through filler words only: the kind a
    word names, or a file's by its extension ("in my budget.xlsx")."""
    found = []
    for i, word in enumerate(words):
        if word.lower() not in leads:
            continue
        for after in words[i + 1 : i + 1 + _REACH]:
            bare = after.strip(".,:;!?()'\"").lower()
            if bare in _FILLERS:
                continue
            kind = KIND_OF.get(bare.rsplit(".", 1)[-1])
            if kind is not None:
                found.append(kind)
            break
    return found


def request_flow(text: str) -> Flow | None:
    """The kind a request moves data from and the kind it wants, when it says both and they differ:
    the kind "into", "as", "to" or "in" leads to is the target; the source is the kind "from" leads
    to, else a kind of file the request gives (its extension, a YouTube link) other than the target.
    None for a request of several steps (needs.split_needs), each of which is read alone: in "convert
    handbook.pdf into markdown and then make a mind map out of it" the markdown is where the second
    step starts, not where the task ends."""
    text = bounded(text)
    words = text.split()
    targets = _kind_after(_TO, words)
    if not targets or len(split_needs(text)) > 1:
        return None
    target = targets[0]
    sources = [k for k in _kind_after(_FROM, words) if k != target]
    if not sources:
        given = [KIND_OF.get(m.group(1).lower()) for m in _FILE.finditer(text)]
        sources = [k for k in given if k is not None and k != target]
        if _YOUTUBE.search(text) and target != "video":
            sources.append("video")
    return Flow(sources[0], target) if sources else None


def tool_flow(name: str, server: str) -> Flow | None:
    """The flow a tool's name states: ``pdf-to-markdown``, ``markdown2pdf``, ``import_csv`` (into the
    kind its server's name says, e.g. excel), ``export_csv`` (out of it); None when it states none."""
    words = [w for part in words_of(name) for w in _split_two(part)]
    for i, word in enumerate(words[1:-1], start=1):
        if word in ("to", "2"):
            source, target = KIND_OF.get(words[i - 1]), KIND_OF.get(words[i + 1])
            if source is not None and target is not None and source != target:
                return Flow(source, target)
    home = next((KIND_OF[w] for w in words_of(server) if w in KIND_OF), None)
    for i, word in enumerate(words[:-1]):
        kind = KIND_OF.get(words[i + 1])
        if kind is None or kind == home:
            continue
        if word == "import":
            return Flow(kind, home)
        if word == "export":
            return Flow(home, kind)
    return None


def _split_two(word: str) -> list[str]:
    """"markdown2pdf" -> markdown, 2, pdf (a 2 between two kinds); any other word as it is."""
    head, two, tail = word.partition("2")
    if two and head in KIND_OF and tail in KIND_OF:
        return [head, "2", tail]
    return [word]


def flow_fit(request: Flow | None, tool: Flow | None) -> tuple[float, float]:
    """(agree, conflict): 1 where the tool moves data the way the request asks (it starts from the
    request's source or ends in its target, and neither end is another kind: ``export_csv`` does not
    agree with "export report.xlsx to a PDF"), and 1 where it moves it the other way (it starts from
    what the request wants, or ends in what the request starts from)."""
    if request is None or tool is None:
        return 0.0, 0.0
    if (tool.source is not None and tool.source == request.target) or (
            tool.target is not None and tool.target == request.source):
        return 0.0, 1.0
    source_ok = tool.source is None or tool.source == request.source
    target_ok = tool.target is None or _gives(tool.target, request.target)
    said = tool.source is not None or tool.target is not None
    return (1.0 if source_ok and target_ok and said else 0.0), 0.0


# What a request that wants "text" takes: "the words as text" of a recording is served in markdown too.
_TEXTUAL = frozenset({"text", "markdown"})


def _gives(kind: str | None, wanted: str | None) -> bool:
    """Whether a tool that ends in ``kind`` gives what a request that wants ``wanted`` asks for."""
    return kind is not None and (kind == wanted or (wanted == "text" and kind in _TEXTUAL))
