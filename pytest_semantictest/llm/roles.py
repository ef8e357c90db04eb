"""Names the options layer needs at startup, kept apart so it imports nothing else."""

ROLES: tuple[str, ...] = ("judge", "simulator", "paraphraser", "validator", "generator")
CACHE_MODES: tuple[str, ...] = ("off", "read", "write", "read-write", "replay")
