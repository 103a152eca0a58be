"""Servers a request names, and whether their tools do what it asks (retrieval/named.py)."""

import pytest

from votr_mcp.retrieval.named import NamedServers
from votr_mcp.retrieval.rerank import QueryView, ToolView

# (server, tool name, description): Heroku only lists and reads apps; another server deletes things.
TOOLS = [
    ("Heroku", "list_apps", "List the apps of the account."),
    ("Heroku", "get_app_info", "Get details about one app."),
    ("Netlify", "delete_site", "Delete a site and its deploys."),
    ("everything", "echo", "Echoes back the input."),
    ("git", "git_commit", "Records changes to the repository."),
    ("git", "git_log", "Shows the commit logs."),
    ("memory", "delete_entities", "Delete multiple entities and their associated relations from the knowledge graph."),
    ("MCP Create", "create_server", "Create a new MCP server from a template."),
    ("News", "create_news_digest", "Create a digest of today's news."),
]


@pytest.fixture(scope="module")
def servers():
    return NamedServers([s for s, _, _ in TOOLS], [ToolView.of(n, s, d) for s, n, d in TOOLS])


def supports(servers, text):
    return servers.supports(text, QueryView.of(text))


def test_a_named_service_whose_tools_do_not_do_the_action_does_not_support_it(servers):
    text = "Delete the Heroku app old-staging-api permanently"
    assert servers.named(text, QueryView.of("Delete the Heroku app").tokens) == ["Heroku"]
    assert not supports(servers, text)
    assert supports(servers, "Delete the Netlify site old-docs")  # Netlify's own tool deletes
    assert supports(servers, "list my Heroku apps")


def test_a_service_is_named_by_a_name_not_by_a_common_word_in_passing(servers):
    # "everything" is a server here: in lower case, as an ordinary word, it names nothing.
    text = "forget everything you know about Bob"
    assert servers.named(text, QueryView.of(text).tokens) == []
    assert supports(servers, text)
    assert not supports(servers, "git: push my commits to origin")  # before a colon, a name in any case
    assert not supports(servers, "push my commits with Git")
    # Capitalized only because it starts a sentence, a word names nothing ("MCP Create" here).
    text = "Create a list. Delete the Heroku app"
    assert servers.named(text, QueryView.of(text).tokens) == ["Heroku"]


def test_no_verb_or_no_named_service_reads_as_supported(servers):
    assert supports(servers, "what did I change in Heroku yesterday?")  # a question leads with no verb
    assert supports(servers, "delete the staging app")  # no service named: other evidence decides


def test_a_named_service_is_read_from_and_one_that_says_no_action_may_do_any():
    tools = [("Hacker News", "post_story", "Create a story post."), ("Agones", "Agones", "Access soccer match results.")]
    servers = NamedServers([s for s, _, _ in tools], [ToolView.of(n, s, d) for s, n, d in tools])
    # Its only tool posts, but a service one names is there to be read from.
    assert servers.supports("show me the latest Hacker News stories", QueryView.of("show me the latest Hacker News stories"))
    assert not servers.supports("delete my Hacker News story", QueryView.of("delete my Hacker News story"))
    # Agones's tool says it gives access, no action: nothing says it does not delete.
    assert servers.supports("delete the Agones results from 2015", QueryView.of("delete the Agones results from 2015"))


def test_a_server_whose_name_the_stemmer_merges_with_another_word_is_named_only_by_its_own(servers):
    # "news" stems to "new": "New York" must not name the News server, "News" must
    assert servers.named("delete my notes about New York", QueryView.of("delete my notes about New York").tokens) == []
    assert servers.named("delete the News digest", QueryView.of("delete the News digest").tokens) == ["News"]


def test_a_place_called_new_does_not_name_a_news_service():
    tools = [("News API", "top_headlines", "Create a digest of the top headlines."), ("Calendar", "delete_event", "Delete an event.")]
    servers = NamedServers([s for s, _, _ in tools], [ToolView.of(n, s, d) for s, n, d in tools])
    text = "Delete my dentist appointment in New York"
    assert servers.named(text, QueryView.of(text).tokens) == []
    assert servers.named("Delete the News API digest", QueryView.of("Delete the News API digest").tokens) == ["News API"]
