from votr_mcp.index.tokenize import split_identifier, stem, tokenize


def test_identifiers_split_on_camel_snake_kebab_and_dots():
    assert tokenize("listPullRequests") == ["list", "pull", "request"]
    assert tokenize("list_pull_requests") == ["list", "pull", "request"]
    assert tokenize("list-pull-requests") == ["list", "pull", "request"]
    assert tokenize("HTTPServer.startUp") == ["http", "server", "start", "up"]


def test_acronyms_stay_whole_before_a_capitalised_word():
    assert split_identifier("parseJSONFile").split() == ["parse", "JSON", "File"]


def test_stopwords_are_dropped_and_plurals_folded():
    assert tokenize("Get all the files of the repositories") == ["file", "repository"]
    assert stem("queries") == "query" and stem("boxes") == "box" and stem("status") == "status"
