"""Pipeline blocks, one a module, plus the registry."""

from .base import Block, BlockError
from .registry import register_block

__all__ = ["Block", "BlockError", "register_block"]
