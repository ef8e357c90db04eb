"""pytest-semantictest: declarative tests for AI agents and LLM-backed APIs, run by pytest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use (below)
    from .api import run_suite
    from .blocks.base import Block, BlockError
    from .blocks.registry import register_block

__version__ = "0.1.0"
__all__ = ["Block", "BlockError", "register_block", "run_suite", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Block", "BlockError"):
        from .blocks import base

        return getattr(base, name)
    if name == "register_block":
        from .blocks.registry import register_block

        return register_block
    if name == "run_suite":
        from .api import run_suite

        return run_suite
    raise AttributeError(name)
