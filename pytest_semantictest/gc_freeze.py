"""Python's cyclic garbage collector in a spec session: what collection built is not walked again and again.

What collection builds (modules, items, compiled specs) lives until the session ends, yet every full
collection walks all of it again, and interpreter exit makes several full passes more. For 1000 trivial
spec tests that was about a fifth of the run (``bench/bench_semantictest.py``). So in a session whose
items are all spec items (``pytest specs/``):

- right after collection, the plugin collects the young generations and freezes what is left
  (:func:`gc.freeze`): the old generation's garbage stays frozen until the session ends (3 MiB for
  1000 tests), which costs less than a full pass (about 12 ms even for one spec file, as much as a
  small run's whole overhead); what the tests make afterwards is collected as usual. A
  ``--collect-only`` run freezes too: pytest's own full passes at its end then skip what collection
  built (22 -> 1 ms for 21 highbar specs);
- at the very end of the session, after pytest's own last collection, it unfreezes it again, so a
  process that goes on (pytester, a notebook) keeps no garbage;
- when such a process exits, everything is frozen first: the exit's full passes are skipped. Objects
  still alive are freed as always; cyclic garbage left at exit is not finalized, which Python does not
  promise either.

A session with Python tests is left alone: ``gc.get_objects`` and ``gc.get_referrers`` do not see
frozen objects, and a leak test may rely on them. So is a process whose collector is disabled or that
froze objects itself.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Callable

import pytest

_at_exit: list[bool] = []
"""Whether this process has registered the freeze at exit (once)."""


class GcFreeze:
    """Registered per session; ``is_spec_item`` tells the items the freeze is for."""

    def __init__(self, config: pytest.Config, is_spec_item: Callable[[pytest.Item], bool]) -> None:
        self.is_spec_item = is_spec_item
        self.frozen = False
        config.add_cleanup(self.release)  # added at configure: it runs after pytest's own cleanups

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        option = session.config.option
        if any(getattr(option, name, False) for name in ("setuponly", "setupplan")):
            return
        if not session.items or not gc.isenabled():
            return
        if not all(self.is_spec_item(item) for item in session.items):
            return
        if gc.get_freeze_count():  # last: it walks every frozen object
            return
        gc.collect(1)
        gc.freeze()
        self.frozen = True
        if not _at_exit:
            _at_exit.append(True)
            atexit.register(gc.freeze)

    def release(self) -> None:
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
