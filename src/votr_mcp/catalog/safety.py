"""Tool poisoning: text the model must not read, and tool metadata that reads like orders to it.

An upstream's tool metadata goes into the agent's context verbatim, so an upstream can hide
instructions there (Invariant Labs, "MCP Security Notification: Tool Poisoning Attacks", 2025;
OWASP MCP Top 10, "tool poisoning"): ``<IMPORTANT>`` blocks telling the model to read
``~/.ssh/id_rsa`` and pass it along, "ignore previous instructions", orders to hide this from
the user, or text written in characters a person reviewing the tool cannot see.

- :func:`visible` removes what no reader sees but a model may still read: Unicode tag
  characters (U+E0000 block, "ASCII smuggling"), zero-width and bidi controls, every other
  Cc/Cf control except newline and tab, and the variation selectors supplement (U+E0100 block,
  another channel for hidden bytes). Catalog loading applies it to every text of a tool
  (:func:`votr_mcp.catalog.records.tool_from_mapping`), so the content hash and all that
  follows see the visible text only.
- :func:`injection_reasons` says why a tool's metadata looks poisoned: one line per finding,
  ``"<kind> in <field>: '<excerpt>'"``; the registry holds such a tool until a person accepts
  it. The patterns target phrasings of attacks, not topics: a tool *about* SSH keys or system
  prompts is not flagged for naming them (measured in ``tests/catalog/test_safety.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from votr_mcp.catalog.models import Tool

__all__ = ["HIDDEN", "INJECTION", "MAX_DEPTH", "STRAY", "hidden_characters", "injection_reasons", "visible", "visible_schema"]

HIDDEN = "hidden characters"
INJECTION = "instructions to the agent"

# Every Cc/Cf code point of Unicode 14 (Python 3.11's unicodedata) but \t and \n, the whole
# tag block and the variation selectors supplement. tests/catalog/test_safety.py checks this
# class against unicodedata, so a newer Unicode that adds a format character fails a test.
_INVISIBLE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_BREAKS = re.compile("\r\n?|\x85")
_TAG_BLOCK = re.compile("[\U000e0000-\U000e007f]")
_SELECTORS = re.compile("[\U000e0100-\U000e01ef]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff]")
_TEXT_KEYS = frozenset({"description", "title"})
_EXCERPT = 80
MAX_DEPTH = 32
"""Schema nesting these functions walk; what lies deeper is left as it is (no reader goes there)."""
STRAY = 8
"""Zero-width or control characters in one text from which they count as hiding something."""


def visible(text: str) -> str:
    """``text`` without invisible and control characters; newline and tab are kept, and the
    control characters that break lines (CR, CRLF, NEL) become a newline (a bare CR would let
    later text overprint earlier text on the terminal of a person reviewing the tool)."""
    if not _INVISIBLE.search(text):
        return text
    return _INVISIBLE.sub("", _BREAKS.sub("\n", text))


def visible_schema(value: Any, depth: int = 0) -> Any:
    """A JSON schema with :func:`visible` applied to its ``description`` and ``title`` texts.

    Only the texts meant for a reader change: names, patterns, enums and defaults are what the
    upstream validates against, so they stay as published."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {k: visible(v) if k in _TEXT_KEYS and isinstance(v, str) else visible_schema(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_schema(v, depth + 1) for v in value]
    return value


def hidden_characters(text: str) -> str | None:
    """What invisible characters in ``text`` are evidence of hiding something, or None.

    Tag characters, bidi controls and variation selectors of the supplement count at once.
    Zero-width and other controls count from :data:`STRAY` on: a stray zero-width space or
    byte-order mark is a copy-paste accident in real tool descriptions, while a hidden
    message takes about eight of them per byte. A line break (CR, NEL) never counts."""
    found = _INVISIBLE.findall(text)
    if not found:
        return None
    kinds = []
    smuggled = "".join(chr(ord(c) - 0xE0000) for run in _TAGS.findall(text) for c in run)
    if smuggled:
        kinds.append(f"tag characters spelling '{_cut(smuggled)}'")
    elif _TAG_BLOCK.search(text):
        kinds.append("tag characters")
    if _BIDI.search(text):
        kinds.append("bidi controls")
    if _SELECTORS.search(text):
        kinds.append("variation selectors")
    stray = sum(c not in "\r\x85" for c in found)
    if not kinds and stray < STRAY:
        return None
    if _ZERO_WIDTH.search(text):
        kinds.append("zero-width characters")
    return f"{stray} invisible ({', '.join(kinds) or 'control characters'})"


def injection_reasons(tool: Tool) -> list[str]:
    """Why ``tool``'s metadata looks poisoned, one line per finding; [] when it does not."""
    reasons: list[str] = []
    for where, text in _texts(tool):
        hidden = hidden_characters(text)
        if hidden:
            reasons.append(f"{HIDDEN} in {where}: {hidden}")
        flat = " ".join(visible(text).split())
        for kind, pattern in _PATTERNS:
            match = pattern.search(flat)
            if match:
                reasons.append(f"{kind} in {where}: '{_cut(match.group(0))}'")
    reasons.extend(f"{HIDDEN} in {note}" for note in tool.hidden)
    return list(dict.fromkeys(reasons))


def _texts(tool: Tool) -> Iterator[tuple[str, str]]:
    """(field path, text) for every text of a tool's definition."""
    yield "name", tool.name
    if tool.title:
        yield "title", tool.title
    yield "description", tool.description
    for i, example in enumerate(tool.examples):
        yield f"examples[{i}]", example
    for field, value in (("input_schema", tool.input_schema), ("output_schema", tool.output_schema), ("annotations", tool.annotations)):
        yield from _strings(value, field, 0)


def _strings(value: Any, path: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _INVISIBLE.search(key):
                yield f"{path} (a key)", key
            yield from _strings(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]", depth + 1)


def _cut(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_SECRET_FILE = (
    r"(?:~/|\$HOME/|/home/\w+/|/root/|/Users/\w+/)?\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:passwd|shadow|sudoers)\b"
    r"|\.aws/credentials|\.(?:cursor|codeium|claude)/\S*\.json|\bmcp\.json\b|claude_desktop_config|\.netrc\b|\.npmrc\b"
    r"|\.git-credentials|\.docker/config\.json|\.kube/config|(?:~/|\./)\.env\b|\bthe \.env file|\bwallet\.dat\b"
)
_TAKE = r"\b(?:read|cat|open|load|fetch|retrieve|collect|get|grab|send|include|pass|attach|upload|copy|paste|append|embed|exfiltrat\w*|contents? of)\b"

# (kind, pattern). Each was checked against every tool of ../shared/bench: see the test's false positives.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (f"{INJECTION}: override", _p(
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
        r"(?:previous|prior|above|earlier|preceding|former|original|existing|other|system|safety|user'?s?)\s+"
        r"(?:instructions?|prompts?|rules|directives|directions|guidelines|messages|constraints|policies|requests?)")),
    (f"{INJECTION}: new role", _p(
        r"\byou are now\b(?! (?:connected|logged|authenticated|ready|able))|\bfrom now on,? (?:you|always|never|ignore)"
        r"|\bnew (?:system )?instructions\s*:|\b(?:developer|god|jailbreak|DAN) mode\b|<\|im_start\|>|\[/?INST\]")),
    (f"{INJECTION}: hidden-instruction tag", _p(
        r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|override|critical|sudo|assistant)\s*>")),
    (f"{INJECTION}: secrecy", _p(
        r"\b(?:do not|don't|never|must not|should not)\s+(?:\w+\s+)?(?:tell|inform|mention|reveal|disclose|notify|alert|show|let)\s+"
        r"(?:this\s+(?:to\s+)?|it\s+(?:to\s+)?|anything\s+(?:to\s+)?)?(?:the\s+)?(?:user|human|operator)"
        r"|\bwithout (?:telling|informing|notifying|alerting) (?:the )?(?:user|human)"
        r"|\b(?:the )?user (?:must|should|need) not (?:know|see|be told|notice|find out)"
        r"|\bkeep (?:this|it|these instructions) (?:secret|hidden|confidential|between us)"
        r"|\b(?:hide|conceal) (?:this|it|the \w+) from the user")),
    (f"{INJECTION}: system prompt", _p(
        r"\b(?:reveal|print|output|repeat|leak|send|share|include|copy|dump|return|disclose)\s+(?:\w+\s+){0,2}"
        r"(?:your|the assistant'?s|the model'?s|its own)\s+(?:full\s+|entire\s+|complete\s+|hidden\s+)?"
        r"(?:system prompt|system message|instructions|initial prompt)")),
    (f"{INJECTION}: sensitive file", _p(
        rf"{_TAKE}[^.;\n]{{0,80}}(?:{_SECRET_FILE})|(?:{_SECRET_FILE})[^.;\n]{{0,60}}\b(?:as|into|in) (?:the |a )?['\"`]?\w+['\"`]? (?:parameter|argument|field)")),
    (f"{INJECTION}: exfiltration", _p(
        r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak|mail|email)\s+(?:a\s+copy\s+of\s+)?(?:all\s+|the\s+|its\s+|their\s+|your\s+|every\s+|any\s+)?"
        r"(?:\w+\s+)?(?:contents?|conversation|chat history|history|messages|credentials|secrets?|keys?|tokens?|passwords?|env(?:ironment)? variables)\b"
        r"[^.\n]{0,60}?\bto\s+(?:https?://|[\w.+-]+@[\w-]+\.|the (?:attacker|external|remote|following))"
        r"|\b(?:curl|wget)\b[^|\n]{0,120}\|\s*(?:ba|z)?sh\b"
        r"|\b(?:include|append|add|attach|pass|put|copy)\s+(?:the\s+)?(?:entire|full|whole|complete)\s+(?:conversation|chat|message history|chat history)")),
    (f"{INJECTION}: shadowing", _p(
        r"\b(?:when|whenever|before|after|if)\s+(?:the\s+(?:user|agent|assistant)\s+)?(?:uses?|using|calls?|calling|invokes?|invoking)\s+"
        r"(?:any\s+other|another|the\s+other|other)\s+tools?\b[^.\n]{0,120}\b(?:must|always|instead|also)\b"
        r"|\b(?:all|every|any)\s+(?:emails?|messages?|payments?|transfers?)\s+(?:must|should)\s+(?:also\s+)?(?:be\s+)?(?:sent|forwarded|bcc'?d|copied|redirected|routed)\s+to\b"
        r"|\b(?:change|replace|redirect|switch)\s+(?:the\s+)?(?:recipient|destination|receiving)\s+(?:address|account|number)?\s*to\b")),
    (f"{INJECTION}: coercion", _p(
        r"\b(?:otherwise|or else)\s+(?:the\s+)?(?:tool|system|application|server)\s+will\s+(?:not work|fail|crash|break)"
        r"|\b(?:do not|don't|never)\s+(?:ask|wait)\s+(?:the\s+user\s+)?for\s+(?:\w+\s+)?(?:confirmation|approval|permission|consent)")),
)
