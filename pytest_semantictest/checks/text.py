"""The text a text check reads: a string as it is, any other value as the JSON the trace shows."""

from __future__ import annotations

import json


def json_text(value: object) -> str:
    """``value`` if it is a string, else its JSON text in key order (``{"active": true}``, not
    Python's ``{'active': True}``), as the failure report and trace print it."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # a circular structure: nothing JSON can say
        return repr(value)
