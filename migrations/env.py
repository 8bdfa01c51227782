"""Alembic environment: migrations run from code, on the caller's connection."""

from __future__ import annotations

from alembic import context

from symdiff.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("symdiff migrations run from code: use `symdiff db upgrade`")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
