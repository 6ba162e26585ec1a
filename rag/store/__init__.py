"""The store: where Postgres lives (a server, or the embedded one), the connection pool, the
schema and its numbered migrations (``sql/``), tenant partitions of ``chunks``, and each tenant's
write lock. Everything that reads or writes runbooks goes through a ``Store``.

May import: the shared modules at the top of ``rag`` (``errors``, ``settings``, ``metrics``,
``progress``). Nothing else of ``rag``.
"""
