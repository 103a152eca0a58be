import pytest

from votr_mcp.index.text import query_dense_text


@pytest.mark.parametrize("query,read", [
    ("List my open pull requests.", "List my open pull requests"),
    ("what time is it in Tokyo?  ", "what time is it in Tokyo"),
    ("stop it!?...", "stop it"),
    ("send 'hello.' to Bob", "send 'hello.' to Bob"),  # only the very end is stripped
    ("v1.2 release notes", "v1.2 release notes"),
    ("...", "..."),  # nothing left: the text is kept as it was
])
def test_the_model_reads_a_query_without_its_closing_punctuation(query, read):
    assert query_dense_text(query) == read
