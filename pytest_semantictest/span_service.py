"""The run's OTLP receiver as a session service (``--semantictest-otel``, ``docs/traces.md``).

One receiver a run, in the process that runs no test under xdist (the controller: an agent shared
by the workers exports to one place) or in the only process; workers read their tests' spans from it
over HTTP. Once it runs, the agents the plugin starts get the OpenTelemetry exporter settings that
point at it (:data:`~.trace_context.EXPORT_ENV`), and each execution's requests carry its
``traceparent``. An agent started elsewhere is pointed at ``--semantictest-otel-port``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from . import options

if TYPE_CHECKING:
    from .spans.receiver import SpanReceiver
    from .spans.source import SpanSource

OTLP_URL = "semantictest_otlp_url"
"""``workerinput`` key: the controller's receiver, for its workers."""


def exporter_env(url: str) -> dict[str, str]:
    """What an agent needs to export its spans to ``url`` at once (OTLP over HTTP, protobuf; a short
    batch delay, so a test's spans arrive while the test waits for them)."""
    return {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{url}/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }


class SpanService:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.receiver: SpanReceiver | None = None
        self._source: SpanSource | None = None

    @property
    def enabled(self) -> bool:
        """Read when first needed: a conftest's ``pytest_configure`` may turn it on (``api.set_default``)."""
        return bool(options.value(self.config, "otel"))

    def check(self) -> None:
        """At configure: a port without the receiver is a setting with no effect."""
        if options.value(self.config, "otel-port") and not self.enabled:
            raise pytest.UsageError(
                "pytest-semantictest: --semantictest-otel-port has no effect without --semantictest-otel"
            )

    def _receiver(self) -> SpanReceiver:
        if self.receiver is None:
            from .spans.receiver import SpanReceiver

            port = int(options.value(self.config, "otel-port") or 0)
            receiver = SpanReceiver(port)
            try:
                receiver.start()
            except OSError as exc:
                raise pytest.UsageError(
                    f"pytest-semantictest: the OTLP receiver cannot listen on 127.0.0.1:{port}: {exc} "
                    "(choose another --semantictest-otel-port, or 0 for any free port)"
                ) from None
            self.receiver = receiver
        return self.receiver

    def source(self) -> SpanSource | None:
        """Where this process's tests read their spans (None: the receiver is off); from now on the
        agents this process starts export to it."""
        if not self.enabled:
            return None
        if self._source is None:
            from . import trace_context
            from .spans.source import LocalSpans, RemoteSpans

            workerinput = getattr(self.config, "workerinput", None)
            url = workerinput.get(OTLP_URL) if workerinput is not None else None
            self._source = RemoteSpans(str(url)) if url else LocalSpans(self._receiver())
            trace_context.EXPORT_ENV.update(exporter_env(self._source.endpoint))
            trace_context.ANNOUNCE[:] = [self._source.announce]
        return self._source

    def share(self, workerinput: dict[str, object]) -> None:
        """xdist controller: its receiver's URL for a worker."""
        if self.enabled:
            workerinput[OTLP_URL] = self._receiver().url

    def close(self) -> None:
        if self._source is not None:
            from . import trace_context

            trace_context.ANNOUNCE.clear()
        if self.receiver is not None:
            self.receiver.stop()
