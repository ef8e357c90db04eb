"""What a tool-call expectation is, as :mod:`.expectations` judges it (highbar's ``expect`` blocks).

The format builds them (``formats.highbar.spec.ExpectSpec`` and ``CallSpec``, frozen dataclasses);
these Protocols name what the checks read of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from ..json_types import JSONValue

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
else:

    class DataclassInstance(Protocol):
        """At run time a stand-in: typeshed's dataclass protocol exists for the type checker only."""


class CallExpectation(Protocol):
    """One expected tool call (``formats.highbar.spec.CallSpec``)."""

    @property
    def name(self) -> str | list[str]: ...

    @property
    def params(self) -> JSONValue:
        """Expected arguments, subset-matched (None: any)."""

    @property
    def result(self) -> JSONValue:
        """Expected result, subset-matched (None: any)."""

    @property
    def error(self) -> bool | Mapping[str, JSONValue]:
        """Whether the call must fail (True), must not (False), or a matcher its error must meet."""


class Expectation(DataclassInstance, Protocol):
    """The checks of one test or turn (``formats.highbar.spec.ExpectSpec``, a frozen dataclass)."""

    @property
    def function_calls(self) -> Sequence[CallExpectation] | None: ...

    @property
    def ordered(self) -> bool: ...

    @property
    def exclusive(self) -> bool: ...

    @property
    def forbid(self) -> tuple[str, ...]: ...

    @property
    def response(self) -> Mapping[str, JSONValue] | None: ...
