"""Captured logs pass through the session's redactor: ``--log-level``, ``--log-file``, ``--log-cli-level``,
the console's "Captured log" sections and JUnit's ``junit_logging`` never show a secret.

A record of the plugin's loggers or of the libraries it sends with (``httpx``, ``httpcore``,
``openai`` and ``openai``'s own ``httpx2``: httpx's "HTTP Request: GET ...?api_key=..." line) is redacted as it is made: its message
(with its arguments) and any exception or stack text it carries. Doing it in the log record factory,
not in a filter on those loggers, reaches their child loggers too (``httpcore.http11``,
``openai._base_client``): a logger's filters see only the records logged to that very logger.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from ..redact import Redactor

LOGGERS = re.compile(r"(pytest_semantictest|httpx\d*|httpcore\d*|openai)(\.|$)")
"""Loggers (with their children) whose records are redacted; ``httpx2``/``httpcore2``: the HTTP stack
some ``openai`` releases bring."""


def _ours(name: str) -> bool:
    return bool(LOGGERS.match(name))


class RedactedRecords:
    """The log record factory while a session runs: the previous one's records, redacted.

    ``redactor()`` gives the session's redactor (read for every record: secrets learnt during the
    run count from then on)."""

    def __init__(self, redactor: Callable[[], Redactor]) -> None:
        self.redactor = redactor
        self.previous: Callable[..., logging.LogRecord] | None = None

    def __call__(self, *args: object, **kwargs: object) -> logging.LogRecord:
        assert self.previous is not None
        record = self.previous(*args, **kwargs)
        if _ours(record.name):
            try:
                redactor = self.redactor()
            except Exception as exc:  # (a broken .env file, say): withhold the record, never show it unmasked  # noqa: BLE001
                record.msg = f"(log record withheld: no redactor: {type(exc).__name__})"
                record.args, record.exc_info, record.exc_text, record.stack_info = None, None, None, None
                return record
            redact(record, redactor)
        return record

    def install(self) -> None:
        self.previous = logging.getLogRecordFactory()
        logging.setLogRecordFactory(self)

    def uninstall(self) -> None:
        """Put the previous factory back (if another one was installed over ours since, it is left)."""
        if self.previous is not None and logging.getLogRecordFactory() is self:
            logging.setLogRecordFactory(self.previous)


def redact(record: logging.LogRecord, redactor: Redactor) -> None:
    """Mask the secrets in ``record``'s message, exception and stack text, in place."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: logging reports it when the record is emitted  # noqa: BLE001
        return
    record.msg, record.args = redactor.text(message), None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redactor.text(record.exc_text)
    if record.stack_info:
        record.stack_info = redactor.text(record.stack_info)
