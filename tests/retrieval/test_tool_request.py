"""The tool-request model: chat against requests for a tool, read from the multilingual USE vector."""

import numpy as np
import pytest

from votr_mcp.errors import CatalogError, RetrievalError
from votr_mcp.evaluation.request_model_fit import cross_validate, fit_request_model, read_requests
from votr_mcp.index.use import USEEmbedder
from votr_mcp.retrieval.tool_request import RequestModel, shipped_request_model

TOOL = ["delete the file notes.txt", "send an email to Dana about the invoice", "list my open pull requests",
        "what's on my calendar tomorrow", "save this contact in my CRM", "show the last commits of the repo",
        "upload report.pdf to the shared drive", "book a meeting room for Friday at 10",
        "create a Jira ticket for the login bug", "read the rows of the orders table"]
CHAT = ["thanks, that was helpful", "explain recursion like I'm five", "what's the capital of Australia",
        "write a short poem about autumn", "how do I stay motivated when studying", "tell me a joke about cats",
        "what does idempotent mean", "good morning!", "is coffee bad for you", "rewrite this to sound friendlier: send it now"]


@pytest.fixture(scope="module")
def use() -> USEEmbedder:
    return USEEmbedder()


@pytest.mark.slow
def test_a_model_fit_on_english_tells_chat_from_tool_requests_in_other_languages(use):
    model = fit_request_model(use, TOOL, CHAT, l2=1.0, source="test")
    tool = model.probability(use.encode(["lösche die Datei bericht.docx", "envía un correo a Marta con la factura"]))
    chat = model.probability(use.encode(["erzähl mir einen Witz", "¿cuál es la capital de Francia?"]))
    assert tool.min() > chat.max(), (tool, chat)


@pytest.mark.slow
def test_cross_validation_reports_each_penalty_on_held_out_folds(use):
    scores = cross_validate(use, TOOL * 2 + [t + " please" for t in TOOL], CHAT * 2 + [c + " please" for c in CHAT], [1.0, 10.0])
    assert set(scores) == {1.0, 10.0}
    assert all(0.0 <= s["auc"] <= 1.0 and 0.0 <= s["balanced_accuracy"] <= 1.0 for s in scores.values())


def test_a_saved_model_reads_back_the_same(tmp_path):
    model = RequestModel("m", np.array([0.5, -1.0, 2.0]), 0.25, "fit on x")
    model.save(tmp_path / "m.npz")
    back = RequestModel.load(tmp_path / "m.npz")
    assert back.model_id == "m" and back.source == "fit on x" and back.bias == 0.25
    v = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    assert np.allclose(back.probability(v), model.probability(v))
    assert np.allclose(model.probability(np.array([[0.0, 0.0, 5.0]])), 1 / (1 + np.exp(-(2.0 + 0.25))))


def test_log_odds_are_clipped_so_one_sure_model_cannot_outvote_the_catalog_evidence():
    from votr_mcp.retrieval.tool_request import LOGIT_BOUND

    model = RequestModel("m", np.array([100.0, -100.0]), 0.0)
    assert model.log_odds(np.array([[1.0, 0.0], [0.0, 1.0]])).tolist() == [LOGIT_BOUND, -LOGIT_BOUND]


def test_a_model_refuses_vectors_of_another_width_and_unreadable_files(tmp_path):
    model = RequestModel("m", np.zeros(3), 0.0)
    with pytest.raises(RetrievalError, match="3-dimensional"):
        model.probability(np.zeros((1, 4)))
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(RetrievalError, match="fit-request"):
        RequestModel.load(tmp_path / "bad.npz")
    with pytest.raises(RetrievalError, match="finite"):
        RequestModel("m", np.array([np.nan]), 0.0)


def test_requests_are_read_from_text_lines_and_from_example_json(tmp_path):
    (tmp_path / "a.txt").write_text("# a comment\nhello there\n\nthanks\nhello there\n", encoding="utf-8")
    assert read_requests(tmp_path / "a.txt") == ["hello there", "thanks"]
    (tmp_path / "b.json").write_text('{"git": {"git_log": ["show commits", "history"]}}', encoding="utf-8")
    assert read_requests(tmp_path / "b.json") == ["show commits", "history"]
    (tmp_path / "c.txt").write_text("# only a comment\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="no requests"):
        read_requests(tmp_path / "c.txt")
    (tmp_path / "d.json").write_text('["not", "nested"]', encoding="utf-8")
    with pytest.raises(CatalogError, match="servers -> tools"):
        read_requests(tmp_path / "d.json")


@pytest.mark.slow
def test_the_shipped_model_reads_use_vectors_and_scores_chat_below_requests_for_a_tool(use):
    model = shipped_request_model()
    assert model is not None and model.model_id == use.model_id and "fit-request" in model.source
    p = model.probability(use.encode(["archive the last 40 promo emails in my inbox", "what's the meaning of life?"]))
    assert p[0] > 0.5 > p[1]
