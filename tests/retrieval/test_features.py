"""Per-tool views are made when a search first reads them, and what a request says outright reorders
the ranked list (retrieval/features.py)."""

import pickle

import numpy as np

from votr_mcp.catalog import Catalog, Tool
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.features import ToolFeatures, ToolViews, by_request
from votr_mcp.retrieval.rerank import ToolView

TOOLS = [Tool(server="files", name=name, description=f"{name.replace('_', ' ').capitalize()}.") for name in
         ("read_file", "write_file", "delete_file")]


def test_a_view_is_made_on_first_read_and_equals_one_made_at_once():
    views = ToolViews(Catalog(TOOLS))
    assert len(views) == 3 and views.made(range(3)) == {}
    assert views[2] == ToolView.of("delete_file", "files", "Delete file.")
    assert views.made(range(3)) == {2: views[2]} and views[2] is views[2]  # kept once made
    assert [v.name_phrase for v in views[:2]] == [" read file ", " write file "]


def test_a_snapshot_keeps_the_tools_not_the_views_made():
    views = ToolViews(Catalog(TOOLS))
    made = views[0]
    loaded = pickle.loads(pickle.dumps(views))
    assert loaded.made(range(3)) == {} and loaded[0] == made


def test_a_restacked_catalog_keeps_the_views_made_at_their_new_places():
    features = ToolFeatures.of(Catalog(TOOLS))
    kept = features.views[2]
    new = Tool(server="files", name="move_file", description="Move file.")
    # delete_file moves to position 0, read_file stays at 1 (never made), write_file is gone, move_file is new.
    restacked = features.restack([TOOLS[2], TOOLS[0], new], [2, 0, None])
    assert restacked.views[0] is kept
    assert restacked.views[2] == ToolView.of("move_file", "files", "Move file.")
    assert isinstance(restacked.views, ToolViews) and len(restacked.views) == 3


def test_a_deprecated_tool_goes_after_the_one_its_server_says_to_use():
    tools = [Tool(server="fs", name="read_file", description="Read a file. DEPRECATED: Use read_text_file instead."),
             Tool(server="fs", name="read_text_file", description="Read a file as text."),
             Tool(server="other", name="read_text_file", description="Read text."),
             Tool(server="fs", name="old_list", description="Deprecated; use `list_dir` instead.")]
    features = ToolFeatures.of(Catalog(tools))
    assert features.replaced == {0: 1}  # list_dir is not on the server: nothing to prefer
    config = RetrievalConfig()
    assert by_request("read notes.txt", np.array([0, 2, 1]), features, np.array([0, 0, 1, 0]), config, None).tolist()[:3] == [1, 0, 2]
    assert by_request("read notes.txt", np.array([0, 2]), features, np.array([0, 0, 1, 0]), config, None).tolist()[:2] == [1, 0]
    named = by_request("call read_file on notes.txt", np.array([0, 2]), features, np.array([0, 0, 1, 0]), config, None)
    assert named.tolist()[0] == 0  # asked for by name, it stays first
    hidden = np.array([True, False, True, True])  # the replacement may not be returned: the deprecated tool stays
    assert by_request("read notes.txt", np.array([0, 2]), features, np.array([0, 0, 1, 0]), config, hidden).tolist()[:2] == [0, 2]
