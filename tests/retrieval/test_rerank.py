import json

import numpy as np
import pytest

from votr_mcp.errors import RetrievalError
from votr_mcp.retrieval.rerank import (
    FEATURES,
    GROUPS,
    SIGNS,
    QueryView,
    RerankModel,
    ToolView,
    action_of,
    fit_rerank,
    head_features,
    shipped_rerank,
)


def _features(query: str, names: list[tuple[str, str]], bulk: list[int] | None = None) -> np.ndarray:
    n = len(names)
    zeros = np.zeros(n)
    return head_features(QueryView.of(query), [ToolView.of(name, server) for name, server in names],
                         np.array(bulk or [0] * n, dtype=np.int8), fused=np.linspace(1, 0.5, n), cosine=zeros,
                         server_cosine=zeros, bm25=zeros, tfidf=zeros)


def test_action_of_reads_the_first_action_word_of_a_name_or_request():
    assert action_of(["todoist", "create", "task"]) == "create"
    assert action_of(["remove", "tag", "from", "task"]) == "delete"
    assert action_of(["weather"]) is None


def test_name_mention_and_cover_pick_the_tool_the_query_names():
    x = _features("use the get_submission tool on t3_5k4n9l", [("get_comments_by_submission", "Reddit"), ("get_submission", "Reddit")])
    mention, cover = FEATURES.index("name_mention"), FEATURES.index("name_cover")
    assert x[:, mention].tolist() == [0.0, 1.0]
    assert x[1, cover] > x[0, cover]


def test_action_agreement_separates_create_from_update():
    x = _features("create a new event titled standup", [("update_event", "calendar"), ("create_event", "calendar")])
    assert x[:, FEATURES.index("action_agree")].tolist() == [0.0, 1.0]
    assert x[:, FEATURES.index("action_conflict")].tolist() == [1.0, 0.0]


def test_making_a_named_thing_something_changes_it_rather_than_creating_one():
    x = _features("make the header row of budget.xlsx bold", [("create_workbook", "excel"), ("update_range", "excel")])
    assert x[:, FEATURES.index("action_conflict")].tolist() == [1.0, 0.0]
    x = _features("make a new workbook for the budget", [("create_workbook", "excel"), ("update_range", "excel")])
    assert x[:, FEATURES.index("action_conflict")].tolist() == [0.0, 1.0]
    assert action_of(["make", "a1", "h1", "bold"]) == "update"  # a cell range is there already
    assert action_of(["make", "api", "request"]) == "create"  # a tool's name points at nothing already there


def test_server_mention_ignores_generic_server_words():
    x = _features("On Yeoman, get ticker info for AAPL", [("get_ticker_info", "Yahoo Finance MCP Server"),
                                                         ("get_ticker_info", "MCP Yeoman Server")])
    assert x[:, FEATURES.index("server_mention")].tolist() == [0.0, 1.0]


def test_bulk_agreement_follows_the_query():
    x = _features("delete all files in tmp", [("delete_file", "fs"), ("delete_all_files", "fs")], bulk=[-1, 1])
    assert x[:, FEATURES.index("bulk_agree")].tolist() == [0.0, 1.0]
    assert x[:, FEATURES.index("bulk_conflict")].tolist() == [1.0, 0.0]


def _planted(seed: int, feature: int, sets: tuple[str, ...], queries: int = 200, head: int = 8):
    """Fit rows whose gold tool, and only it, has ``feature`` set to 1 (the rest is noise)."""
    rng = np.random.default_rng(seed)
    groups = []
    for q in range(queries):
        x = rng.normal(size=(head, len(FEATURES)))
        x[:, feature] = 0.0
        gold = int(rng.integers(head))
        x[gold, feature] = 1.0
        groups.append((x, np.arange(head) == gold, sets[q % len(sets)]))
    return groups


def test_the_fit_learns_a_planted_feature_and_switching_its_group_off_removes_it():
    mention = FEATURES.index("name_mention")
    groups = _planted(7, mention, ("a", "b"))  # the gold tool is the one the query names
    model = fit_rerank(groups, l2=1e-3)
    assert max(range(len(FEATURES)), key=lambda i: abs(model.weights[i])) == mention
    hits = [bool(g[np.argmax(model.score(x))]) for x, g, _ in groups]
    assert np.mean(hits) > 0.95
    off = [bool(g[np.argmax(model.score(x, off=["dice"]))]) for x, g, _ in groups]
    assert "name_mention" in GROUPS["dice"] and np.mean(off) < 0.5


def test_a_conflict_feature_never_counts_for_a_tool_even_when_noisy_labels_reward_it():
    conflict = FEATURES.index("bulk_conflict")
    groups = _planted(11, conflict, ("a",))  # mislabelled rows: the gold tool is always the conflicting one
    model = fit_rerank(groups, l2=1e-3)
    assert SIGNS["bulk_conflict"] == -1 and model.weights[conflict] <= 0.0
    assert all(w * SIGNS[name] >= 0.0 for name, w in zip(FEATURES, model.weights))


def test_a_small_set_weighs_less_than_a_large_one_but_more_than_its_share_of_queries():
    # Set "big" rewards feature A, set "small" rewards feature B; their shares of the loss decide.
    rng = np.random.default_rng(3)
    a, b = FEATURES.index("name_mention"), FEATURES.index("action_agree")
    groups = []
    for name, feature, n in (("big", a, 400), ("small", b, 25)):
        for _ in range(n):
            x = rng.normal(scale=0.1, size=(6, len(FEATURES)))
            x[:, [a, b]] = 0.0
            gold = int(rng.integers(6))
            x[gold, feature] = 1.0
            x[(gold + 1) % 6, a if feature == b else b] = 1.0  # the other set's cue points elsewhere
            groups.append((x, np.arange(6) == gold, name))
    model = fit_rerank(groups, l2=1e-3)
    # On these rows equal shares per set give a/b ~1.06 and shares by query count ~1.7; root shares ~1.3.
    assert 1.15 < model.weights[a] / model.weights[b] < 1.5


def test_the_fit_refuses_too_few_informative_queries():
    x = np.zeros((3, len(FEATURES)))
    with pytest.raises(RetrievalError, match="at least 20"):
        fit_rerank([(x, np.array([True, False, False]), "a")] * 5)


def test_the_shipped_model_round_trips_and_a_stale_one_is_refused(tmp_path):
    model = shipped_rerank()
    assert model is not None and model.features == FEATURES and "dev split" in model.source
    path = tmp_path / "rerank.json"
    model.save(path)
    assert RerankModel.load(path) == model
    stale = model.to_dict() | {"features": list(FEATURES[:-1]), "weights": list(model.weights[:-1])}
    with pytest.raises(RetrievalError, match="fit-rerank"):
        RerankModel.from_mapping(stale)


def test_a_shipped_rerank_fit_for_other_features_is_set_aside_with_a_warning(tmp_path, monkeypatch, caplog):
    import json

    from votr_mcp.retrieval import rerank

    stale = tmp_path / "rerank.json"
    stale.write_text(json.dumps({"features": ["fused"], "weights": [1.0], "mean": [0.0], "scale": [1.0]}))
    monkeypatch.setattr(rerank, "SHIPPED_RERANK", stale)
    monkeypatch.setattr(rerank, "_WARNED", set())
    with caplog.at_level("WARNING"):
        assert rerank.shipped_rerank() is None and rerank.shipped_rerank() is None
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "refit it with votr-mcp fit-rerank" in caplog.records[0].message


@pytest.mark.parametrize("change,message", [
    ({"scale": [0.0] * 15}, r"scale.0: must be greater than 0 \(got 0.0\)"),
    ({"weights": [float("nan")] * 15}, "weights.0: must be a finite number"),
    ({"head": 0}, "head: must be greater than or equal to 1"),
    ({"surprise": 1}, "surprise: Unexpected keyword argument"),
])
def test_a_rerank_file_is_checked_field_by_field_and_the_error_says_how_to_refit(change, message):
    from votr_mcp.retrieval.rerank import SHIPPED_RERANK

    data = {**json.loads(SHIPPED_RERANK.read_text(encoding="utf-8")), **change}
    with pytest.raises(RetrievalError, match=message) as caught:
        RerankModel.from_mapping(data)
    assert "fit-rerank" in str(caught.value)
