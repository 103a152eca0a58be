"""The store in PostgreSQL, for several replicas (``--store postgresql://…``); needs psycopg.

``votr_mcp.store.postgres._pg`` is the only module that imports the driver."""

from votr_mcp.store.postgres.store import PgStore, PgVectorStore, is_postgres_url

__all__ = ["PgStore", "PgVectorStore", "is_postgres_url"]
