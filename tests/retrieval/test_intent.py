import pytest

from votr_mcp.retrieval.bulk import query_bulk
from votr_mcp.retrieval.intent import (
    clause_verb_words,
    is_question,
    opens_new,
    reads_first,
    request_action,
    text_actions,
    unwritten_verb,
    verb_words,
)
from votr_mcp.retrieval.quoted import asked_words, is_identifier, named_tools, without_quotes
from votr_mcp.retrieval.request_object import names_object, request_object
from votr_mcp.retrieval.request_words import named_first, request_words, written_whole
from votr_mcp.retrieval.rerank import QueryView, ToolView, example_actions
from votr_mcp.retrieval.values import last_reference, request_values, taken_values, values_taken
from votr_mcp.retrieval.verbs import LITERAL_OPERATIONS, specific_operations


@pytest.mark.parametrize(("words", "verbs"), [
    ("put it in the launch list", ["put", "it", "in", "the"]),
    ("read the file then delete it", ["read", "the", "then", "delete", "it"]),
    ("show the export settings", ["show", "the"]),
])
def test_the_words_after_a_determiner_name_a_thing_not_an_action(words, verbs):
    assert verb_words(words.split()) == verbs


@pytest.mark.parametrize(("text", "verbs"), [
    # a noun phrase ends with its clause: "tick that off" is still said after "my taxes,"
    ("I finally filed my taxes, tick that off", ["i", "finally", "filed", "my", "mark", "that"]),
    # a verb said not to be done is no verb of the request
    ("draft a reply but don't send it yet", ["draft", "a", "but", "don", "t", "it", "yet"]),
    ("archive it without sending", ["archive", "it", "without"]),
    # what follows a possessive is a thing, and "let's" is no possessive
    ("reply to Tom's email", ["reply", "to", "tom", "s"]),
    ("let's send it", ["let", "s", "send", "it"]),
    # the dot of a host or a file name ends no clause
    ("open docs.example.com and delete it", ["open", "docs", "example", "com", "and", "delete", "it"]),
])
def test_the_verbs_of_a_request_are_read_clause_by_clause_and_not_when_negated(text, verbs):
    assert clause_verb_words(text) == verbs


@pytest.mark.parametrize(("text", "first", "actions"), [
    ("I finally filed my taxes, tick that off in Todoist", "update", {"update"}),
    ("write up a reply to Tom's email in Gmail but don't send it yet", "create", {"create"}),
    ("customer cus_88 wants to stop paying for their plan", "delete", {"delete"}),
    ("abort the build I started", "delete", {"delete"}),
])
def test_the_actions_a_request_asks_for_leave_out_negated_verbs_and_possessed_nouns(text, first, actions):
    view = QueryView.of(text)
    assert (view.first_action, view.actions) == (first, actions)


@pytest.mark.parametrize(("text", "verb"), [
    ("npm install zod@3.23 into my frontend project", "install"),
    ("pip install requests in the venv", "install"),
    ("can you put a password on my inventory.db file", "lock"),
    ("password-protect budget.xlsx", "lock"),
    ("decompress logs-2026-11-20.gz and show me what's inside", "unzip"),
    # the speaker says what happened, then asks
    ("I misspelled someone in memory, rename the entity 'Jon Smyth'", "update"),
    # ... as its class only: a specific operation that far in is what a tool does on the way
    ("I'm planning a dinner. Can you extract the nutrition facts from this recipe?", None),
    ("I run a small shop", None),
    # a thing kept from doing something is changed; a thing running is stopped
    ("I'm heads-down today, stop my work phone line from ringing", "update"),
    ("stop the web-1 container", "run"),
])
def test_the_verb_a_request_asks_with(text, verb):
    assert QueryView.of(text).verb == verb


def test_a_package_install_and_a_decompression_are_operations_a_tool_must_name():
    assert {"install", "unzip"} <= LITERAL_OPERATIONS
    assert "unzip" in QueryView.of("decompress logs.gz").actions


def test_pressing_or_tapping_a_button_clicks_it():
    assert QueryView.of("press the Accept cookies button").first_action == "click"
    assert QueryView.of("tap the sign-in link").first_action == "click"


def test_named_tools_finds_identifiers_and_call_names_but_not_plain_words():
    names = {"git_log": [3], "browser_take_screenshot": [7], "createentities": [9]}
    assert named_tools("run git_log on the repo", names) == [3]
    assert named_tools("call playwright__browser_take_screenshot please", names) == [7]
    assert named_tools("use createEntities", names) == [9]
    assert named_tools("show me the git log", names) == []
    assert is_identifier("git_log") and is_identifier("resolve-library-id") and not is_identifier("fetch")


@pytest.mark.parametrize("text,words", [
    ("zip the reports folder for me", {"report", "folder"}),
    ("please delete these 40 promo messages from my Gmail", {"promo", "message"}),
    ("book a flight to Paris", {"flight"}),
    ("what time is it in Tokyo", set()),  # no leading verb: no object to check
    ("push", set()),
    ("send it to Tom", set()), ("move them to the archive", set()),  # a pronoun: the thing was named before
    ("delete this file", {"file"}),
])
def test_request_object_is_what_the_leading_verb_acts_on(text, words):
    assert request_object(text) == words


@pytest.mark.parametrize("pasted", ["1" * 4000, "ab1-" * 1000, "a" * 8000, "x.y" * 1500])
def test_long_unbroken_text_is_read_in_time_proportional_to_its_length(pasted):
    import time

    started = time.perf_counter()
    query_bulk(f"read {pasted} and a.txt, b.txt")
    named_tools(f"call git_log on {pasted}", {"git_log": [0]})
    assert time.perf_counter() - started < 0.5  # cubic backtracking took seconds at 800 digits, hours at 4,000
    assert query_bulk(f"read {pasted} and a.txt, b.txt") == 1 and named_tools(f"call git_log on {pasted}", {"git_log": [0]}) == [0]


@pytest.mark.parametrize("text,action", [
    ("get rid of the empty folder src/legacy/", "delete"),  # not "get", a read
    ("pull up the entry for 'Project Falcon'", "read"),
    ("please turn off dark mode", "update"),
    ("set up a table for invoices", "create"),
    ("go ahead and delete it", "delete"),  # "go" alone is filler, not "go to"
    ("go through all of these logs at once", "read"),
    ("work out 15% of 240", "run"),
    ("keep in mind that I work night shifts", "create"),
    ("don't forget that Tom owes me 20 dollars", "create"),  # not "forget", a delete
    ("please do not forget: the dentist is on Friday", "create"),
    ("tick off 'renew passport' in Todoist", "update"), ("check off the groceries task", "update"),
    ("push back my dentist appointment to Friday", "update"),  # not git's push, a specific operation
    ("reschedule tomorrow's standup to 9:30", "update"), ("put off the team lunch by a week", "update"),
    ("call off Friday's 1:1 with Sam", "delete"),  # not a call, which runs something
    ("I saved some links months ago, dig them up for me", "read"), ("track down the invoice from March", "read"),
    ("dump everything you've stored about people and projects", "read"),
    ("buzz my phone with an alert that says 'backup done'", "send"),
    ("cross it off in Todoist", "update"), ("turn it off", "update"),  # said around what it acts on
    ("take the data_steward role away from jlee", "delete"),  # said around a longer object
    ("push the weekly sync with design back to Thursday", "update"), ("throw these old logs away", "delete"),
    ("turn the kitchen lights off", "update"),
    ("read this out loud as an mp3", None),  # a voice, not a fetch: no action of a tool's class
    ("scrap the 'buy printer ink' task", "delete"), ("unsend the last message", "delete"),
    ("bump 'renew passport' to next Monday", "update"), ("shoot Tom an email saying it's signed", "send"),
    ("fire off a message to the team", "send"), ("spin up a new droplet", "create"),
    ("tear down the staging stack", "delete"), ("flip the status of rec123 to Done", "update"),
    ("favourite the Hawk Hill segment", "star"), ("kill the process on port 8080", "kill"),  # killing stays its own
])
def test_verbs_of_several_words_are_read_as_the_verb_they_mean(text, action):
    assert request_action(text) == action


@pytest.mark.parametrize("text,words", [
    # the particle belongs to a nearer verb, or to another verb's particle, or past a person or a join
    ("add these tasks: write FAQ page, set up redirects", ["add", "these", "tasks", "write", "faq", "page", "create",
                                                          "redirects"]),
    ("take everything back out of the staging area", ["take", "everything", "back", "out", "of", "the", "staging",
                                                      "area"]),
    ("add a reminder for me to pick up my dry cleaning", ["add", "a", "reminder", "for", "me", "to", "pick", "up", "my",
                                                          "dry", "cleaning"]),
    ("set the volume up", ["set", "the", "volume", "up"]),  # raised, not set up
    ("add a ClickUp task", ["add", "a", "click", "up", "task"]),  # "up" ends a name, not a particle
])
def test_a_particle_far_from_a_verb_is_read_with_it_only_around_its_object(text, words):
    assert request_words(text) == words


@pytest.mark.parametrize("text,action", [
    ("make the header row of budget.xlsx bold", "update"), ("make it private", "update"),
    ("Excel budget.xlsx: make A1:H1 bold", "update"),  # a cell range is there already
    ("make a new branch called hotfix", "create"), ("make me a folder called reports", "create"),
    ("make 3 copies of the Summary sheet", "create"),
    ("make deploy.sh executable", "chmod"), ("make old.log read-only for everyone", "chmod"),  # its mode
])
def test_to_make_a_thing_already_there_something_is_to_change_it(text, action):
    assert request_action(text) == action


@pytest.mark.parametrize("text,action", [
    # git's verbs, of a repository's things and of anything else
    ("pull the latest changes from origin", "pull"), ("push my commits to origin", "push"), ("stash my changes", "stash"),
    ("push", "push"), ("pull the details and top comments of post 1c9xk2q", "read"),
    ("pull out every open to-do item from the mind map", "read"), ("stash this link so I can read it later", "create"),
    ("push the whole spring campaign live in Contentful", None),
    # a new thing put somewhere is created; a named one is dropped, or put nowhere in particular
    ("drop a marker on the timeline here", "create"), ("drop the users table", "delete"),
    ("put a dentist appointment in my calendar", "create"), ("put my promo code into the coupon field", None),
    # start: a new thing, an -ing verb's own action, or running what follows
    ("start a new thread in the help forum", "create"), ("I want to start logging gym sessions", "create"),
    ("start flossing every day", None), ("start the dev server", "run"), ("start a basic network scan of 10.0.5.12", "run"),
    ("log a bug in Fibery: export crashes", "create"), ("log in to the admin panel", "log"),
    ("switch these 8 browser profiles to the new proxy", "update"), ("switch to the develop branch", "switch"),
    ("add two numbers together", None), ("add 5 and 7 using the test server", None), ("add a sheet called Q3", "create"),
    ("add 5 new members to the group", "create"),
    ("order the rows of sheet Leads in crm.xlsx by company name", "sort"), ("order them by date", "sort"),
    ("order a pizza by 7pm", "order"), ("order 2 tickets for Friday", "order"),
    ("load these 25 order records into the DynamoDB orders table", "create"),
    ("load airtime to phone number 0791234567", "create"), ("load package.json and tsconfig.json in one go", None),
    ("on dub.co, point the link go.acme.co/sale at https://acme.co/bf instead", "update"),  # a setting with a dot
    ("point me to the docs on routing", "read"),
])
def test_a_verb_whose_sense_turns_on_what_follows_reads_by_it(text, action):
    assert request_action(text) == action


@pytest.mark.parametrize("text", [
    "I need a book on Java programming", "I need a new laptop for college", "the checkout service started throwing 500s",
    "Grafana: the 'Checkout latency' incident is fixed, close it",
])
def test_what_follows_the_or_a_is_a_thing_not_the_verb_a_request_leads_with(text):
    assert request_action(text) is None


@pytest.mark.parametrize(("text", "action"), [
    ("I run a small shop; monthly revenue is in B2:B13 of shop.xlsx", None),  # the speaker says what they do
    ("I'm new to Notion, walk me through it", None),
    ("I just read an article on fusion", None),
    # ... and asks in the next clause: that verb is the request's, not the speaker's own
    ("I just read an article on fusion, can you find more like it?", "read"),
    ("I just printed the report, can you email it to Dana?", "send"),
    ("I want to run scripts/cleanup.py", "run"),  # asked for
    ("can I delete old.log?", "delete"),
    ("permanently delete Trello card 65a1f0c2e4b7", "delete"),  # how, then what
    ("Leave a comment on issue ENG-142 saying it shipped", "send"),
    ("compare the two research papers 2001.23456 and 2002.34567", None),  # the agent compares what tools read
    ("I need to protect the privacy of people in these images by hiding their faces", None),  # a goal, not an operation
    ("unzip archive.zip into /data", "unzip"), ("encrypt /home/me/secrets.txt", "encrypt"),  # operations a tool names
    ("accept the calendar invite from Tom", "accept"), ("approve the pending change request", "approve"),
    ("decline Priya's meeting for Friday", "decline"),  # answering what was asked of you: a tool that names it
    ("why the decline in signups since March?", None),  # a thing, not the operation
])
def test_the_verb_a_request_leads_with_is_asked_for_not_told(text, action):
    assert request_action(text) == action


def test_a_specific_operation_said_anywhere_is_one_of_the_requests_actions_when_it_names_any():
    assert specific_operations(["create", "a", "refund", "for", "the", "charge"]) == {"refund"}
    refund = QueryView.of("Create a refund for the charge ch_123 for the full amount")
    assert {"create", "refund"} <= refund.actions  # a tool named refund_charge does what it asks
    # With no action of its own read, a specific word alone makes none: no tool's action conflicts with it.
    assert QueryView.of("the fetch tool should pull https://httpbin.org/json").actions == frozenset()
    # Said after the tool to use, the verb leads: pulling a page (no git in sight) reads it.
    assert "read" in QueryView.of("use the fetch tool to pull https://httpbin.org/json").actions


def test_a_tool_does_a_request_to_read_by_extracting_or_by_its_digest_verb_and_one_to_start_by_creating():
    from votr_mcp.retrieval.rerank import ToolView

    summarize = QueryView.of("summarize each of these articles: https://a.example/1 https://b.example/2")
    assert summarize.verb == "read" and summarize.digest == "summarize"
    assert summarize.done_by(ToolView.of("summarize_multiple_urls", "web", "Give a summary of several web pages"))
    assert not summarize.done_by(ToolView.of("send_email", "mail", "Send an email to a recipient"))
    pull = QueryView.of("pull the name and price from these pages: shop.io/p/1 shop.io/p/2")
    assert pull.verb == "read" and pull.done_by(ToolView.of("extract_data", "web", "Extract structured data from pages"))
    assert not QueryView.of("hello there").done_by(ToolView.of("get_weather", "weather", "Current weather"))
    assert not QueryView.of("把这段话翻译成日语：我们下周一开会").begun  # a verb read in another language, no English words
    begun = QueryView.of("start a conversation with the support bot")  # runs or creates it
    assert begun.verb == "run" and begun.done_by(ToolView.of("create_conversation", "chat", "Create a conversation"))
    assert begun.done_by(ToolView.of("start_session", "chat", "Start a chat session"))
    assert not QueryView.of("run the nightly job").done_by(ToolView.of("create_job", "ci", "Create a job"))


def test_an_english_word_a_name_is_built_on_is_no_verb_in_a_request_in_another_language():
    assert QueryView.of("リビングのSwitchBotプラグをオフにして").verb is None  # "switch" is only the name's start
    assert QueryView.of("把改动 push 到 origin").verb == "push"  # written as a word of its own
    assert written_whole("把改动 push 到 origin", "push") and not written_whole("SwitchBotの湿度", "switch")


@pytest.mark.parametrize("objects,words,named", [
    ({"homepage"}, {"page", "screenshot"}, True), ({"spreadsheet"}, {"sheet"}, True), ({"filename"}, {"file"}, True),
    ({"file"}, {"file", "read"}, True), ({"file", "path"}, {"sheet", "note"}, False),
    ({"branch"}, {"cell", "range"}, False), ({"cat"}, {"catalog"}, False),  # a tool's longer word is not the object
    (set(), {"page"}, False),
    ({"dentist", "appointment"}, {"updat", "calendar", "event"}, True),  # a kind of event
    ({"standup"}, {"event"}, True),
    ({"lunch"}, {"recip", "meal"}, False),
])
def test_a_tool_names_what_a_request_acts_on_by_a_word_or_a_part_of_one(objects, words, named):
    assert names_object(objects, words) is named


@pytest.mark.parametrize("text,action", [
    ("transition PAY-311 to Done", "update"), ("shift the task 'Update pricing FAQ' to Sprint 14", "update"),
    ("renew my domain for another year", "update"), ("raise a quote for Harbor Dental", "create"),
])
def test_verbs_of_workflow_tools_read_as_their_action(text, action):
    assert request_action(text) == action


@pytest.mark.parametrize("text,kinds", [
    ("grab the README of github.com/pallets/flask", {"url"}),
    ("email the slides to jenna@northwind.io", {"email"}),  # an address, not a web site
    ("my meeting is at 4pm Paris time, when is that in New York", {"time"}),
    ("what does docs/v2/api.md say about rate limits?", {"path", "file"}),  # a path that names a file
    ("save https://example.com/pricing as notes/pricing.md", {"url", "path", "file"}),
    ("show the log of /home/lee/api", {"path"}),  # a folder's
    ("what time is it in Tokyo", set()),
    ("upgrade numpy to 1.26.4", set()),  # a version is no address
    ("who is 185.199.108.153 registered to?", {"ip"}),
    ("how bad is CVE-2023-4863?", {"cve"}),
    ("text Jonas at +49 1512 3456789 that I'm late", {"phone"}),
    ("how high above sea level is 46.5763, 7.9904?", {"coordinates"}),
    ("is 0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D a contract or a wallet?", {"chain_address"}),
    ("is example-shop.de down for everyone?", {"url"}),
    ("what's 17.5% of 2,340?", set()),
    ("merge A1:D1 on the Summary sheet", {"cells"}),  # a spreadsheet range
    ("the client wants the Q3 numbers on A4 paper", set()),  # a lone cell-like word is no range
    ("wrap up the staged changes with the message 'fix typo'", {"message"}),  # a text to pass on, for a message
    ("text Bob saying \"on my way\"", {"message"}),
    ("find the emails with the subject 'Meeting Notes'", set()),  # a subject as often filters as it is sent
])
def test_request_values_are_the_kinds_of_value_a_request_hands_over(text, kinds):
    assert request_values(text) == kinds


def test_a_path_of_several_folders_is_one_value_and_names_no_action():
    assert values_taken("delete the folder /tmp/build_cache now") == (frozenset({"path"}), "delete the folder valuemark  now")
    assert last_reference("list ~/notes/2024/ please") == "~/notes/2024/"
    view = QueryView.of("delete the folder /tmp/build_cache")  # the path builds nothing
    assert view.verb == "delete" and view.actions == {"delete"}
    assert QueryView.of("delete the folder build_cache and build the app").actions == {"delete", "create"}
    # The value is what the verb acts on: what follows its preposition is not.
    assert QueryView.of("sort crm.xlsx by company name").objects == {"file", "path"}


def test_taken_values_read_a_tools_parameter_names_and_descriptions():
    assert taken_values("url URL to fetch max length Maximum number of characters") == {"url"}
    assert taken_values("source timezone Source IANA timezone name time Time to convert in 24-hour format") == {"time"}
    assert taken_values("timezone IANA timezone name") == set()
    assert taken_values("domain The domain name to look up, e.g. example.com") == {"url"}  # a bare host reads as a site
    assert taken_values("cve_id CVE identifier") == {"cve"}
    assert taken_values("latitude Latitude longitude Longitude") == {"coordinates"}
    assert taken_values("range Cell range, e.g. A1:C10") == {"cells"}
    # A path parameter takes a file unless it is a folder's: git_show's repository is no file to read.
    assert taken_values("path Path of the file to read") == {"path", "file"}
    assert taken_values("repo_path revision") == {"path"}


@pytest.mark.parametrize("text,asks", [
    ("who changed the payment module recently", True),
    ("what did I change since the last add?", True),
    ("anything uncommitted lying around in the project", True),
    ("please list my files", False),
    ("could you delete the old branch", False),  # polite filler, then an order
])
def test_a_question_is_told_apart_from_an_order(text, asks):
    assert is_question(text) is asks


def test_a_question_reads_whatever_verb_it_uses():
    from votr_mcp.retrieval.rerank import QueryView

    asked = QueryView.of("what did I change since the last add?")
    assert asked.first_action == "read" and asked.actions == {"read"}
    ordered = QueryView.of("could you delete the old branch?")  # a request put as a question keeps its verb
    assert ordered.verb == "delete" and "delete" in ordered.actions


@pytest.mark.parametrize("text,reads", [
    ("summarize the article at https://blog.example.org/post/9", True),
    ("translate notes/meeting.md into German", True),
    ("summarize our chat so far", False),  # nothing to read first
    ("fetch https://example.com", False),  # already a reading verb
])
def test_digesting_a_page_or_a_file_needs_it_read_first(text, reads):
    assert reads_first(request_words(text), request_values(text)) is reads


def test_a_request_to_summarize_a_page_reads_it():
    from votr_mcp.retrieval.rerank import QueryView

    view = QueryView.of("summarize https://blog.example.org/post/9")
    assert view.verb == "read" and {"read", "run"} <= view.actions


def test_opening_a_ticket_creates_it_and_opening_a_file_reads_it():
    assert request_action("open an issue about the login bug") == "create"
    assert request_action("open notes.txt") == "read"
    assert opens_new(["a", "new", "ticket"]) and not opens_new(["the", "pull", "request", "page"])


def test_a_tool_described_by_a_verbs_ing_form_does_that_action():
    assert "stage" in text_actions("git_add", "Adds file contents to the staging area")
    assert "push" in text_actions("sync", "Pushing local commits to the remote")


def test_names_and_quantifiers_are_no_kind_of_object():
    assert request_object("forget everything about Bob") == set()
    assert request_object("Email Bob the report") == {"report"}


def test_word_matching_reads_neither_quotes_nor_the_how_many_of_a_count():
    assert asked_words("how many docs have status 'pending'?").split() == ["docs", "have", "status", "?"]
    # a weekday is a date, Monday.com a service
    assert asked_words("send the deck Monday, or by Tuesdays at the latest").split() == [
        "send", "the", "deck", ",", "or", "by", "at", "the", "latest"]
    assert "Monday.com" in asked_words("on Monday.com, move 'Homepage copy' to Done")


def test_word_matching_reads_a_file_path_as_its_kind_only():
    # "read docs/commit-guide.md" asks to read a Markdown file, not for a commit.
    assert asked_words("read docs/commit-guide.md").split() == ["read", "md"]
    assert asked_words("go through logs/app-1.log and ~/voice/memo_0412.mp3").split() == ["go", "through", "log", "and", "mp3"]
    assert asked_words("delete /tmp/build_cache now").split() == ["delete", "now"]
    assert asked_words("grab https://github.com/a/b/README.md").split() == ["grab", "https://github.com/a/b/README.md"]


def test_the_name_given_to_a_new_thing_and_new_itself_are_no_object():
    assert request_object("add a sheet named 'Forecast 2025' to plan.xlsx") == {"sheet"}
    assert request_object("create a project called Kitchen") == {"project"}
    assert request_object("make a folder titled reports") == {"folder"}
    assert request_object("create a new repository") == {"repository"}


def test_a_statement_or_a_file_name_is_no_kind_of_object():
    assert request_object("remember that my dentist is Dr. Kim") == set()
    assert request_object("delete that file") == {"file"}  # "that" names the thing here
    assert request_object("delete the file old_notes.txt") == {"file"}  # not "old", "note"


@pytest.mark.parametrize(("text", "verb"), [
    ("forget everything about Bob", "delete"), ("please get rid of the empty folder", "delete"),
    ("empty the trash folder at /home/ana/.Trash", "delete"),
    ("don't forget that Tom owes me 20 dollars", "remember"),
    ("jot down that the meeting moved", "create"), ("turn off logging", "disable"),
    ("shift the task 'Update FAQ' from Backlog over to Sprint 14", "move"),
    ("delete the file", None),  # written plainly
    ("tell me the time in Tokyo", None), ("grab the page", None),  # reading's many words name no tool
    ("what is a closure", None),
])
def test_the_plain_verb_a_request_means_but_does_not_write(text, verb):
    assert unwritten_verb(text) == verb


def test_a_file_the_request_names_makes_a_file_its_object():
    from votr_mcp.retrieval.rerank import QueryView

    assert {"file", "path"} <= QueryView.of("stage a.py").objects
    assert "file" not in QueryView.of("stage everything").objects


def test_a_service_named_before_a_colon_is_not_read_as_the_verb():
    assert request_words("ClickUp: create all of these in one go")[:2] == ["create", "all"]  # not "click", "up"
    assert request_action("Airtable: add Priya Shah to the Leads table") == "create"
    assert request_words("fetch https://example.com")[0] == "fetch"


def test_a_setting_a_request_opens_with_is_not_read_as_the_verb():
    assert request_action("In Excel, add a sheet named 'Forecast 2025' to plan.xlsx") == "create"
    assert request_action("On Discord, put a thumbs up on message 1182736450019283") == "create"
    assert request_words("with git, show me the log")[:2] == ["show", "me"]
    assert request_action("In my opinion, this is fine") is None  # a setting, then no order
    assert request_action("use Firecrawl to scrape https://docs.stripe.com into markdown") == "read"
    assert request_action("Use the GitHub MCP to open an issue about the broken login") == "create"
    assert request_words("use 2 spaces for indentation")[0] == "use"  # no service and "to": use is the verb


@pytest.mark.parametrize(("text", "action"), [("proofread this: their going to the store tomorow", "proofread"),
                                              ("summarise the following: the committee met on Tuesday", "run")])
def test_what_a_request_points_at_before_a_colon_is_no_service(text, action):
    assert named_first(text) is None
    assert request_action(text) == action


def test_what_a_request_quotes_is_data_not_what_it_asks():
    assert without_quotes("create a task 'Update pricing page' in ClickUp").split() == ["create", "a", "task", "in", "ClickUp"]
    assert without_quotes("I'm sure Messi's club is 'Inter Miami'").startswith("I'm sure Messi's club is")
    assert "git_log" in without_quotes("run 'git_log' on my repo")  # a quoted identifier names a tool
    # An apostrophe inside a word does not end the span ("we'll"), so its words are not the request's.
    quoted = "read this out loud: 'Welcome, we'll start in five minutes.'"
    assert without_quotes(quoted).split() == ["read", "this", "out", "loud:"]


def test_a_message_written_without_quotes_is_data_too_but_saying_elsewhere_is_not():
    # After "saying" in a clause that names a message or a sending, to the end of that clause.
    assert without_quotes("send a Slack message to #ops saying the deploy is done").split() == [
        "send", "a", "Slack", "message", "to", "#ops"]
    assert without_quotes("comment on ENG-142 saying the fix went out in v2.3.1, then close it").split() == [
        "comment", "on", "ENG-142", ",", "then", "close", "it"]
    # After a label, to the end of the line.
    assert without_quotes("mail bob@acme.com, body: please create an issue\nthanks").split() == ["mail", "bob@acme.com,", "thanks"]
    for kept in ("what's the clock saying in Kathmandu right now?", "the server keeps saying my API key is missing",
                 "what are people saying in the comments on this video"):
        assert without_quotes(kept) == kept


def test_booking_is_its_own_operation_and_reserving_is_booking():
    assert request_action("book a flight to Paris") == "book"
    assert request_action("reserve a table for two at 8") == "book"
    assert "book" in text_actions("create_booking", "Creates a booking for a hotel room")  # no conflict with it


@pytest.mark.parametrize("text,verb", [
    ("git clone https://github.com/psf/requests into ~/src", "clone"),
    ("git stash my changes", "stash"),
    ("please git push my branch", "push"),
    ("git log for the last two weeks", None),  # the log it reads (a question or a noun, as "show the git log")
    ("git repositories I cloned last week, list them", None),  # the program names a thing here
])
def test_a_program_named_before_its_operation_leads_with_that_operation(text, verb):
    assert request_action(text) == verb


def test_a_tool_does_what_its_example_requests_lead_with_but_an_action_class_only_by_its_own_text():
    examples = ("undo git add", "unstage everything I added", "can you clear out everything I've staged so far?",
                "lösche alles aus dem Index")  # (another language's verbs are read by foreign_verbs, not here)
    assert example_actions(examples) == {"undo", "unstage"}  # not "delete": a class is read from the tool's own text
    reset = ToolView.of("git_reset", "git", "Unstages all staged changes", examples=examples)
    assert "undo" in reset.does and "delete" not in reset.does
