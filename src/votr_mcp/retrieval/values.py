"""The values a request hands over (a URL, a path and whether it names a file, an e-mail address, a
clock time, an IP address, a CVE id, a phone number, coordinates, an on-chain address, a spreadsheet
range, a quoted message), which parameters take each kind, and the bound on unbroken runs of characters every pattern over a
request reads first."""

from __future__ import annotations

import re

from votr_mcp.index.tokenize import words_of

__all__ = ["MAX_WORD_CHARS", "VALUE_MARK", "bounded", "file_kinds_only", "last_reference", "request_values", "taken_values", "values_taken"]

MAX_WORD_CHARS = 96  # longer unbroken runs (pasted hashes, base64, minified text) carry no intent cue


# Values a request hands over, by kind, and the parameter words that take each kind: a request
# with a URL wants a tool that takes one ("grab the README of github.com/pallets/flask": fetch, not
# a docs search), a clock time wants one with a time ("4pm Paris time in New York": convert_time), an
# IP address or a CVE id one that looks it up ("who is 185.199.108.153 registered to?": a whois tool).
_ABSOLUTE = r"(?:^|\s)(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*"
_FILE_KINDS = (r"(?:txt|md|json|csv|tsv|xlsx?|py|js|ts|tsx|ya?ml|log|pdf|png|jpe?g|gif|docx?|pptx?|html?|xml|sql|db|"
               r"sqlite|toml|ini|cfg|sh|zip|tar|gz|mp[34]|wav)")
_VALUES = {  # in this order: an address is read (and taken out) before its domain reads as a web site
    "email": re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"),
    "ip": re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),
    "url": re.compile(r"https?://\S+|\bwww\.\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|ai|app|co|edu|gov|"
                      r"de|uk|fr|nl|eu|ch|at|se|dk|pl|ca|jp|shop|store|info|xyz|tech|site|online|blog)\b\S*", re.IGNORECASE),
    "path": re.compile(rf"{_ABSOLUTE}|\b[\w-]+\.{_FILE_KINDS}\b", re.IGNORECASE),
    "cve": re.compile(r"\bCVE-\d{4}-\d{4,}\b", re.IGNORECASE),
    "chain_address": re.compile(r"\b0x[0-9a-f]{40}\b", re.IGNORECASE),
    "coordinates": re.compile(r"-?\b\d{1,3}\.\d{2,}\s*,\s*-?\d{1,3}\.\d{2,}\b"),
    "phone": re.compile(r"\+\d[\d ().-]{6,}\d"),
    "time": re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.IGNORECASE),
    # A spreadsheet range ("A1:D1", "a2:f100"); a lone "A1" is as often a paper size or a quarter ("Q3").
    "cells": re.compile(r"\b\$?[A-Z]{1,3}\$?\d{1,7}:\$?[A-Z]{1,3}\$?\d{1,7}\b", re.IGNORECASE),
    # A text to pass on, quoted after the word for it: "commit with the message 'fix typo'", "text Bob saying 'on my way'".
    "message": re.compile(r"\b(?:with (?:the |a )?(?:commit )?(?:message|caption|comment|text|body)|saying|that says)"
                          r"\s*:?\s*(?:'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”)", re.IGNORECASE),
}
_TAKES = {
    "url": frozenset({"url", "urls", "uri", "link", "links", "href", "endpoint", "website", "webpage",
                      "domain", "domains", "hostname"}),
    "email": frozenset({"email", "emails", "recipient", "recipients", "mail"}),
    "path": frozenset({"path", "paths", "file", "files", "filename", "filepath", "directory", "folder", "dir"}),
    "file": frozenset({"file", "files", "filename", "filenames", "filepath", "filepaths"}),
    "time": frozenset({"time", "times", "datetime", "timestamp", "hour", "clock"}),
    "ip": frozenset({"ip", "ips", "ipv4", "hostname", "host"}),
    "cve": frozenset({"cve", "cves", "vulnerability", "vulnerabilities"}),
    "chain_address": frozenset({"contract", "wallet", "address"}),
    "coordinates": frozenset({"latitude", "longitude", "lat", "lon", "lng", "coordinates", "coordinate", "coords"}),
    "phone": frozenset({"phone", "phones", "mobile", "telephone", "msisdn"}),
    "cells": frozenset({"range", "ranges", "cell", "cells"}),
    "message": frozenset({"message", "text", "body", "content", "comment", "caption", "subject"}),
}


def request_values(text: str) -> frozenset[str]:
    """The kinds of value a request gives (url, email, path, time, ip, cve, phone, coordinates, chain
    address, cells, message): what its tool must take."""
    return values_taken(text)[0]


VALUE_MARK = "valuemark"
"""The word a value leaves where it was taken out: the object of "sort crm.xlsx by name" is the file, not the name."""


def values_taken(text: str) -> tuple[frozenset[str], str]:
    """The kinds of value a request gives, and its text with each value taken out, :data:`VALUE_MARK` in its place."""
    kinds: set[str] = set()
    rest = bounded(text)
    for kind, pattern in _VALUES.items():  # each value found is taken out, so no later kind reads it again
        if kind == "path" and any(_NAMES_FILE.search(m.group()) for m in pattern.finditer(rest)):
            kinds.add("file")  # a file, not only a folder: a tool whose path is a repository's does not read it
        stripped = pattern.sub(f" {VALUE_MARK} ", rest)
        if stripped != rest:
            kinds.add(kind)
            rest = stripped
    return frozenset(kinds), rest


_NAMES_FILE = re.compile(rf"\.{_FILE_KINDS}$", re.IGNORECASE)


def last_reference(text: str) -> str | None:
    """The URL or file path a request gives last ("https://example.com/pricing", "report.txt"): what
    a step's result is ("import a.csv into b.xlsx" leaves b.xlsx; "save https://… to page.html", the file)."""
    urls = list(_VALUES["url"].finditer(text))
    rest = _VALUES["url"].sub(lambda m: " " * len(m.group()), text)  # a URL's own path is no file path
    found = urls + list(_VALUES["path"].finditer(rest))
    return max(found, key=lambda m: m.start()).group().strip() if found else None


# A file path with its folders ("logs/app-1.log", "~/voice/memo.mp3", "/tmp/build_cache").
_FILE_PATH = re.compile(rf"{_ABSOLUTE}|(?<![\w/.-])(?:[\w~.-]+/)*[\w-]+\.{_FILE_KINDS}\b", re.IGNORECASE)


def file_kinds_only(text: str) -> str:
    """``text`` with each file path it gives cut to its file kind ("go through logs/app-1.log" ->
    "go through log"; "/tmp/build_cache" leaves nothing), a URL's own path left whole. The names of
    folders and files are no words of what a request asks (as words to match, "read
    docs/commit-guide.md" asked for a commit), but a ".pdf" says what a converter must read."""
    urls = [m.span() for m in _VALUES["url"].finditer(text)]

    def kind(m: re.Match[str]) -> str:
        if any(start <= m.start() < end for start, end in urls):
            return m.group()
        name = m.group().strip().rsplit("/", 1)[-1]
        return f" {name.rsplit('.', 1)[-1]} " if "." in name.strip(".") else " "

    return _FILE_PATH.sub(kind, text)


def taken_values(parameters: str) -> frozenset[str]:
    """The kinds of value a tool's parameters take, from their names and descriptions in words. A
    path takes a file unless every "path" it says is a folder's ("repo_path", "directory path")."""
    said = words_of(parameters)
    words = set(said)
    kinds = {kind for kind, names in _TAKES.items() if names & words}
    if any(w in ("path", "paths") and (i == 0 or said[i - 1] not in _FOLDERS) for i, w in enumerate(said)):
        kinds.add("file")
    return frozenset(kinds)


# What a path names when it is no file: "repo_path", "directory path", "working dir path".
_FOLDERS = frozenset({"repo", "repository", "dir", "directory", "folder", "project", "root", "workspace", "working",
                      "base", "cwd"})


_LONG_RUN = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")


def bounded(text: str) -> str:
    """``text`` with every run of non-space characters longer than :data:`MAX_WORD_CHARS` dropped.

    The item and file patterns (bulk.py) and the identifier pattern here backtrack within one unbroken run of characters,
    so their time grows with its length cubed: 800 pasted digits took 2 s of a search, 4,000 did
    not end (eval/reliability_checks/http_fuzz.py). No name, file or count that these read is that
    long; dropping such runs first keeps every pattern's time proportional to the text's length."""
    return _LONG_RUN.sub(" ", text) if len(text) > MAX_WORD_CHARS else text
