"""Which assertion keys are operators, and which are near-misses of one (``greaterThan``, ``contain``)."""

from __future__ import annotations

from ...checks.operators import OPERATORS
from ...errors import did_you_mean

# names other test tools (Jest, Chai, JSON Schema, the reference runner's own messages) use for an operator
_ALIASES: dict[str, str] = {
    "eq": "equals",
    "equal": "equals",
    "equalto": "equals",
    "is": "equals",
    "tobe": "equals",
    "toequal": "equals",
    "ne": "notEquals",
    "neq": "notEquals",
    "notequal": "notEquals",
    "not": "notEquals",
    "greaterthan": "gt",
    "greater": "gt",
    "above": "gt",
    "morethan": "gt",
    "min": "gte",
    "minimum": "gte",
    "greaterthanorequal": "gte",
    "greaterthanorequalto": "gte",
    "greaterorequal": "gte",
    "ge": "gte",
    "lessthan": "lt",
    "less": "lt",
    "below": "lt",
    "max": "lte",
    "maximum": "lte",
    "lessthanorequal": "lte",
    "lessthanorequalto": "lte",
    "lessorequal": "lte",
    "le": "lte",
    "contain": "contains",
    "includes": "contains",
    "include": "contains",
    "has": "contains",
    "tocontain": "contains",
    "notcontain": "notContains",
    "notincludes": "notContains",
    "excludes": "notContains",
    "notinclude": "notContains",
    "minlen": "minLength",
    "minlength": "minLength",
    "maxlen": "maxLength",
    "maxlength": "maxLength",
    "match": "matches",
    "regex": "matches",
    "pattern": "matches",
    "tomatch": "matches",
    "notmatch": "notMatches",
    "exists": "isDefined",
    "defined": "isDefined",
    "notexists": "isUndefined",
    "undefined": "isUndefined",
    "missing": "isUndefined",
    "null": "isNull",
    "isnil": "isNull",
    "notnull": "isNotNull",
    "empty": "isEmpty",
    "notempty": "isNotEmpty",
    "true": "isTrue",
    "false": "isFalse",
}
_LOWER = {name.lower(): name for name in OPERATORS}


def suggest_operator(key: str, cutoff: float = 0.75) -> str | None:
    """The operator ``key`` was probably meant to be, or None (``key`` itself is not an operator)."""
    if key in OPERATORS:
        return None
    folded = key.lower().replace("_", "").replace("-", "")
    if folded in _LOWER:
        return _LOWER[folded]
    if folded in _ALIASES:
        return _ALIASES[folded]
    hint = did_you_mean(key, OPERATORS, cutoff=cutoff)
    return hint.split("'")[1] if hint else None


def operator_hint(key: str) -> str:
    """`` — did you mean 'gt'?`` for a near-miss (any cutoff), else an empty string."""
    name = suggest_operator(key, cutoff=0.6)
    return f" — did you mean '{name}'?" if name else ""
