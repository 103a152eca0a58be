import numpy as np
import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.errors import RetrievalError
from votr_mcp.index import MemoryEmbeddingCache
from votr_mcp.retrieval import Calibration, RetrievalConfig, Retriever, naive_hybrid

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def retriever(small_catalog, embedder):
    calibration = Calibration(temperature=0.05, mix=0.5, set_threshold=0.4, abstain_threshold=0.2)
    return Retriever.build(small_catalog, embedder=embedder, calibration=calibration)


@pytest.mark.parametrize("query,expected", [
    ("show me the open pull requests of my repo", ("github", "list_pull_requests")),
    ("what is the weather going to be in Paris tomorrow", ("weather", "get_forecast")),
    ("open an issue about the broken build", ("github", "create_issue")),
    ("execute SELECT count(*) FROM users", ("postgres", "run_query")),
])
def test_the_right_tool_ranks_first_with_the_real_model(retriever, query, expected):
    result = retriever.search(query)
    assert result.dense_used
    assert result.ranked_keys[0] == expected
    assert result.hits and result.hits[0].key == expected


def test_bulk_wording_prefers_the_bulk_tool_and_singular_the_single_one(retriever):
    assert retriever.search("delete all files in the tmp directory").ranked_keys[0] == ("filesystem", "delete_all_files")
    assert retriever.search("delete the file notes.txt").ranked_keys[0] == ("filesystem", "delete_file")


def test_a_message_written_without_quotes_is_what_is_sent_not_what_is_asked(retriever):
    # Its words (a merged pull request, a forecast, an issue to create) would otherwise rank those tools.
    for request in ("email the team saying the pull request was merged and the old files were deleted",
                    "send ana an email saying I will read the weather forecast file tomorrow",
                    "mail bob@acme.com, body: please create an issue for the failing query and merge the fix"):
        assert retriever.search(request).ranked_keys[0] in {("gmail", "send_email"), ("outlook", "send_mail")}, request


def test_a_query_unrelated_to_every_tool_abstains_with_a_reason(retriever):
    result = retriever.search("what is the meaning of love in Shakespeare's sonnets")
    assert result.abstained and result.k == 0 and not result.hits
    assert "cosine" in result.reason


def test_a_whole_task_query_is_split_into_needs_each_with_its_tool(retriever):
    result = retriever.search("Read the file report.txt and then email it to my boss")
    assert [n.text for n in result.needs] == ["Read the file report.txt", "email report.txt to my boss"]
    assert result.needs[0].hits[0].key == ("filesystem", "read_file")
    assert result.needs[1].hits[0].key in {("gmail", "send_email"), ("outlook", "send_mail")}
    assert {("filesystem", "read_file")} <= set(result.ranked_keys[:3])


def test_every_list_scores_its_tools_against_its_own_best_so_needs_and_whole_query_read_alike(retriever):
    for config in (retriever.config, retriever.config.with_(rerank=False)):
        result = retriever.with_config(config).search("Read the file report.txt and then email it to my boss")
        for ranked in [result.ranked, *(n.ranked for n in result.needs)]:
            scores = [h.score for h in ranked]
            assert scores[0] == pytest.approx(1.0) and all(0 < s <= 1.0 for s in scores)


def test_a_whole_tasks_needs_are_ranked_by_the_fusion_alone_unless_told_otherwise(retriever):
    query = "Read the file report.txt and then email it to my boss"
    plain = retriever.with_config(retriever.config.with_(rerank=False)).search(query)
    default = retriever.search(query)
    reranked = retriever.with_config(retriever.config.with_(rerank_needs=True)).search(query)

    def lists(result):  # each need's ranked tools with their scores (fused, or the rerank's mass)
        return [[(h.key, round(h.score, 9)) for h in n.ranked] for n in result.needs]

    assert len(default.needs) == 2 and lists(default) == lists(plain)
    assert lists(reranked) != lists(plain)


def test_excluded_tools_never_appear(retriever, small_catalog):
    keys = [("github", "list_pull_requests")]
    result = retriever.search("list pull requests", exclude=keys)
    assert ("github", "list_pull_requests") not in result.ranked_keys
    mask = np.zeros(len(small_catalog), dtype=bool)
    mask[small_catalog.position(("github", "list_pull_requests"))] = True
    assert ("github", "list_pull_requests") not in retriever.search("list pull requests", exclude=mask).ranked_keys


def test_server_intent_hint_moves_that_servers_tool_to_the_top(retriever):
    plain = retriever.search("send a message to alice@example.com")
    hinted = retriever.search("send a message to alice@example.com", server_intent="outlook")
    assert hinted.ranked_keys[0] == ("outlook", "send_mail")
    assert plain.ranked_keys[:2] != [] and hinted.ranked_keys != plain.ranked_keys or plain.ranked_keys[0] == ("outlook", "send_mail")


def test_lexical_only_retriever_answers_before_dense_is_ready_and_upgrades(small_catalog, embedder):
    cache = MemoryEmbeddingCache()
    lexical = Retriever.build(small_catalog, cache=cache, calibration=None)
    assert not lexical.dense_ready
    result = lexical.search("merge the pull request")
    assert not result.dense_used and result.ranked_keys[0] == ("github", "merge_pull_request")
    dense = lexical.with_embedder(embedder)
    assert dense.dense_ready and dense.search("merge the pull request").dense_used


def test_with_catalog_reembeds_only_changed_tools(small_catalog):
    class Counting:
        model_id = "counting"

        def __init__(self):
            self.seen = 0

        def encode(self, texts):
            self.seen += len(texts)
            rng = np.random.default_rng(len(texts))
            v = rng.normal(size=(len(texts), 8)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    counting = Counting()
    first = Retriever.build(small_catalog, embedder=counting, calibration=None)
    before = counting.seen
    changed = [t if t.name != "read_file" else type(t)(**{**{f: getattr(t, f) for f in t.__slots__}, "description": "Read a file."})
               for t in small_catalog]
    first.with_catalog(Catalog(changed))
    assert counting.seen - before == 1


def test_tool2vec_uses_example_queries_when_a_tool_has_them(retriever):
    on = retriever.search("say this in french please")
    off = retriever.with_config(RetrievalConfig(tool2vec=False)).search("say this in french please")
    assert on.ranked_keys[0] == ("translate", "translate_text")
    assert on.cosines[0] > off.cosines[off.ranked_keys.index(("translate", "translate_text"))]


def test_naive_hybrid_preset_and_bad_input(retriever):
    assert retriever.with_config(naive_hybrid()).search("weather in Rome").ranked_keys[0] == ("weather", "get_forecast")
    with pytest.raises(RetrievalError, match="query is empty"):
        retriever.search("  ")
    with pytest.raises(RetrievalError, match="max_results"):
        retriever.search("weather", max_results=0)


def test_search_returns_signatures_and_an_exact_token_count(retriever):
    result = retriever.search("list pull requests", max_results=1)
    assert result.lines() == ["[server: github] list_pull_requests(owner: str, repo: str, state?: str) → List pull requests in a repository."]
    assert result.tokens() > 10


def test_swapping_one_changed_tool_matches_a_full_rebuild_when_no_new_words_appear(retriever, small_catalog):
    import dataclasses

    old = small_catalog.get(("weather", "get_forecast"))
    new = dataclasses.replace(old, description="Get the weather forecast for a city, as a file.")
    added = dataclasses.replace(old, server="weather2", name="forecast_city")
    swapped = retriever.with_tools_changed([new, added], removed=[("calendar", "create_event")])
    rebuilt = retriever.with_catalog(swapped.catalog)
    assert [t.key for t in swapped.catalog] == [t.key for t in rebuilt.catalog]
    assert ("calendar", "create_event") not in swapped.catalog and swapped.catalog.get(new.key) == new
    for query in ["weather forecast file", "read a file", "schedule an event"]:
        a, b = swapped.search(query), rebuilt.search(query)
        assert set(a.ranked_keys[:3]) == set(b.ranked_keys[:3])
        np.testing.assert_allclose(np.sort(a.cosines), np.sort(b.cosines), atol=1e-5)


@pytest.mark.parametrize("query", [
    "What is the weather going to be in Paris tomorrow?",
    "Read the file report.txt. Then email it to my boss.",
])
def test_every_query_is_scored_with_its_dense_vector(retriever, query):
    # Needs are stripped of end punctuation; a query must still find its own vector (or its needs' mean).
    texts = retriever.texts_for(query)
    vectors = retriever.embed(texts)
    for result in (retriever.search(query), retriever.search(query, query_vectors=vectors)):
        assert result.dense_used and result.cosines[0] > 0.1  # 0.0 when no vector was found


def test_a_closing_full_stop_or_question_mark_does_not_change_what_the_model_reads(retriever):
    plain = retriever.search("what is the weather going to be in Paris tomorrow")
    for query in ("what is the weather going to be in Paris tomorrow?", "what is the weather going to be in Paris tomorrow. "):
        result = retriever.search(query)
        np.testing.assert_allclose(result.cosines, plain.cosines, atol=1e-6)
        assert result.ranked_keys == plain.ranked_keys
    vectors = retriever.embed(["read a file.", "read a file", "read a file, then stop"])
    np.testing.assert_allclose(vectors["read a file."], vectors["read a file"], atol=1e-6)
    assert float(vectors["read a file"] @ vectors["read a file, then stop"]) < 0.999


def _with_examples(catalog: Catalog, examples: dict[str, tuple[str, ...]]) -> Catalog:
    import dataclasses

    return Catalog([dataclasses.replace(t, examples=examples.get(t.name, (f"use {t.name.replace('_', ' ')}",)))
                    for t in catalog])


def test_a_request_close_to_one_example_finds_its_tool_when_most_tools_have_examples(small_catalog, embedder):
    # The weather tool's description says nothing about umbrellas; one of its examples does.
    examples = {"get_forecast": ("do I need an umbrella on Saturday", "how hot will it get this afternoon",
                                 "forecast for Lisbon"), "translate_text": ("say this in french",)}
    catalog = _with_examples(small_catalog, examples)
    cache = MemoryEmbeddingCache()
    plain = Retriever.build(catalog, embedder=embedder, cache=cache, calibration=None)
    query = "should I take an umbrella with me on Saturday"
    # Without Tool2Vec's mean vectors, the nearest example alone carries the request to its tool.
    nearest = plain.with_config(RetrievalConfig(tool2vec=False)).search(query)
    neither = plain.with_config(RetrievalConfig(tool2vec=False, w_examples=0.0)).search(query)
    assert nearest.ranked_keys[0] == ("weather", "get_forecast") != neither.ranked_keys[0]
    # With both, the lead over the second tool widens.
    both, mean_only = plain.search(query), plain.with_config(RetrievalConfig(w_examples=0.0)).search(query)
    assert both.ranked_keys[0] == mean_only.ranked_keys[0] == ("weather", "get_forecast")
    assert both.relative[1] < mean_only.relative[1]
    # Few tools with examples (one of 13 in the small catalog): no nearest-example list, it would favour them.
    assert Retriever.build(small_catalog, embedder=embedder, cache=cache, calibration=None)._dense.examples is None


def test_swapped_tools_keep_the_example_requests_a_rebuild_would_have(small_catalog, embedder):
    import dataclasses

    catalog = _with_examples(small_catalog, {})
    cache = MemoryEmbeddingCache()
    retriever = Retriever.build(catalog, embedder=embedder, cache=cache, calibration=None)
    old = catalog.get(("weather", "get_forecast"))
    new = dataclasses.replace(old, description="Get the forecast.", examples=("will it snow tomorrow", "rain or sun"))
    swapped = retriever.with_tools_changed([new], removed=[("calendar", "create_event")])
    rebuilt = Retriever.build(swapped.catalog, embedder=embedder, cache=cache, calibration=None)

    def by_tool(r: Retriever) -> dict:
        d = r._dense
        rows: dict = {}
        for vector, owner in zip(d.examples, d.example_owner):
            rows.setdefault(r.catalog[int(owner)].key, []).append(np.round(vector, 5).tobytes())
        return {k: sorted(v) for k, v in rows.items()}

    assert by_tool(swapped) == by_tool(rebuilt)
    assert len(by_tool(swapped)[new.key]) == 2 and ("calendar", "create_event") not in by_tool(swapped)


def test_a_query_longer_than_the_limit_is_refused_saying_how_long_it_may_be(retriever):
    from votr_mcp.retrieval.pipeline import MAX_QUERY_CHARS

    with pytest.raises(RetrievalError, match=f"at most {MAX_QUERY_CHARS:,}"):
        retriever.search("read the file " + "x" * MAX_QUERY_CHARS)
    assert retriever.search("read the file " + "7" * 4000).ranked_keys  # long, under the limit: answered


@pytest.mark.parametrize("change,message", [
    ({"depth": 0}, r"depth: must be greater than or equal to 1 \(got 0\)"),
    ({"w_bm25": float("nan")}, r"w_bm25: must be a finite number \(got nan\)"),
    ({"w_dense": -1.0}, r"w_dense: must be greater than or equal to 0 \(got -1.0\)"),
    ({"max_needs": 2.5}, "max_needs: must be a valid integer, got a number with a fractional part"),
    ({"fusion": "max"}, "fusion: must be 'gap' or 'rrf'"),
    ({"rerank_head": 20, "depth": -3}, r"depth: must be greater than or equal to 1 \(got -3\)"),
])
def test_a_setting_that_would_give_wrong_answers_is_refused_saying_what_is_allowed(change, message):
    with pytest.raises(ValueError, match=message):
        RetrievalConfig().with_(**change)
