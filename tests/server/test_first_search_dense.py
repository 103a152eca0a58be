"""``votr-mcp serve`` on a catalog (no upstreams) answers its very first search densely."""

from __future__ import annotations

import anyio
import pytest
from votr_serving import votr_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_first_search_of_a_served_catalog_waits_for_the_model_instead_of_answering_lexically(tmp_path) -> None:
    # A cold embedding cache, the worst case: the search waits while the embedded catalog is embedded.
    with anyio.fail_after(300):
        async with votr_client("stdio", env={"VOTR_CACHE_DIR": str(tmp_path)}) as client:
            result = await client.call_tool("search_tools", {"query": "wie spät ist es in Tokio"})
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error and "Lexical results only" not in text, text
    assert result.structured_content["tools"][0]["name"].startswith("time__"), text
    assert any((tmp_path / "embeddings").iterdir()), "serve fills the cache setup warms"
