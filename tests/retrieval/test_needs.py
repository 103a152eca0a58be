from votr_mcp.retrieval.needs import and_halves, split_needs


def test_split_needs_keeps_a_single_need_whole_and_splits_sequenced_ones():
    assert split_needs("list open pull requests") == ["list open pull requests"]
    assert split_needs("Read the file report.txt and then email it to my boss") == [
        "Read the file report.txt", "email report.txt to my boss"]  # "it" is what the step before acted on
    assert split_needs("First, fetch the page. Next, summarise it in French; finally save the summary to notes") == [
        "fetch the page", "summarise the page in French", "save the summary to notes"]
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


def test_a_question_before_then_is_a_step_of_its_own_but_a_condition_is_not():
    assert split_needs("what time is it in Tokyo, then remember that my call with Kenji is at that time") == [
        "what time is it in Tokyo", "remember that my call with Kenji is at that time"]
    assert split_needs("First tell me what tables the db has, then show the columns of the orders table") == [
        "tell me what tables the db has", "show the columns of the orders table"]
    assert split_needs("if the file exists, then delete it") == ["if the file exists, then delete it"]


def test_a_question_joined_to_an_order_is_a_step_and_one_joined_to_another_question_or_sentence_is_not():
    assert split_needs("what's the time in Berlin right now, and remember that my flight leaves at 6pm their time") == [
        "what's the time in Berlin right now", "remember that my flight leaves at 6pm their time"]
    for single in ("which columns does the orders table have, and what types are they?",
                   "How can I optimize my website? Show me what slows it down",
                   "which of my repos has the most stars, and is it public?"):
        assert split_needs(single) == [single]


def test_in_a_sequenced_task_a_comma_before_a_verb_starts_a_step_and_elsewhere_it_does_not():
    assert split_needs("Open https://shop.example.com in the browser, search for 'usb-c hub', then take a screenshot") == [
        "Open https://shop.example.com in the browser", "search for 'usb-c hub'", "take a screenshot"]
    assert split_needs("list issues with offset 0, limit 10, sort by date") == ["list issues with offset 0, limit 10, sort by date"]
    single = "I want to optimize my website for search engines. Can you give me some suggestions?"
    assert split_needs(single) == [single]


def test_go_to_a_page_starts_a_step_of_its_own():
    assert split_needs("Go to https://app.example.com/login, fill in the email and password, then hit Sign in") == [
        "Go to https://app.example.com/login", "fill in the email and password", "hit Sign in"]


def test_a_step_that_acts_on_it_names_what_the_step_before_acted_on():
    assert split_needs("Find the Linear issue about the 'login loop' bug, then move it to In Progress")[1] == \
        "move the Linear issue to In Progress"
    assert split_needs("Go to https://example.com/pricing, then save it as notes/pricing.md")[1] == \
        "save https://example.com/pricing as notes/pricing.md"
    assert split_needs("what time is it in Tokyo, then remember it") == ["what time is it in Tokyo", "remember it"]


def test_then_after_a_question_mark_or_full_stop_starts_a_step():
    assert split_needs("what's 1234 times 5678? then remember the result as my lucky number") == [
        "what's 1234 times 5678", "remember the result as my lucky number"]
    assert split_needs("Read notes.txt. Then email it to Bob")[0] == "Read notes.txt"


def test_a_verb_and_the_page_or_file_it_acts_on_is_a_step_but_a_verb_and_an_address_is_a_field():
    assert split_needs("fetch https://example.org/a.csv. Then import it into a new workbook") == [
        "fetch https://example.org/a.csv", "import https://example.org/a.csv into a new workbook"]
    one = "Set up a new project with API key 'abc123', project title 'My Story', and email 'john@example.com'"
    assert split_needs(one) == [one]


def test_a_bare_and_before_a_verb_offers_two_halves_and_never_splits_by_itself():
    task = "make a branch feature/csv-export from develop and switch to it"
    assert split_needs(task) == [task]  # a bare "and" is no connector: retrieval decides (pipeline.py)
    assert and_halves(task) == ["make a branch feature/csv-export from develop", "switch to it"]
    assert and_halves("list my files and delete the biggest one") == ["list my files", "delete the biggest one"]
    assert and_halves("get the time in Tokyo and convert it to Paris time") == [
        "get the time in Tokyo", "convert the time to Paris time"]  # "it" named as for any need
    assert and_halves("download asset 12345 and type HDRI in 4K") is None  # no step after the "and"
    assert and_halves("search for cats and dogs") is None
    assert and_halves("find and delete duplicate photos") is None  # nothing before the "and" to act on


def test_bringing_a_file_in_is_a_step_and_its_it_is_where_the_file_went():
    assert split_needs("Bring leads.csv into crm.xlsx on a sheet called Leads, drop duplicate rows, and finally sort "
                       "them by company name") == ["Bring leads.csv into crm.xlsx on a sheet called Leads",
                                                   "drop duplicate rows", "sort the rows by company name"]
    assert split_needs("Import inventory.csv into stock.xlsx, then sort it by SKU")[1] == "sort stock.xlsx by SKU"
