import pytest

from votr_mcp.retrieval.intent import lead_clause, query_bulk, split_needs, tool_bulk


def test_query_bulk_reads_many_versus_one():
    assert query_bulk("delete all files in tmp") == 1
    assert query_bulk("delete this file") == -1
    assert query_bulk("weather in Rome") == 0


def test_tool_bulk_reads_plural_objects_and_bulk_words():
    assert tool_bulk("delete_files") == 1 and tool_bulk("BulkUpdateRecords") == 1
    assert tool_bulk("delete_file") == -1 and tool_bulk("UpdateRecord") == -1
    assert tool_bulk("search") == 0


def test_split_needs_keeps_a_single_need_whole_and_splits_sequenced_ones():
    assert split_needs("list open pull requests") == ["list open pull requests"]
    assert split_needs("Read the file report.txt and then email it to my boss") == ["Read the file report.txt", "email it to my boss"]
    assert split_needs("First, fetch the page. Next, summarise it in French; finally save the summary to notes") == [
        "fetch the page", "summarise it in French", "save the summary to notes"]
    assert len(split_needs("get a b. list c d. send e f. run g h. show i j. find k l", max_needs=3)) == 3


def test_next_as_a_time_word_does_not_split_a_need():
    assert split_needs("Schedule a review meeting next week and then send the invite to the team") == [
        "Schedule a review meeting next week", "send the invite to the team"]
    assert split_needs("Export the sales figures, next upload the file to the shared drive") == [
        "Export the sales figures", "upload the file to the shared drive"]


def test_pieces_that_name_no_action_stay_with_their_need():
    single = "Return the statistics for the connected database. Include details like collection counts and storage size."
    assert split_needs(single) == [single]
    assert split_needs("I am preparing a report on EV sales. First, search the web for sales figures. Then email the summary to Bob") == [
        "I am preparing a report on EV sales search the web for sales figures", "email the summary to Bob"]


@pytest.mark.parametrize("text,clause", [
    ('Read the contents of the file located at "/var/log/app/system.log"', "Read the contents of the file"),
    ("Retrieve all customer records from the Hologres database where the date is after 2023", "Retrieve all customer records"),
    # A clause needs an action and three words: the service name alone is not the lead.
    ("On Token Metrics, fetch token data for the token with ID 'ethereum'", "On Token Metrics, fetch token data"),
    ("list open pull requests", None),  # nothing follows the action
    ("the weather in Rome, tomorrow", None),  # no action word
])
def test_lead_clause_is_the_first_clause_naming_an_action_before_details(text, clause):
    assert lead_clause(text) == clause
