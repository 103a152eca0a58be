"""Which way a request and a tool turn speech (retrieval/speech.py)."""

import pytest

from votr_mcp.retrieval.speech import TO_SPEECH, TO_TEXT, request_direction, speech_first, tool_direction


@pytest.mark.parametrize("text,direction", [
    ("read this out loud as an mp3 for me: 'Welcome, we'll start in five minutes.'", TO_SPEECH),
    ("turn this article into audio so I can listen while jogging", TO_SPEECH),
    ("I have a voice memo at ~/Recordings/standup.m4a, can you get me the words as text", TO_TEXT),
    ("grab what was said in this YouTube video: youtube.com/watch?v=xyz", TO_TEXT),
    ("transcribe meeting.mp3", TO_TEXT),
    ("convert this ABC music notation into audio", None),  # music is neither
    ("send the text of this message as text", None),  # nothing spoken
    ("what time is it in Tokyo", None),
])
def test_a_request_asks_for_speech_as_text_or_text_as_speech(text, direction):
    assert request_direction(text) == direction


@pytest.mark.parametrize("name,description,direction", [
    ("audio-to-markdown", "Convert an audio file to markdown via transcription", TO_TEXT),
    ("use whisper-large-v3-turbo", "Transcribe audio with Whisper", TO_TEXT),
    ("generate_audio_simple", "Generate audio from plain text using default voice settings", TO_SPEECH),
    ("list_voices", "List the voices available", TO_SPEECH),
    ("get_weather", "Current weather for a city", None),
])
def test_a_tool_says_which_way_it_turns_speech(name, description, direction):
    assert tool_direction(name, description) == direction


def test_the_first_tool_turning_speech_the_asked_way_leads():
    directions = [TO_TEXT, None, TO_SPEECH, TO_SPEECH]
    assert speech_first("read this out loud as an mp3", [0, 1, 2, 3], directions, 5) == [2, 0, 1, 3]
    assert speech_first("read this out loud as an mp3", [2, 0], directions, 5) == [2, 0]  # it leads already
    assert speech_first("read this out loud as an mp3", [0, 1, 2], directions, 2) == [0, 1, 2]  # past the window
    assert speech_first("what time is it", [0, 2], directions, 5) == [0, 2]  # nothing asked
