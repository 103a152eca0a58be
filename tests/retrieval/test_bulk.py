"""Singular versus bulk, as requests say it and as tool names do (retrieval/bulk.py)."""

import pytest

from votr_mcp.retrieval.bulk import pair_bulk, pair_number, plural_first, query_bulk


def test_query_bulk_reads_many_versus_one():
    assert query_bulk("delete all files in tmp") == 1
    assert query_bulk("delete this file") == -1
    assert query_bulk("weather in Rome") == 0


@pytest.mark.parametrize("text", [
    "Permanently wipe these 40 promo messages from my Gmail in one go",
    "read notes.txt, todo.md and plan.txt",
    "archive both threads",
    "put everyone from Engineering into the dev group",
    "delete 12 old drafts",
    "lösche alle Entwürfe",
    "すべてのメールを削除して",
    "make tasks for 'write spec', 'review spec' and 'ship it'",
    "get the current prices of BTC/USDT, ETH/USDT and SOL/USDT in one call",
])
def test_query_bulk_reads_how_people_ask_for_many(text):
    assert query_bulk(text) == 1


@pytest.mark.parametrize("text", ["delete this email", "read the file report.txt", "open a single issue",
                                  "tell me everything about this ticket"])  # all of one thing
def test_query_bulk_reads_one(text):
    assert query_bulk(text) == -1


def test_everything_on_one_thing_is_no_bulk_cue_and_everything_in_a_place_is():
    assert query_bulk("open task 8812345601 and show me everything on it") == 0
    assert query_bulk("delete everything in the trash") == 1


@pytest.mark.parametrize("text", ["in Astra DB, remove record r-101 from the orders collection",
                                  "mark Sentry issue PROJ-4821 as resolved", "how many COVID-19 cases in Italy"])
def test_the_number_in_an_id_or_a_name_counts_nothing(text):
    assert query_bulk(text) != 1


def test_durations_and_sizes_are_not_counts_of_things():
    assert query_bulk("wait 5 seconds") == 0
    assert query_bulk("what time is it in Tokyo") == 0
    assert query_bulk("how many docs in the orders collection are pending?") == 0  # a count, not a batch


def test_pair_bulk_marks_only_tools_that_have_a_sibling_for_the_other_count():
    tools = [("gmail", "delete_email"), ("gmail", "batch_delete_emails"), ("fs", "read_file"),
             ("fs", "read_multiple_files"), ("git", "git_log"), ("db", "list_tables"), ("other", "delete_emails")]
    assert pair_bulk(tools) == [-1, 1, -1, 1, 0, 0, 0]


def test_a_batch_tool_that_leaves_its_object_unsaid_pairs_with_the_tool_saying_one_more_word():
    tools = [("cms", "bulk_publish"), ("cms", "publish_entry"), ("cms", "publish_content_type"), ("api", "all"),
             ("api", "detect")]
    assert pair_bulk(tools) == [1, -1, 0, 0, 0]  # a bare "all" names no operation to pair


def test_quoted_titles_are_no_cue_of_many():
    assert query_bulk("I'm sure and don't care, won't wait") == 0


TOOLS = [("huntress", "get_incident"), ("huntress", "list_incidents"), ("huntress", "delete_incidents"),
         ("dart", "create_task"), ("dart", "list_tasks"), ("facts", "Get a random fact about cats"),
         ("facts", "Get all facts about cat"), ("git", "git_log"), ("fs", "read_file"), ("fs", "read_files"),
         ("fs", "list_process"), ("ci", "get_artifact"), ("ci", "list_artifacts"), ("raygun", "ignore_error_group"),
         ("raygun", "list_error_groups"), ("clickup", "move_task"), ("clickup", "move_bulk_tasks")]


def test_pair_number_pairs_identifier_names_saying_one_noun_in_both_numbers_on_one_server():
    pairs = pair_number(TOOLS)
    assert [(p.word, p.plural, p.action) if p else None for p in pairs] == [
        ("incident", False, "read"), ("incidents", True, "read"), ("incidents", True, "delete"),
        ("task", False, "create"), ("tasks", True, "read"), None, None, None,  # titles pair with nothing
        ("file", False, "read"), ("files", True, "read"), None,  # "process" is no plural
        ("artifact", False, "read"), ("artifacts", True, "read"), ("group", False, None), ("groups", True, "read"),
        ("task", False, "update"), ("tasks", True, "update")]
    assert pairs[0].group == pairs[1].group != pairs[3].group


def test_a_short_name_with_spaces_pairs_and_a_title_does_not():
    pairs = pair_number([("airflow", "Get Pool"), ("airflow", "List Pools"), ("x", "Get all the pools"),
                         ("x", "Get the pool by id")])
    assert [(p.word, p.plural) if p else None for p in pairs] == [("pool", False), ("pools", True), None, None]


def rank(text, order):
    return [TOOLS[i][1] for i in plural_first(text, order, pair_number(TOOLS), 5)]


def test_a_plural_the_request_says_moves_its_tool_before_the_singular_one():
    assert rank("list open incidents in Huntress", [0, 2, 1]) == ["list_incidents", "get_incident", "delete_incidents"]
    assert rank("what tasks are on my Dart board?", [3, 4]) == ["list_tasks", "create_task"]  # a question reads
    seen = rank("I want to see which artifacts the build made, list them", [11, 12])
    assert seen == ["list_artifacts", "get_artifact"]


@pytest.mark.parametrize("text,order", [
    ("Retrieve build artifacts", [11, 12]),  # a description's generic plural: both tools read
    ("Ignore error groups", [13, 14]),  # the singular tool's own word
    ("move tasks between lists", [15, 16]),  # a batch tool: the singular/bulk pairing decides
])
def test_the_rest_of_the_request_must_take_the_plural_tools_side(text, order):
    assert rank(text, order) == [TOOLS[i][1] for i in order]


@pytest.mark.parametrize("text", [
    "show me incident INC-5",  # the singular
    "get the incident and its related incidents",  # both numbers
    "create tasks for the launch",  # creating, and the plural tool reads
    "what happened in Huntress?",  # neither
    "file the new alert in my Huntress incidents",  # a place, not what is acted on
])
def test_the_singular_tool_keeps_its_place_unless_only_the_plural_is_said_for_the_same_action(text):
    order = [3, 4] if "tasks" in text else [0, 1]
    assert rank(text, order) == [TOOLS[i][1] for i in order]


def test_a_plural_tool_past_the_window_or_already_first_stays_where_it_is():
    assert plural_first("list open incidents", [0, 5, 6, 7, 8, 1], pair_number(TOOLS), 5) == [0, 5, 6, 7, 8, 1]
    assert rank("list open incidents", [1, 0]) == ["list_incidents", "get_incident"]
