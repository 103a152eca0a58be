"""What the assistant does from what it knows: say what a word means, how two ideas differ, how to
say something in another language, find a word for another, write a poem, a joke, a story, a toast,
a bio, an essay or a slogan, tell a fun fact, give ideas, tips or a recommendation (a book, a
podcast), word an e-mail, convert a measure ("how many ounces are in a cup", "convert 5 miles to km").

"what's the difference between a list and a tuple", "what does idempotent mean", "how do you say
'bless you' in Portuguese" and "write me a haiku about the first snow" ask for nothing a tool does
unless one says so, and a catalog's nearest words answer them: ``git_diff`` for the difference, a
time tool for "thank you for your patience". A catalog serves such a request only with a tool that
says it does it (a dictionary that gives definitions, a translator, a thesaurus, a joke or facts
API): where none of the first five ranked tools' words name it, the evidence ``verb_offered`` says
so (ranking.py), as for a specific operation the search does not offer. Questions are read in English,
and in German, French, Spanish, Italian and Portuguese for an explanation, the meaning, the
difference and how one says a thing ("qual è la differenza tra «perché» e «poiché»?"; an
explanation by the verb foreign_verbs.py reads, "erklär mir …", "spiegami …"); writing and ideas
("give me three ideas for a team-building activity", "give me some tips", offered by a tool that
gives tips or advice) are read in English.

Not read when the request points at something to read (a URL, a path: "what does this error in
/var/log/app.log mean" needs the file read first), compares things of its own ("the difference
between my branch and main", "… these two files": tools compare those), or hands what is written to
a tool next ("write a poem and post it to our blog"). Over the human-style sets of eval/queries and
the shared benchmarks, both splits, it reads 92 no-tool requests and 78 answerable ones (72 of
MetaTool's, "How do I say 'hello' in Spanish?", "Can you tell me a story using AI?", "Can you give me
some tips on caring for indoor plants?"; "tell me a corny dad joke" of human-smithery). Searched in
their catalogs, 76 of the no-tool requests lose the evidence, 48 of them on the registry and the
30-tool personal catalog, where no tool names these words; so do 4 answerable ones, of MetaTool and
MCP-Zero, whose first five tools name no such thing ("What is the meaning of the keyword ability
'trample' in MTG?", where the rules tool says neither meaning nor definition); the other 74 are
asked of a catalog whose first tools name what they ask (a translator, a story or joke tool, tips).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from votr_mcp.retrieval.foreign_verbs import foreign_verb
from votr_mcp.retrieval.intent import POLITE_START

__all__ = ["OPERATION_FORMS", "asked_of_assistant"]

OPERATION_FORMS: dict[str, frozenset[str]] = {
    "define": frozenset({"define", "definition", "meaning", "dictionary", "explain"}),
    "translate": frozenset({"translate", "translation", "translator"}),
    "thesaurus": frozenset({"synonym", "antonym", "thesaurus", "rhyme"}),
    # Writing for fun: a poem, a joke, a story, a toast, a riddle (by what the request asks for).
    "poem": frozenset({"poem", "poetry", "haiku", "limerick", "sonnet", "verse"}),
    "joke": frozenset({"joke", "pun", "humor"}),
    "story": frozenset({"story", "stories", "tale"}),
    "toast": frozenset({"toast", "speech"}),
    "riddle": frozenset({"riddle", "puzzle"}),
    "fact": frozenset({"fact", "trivia"}),
    # Writing for the user: a bio, an essay, a slogan (by what is asked for), and ideas or tips.
    "bio": frozenset({"bio", "biography"}),
    "essay": frozenset({"essay", "article", "blog", "writer", "writing"}),
    "slogan": frozenset({"slogan", "tagline", "headline", "copywriting"}),
    "ideas": frozenset({"idea", "brainstorm", "tip", "advice", "recommendation", "recommend"}),
    # Wording a message for the user to send: a tool that drafts or sends mail says so.
    "letter": frozenset({"email", "mail", "draft", "compose"}),
    # A measure in another unit ("how many ounces are in a cup"): a unit converter says units.
    "unit": frozenset({"unit", "measurement"}),
}
"""The words a tool that does each operation says it does, any of which offers it."""

_LANGUAGES = frozenset(
    "english french german spanish italian portuguese dutch swedish norwegian danish finnish polish czech "
    "russian ukrainian greek turkish arabic hebrew hindi bengali urdu chinese mandarin cantonese japanese "
    "korean thai vietnamese indonesian malay tagalog swahili latin".split())

# The same questions in German, French, Spanish, Italian and Portuguese (what X means,
# the difference between two things, how one says X), read alike.
_MEANS_ELSEWHERE = re.compile(r"\b(?:was bedeutet|was heißt|que veut dire|qu'est-ce que veut dire|que signifie|"
                              r"qué significa|que significa|cosa significa|che significa|o que significa|o que quer dizer)\b")
_DIFFERENCE_ELSEWHERE = re.compile(r"\b(?:unterschied zwischen|différence entre|difference entre|diferencia entre|"
                                   r"differenza (?:tra|fra)|diferença entre)\b(.*)")
_SAY_ELSEWHERE = re.compile(r"\b(?:wie sagt man|comment (?:dit-on|on dit)|cómo se dice|como se dice|come si dice|como se diz)\b")
_WORDS_FOR = re.compile(r"\b(?:synonyms?|antonyms?|another word) (?:for|of)\b|^\W*what (?:words? )?rhymes? with\b")
# "write me a haiku about …", "tell me a joke about programmers", "help me write a short toast for …",
# "tell me a fun fact about octopuses".
_COMPOSE = re.compile(POLITE_START + r"(?:write|compose|make up|tell|"
                      r"give|generate|create|come up with)(?: me| us)?(?: (?:a|an|some|another|one more|\d+|two|three))?"
                      r"(?: [\w,'-]+){0,3}? (poem|poetry|haiku|limerick|sonnet|joke|pun|story|tale|toast|riddle|fact|trivia|"
                      r"bio|essay|slogan|tagline)s?\b")
# "give me three ideas for a team-building activity", "come up with some name ideas for my cat".
# How many of them: "three ideas", "a few tips", "some podcasts".
_SOME = r"(?: me| us)?(?: (?:a|an|some|a few|a couple of|\d+|two|three|four|five|ten|more))?"
_IDEAS = re.compile(POLITE_START + r"(?:give|suggest|come up with|brainstorm|think of)" + _SOME +
                    r"(?: [\w'-]+){0,2}? (?:ideas?|suggestions|tips)\b")
# "can you help me word a polite email turning down a job offer?": an e-mail, a letter or an apology
# drafted or written (not a reply, a message or a note: tools that post to a channel, answer an issue
# or keep notes say those, not mail), and any message worded or phrased ("help me word a polite text
# saying I'll be late", "how should I phrase this"): asking for the words, not for a message sent.
_A_FEW_WORDS = r"(?: me| us)?(?: (?:a|an|the|my|some))?(?: [\w,'-]+){0,3}? "
_WORDING = re.compile(POLITE_START + r"(?:(?:word|phrase)" + _A_FEW_WORDS + r"(?:e-?mail|letter|apology|text|message|"
                      r"note|reply|response|post|tweet|caption)s?\b|(?:draft|compose|write)" + _A_FEW_WORDS +
                      r"(?:e-?mail|letter|apology)s?\b)|^\W*how (?:should|do|would|can|could) (?:i|we) (?:word|phrase)\b")
# Units of measure, singular and plural as written: not currencies, whose rates a tool looks up,
# nor times of day, which a time-zone tool converts.
_UNIT_WORDS = frozenset(
    "ounce ounces oz cup cups gram grams g kilogram kilograms kilo kilos kg pound pounds lb lbs stone "
    "mile miles kilometer kilometers kilometre kilometres km meter meters metre metres m foot feet ft inch "
    "inches yard yards centimeter centimeters centimetre centimetres cm millimeter millimeters mm liter liters "
    "litre litres l milliliter milliliters millilitre millilitres ml gallon gallons pint pints quart quarts "
    "tablespoon tablespoons tbsp teaspoon teaspoons tsp acre acres hectare hectares second seconds minute "
    "minutes hour hours day days week weeks year years celsius fahrenheit kelvin knots mph".split())
_HOW_MANY_IN = re.compile(r"^\W*how many (\w+) (?:are |is )?(?:there )?(?:in|per) (?:a|an|one|\d+(?:\.\d+)?) (\w+)\W*$")
_CONVERT_UNITS = re.compile(POLITE_START + r"(?:convert|what(?:'s|’s| is)) (?:\d+(?:[.,]\d+)?|a|an|one) ?"
                            r"(?:degrees )?(\w+) (?:to|into|in) (?:degrees )?(\w+)\W*$")
# "recommend a good sci-fi book", "can you suggest some podcasts about history": a tool that recommends says so.
_RECOMMEND = re.compile(POLITE_START + r"(?:recommend|suggest)" + _SOME + r"(?: [\w'-]+){0,3}? "
                        r"(?:books?|novels?|movies?|films?|shows?|series|podcasts?|albums?|songs?|games?|restaurants?)\b")
_KIND = {"poetry": "poem", "haiku": "poem", "limerick": "poem", "sonnet": "poem", "pun": "joke", "tale": "story",
         "tagline": "slogan", "trivia": "fact"}
# A piece written to be used by a tool next ("… and post it to our blog", "then save it as toast.md").
_THEN_ACTS = re.compile(r"\b(?:then|and (?:post|send|save|publish|email|share|upload|add|put|store|tweet))\b")
# A word every pattern read anywhere in the text starts with: most requests have none.
_ANYWHERE = re.compile(r"erkl|explic|explíc|expliq|spieg|verklaar|объясн|bedeut|heißt|signif|veut dire|quer dizer|unterschied|diff[ée]ren|"
                       r"diferen|sagt man|dit-on|on dit|se dic|si dice|se diz|synonym|antonym|another word|rhym")
_SAY_IN = re.compile(r"^\W*how (?:do|would|can|should|could) (?:you|i|we|one) (?:say|write)\b.*\bin ([a-z]+)\b")
_MEANS = re.compile(r"^\W*(?:what(?:'s|’s| is| does| do)\b.{0,80}?\b(?:mean|stand for)\b|what(?:'s|’s| is) the meaning of\b)")
_DIFFERENCE = re.compile(r"^\W*what(?:'s|’s| is) the (?:(?!time\b)\w+ )?difference between\b(.*)")
# What a compared thing of the speaker's own, or one at hand, is said with: tools compare those.
_AT_HAND = frozenset("the my our your their this these those both two its his her "
                     "mein meine meinem meinen meiner diese dieser diesen beiden mon ma mes ces deux "
                     "mi mis estos estas dos mio mia miei questi queste due meu minha meus estes dois".split())


def asked_of_assistant(text: str, values: Collection[str]) -> str | None:
    """The operation (a key of :data:`OPERATION_FORMS`) a request asks of the assistant's own
    knowledge or pen, or None. ``values``: the kinds of value the request gives (values.request_values)."""
    if {"url", "path"} & set(values):
        return None
    lowered = " ".join(text.lower().split())
    if _ANYWHERE.search(lowered):  # the patterns read anywhere in the text (a search's hot path: most have none)
        if _SAY_ELSEWHERE.search(lowered):
            return "translate"
        if _MEANS_ELSEWHERE.search(lowered) or foreign_verb(text) == "explain":  # "erklär mir …", "spiegami …"
            return "define"
        differ = _DIFFERENCE_ELSEWHERE.search(lowered)
        if differ is not None and not _AT_HAND.intersection(re.findall(r"\w+", differ.group(1))):
            return "define"
        if _WORDS_FOR.search(lowered):
            return "thesaurus"
    said = _SAY_IN.match(lowered)
    if said is not None:
        return "translate" if said.group(1) in _LANGUAGES else None
    if _MEANS.match(lowered):
        return "define"
    differ = _DIFFERENCE.match(lowered)
    if differ is not None and not _AT_HAND.intersection(re.findall(r"\w+", differ.group(1))):
        return "define"
    measured = _HOW_MANY_IN.match(lowered) or _CONVERT_UNITS.match(lowered)
    if measured is not None and _UNIT_WORDS.issuperset(measured.groups()):
        return "unit"
    written = _COMPOSE.match(lowered)
    kind = (_KIND.get(written.group(1), written.group(1)) if written is not None else
            "ideas" if _IDEAS.match(lowered) or _RECOMMEND.match(lowered) else
            "letter" if _WORDING.match(lowered) else None)
    return None if kind is None or values or _THEN_ACTS.search(lowered) else kind
