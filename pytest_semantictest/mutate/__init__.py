"""Mutation runs (``--semantictest-mutate``, ``docs/mutation.md``): record every agent reply once, then
re-run each passing test against replayed replies with one deliberate fault each; a spec that still
passes against a broken reply is missing a check."""
