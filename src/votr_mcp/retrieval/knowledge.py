"""Questions the assistant answers from what it knows: what a word means, how two ideas differ, how
to say something in another language, a word for another.

"what's the difference between a list and a tuple", "what does idempotent mean" and "how do you
say 'bless you' in Portuguese" lead with no verb a tool does, so no operation check reads them,
and a catalog's nearest words answer them: ``git_diff`` for the difference, a time tool for
"thank you for your patience". A catalog serves such a question only with a tool that says it does
it (a dictionary that gives definitions, a translator, a thesaurus): where no tool's words name it,
the evidence ``verb_offered`` says so (ranking.py), as for a specific operation the catalog does not
offer. Read in English, and in German, French, Spanish, Italian and Portuguese for the meaning,
the difference and how one says a thing ("qual è la differenza tra «perché» e «poiché»?").

Not read when the request points at something to read (a URL, a path: "what does this error in
/var/log/app.log mean" needs the file read first) or compares things of its own ("the difference
between my branch and main", "… these two files": tools compare those). Over the human-style sets
of eval/queries and the shared benchmarks, both splits, it reads 36 no-tool requests and 24
answerable ones (22 of MetaTool's, one each of human-metatool and human-toolbench: "How do I say
'hello' in Spanish?", "what does the word 'ephemeral' mean"). Those answerable ones are asked of
catalogs with a translator and a dictionary, so nothing changes there; on the registry and the
30-tool personal catalog, where no tool names these words, 24 no-tool requests lose the evidence
(16 of them dev rows, of which 7 were answered).
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["OPERATION_FORMS", "asked_of_assistant"]

OPERATION_FORMS: dict[str, frozenset[str]] = {
    "define": frozenset({"define", "definition", "meaning", "dictionary", "explain"}),
    "translate": frozenset({"translate", "translation", "translator"}),
    "thesaurus": frozenset({"synonym", "antonym", "thesaurus", "rhyme"}),
}
"""The words a tool that does each operation says it does, any of which offers it."""

_LANGUAGES = frozenset(
    "english french german spanish italian portuguese dutch swedish norwegian danish finnish polish czech "
    "russian ukrainian greek turkish arabic hebrew hindi bengali urdu chinese mandarin cantonese japanese "
    "korean thai vietnamese indonesian malay tagalog swahili latin".split())

# The same questions in German, French, Spanish, Italian and Portuguese (what X means, the difference
# between two things, how one says X), read alike.
_MEANS_ELSEWHERE = re.compile(r"\b(?:was bedeutet|was heißt|que veut dire|qu'est-ce que veut dire|que signifie|"
                              r"qué significa|que significa|cosa significa|che significa|o que significa|o que quer dizer)\b")
_DIFFERENCE_ELSEWHERE = re.compile(r"\b(?:unterschied zwischen|différence entre|difference entre|diferencia entre|"
                                   r"differenza (?:tra|fra)|diferença entre)\b(.*)")
_SAY_ELSEWHERE = re.compile(r"\b(?:wie sagt man|comment (?:dit-on|on dit)|cómo se dice|como se dice|come si dice|como se diz)\b")
_WORDS_FOR = re.compile(r"\b(?:synonyms?|antonyms?|another word) (?:for|of)\b|^\W*what (?:words? )?rhymes? with\b")
_SAY_IN = re.compile(r"^\W*how (?:do|would|can|should|could) (?:you|i|we|one) (?:say|write)\b.*\bin ([a-z]+)\b")
_MEANS = re.compile(r"^\W*(?:what(?:'s|’s| is| does| do)\b.{0,80}?\bmean\b|what(?:'s|’s| is) the meaning of\b)")
_DIFFERENCE = re.compile(r"^\W*what(?:'s|’s| is) the (?:(?!time\b)\w+ )?difference between\b(.*)")
# What a compared thing of the speaker's own, or one at hand, is said with: tools compare those.
_AT_HAND = frozenset("the my our your their this these those both two its his her "
                     "mein meine meinem meinen meiner diese dieser diesen beiden mon ma mes ces deux "
                     "mi mis estos estas dos mio mia miei questi queste due meu minha meus estes dois".split())


def asked_of_assistant(text: str, values: Collection[str]) -> str | None:
    """The operation (a key of :data:`OPERATION_FORMS`) a question asks of the assistant's own
    knowledge, or None. ``values``: the kinds of value the request gives (values.request_values)."""
    if {"url", "path"} & set(values):
        return None
    lowered = " ".join(text.lower().split())
    said = _SAY_IN.match(lowered)
    if said is not None:
        return "translate" if said.group(1) in _LANGUAGES else None
    if _SAY_ELSEWHERE.search(lowered):
        return "translate"
    if _MEANS.match(lowered) or _MEANS_ELSEWHERE.search(lowered):
        return "define"
    differ = _DIFFERENCE.match(lowered) or _DIFFERENCE_ELSEWHERE.search(lowered)
    if differ is not None and not _AT_HAND.intersection(re.findall(r"\w+", differ.group(1))):
        return "define"
    if _WORDS_FOR.search(lowered):
        return "thesaurus"
    return None
