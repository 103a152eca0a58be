"""What a phone or a smart home does (retrieval/everyday.py): read by what is asked, not by a word in passing."""

import pytest

from votr_mcp.retrieval.everyday import EVERYDAY_FORMS, everyday_operation


@pytest.mark.parametrize("text,operation", [
    ("set an alarm for 7am", "alarm"),
    ("can you wake me up at 6:30 tomorrow", "alarm"),
    ("stell einen Wecker für 7 Uhr", "alarm"),
    ("내일 아침 7시에 알람 맞춰줘", "alarm"),
    ("start a 25 minute timer", "timer"),
    ("start a stopwatch, I'm timing my run", "timer"),
    ("mets un minuteur de 20 minutes pour les pâtes", "timer"),
    ("给我定一个10分钟的计时器", "timer"),
    ("remind me to water the plants on Sunday", "reminder"),
    ("please set a reminder for my dentist appointment", "reminder"),
    ("can you help me set up a call reminder for an important meeting?", "reminder"),  # a reminder, not the call
    ("schedule a call with Priya on Thursday at 2pm", "calendar"),
    ("put the team dinner on my calendar for next Friday", "calendar"),
    ("turn off the lights in the living room", "lights"),
    ("dim the bedroom lamp to 30%", "lights"),
    ("allume la lumière du salon", "lights"),
    ("把客厅的灯关掉", "lights"),
    ("set the thermostat to 21 degrees", "heating"),
    ("turn the heating up a bit", "heating"),
    ("set the AC to 22", "heating"),
    ("what's the weather going to be like tomorrow in Berlin", "weather"),
    ("will it rain in London this weekend?", "weather"),
    ("do I need an umbrella in Lisbon on Friday?", "weather"),
    ("Wie wird das Wetter morgen in Hamburg?", "weather"),
    ("明日の東京の天気は？", "weather"),
])
def test_an_everyday_request_is_read_by_what_it_asks(text, operation):
    assert everyday_operation(text) == operation


@pytest.mark.parametrize("text", [
    "make me a folder projects/weather-app/src",  # a path names no weather
    "In Excel, add a sheet called 'Forecast 2026' to /data/budget.xlsx",  # a title, a file
    "make the header row in report.xlsx bold with a light grey background",  # a colour, not a lamp
    "switch the page to a light theme",
    "add Blinding Lights by The Weeknd to my workout playlist",  # a song
    "Can you please remind me of the date of the upcoming meeting?",  # tell again, not remind later
    "what is a timer in javascript",  # a question about a word
    "looking for preprints on graph neural nets for weather prediction",  # a topic, not a forecast
    "stop my running Clockify timer",  # a time tracker's own timer (its tool says so)
    "give me the race's details, including the circuit, race distance, and weather forecast",  # one item of many
    "what time is it in Tokyo",
])
def test_a_word_said_in_passing_asks_for_nothing(text):
    assert everyday_operation(text) is None


def test_every_operation_has_the_words_its_tools_say():
    assert {"alarm", "timer", "reminder", "calendar", "lights", "heating", "weather"} == set(EVERYDAY_FORMS)
    assert all(forms for forms in EVERYDAY_FORMS.values())
    assert not {"light", "device"} & EVERYDAY_FORMS["lights"]  # a browser's light colour scheme and device
