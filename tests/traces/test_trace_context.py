"""A WebSocket's opening request (the realtime transport) carries the execution's ``traceparent`` as an
httpx request does: only while the execution is traced, never over one the test set itself."""

from __future__ import annotations

from pytest_semantictest.trace_context import sent, trace_id_for, tracing, with_traceparent


def test_with_traceparent_adds_the_execution_s_header_only_while_traced() -> None:
    assert with_traceparent({"Authorization": "x"}) == {"Authorization": "x"}
    with tracing("execution-1") as trace_id:
        headers = with_traceparent({"Authorization": "x"})
        version, trace, parent, flags = headers["traceparent"].split("-")
        assert (version, trace, flags) == ("00", trace_id, "01") and trace == trace_id_for("execution-1")
        assert parent in sent(trace)
        assert with_traceparent({"TraceParent": "mine"}) == {"TraceParent": "mine"}
    assert with_traceparent({}) == {}
