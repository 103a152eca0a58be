"""Speech to text or text to speech: which way a request turns speech, and which way a tool does.

"Read this out loud as an mp3" and "get me the words of this voice memo as text" share every
word that matters to a similarity search (audio, voice, text, speech), and the nearest tools of a
big catalog are those of the other direction as often as not: a transcriber for the first, a voice
list for the second. Read here: a request asks for speech turned into text (a transcript, "what was
said", "the words" of a recording or a video) or for text turned into speech ("out loud", "as an
mp3", "into audio"), and a tool says which of the two it does in its name or its description's
start (transcribe, speech-to-text, whisper; text-to-speech, TTS, generate audio, voices). Music
("this ABC notation into audio") is neither. On the dev rows of our sets and the shared benchmarks,
putting the first tool of the asked direction first (among the first five, when the leading tool
does not do it) won 20 top-1 rows and lost 1: human-mcpzero's three (paraphrase .681 -> .745) and
MetaTool's 17 (speechki for "turn my blog into audio", buildbetter for meeting transcripts), against
MetaTool's "earnings call transcripts", a financial document. No other set's dev figure moves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["TO_SPEECH", "TO_TEXT", "request_direction", "speech_first", "tool_direction"]

TO_TEXT = "to text"
TO_SPEECH = "to speech"

# What is spoken or recorded: the source a request wants as text.
_MEDIA = re.compile(r"\b(?:audio|voice|recording|memo|podcast|video|talk|speech|lecture|interview|mp3|m4a|wav|ogg|flac|"
                    r"youtube|youtu\.be|watch\?v=)", re.IGNORECASE)
_AS_TEXT = re.compile(r"\b(?:speech[- ]to[- ]text|what (?:was|is|were|they|he|she|i|we) (?:said|saying|says)|the words|"
                      r"as text|into text|to text|in writing|written (?:down|out)|subtitles?|captions?|dictat\w*)\b",
                      re.IGNORECASE)
_TRANSCRIBED = re.compile(r"\btranscri", re.IGNORECASE)
_AS_SPEECH = re.compile(r"\b(?:out loud|aloud|read (?:it |this |that )?(?:out|to me)|text[- ]to[- ]speech|tts|"
                        r"narrat\w*|voice[- ]?over|as (?:an? )?(?:mp3|audio|wav|voice (?:note|message)|spoken)|"
                        r"into (?:an? )?(?:mp3|audio|speech)|speak (?:it|this|that))\b", re.IGNORECASE)
_MUSIC = re.compile(r"\b(?:music|notation|midi|melody|melodies|song|songs|chords?|tune|abc)\b", re.IGNORECASE)

_TOOL_TO_TEXT = re.compile(r"transcri|speech[- _]to[- _]text|\bstt\b|whisper|audio[- _]to[- _](?:text|markdown)|"
                           r"recogni[sz]\w* speech|speech recognition", re.IGNORECASE)
_TOOL_TO_SPEECH = re.compile(r"text[- _]to[- _]speech|\btts\b|generate[_ -]audio|\bspeak\b|"
                             r"synthesi[sz]\w* (?:speech|voice|audio)|voice generation|narrat|\bvoices?\b",
                             re.IGNORECASE)
# A cheap test first: most tools say none of these.
_SPOKEN = ("transcri", "speech", "stt", "whisper", "audio", "tts", "speak", "synthesi", "voice", "narrat", "recogni")
_READ_OF_DESCRIPTION = 200  # characters: what a tool does is said at its description's start


def request_direction(text: str) -> str | None:
    """:data:`TO_TEXT` when a request asks for speech as text (a transcript, "the words" or "what was
    said" of a recording, a talk or a video), :data:`TO_SPEECH` when it asks for text as speech
    ("read this out loud", "as an mp3", "turn this article into audio"), None otherwise or both."""
    to_text = bool(_TRANSCRIBED.search(text)) or (bool(_AS_TEXT.search(text)) and bool(_MEDIA.search(text)))
    to_speech = bool(_AS_SPEECH.search(text)) and not _MUSIC.search(text)
    return TO_TEXT if to_text and not to_speech else TO_SPEECH if to_speech and not to_text else None


def tool_direction(name: str, description: str) -> str | None:
    """Which way a tool turns speech, by its name and its description's start; None for neither or both."""
    said = f"{name} {description[:_READ_OF_DESCRIPTION]}"
    lowered = said.lower()
    if not any(word in lowered for word in _SPOKEN):
        return None
    to_text, to_speech = bool(_TOOL_TO_TEXT.search(said)), bool(_TOOL_TO_SPEECH.search(said))
    return TO_TEXT if to_text and not to_speech else TO_SPEECH if to_speech and not to_text else None


def speech_first(text: str, ranked: list[int], directions: Sequence[str | None], window: int) -> list[int]:
    """``ranked`` with the first tool turning speech the way the request asks moved to the front, when it
    is among the first ``window`` and the leading tool does not turn it that way."""
    if not any(directions[i] for i in ranked[:window]):
        return ranked  # (most searches: no tool of the head turns speech, and the request is not read)
    asked = request_direction(text)
    if asked is None or directions[ranked[0]] == asked:
        return ranked
    found = next((i for i in ranked[1:window] if directions[i] == asked), None)
    if found is None:
        return ranked
    return [found] + [i for i in ranked if i != found]
