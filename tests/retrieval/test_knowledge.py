"""Questions the assistant answers from what it knows (retrieval/knowledge.py)."""

import pytest

from votr_mcp.retrieval.knowledge import OPERATION_FORMS, asked_of_assistant
from votr_mcp.retrieval.values import values_taken


def asked(text):
    return asked_of_assistant(text, values_taken(text)[0])


@pytest.mark.parametrize("text,operation", [
    ("what's the difference between a list and a tuple in python", "define"),
    ("What is the conceptual difference between merging and rebasing?", "define"),
    ("what does idempotent mean when people talk about REST APIs?", "define"),
    ("what does 'carpe diem' mean and where does it come from", "define"),
    ("what is the meaning of the word ubiquitous", "define"),
    ("what does HTTP stand for", "define"),
    ("how do you say 'bless you' in Portuguese?", "translate"),
    ("How would I say \"see you tomorrow\" in German", "translate"),
    ("qual è la differenza tra «perché» e «poiché»?", "define"),
    ("¿qué significa «sobremesa»?", "define"),
    ("Kannst du mir erklären, wann man „seit“ und wann „seid“ schreibt?", "define"),
    ("explique-moi simplement ce qu'est l'inflation", "define"),
    ("comment dit-on « cheers » en anglais ?", "translate"),
    ("give me a synonym for 'resilient' that sounds less corporate", "thesaurus"),
    ("what rhymes with orange?", "thesaurus"),
    ("write me a haiku about the first snow", "poem"),
    ("tell me a joke about programmers", "joke"),
    ("tell me a fun fact about octopuses", "fact"),
    ("give me some trivia about ancient Rome", "fact"),
    ("Can you write a short, funny toast for my sister's wedding?", "toast"),
    ("write an illustrated bedtime story about a shy dragon", "story"),
    ("can you help me word a polite email turning down a job offer?", "letter"),
    ("write a cover letter for a junior data analyst job", "letter"),
    ("help me word a polite text saying I'll be 10 min late to dinner", "letter"),  # the words, not a text sent
    ("how should I phrase this to my landlord without sounding rude", "letter"),
    ("write me a short bio for my LinkedIn profile, I'm a data engineer", "bio"),
    ("could you write an essay on the causes of the first world war", "essay"),
    ("come up with a catchy tagline for my bakery", "slogan"),
    ("give me three ideas for a team-building activity", "ideas"),
    ("can you suggest some gift ideas for my dad", "ideas"),
    ("give me some tips for a job interview", "ideas"),
    ("can you recommend a podcast about history", "ideas"),
    ("recommend me a good sci-fi book", "ideas"),
    ("how many ounces are in a cup", "unit"),
    ("How many feet in a mile?", "unit"),
    ("convert 5 miles to kilometers", "unit"),
    ("what's 30 celsius in fahrenheit", "unit"),
])
def test_a_question_of_meaning_or_language_asks_the_assistant(text, operation):
    assert asked(text) == operation


@pytest.mark.parametrize("text", [
    "what's the time difference between Tokyo and Berlin",  # a time tool answers it
    "what's the difference between my branch and main",  # things of the speaker's own: a tool compares them
    "what's the difference between these two files",
    "what does the error in /var/log/app.log mean",  # a file to read first
    "what does https://example.com/terms say about refunds",
    "how do I say no to my manager politely",  # no language: advice, left to the other evidence
    "how do you say it in Klingon",  # no language this module knows
    "show me what changed in the last commit",
    "was ist der Unterschied zwischen meinen beiden Dateien",  # the speaker's own files, in German too
    "write a poem and post it to our blog",  # a tool acts on what is written next
    "write a short story and save it as story.md",
    "write a summary of the meeting notes",  # no piece of writing for fun
    "tell me the status of the deploy",
    "random cat fact pls",  # no asking verb: the request names what a facts tool gives
    "write a message in #general that the deploy is done",  # a channel's tool posts messages
    "write a note titled 'Daily goals' in my Work folder",  # a notes tool keeps notes
    "write a reply to Tom's message saying I'm in",  # a message written, not worded: a tool may send it
    "give me the names of all the suppliers located in New York",  # a query, not ideas
    "list the column names for the users table",
    "give me ideas for a blog post and save them to ideas.md",  # a tool keeps what is written
    "convert 100 USD to EUR",  # a currency: its rate is looked up
    "convert 3pm EST to Tokyo time",  # a time of day: a time-zone tool converts it
    "convert report.docx to pdf",
    "how many users are in a team",  # no units
])
def test_other_requests_ask_nothing_of_the_assistant(text):
    assert asked(text) is None


def test_every_operation_has_the_words_its_tools_say():
    assert {"define", "translate", "thesaurus", "poem", "joke", "story", "toast", "riddle", "fact", "bio", "essay",
            "slogan", "ideas", "letter", "unit"} == set(OPERATION_FORMS)
    assert all(forms for forms in OPERATION_FORMS.values())
