"""Well-known services a request acts on, and whether the catalog has them (retrieval/services.py)."""

from votr_mcp.catalog import Tool, default_registry_path, load_catalog
from votr_mcp.index.bm25 import BM25Index
from votr_mcp.index.text import tool_lexical_text
from votr_mcp.index.tokenize import tokenize
from votr_mcp.retrieval.rerank import QueryView
from votr_mcp.retrieval.services import named_services, service_offered, services


def test_a_service_is_read_where_the_action_happens_not_where_it_is_a_topic():
    assert named_services("play the new Taylor Swift album on Spotify") == ["Spotify"]
    assert named_services("book me an Uber home") == ["Uber"]
    assert named_services("add lunch with Sam to my Google Calendar") == ["Google Calendar"]
    assert named_services("Venmo Chris 12 dollars for the tickets") == ["Venmo"]  # the service as the verb
    assert named_services("order sushi through Uber Eats") == ["Uber Eats"]  # the longer name first
    assert named_services("trag das in meinem Google Calendar ein") == ["Google Calendar"]
    assert named_services("在Spotify上播放周杰伦的歌") == ["Spotify"]
    # As a topic, a possessive, a workplace, a word in another identifier, or not written as the name.
    for text in ("what are Tesla's margins this year", "write to the recruiter at Figma",
                 "store STRIPE_KEY in the vault", "that was uber cool", "find the Netflix invoice email"):
        assert named_services(text) == [], text


def test_the_list_is_read_once_longest_first():
    names = services()
    assert names is services() and "Spotify" in names and len(names) > 150
    assert names.index("Uber Eats") < names.index("Uber")


def _offered(catalog_tools, text):
    index = BM25Index([tokenize(tool_lexical_text(t)) for t in catalog_tools])
    return service_offered(text, QueryView.of(text).verb, index.together)


def test_a_service_no_tool_names_is_not_offered_when_the_request_acts_there():
    tools = list(load_catalog(default_registry_path()).catalog)  # time, git, files, memory, a browser…: no Spotify, no Slack
    assert not _offered(tools, "play the new Taylor Swift album on Spotify")
    assert not _offered(tools, "send a Slack message to #design saying the mockups are ready")
    assert not _offered(tools, "WhatsApp Ana that the train is late")
    assert not _offered(tools, "get me an Uber to the station")  # the service itself asked for
    assert _offered(tools, "find a Spotify playlist for running")  # a kind of thing, read: other evidence decides
    # Asking about a service, automating between services, or naming none: other evidence decides.
    assert _offered(tools, "is Dune part two streaming on Netflix yet?")
    assert _offered(tools, "whenever a PR is merged, post a note in our Slack channel")
    assert _offered(tools, "play the intro video from the docs page")


def tool(server, name, description):
    return Tool(server=server, name=name, description=description)


def test_a_service_some_tool_names_is_offered():
    tools = [tool("spotify", "start_playback", "Start or resume playback on the user's Spotify account."),
             tool("calendar", "create_event", "Create an event in Google Calendar.")]
    assert _offered(tools, "play the new Taylor Swift album on Spotify")
    assert _offered(tools, "add lunch with Sam to my Google Calendar")
    # Both of a name's words must be in one tool's text: "Google" and "Calendar" apart are not Google Calendar.
    apart = [tool("maps", "search_places", "Search places on Google Maps."), tool("cal", "add_event", "Add a calendar event.")]
    assert not _offered(apart, "add lunch with Sam to my Google Calendar")


def test_a_plural_name_is_read_singular_and_after_a_new():
    assert named_services("create a new Google Doc for the notes") == ["Google Docs"]
    assert named_services("add a row to my Google Sheet") == ["Google Sheets"]
    assert named_services("message the team on Microsoft Teams") == ["Microsoft Teams"]
    assert named_services("open a new tab") == []
    tools = list(load_catalog(default_registry_path()).catalog)
    assert not _offered(tools, "create a new Google Doc for the meeting notes")


def test_a_request_through_an_integration_service_acts_through_it():
    tools = [tool("zapier", "run_action", "Run a Zapier action in any connected app.")]
    assert _offered(tools, "through Zapier, add a new HubSpot lead: Jane Roe")
    assert not _offered(tools, "add a new HubSpot lead: Jane Roe")
