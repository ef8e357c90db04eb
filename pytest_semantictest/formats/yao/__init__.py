"""Yao agent tests V2 (``*.jsonl``): static multi-turn, dynamic (simulated user + checkpoints),
agent-driven assertions. ``compile.make_loader`` is the collection entry point."""
