import pytest

from votr_mcp.index.text import query_dense_text, without_illustrations


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


@pytest.mark.parametrize("description,read", [
    ("Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco'). Use 'UTC' if none",
     "Target IANA timezone name  . Use 'UTC' if none"),
    ("The city, e.g. Paris or London. Required.", "The city,  . Required."),
    ("Owner login (for example octocat)", "Owner login  "),
    ("Path to the repository, i.e. its root folder", "Path to the repository, i.e. its root folder"),  # says what it is
    ("Max results (default 10)", "Max results (default 10)"),
])
def test_example_values_leave_a_parameter_description(description, read):
    assert without_illustrations(description) == read
