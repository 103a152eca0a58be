"""Is a request written in English? Read from its script and its function words, without a model.

The dense list sums two models' cosines: MiniLM reads English only, multilingual USE reads 16
languages in one space. For a request in another language MiniLM's cosine is noise that halves
USE's signal, so such a request is scored by USE alone (dense_scores.py). Telling the language apart
needs no language-identification model for that: a request mostly in a non-Latin script (Chinese,
Japanese, Korean, Cyrillic, Arabic, Greek, Hebrew, Devanagari, Thai...) is not English, and a
Latin-script one is not English when more of its words are another language's function words
("der", "une", "los", "della", "het", "jeg", "się"...) than English ones. Short requests with
neither ("Wetter Berlin morgen") read as English, as before.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["is_english"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ENGLISH = frozenset("""
the a an and or of to in on for with from by at is are was were be been it its this that these those
what which who whom where when why how my your our their me you we they he she i please can could
would should will do does did not no all any some each every there here than then also just
""".split())
# Frequent function words of each language, minus any that are also English words or common in
# English requests ("a", "in", "die", "do", "me", "no", "per", "come", "van", "var", "os", "en").
_OTHER = frozenset("""
der das und ist nicht mit sich des dem den ein eine einen einem auf für von zu im bitte mir mich wie
was wer wo meine meinen mein ich du sie wir ihr bis oder aber noch schon auch nach bei aus ob dass
de à el la los las del que por para con una uno unos unas lo mi mis tu sus es está están pero como qué
cuál cuáles dónde cuándo hay muy ya este esta estos estas ese esa por favor también al
le les du et est une un pour avec dans sur pas ne qui quoi mon ma mes ton ta tes vous nous je il elle
ils elles ce cette ces leur leurs où quand comment au aux ça très moi toi
il lo gli della delle dei degli di che con non una uno sono è sul sulla nel nella mio mia miei
le hai questo questa quello quella quando perché anche ancora dammi
da dos das uma não com para pelo pela meu minha meus minhas você é são está estão isso
este esta aquilo onde quando como também ainda por favor
het een ik je jij wij zij niet met voor op dat dit deze zijn mijn wat waar hoe ook nog
och att det som för med inte jag du vi ni min mitt mina är på av till hur vad också
og ikke jeg er til på som med af for hvad hvor hvordan også
się nie jest na z do że co jak czy mój moja moje ja ty tak dla przez od
bir ve ile için bu şu ne nasıl nerede lütfen benim
yang di dengan untuk itu tidak saya aku dari ke bisa tolong
""".split()) - _ENGLISH - {"die"}

_NON_LATIN = 0.3  # share of letters outside the Latin script above which a request is not English
_SHORT = 8  # words: a request this short with one foreign function word and no English one is not English
# URLs, e-mail addresses and paths carry words of no language ("example.de", "notas.txt").
_NOT_PROSE = re.compile(r"\S*[/@\\]\S*|\S+\.[A-Za-z0-9]{1,5}\b")


def is_english(text: str) -> bool:
    """Whether a request reads as English (see the module docstring)."""
    text = _NOT_PROSE.sub(" ", text)
    if not text.isascii():  # (an ASCII text has no letter outside the Latin script: at 100k tools
        # a long task's texts are read here some 16 times a search, letter by letter 2 ms of it)
        letters = [c for c in text if c.isalpha()]
        if not letters:
            return True
        foreign_script = sum(1 for c in letters if not _latin(c))
        if foreign_script >= _NON_LATIN * len(letters):
            return False
    words = [w.lower() for w in _WORD.findall(text)]
    other = sum(w in _OTHER for w in words)
    english = sum(w in _ENGLISH for w in words)
    return not (other >= 2 and other > english) and not (other == 1 and english == 0 and len(words) <= _SHORT)


def _latin(c: str) -> bool:
    if c.isascii():
        return True
    try:
        return unicodedata.name(c).startswith("LATIN")
    except ValueError:
        return False
