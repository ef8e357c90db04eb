"""The redactor in isolation: every printed form of a secret, secrets by where they go, and values
that are not secrets staying visible."""

from __future__ import annotations

import base64
import html
import json
from urllib.parse import quote, quote_plus

import pytest

from pytest_semantictest.redact import (
    MASK,
    Redactor,
    header_secrets,
    secret_header,
    secret_values,
    used_secrets,
)

SECRET = 'pa"ss\\wörd +/=&<x9Wq7T'
"""A quote, a backslash, a space, ``+``, ``/``, ``=``, ``&``, ``<`` and non-ASCII: every encoding changes it."""


def encodings(value: str) -> dict[str, str]:
    """Each way a report, a body or a header may print ``value``."""
    once = json.dumps(value)[1:-1]
    return {
        "raw": value,
        "json": json.dumps(value, ensure_ascii=False)[1:-1],
        "json-ascii": once,
        "json-in-json": json.dumps(once)[1:-1],
        "url": quote(value, safe=""),
        "url-path": quote(value),
        "url-plus": quote_plus(value),
        "repr": repr(value)[1:-1],
        "ascii": ascii(value)[1:-1],
        "html": html.escape(value),
        "base64": base64.b64encode(value.encode()).decode().rstrip("="),
    }


@pytest.mark.parametrize("form", sorted(encodings(SECRET)))
def test_every_printed_form_of_an_environment_secret_is_masked(form: str) -> None:
    redactor = Redactor(secret_values({"SEMTEST_PASSWORD": SECRET}))
    shown = encodings(SECRET)[form]
    text = redactor.text(f"before {shown} after")
    assert text == f"before {MASK} after" and "x9Wq7T" not in text


def test_basic_credentials_holding_a_secret_are_masked_whatever_the_user() -> None:
    redactor = Redactor(secret_values({"SEMTEST_PASSWORD": SECRET}))
    for user in ("bob", "alice@example.com", ""):
        token = base64.b64encode(f"{user}:{SECRET}".encode()).decode()
        assert redactor.text(f'{{"authorization": "Basic {token}"}}') == '{"authorization": "Basic ***"}'
    other = base64.b64encode(b"bob:not-the-secret").decode()
    assert redactor.text(f"Basic {other}") == f"Basic {other}"  # only credentials that hold a secret


def test_a_value_that_reached_a_secret_header_is_a_secret_everywhere() -> None:
    redactor = Redactor()
    value = 'rv"7\\ q+/=Zk3'
    trace = {
        "input": {"headers": {"Authorization": f"Bearer {value}", "Accept": "application/json"}},
        "output": {"body": json.dumps({"echo": f"Bearer {value}"})},
    }
    redactor.learn(trace["input"])  # what is sent
    shown = json.dumps(redactor.data(trace))
    assert "Zk3" not in shown and "application/json" in shown
    # learnt for the session
    assert redactor.text(f"later, elsewhere: {quote(value)}") == "later, elsewhere: ***"


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "Proxy-Authorization",
        "X-Api-Key",
        "api-key",
        "X-Auth-Token",
        "x-session-token",
        "X-Goog-Auth",
        "X-Auth",
        "auth",
        "Cookie",
        "X-Client-Secret",
        "client_password",
        "x-authorization",
    ],
)
def test_secret_looking_header_names(name: str) -> None:
    assert secret_header(name)


@pytest.mark.parametrize(
    "name",
    [
        "Accept",
        "Content-Type",
        "X-Request-Id",
        "User-Agent",
        "X-Shop",
        "author",
        "WWW-Authenticate",
        "keyboard",
    ],
)
def test_ordinary_header_names(name: str) -> None:
    assert not secret_header(name)


def test_a_mapping_key_never_makes_its_value_a_secret() -> None:
    value = {
        "author": "Jane Austen",
        "password": "hunter2-long",
        "tokenizer": "cl100k_base",
        "secretary": "Miss Moneypenny",
        "sort-key": "created_at",
        "auth_method": "oauth-device",
    }
    assert Redactor(["sk-unrelated-1"]).data(value) == value


def test_header_secrets_keep_the_scheme_and_decode_basic() -> None:
    token = base64.b64encode(b"bob:hunter2-long").decode()
    assert header_secrets("Authorization", "Bearer sk-abcdef") == ["sk-abcdef"]
    assert header_secrets("Authorization", f"Basic {token}") == [token, "bob:hunter2-long", "hunter2-long"]
    assert header_secrets("X-Api-Key", "k-123456") == ["k-123456"]
    assert header_secrets("Accept", "application/json") == []


def test_values_from_variables_are_secret_by_name_or_destination_only() -> None:
    url, token, code = "http://127.0.0.1:8123", "tok-123456", "shop-5b8d0e"
    names = {url: "EXAMPLE_AGENT_URL", token: "SHOP_TOKEN", code: "SHOP_CODE"}
    assert used_secrets(names, {}) == [token]
    assert used_secrets(names, {"X-Shop-Key": code, "Accept": url}) == [token, code]


def test_an_ordinary_url_is_not_masked() -> None:
    redactor = Redactor(secret_values({"EXAMPLE_AGENT_URL": "http://127.0.0.1:8123", "API_KEY": "sk-123456"}))
    shown = redactor.text("GET http://127.0.0.1:8123/users/1 with sk-123456")
    assert shown == "GET http://127.0.0.1:8123/users/1 with ***"


def test_forms_shorter_than_the_minimum_are_not_masked() -> None:
    assert not Redactor(["abc"]).secrets
    assert Redactor(secret_values({"PIN_KEY": "1234"})).text("port 1234") == "port 1234"
