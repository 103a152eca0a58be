"""Every request we have, in every language, is read without error: the verb, its object and values,
the needs it splits into and its halves at a bare "and". A reading rule that indexes a word list
its request left empty (a verb read from Chinese, say) fails here, not in a user's search."""

import json
from pathlib import Path

from votr_mcp.retrieval.needs import and_halves, split_needs
from votr_mcp.retrieval.rerank import QueryView

QUERIES = Path(__file__).resolve().parents[2] / "eval" / "queries"


def _requests() -> list[str]:
    texts = [json.loads(line)["query"] for path in sorted(QUERIES.glob("*/queries.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts += [line for path in sorted((QUERIES / "request_classifier").glob("*.txt"))
              for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]
    return list(dict.fromkeys(texts))


def test_every_request_of_our_sets_is_read_without_error():
    texts = _requests()
    assert len(texts) > 3000  # the sets are there: an empty glob would pass anything
    for text in [*texts, "", "   ", "?", "这个", "…", "a"]:
        view = QueryView.of(text)
        assert view.verb is None or isinstance(view.verb, str)
        assert split_needs(text)
        and_halves(text)
