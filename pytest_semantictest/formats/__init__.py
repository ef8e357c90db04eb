"""File formats: each loader reads one format, validates it and compiles it to model.Suite.

A format's pytest-side glue, when it has any, is its ``pytest_glue`` module, registered through
the one interface of :mod:`.glue` (see ``docs/formats.md``, "Adding a format").
"""
