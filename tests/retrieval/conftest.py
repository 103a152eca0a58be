import os

import pytest
from retrieval_catalog import make_small_catalog

from votr_mcp.catalog import Catalog


@pytest.fixture(scope="session")
def small_catalog() -> Catalog:
    return make_small_catalog()


@pytest.fixture(scope="session")
def embedder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from votr_mcp.index import MiniLMEmbedder

    return MiniLMEmbedder()
