"""Which way a request moves data between kinds of file, and which way a converting tool does (retrieval/flows.py)."""

import pytest

from votr_mcp.retrieval.flows import Flow, flow_fit, request_flow, tool_flow


@pytest.mark.parametrize("request_,flow", [
    ("bring data.csv into the workbook", Flow("csv", "sheet")),
    ("I've got bank_2024.csv and want it in my budget.xlsx, on the Transactions sheet", Flow("csv", "sheet")),
    ("turn docs/README.md into a nicely formatted PDF", Flow("markdown", "pdf")),
    ("I have a voice memo at ~/Recordings/standup.m4a, can you get me the words as text", Flow("audio", "text")),
    ("the spoken text of this talk as text: https://www.youtube.com/watch?v=8jPQjjsBbIc", Flow("video", "text")),
    ("take the numbers from the report.xlsx into a CSV", Flow("sheet", "csv")),
])
def test_a_request_that_names_where_data_starts_and_where_it_goes_has_a_flow(request_, flow):
    assert request_flow(request_) == flow


@pytest.mark.parametrize("request_", [
    "read this out loud as an mp3",  # nothing it starts from
    "In /home/maya/mortgage.xlsx the payment in Model!B10 depends on the rate in B4",  # one kind only
    "find all markdown files in docs",
    "copy report.pdf to backup/report.pdf",  # the same kind at both ends
    "convert ~/docs/handbook.pdf into markdown and then make a mind map out of it",  # two steps: each read alone
])
def test_a_request_without_two_different_ends_or_of_several_steps_has_none(request_):
    assert request_flow(request_) is None


@pytest.mark.parametrize("name,server,flow", [
    ("import_csv", "excel", Flow("csv", "sheet")),
    ("export_csv", "excel", Flow("sheet", "csv")),
    ("pdf-to-markdown", "Markdownify", Flow("pdf", "markdown")),
    ("markdown2pdf", "md2pdf", Flow("markdown", "pdf")),
    ("Convert Text To Speech", "tts", Flow("text", "audio")),
    ("import_csv", "sqlite", Flow("csv", None)),  # into whatever the server keeps, which its name does not say
    ("export_workbook", "excel", None),  # out of the workbook into a workbook: no change of kind
    ("git_log", "git", None),
])
def test_a_tool_name_states_its_flow(name, server, flow):
    assert tool_flow(name, server) == flow


def test_a_tool_agrees_when_it_goes_the_requests_way_and_conflicts_when_it_goes_back():
    into_sheet = request_flow("bring data.csv into the workbook")
    assert flow_fit(into_sheet, tool_flow("import_csv", "excel")) == (1.0, 0.0)
    assert flow_fit(into_sheet, tool_flow("export_csv", "excel")) == (0.0, 1.0)
    # Out of the sheet, but to CSV where the request wants a PDF: neither way.
    to_pdf = request_flow("export the Summary sheet of report.xlsx to a PDF")
    assert flow_fit(to_pdf, tool_flow("export_csv", "excel")) == (0.0, 0.0)
    # Text is asked for; markdown is text.
    as_text = request_flow("get me the words of standup.m4a as text")
    assert flow_fit(as_text, tool_flow("audio-to-markdown", "Markdownify")) == (1.0, 0.0)
    assert flow_fit(None, tool_flow("audio-to-markdown", "Markdownify")) == (0.0, 0.0)
