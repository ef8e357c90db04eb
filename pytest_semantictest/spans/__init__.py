"""Spans an agent exports over OTLP: the run's receiver, what spans say about tool and LLM calls, and
how a test reads its own (``docs/traces.md``)."""
