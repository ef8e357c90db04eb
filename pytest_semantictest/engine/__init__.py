"""The engine: runs the internal model (DataBus, references, steps, checks, repetition)."""
