"""A small but varied catalog for retrieval tests (a module with a unique name, importable from tests)."""

from votr_mcp.catalog import Catalog, Tool


def _tool(server: str, name: str, description: str, props: dict | None = None, required: list | None = None,
          server_description: str = "", examples: tuple = ()) -> Tool:
    schema = {"type": "object", "properties": props or {}, "required": required or []}
    return Tool(server=server, name=name, description=description, input_schema=schema,
                server_description=server_description, examples=examples)


GH = "GitHub repositories, issues and pull requests."
FS = "Read and write files on the local disk."
MAIL = "Send and read email."
WEATHER = "Weather forecasts and conditions."
DB = "Query PostgreSQL databases."


def make_small_catalog() -> Catalog:
    """A small but varied real-looking catalog (BM25 needs enough documents for useful idf)."""
    return Catalog([
        _tool("github", "list_pull_requests", "List pull requests in a repository.", {"owner": {"type": "string"}, "repo": {"type": "string"}, "state": {"type": "string"}}, ["owner", "repo"], GH),
        _tool("github", "create_issue", "Create a new issue in a repository.", {"repo": {"type": "string"}, "title": {"type": "string"}}, ["repo", "title"], GH),
        _tool("github", "merge_pull_request", "Merge a pull request.", {"number": {"type": "integer"}}, ["number"], GH),
        _tool("filesystem", "read_file", "Read the complete contents of a file.", {"path": {"type": "string"}}, ["path"], FS),
        _tool("filesystem", "write_file", "Create or overwrite a file with new content.", {"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"], FS),
        _tool("filesystem", "delete_file", "Delete one file at a path.", {"path": {"type": "string"}}, ["path"], FS),
        _tool("filesystem", "delete_all_files", "Delete every file in a directory.", {"directory": {"type": "string"}}, ["directory"], FS),
        _tool("gmail", "send_email", "Send an email message to recipients.", {"to": {"type": "array", "items": {"type": "string"}}, "subject": {"type": "string"}}, ["to"], MAIL),
        _tool("outlook", "send_mail", "Send an e-mail message from an Outlook account.", {"to": {"type": "string"}}, ["to"], "Microsoft Outlook mail and calendar."),
        _tool("weather", "get_forecast", "Get the weather forecast for a city.", {"city": {"type": "string"}}, ["city"], WEATHER),
        _tool("postgres", "run_query", "Run a read-only SQL query against the database.", {"sql": {"type": "string"}}, ["sql"], DB),
        _tool("calendar", "create_event", "Schedule a calendar event with attendees.", {"title": {"type": "string"}, "start": {"type": "string"}}, ["title", "start"], "Google Calendar."),
        _tool("translate", "translate_text", "Translate text between languages.", {"text": {"type": "string"}, "target": {"type": "string"}}, ["text", "target"], "Machine translation.",
              examples=("say this in french", "convert this sentence to german")),
    ])
