"""Alembic migrations of the symdiff schema, shipped inside the wheel as `symdiff.migrations`."""
