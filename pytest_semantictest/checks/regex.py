"""Compiling a regular expression a spec wrote: its problems are the spec's, never a warning from us.

Python warns (``FutureWarning``, located in whichever of our modules compiled the pattern, and a
traceback under ``-W error``) about sets that may mean something else in a future Python. Two cases:

- a POSIX class (``[[:alpha:]]``, ``[a-z[:digit:]]``): neither Python nor JavaScript supports it; it
  silently matches the characters ``[:alph`` instead. That is an ``re.error`` naming the class, so
  every format reports it as an invalid regular expression at the spec's place;
- any other such set (``[[\\]]``, ``[a--b]``): it means today what it means in JavaScript, the
  language the formats' regexes come from; it compiles without the warning.
"""

from __future__ import annotations

import re
import warnings

_POSIX_CLASS = re.compile(
    r"(?<!\\)\[:(alnum|alpha|ascii|blank|cntrl|digit|graph|lower|print|punct|space|upper|word|xdigit):\]"
)
_HINTS = {
    "alpha": "[a-zA-Z]",
    "digit": r"\d or [0-9]",
    "alnum": "[a-zA-Z0-9]",
    "space": r"\s",
    "word": r"\w",
    "upper": "[A-Z]",
    "lower": "[a-z]",
    "xdigit": "[0-9a-fA-F]",
}


def user_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile`` for a pattern from a spec; raises ``re.error`` (and what ``re`` raises) only."""
    posix = _POSIX_CLASS.search(pattern)
    if posix:
        name = posix.group(1)
        instead = _HINTS.get(name, "an explicit set like [a-z]")
        raise re.error(
            f"POSIX class [:{name}:] is not supported (it would match the characters "
            f"'[:{name}' one by one); write {instead} instead",
            pattern,
            posix.start(),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, flags)
