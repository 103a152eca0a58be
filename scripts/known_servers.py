"""The known servers scripts/capture_known_servers.py installs and captures into known-servers/.

One row per server: the package and exact version it comes from (npm or PyPI), the executable the
package installs, the arguments and environment a user gives it (credentials as placeholders: the
capture starts it with dummy values, which are enough to list its tools), and our own one-sentence
account of what it is for (server-level retrieval scores a request against it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Known:
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    bin: str
    description: str
    args: tuple[str, ...] = ()
    """Arguments the user gives (placeholders such as ``/path/to/...``); ``{workdir}`` never appears here."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment the user must set: variable -> placeholder value shown in the entry."""
    capture_args: tuple[str, ...] | None = None
    """Arguments for the capture when the user's would not start it here (``{workdir}``: its own folder)."""
    capture_env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for the capture only (the ``env`` variables get dummy values anyway)."""

    def config(self) -> dict[str, Any]:
        """The ``mcpServers`` entry a user adds: ``npx -y <package>`` or ``uvx <package>``."""
        if self.registry == "npm":
            args = ["-y", self.package, *self.args]  # every npm row's executable is the one npx picks
            command = "npx"
        else:
            head = [self.package] if self.bin == self.package else ["--from", self.package, self.bin]
            args = [*head, *self.args]
            command = "uvx"
        entry: dict[str, Any] = {"command": command, "args": args}
        if self.env:
            entry["env"] = dict(self.env)
        return entry


def _npm(package: str, version: str, bin: str, description: str, **more: Any) -> Known:
    return Known("npm", package, version, bin, description, **more)


def _pypi(package: str, version: str, bin: str, description: str, **more: Any) -> Known:
    return Known("pypi", package, version, bin, description, **more)


KNOWN: dict[str, Known] = {
    "github": _npm(
        "@modelcontextprotocol/server-github", "2025.4.8", "mcp-server-github",
        "GitHub repositories through the GitHub API: create and search repositories, read, create and push files, create branches, list commits, create, list, search, update and comment on issues, open, review, merge and inspect pull requests, and search code and users.",
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": "<your GitHub personal access token>"}),
    "gitlab": _npm(
        "@modelcontextprotocol/server-gitlab", "2025.4.25", "mcp-server-gitlab",
        "GitLab projects through the GitLab API: search and create projects, fork them, read, create and push files, create branches, open issues and create merge requests.",
        env={"GITLAB_PERSONAL_ACCESS_TOKEN": "<your GitLab personal access token>",
             "GITLAB_API_URL": "https://gitlab.com/api/v4"}),
    "brave-search": _npm(
        "@brave/brave-search-mcp-server", "2.1.4", "brave-search-mcp-server",
        "Web search with the Brave Search API: web, news, image and video results, local businesses and places, AI summaries of results, and search-grounded context for answering questions.",
        env={"BRAVE_API_KEY": "<your Brave Search API key>"}),
    "slack": _npm(
        "@modelcontextprotocol/server-slack", "2025.4.25", "mcp-server-slack",
        "A Slack workspace: list channels, post messages and replies in threads, add emoji reactions, read channel history and thread replies, and list users and their profiles.",
        env={"SLACK_BOT_TOKEN": "<your Slack bot token, xoxb-...>", "SLACK_TEAM_ID": "<your Slack workspace id, T...>"}),
    "postgres": _npm(
        "@modelcontextprotocol/server-postgres", "0.6.2", "mcp-server-postgres",
        "A PostgreSQL database, read-only: run SELECT queries and inspect table schemas.",
        args=("postgresql://localhost/mydb",)),
    "puppeteer": _npm(
        "@modelcontextprotocol/server-puppeteer", "2025.5.12", "mcp-server-puppeteer",
        "Automate a headless Chrome browser with Puppeteer: open a URL, click, fill and select form fields, hover, take screenshots and run JavaScript in the page."),
    "google-maps": _npm(
        "@modelcontextprotocol/server-google-maps", "0.6.2", "mcp-server-google-maps",
        "Google Maps: geocode an address and reverse-geocode coordinates, search for places and read their details, travel distances and times, directions, and elevation.",
        env={"GOOGLE_MAPS_API_KEY": "<your Google Maps API key>"}),
    "notion": _npm(
        "@notionhq/notion-mcp-server", "2.5.2", "notion-mcp-server",
        "A Notion workspace through the Notion API: search pages and databases, read, create, update and move pages and their blocks or markdown, query databases and data sources, comments, and users.",
        env={"NOTION_TOKEN": "<your Notion integration token, ntn_...>"}),
    "tavily": _npm(
        "tavily-mcp", "0.2.22", "tavily-mcp",
        "Web search and extraction with Tavily: search the web for current information, extract the content of pages, crawl and map a website, and run multi-step research.",
        env={"TAVILY_API_KEY": "<your Tavily API key>"}),
    "exa": _npm(
        "exa-mcp-server", "3.4.1", "exa-mcp-server",
        "Web search with Exa's neural search engine, and fetching the content of web pages.",
        env={"EXA_API_KEY": "<your Exa API key>"}),
    "firecrawl": _npm(
        "firecrawl-mcp", "3.26.0", "firecrawl-mcp",
        "Scrape and crawl websites with Firecrawl: turn pages into markdown, map a site's URLs, search the web, crawl whole sites, extract structured data with a prompt, and monitor pages for changes.",
        env={"FIRECRAWL_API_KEY": "<your Firecrawl API key>"}),
    "sentry": _npm(
        "@sentry/mcp-server", "0.39.0", "sentry-mcp",
        "Sentry error monitoring: find organizations and projects, search issues and events (errors, stack traces), update an issue's status or assignee, and analyse an issue's root cause.",
        env={"SENTRY_ACCESS_TOKEN": "<your Sentry user auth token>"}),
    "kubernetes": _npm(
        "mcp-server-kubernetes", "4.1.7", "mcp-server-kubernetes",
        "A Kubernetes cluster with kubectl and Helm: get, describe, create, apply, patch, scale and delete resources, read pod logs, roll out deployments, switch contexts, exec into pods, port-forward, and install or upgrade Helm charts."),
    "airtable": _npm(
        "airtable-mcp-server", "1.14.0", "airtable-mcp-server",
        "Airtable bases: list bases and tables, describe a table's fields, list, search, read, create, update and delete records, create tables and fields, comments, and attachments.",
        env={"AIRTABLE_API_KEY": "<your Airtable personal access token>"}),
    "hubspot": _npm(
        "@hubspot/mcp-server", "0.4.0", "mcp-hubspot",
        "HubSpot CRM: list, search, read, create and update contacts, companies, deals, tickets and other objects, their associations and properties, engagements such as notes and tasks, and workflows.",
        env={"PRIVATE_APP_ACCESS_TOKEN": "<your HubSpot private app access token>"}),
    "mongodb": _npm(
        "mongodb-mcp-server", "3.0.4", "mongodb-mcp-server",
        "A MongoDB database or Atlas cluster: list databases and collections, find, aggregate, count, insert, update and delete documents, infer a collection's schema, manage indexes and collections, and explain queries.",
        env={"MDB_MCP_CONNECTION_STRING": "mongodb://localhost:27017/mydb"}),
    "desktop-commander": _npm(
        "@wonderwhy-er/desktop-commander", "0.2.52", "desktop-commander",
        "The local computer's terminal and files: run shell commands and long-running processes and interact with them, read, write, edit, move and search files and folders, list directories, and write PDFs."),
    "figma": _npm(
        "figma-developer-mcp", "0.13.2", "figma-developer-mcp",
        "Figma design files: read a file's or frame's layout, styles and components as simplified data for implementing the design in code, and download its images and icons.",
        args=("--stdio",), env={"FIGMA_API_KEY": "<your Figma personal access token>"}),
    "chrome-devtools": _npm(
        "chrome-devtools-mcp", "1.11.0", "chrome-devtools-mcp",
        "Control and inspect a live Chrome browser with DevTools: navigate and manage pages, click, type and fill forms, take screenshots and snapshots, read console messages and network requests, run JavaScript, emulate devices, and record performance traces and Lighthouse audits."),
    "circleci": _npm(
        "@circleci/mcp-server-circleci", "0.20.0", "mcp-server-circleci",
        "CircleCI continuous integration: read build failure logs, find flaky tests, get the latest pipeline status and job test results, run or rerun pipelines and workflows, validate config, and list artifacts.",
        env={"CIRCLECI_TOKEN": "<your CircleCI personal API token>"}),
    "perplexity": _npm(
        "@perplexity-ai/mcp-server", "1.2.1", "perplexity-mcp",
        "Ask Perplexity's AI search engine: web-grounded answers with citations, deep research reports, reasoning over a question, and ranked web search results.",
        env={"PERPLEXITY_API_KEY": "<your Perplexity API key>"}),
    "mapbox": _npm(
        "@mapbox/mcp-server", "0.14.0", "mcp-server",
        "Mapbox maps and geospatial tools: search and geocode places and categories, reverse geocoding, directions, travel-time isochrones and matrices, route optimization, static map images, and geometry calculations such as distance, area, buffers and intersections.",
        env={"MAPBOX_ACCESS_TOKEN": "<your Mapbox access token>"}),
    "youtube-transcript": _npm(
        "@kimtaeyoon83/mcp-server-youtube-transcript", "0.1.1", "mcp-server-youtube-transcript",
        "Get the transcript or subtitles of a YouTube video from its URL or id, in a chosen language."),
    # PyPI
    "atlassian": _pypi(
        "mcp-atlassian", "0.23.1", "mcp-atlassian",
        "Jira and Confluence (Atlassian): search issues with JQL, create, update, transition, assign, comment on and link Jira issues, boards, sprints and worklogs; search, read, create and update Confluence pages, comments and labels.",
        env={"JIRA_URL": "https://your-company.atlassian.net", "JIRA_USERNAME": "<your email>",
             "JIRA_API_TOKEN": "<your Atlassian API token>", "CONFLUENCE_URL": "https://your-company.atlassian.net/wiki",
             "CONFLUENCE_USERNAME": "<your email>", "CONFLUENCE_API_TOKEN": "<your Atlassian API token>"},
        capture_env={"JIRA_URL": "https://example.atlassian.net", "CONFLUENCE_URL": "https://example.atlassian.net/wiki",
                     "JIRA_USERNAME": "someone@example.com", "CONFLUENCE_USERNAME": "someone@example.com"}),
    "arxiv": _pypi(
        "arxiv-mcp-server", "0.8.2", "arxiv-mcp-server",
        "Search arXiv for research papers, download and read them, get abstracts, sections and LaTeX sources, follow citations, export citations, and watch topics for new papers.",
        args=("--storage-path", "/path/to/papers"), capture_args=("--storage-path", "{workdir}/papers")),
    "duckduckgo": _pypi(
        "duckduckgo-mcp-server", "0.7.0", "duckduckgo-mcp-server",
        "Search the web with DuckDuckGo and fetch the content of a web page."),
    "duckdb": _pypi(
        "mcp-server-motherduck", "1.1.0", "mcp-server-motherduck",
        "A local DuckDB database file or MotherDuck cloud database: run SQL queries and list databases, tables and columns.",
        args=("--db-path", "/path/to/database.duckdb", "--read-write"),
        capture_args=("--db-path", "{workdir}/database.duckdb", "--read-write")),
    "wikipedia": _pypi(
        "wikipedia-mcp", "2.0.1", "wikipedia-mcp",
        "Wikipedia: search articles, read an article or its summary and sections, summarise an article for a question, extract key facts, and list related topics, links and coordinates."),
    "clickhouse": _pypi(
        "mcp-clickhouse", "0.7.0", "mcp-clickhouse",
        "A ClickHouse database: list databases and tables and run read-only SQL queries.",
        env={"CLICKHOUSE_HOST": "<your ClickHouse host>", "CLICKHOUSE_USER": "<user>", "CLICKHOUSE_PASSWORD": "<password>"}),
    "email": _pypi(
        "mcp-email-server", "1.13.3", "mcp-email-server",
        "Email over IMAP and SMTP: list and read emails and attachments, send, forward and save draft emails, flag, tag, mark as read, move, archive and delete messages, and manage mailboxes.",
        args=("stdio",)),
    "word": _pypi(
        "office-word-mcp-server", "1.1.11", "word_mcp_server",
        "Microsoft Word documents (.docx): create and copy documents, read their text and outline, add headings, paragraphs, lists, tables, pictures and page breaks, search and replace, format text and tables, and protect a document."),
    "markitdown": _pypi(
        "markitdown-mcp", "0.0.1a8", "markitdown-mcp",
        "Convert a file or URL (PDF, Word, Excel, PowerPoint, HTML, images, audio and more) to markdown text."),
    "redis": _pypi(
        "redis-mcp-server", "0.5.1", "redis-mcp-server",
        "A Redis database: get and set strings, hashes, lists, sets, sorted sets, streams and JSON documents, scan and delete keys, set expiry, publish and subscribe to channels, and vector and full-text search indexes.",
        args=("--url", "redis://localhost:6379/0")),
    "elasticsearch": _pypi(
        "elasticsearch-mcp-server", "2.1.6", "elasticsearch-mcp-server",
        "An Elasticsearch or OpenSearch cluster: list, create and delete indices, index, get, search and delete documents, aliases and data streams, and cluster health and stats.",
        env={"ELASTICSEARCH_HOSTS": "https://localhost:9200", "ELASTICSEARCH_USERNAME": "<user>",
             "ELASTICSEARCH_PASSWORD": "<password>"}),
    "pandoc": _pypi(
        "mcp-pandoc", "0.11.1", "mcp-pandoc",
        "Convert documents between formats with pandoc: markdown, HTML, PDF, Word (docx), LaTeX, EPUB, reStructuredText and plain text."),
    "neo4j": _pypi(
        "mcp-neo4j-cypher", "0.6.0", "mcp-neo4j-cypher",
        "A Neo4j graph database: read its schema and run read or write Cypher queries.",
        env={"NEO4J_URI": "bolt://localhost:7687", "NEO4J_USERNAME": "neo4j", "NEO4J_PASSWORD": "<password>"}),
    "shell": _pypi(
        "mcp-shell-server", "1.1.14", "mcp-shell-server",
        "Run allowed shell commands on the local machine and return their output.",
        env={"ALLOW_COMMANDS": "ls,cat,pwd,grep,wc,touch,find"}),
    "mysql": _pypi(
        "mysql-mcp-server", "0.4.4", "mysql_mcp_server",
        "A MySQL database: run SQL queries, read the schema of its tables, and sample a table's rows.",
        env={"MYSQL_HOST": "localhost", "MYSQL_PORT": "3306", "MYSQL_USER": "<user>", "MYSQL_PASSWORD": "<password>",
             "MYSQL_DATABASE": "<database>"}),
    "obsidian": _pypi(
        "mcp-obsidian", "0.2.3", "mcp-obsidian",
        "An Obsidian notes vault (through its Local REST API plugin): list, read, search, create, append to, patch and delete notes, search by tag, read frontmatter, periodic notes and recent changes.",
        env={"OBSIDIAN_API_KEY": "<the key of Obsidian's Local REST API plugin>", "OBSIDIAN_HOST": "127.0.0.1"}),
}
