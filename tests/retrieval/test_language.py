"""Telling English requests from others without a model (retrieval/language.py)."""

import pytest

from votr_mcp.retrieval.language import is_english


@pytest.mark.parametrize("text", [
    "what time is it in Tokyo", "show the last 3 commits of my repository", "Wetter Berlin morgen",
    "summarize each of these: https://a.com/1 https://e.de/2 https://c.fr/3", "read notas.txt and config.de.json",
    "come over and list the open PRs per repo", "", "12345",
])
def test_english_requests_and_ones_with_no_language_read_as_english(text):
    assert is_english(text)


@pytest.mark.parametrize("text", [
    "wie spät ist es in Tokio", "¿qué hora es en Tokio?", "quelle heure est-il à Tokyo", "东京现在几点", "東京は今何時ですか",
    "сколько времени в Токио", "도쿄는 지금 몇 시야", "lee el archivo notas.txt", "mostrami gli ultimi commit del repository",
    "lees het bestand notities.txt voor mij", "pokaż mi ostatnie commity",
])
def test_requests_in_other_languages_or_scripts_do_not(text):
    assert not is_english(text)
