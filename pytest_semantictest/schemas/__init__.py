"""JSON Schemas of the spec formats, generated from their pydantic models (for editors).

``python -m pytest_semantictest.schemas`` rewrites ``<name>.schema.json`` beside this file from
:data:`SCHEMAS`; ``--check`` only reports files that are out of date (exit 1). The files are
committed and shipped as package data; ``tests/reports/test_schemas.py`` keeps them in sync.

A format's schemas are part of its record (``formats/registry.py``).
"""

from __future__ import annotations

import json
import warnings
from importlib import import_module
from pathlib import Path
from typing import Any, get_args

from pydantic import AliasChoices, BaseModel
from pydantic.json_schema import PydanticJsonSchemaWarning

from ..formats.registry import FORMATS, SchemaSource

HERE = Path(__file__).resolve().parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"


SCHEMAS: list[SchemaSource] = [schema for spec_format in FORMATS for schema in spec_format.schemas]
"""Every format's schemas (each format's record in ``formats/registry.py`` names its own)."""


MARKER_NAMES = {"yao": "yao-case"}
"""A format's marker name (``-m yao``) where its schema's name differs."""


def named(name: str) -> SchemaSource | None:
    """The schema called ``name`` or by its format's marker name (``yao``: a Yao case line)."""
    name = MARKER_NAMES.get(name, name)
    return next((source for source in SCHEMAS if source.name == name), None)


def listing() -> str:
    """What ``semantictest schema`` without a name prints: every schema, what it is for, how to get it."""
    width = max(len(source.name) for source in SCHEMAS)
    aliases = {new: old for old, new in MARKER_NAMES.items()}
    lines = ["JSON Schemas of the spec formats (semantictest schema NAME prints one; --path: its file):"]
    for source in SCHEMAS:
        also = f" (also: {aliases[source.name]})" if source.name in aliases else ""
        lines.append(f"  {source.name:<{width}}  {source.title}{also}: {source.description}")
    lines.append("Compliance Markdown files have no JSON Schema: semantictest validate checks them.")
    return "\n".join(lines) + "\n"


def path(name: str) -> Path:
    """Where the committed schema of format ``name`` is."""
    return HERE / f"{name}.schema.json"


def _model(source: SchemaSource) -> Any:
    module, _, cls = source.model.partition(":")
    return getattr(import_module(module), cls)


def _open_free_keys(node: Any, pattern: str) -> None:
    """Every closed object (``additionalProperties: false``) also takes the format's free keys."""
    if isinstance(node, dict):
        if node.get("additionalProperties") is False and "properties" in node:
            node.setdefault("patternProperties", {})[pattern] = {}
        for value in node.values():
            _open_free_keys(value, pattern)
    elif isinstance(node, list):
        for value in node:
            _open_free_keys(value, pattern)


def _models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """``model`` and every model its fields use, by class name (pydantic's ``$defs`` keys)."""
    found: dict[str, type[BaseModel]] = {}
    todo: list[Any] = [model]
    while todo:
        kind = todo.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind.__name__ not in found:
                found[kind.__name__] = kind
                todo.extend(field.annotation for field in kind.model_fields.values())
        else:
            todo.extend(get_args(kind))
    return found


def _add_aliases(node: dict[str, Any], model: type[BaseModel]) -> None:
    """Alias spellings the loader accepts (``assert`` for ``assertions``) are properties too; a required
    field is satisfied by any one of its spellings."""
    required = node.get("required", [])
    for name, field in model.model_fields.items():
        if isinstance(field.validation_alias, AliasChoices):
            _add_field_aliases(node, name, field.validation_alias)
    if "required" in node and not required:
        del node["required"]


def _add_field_aliases(node: dict[str, Any], name: str, choices: AliasChoices) -> None:
    """One field's spellings as properties of its schema; when it is required, any one of them is."""
    properties, required = node.get("properties", {}), node.get("required", [])
    names = [c for c in choices.choices if isinstance(c, str)]
    main = name if name in properties else names[0]
    for alias in names:
        properties.setdefault(alias, properties[main])
    if main in required:
        required.remove(main)
        node.setdefault("allOf", []).append({"oneOf": [{"required": [alias]} for alias in names]})


def build(source: SchemaSource) -> dict[str, Any]:
    """The schema document of one format (deterministic: same models, same text)."""
    model = _model(source)
    with warnings.catch_warnings():  # defaults that are sentinels are left out of the schema, as they should
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        schema = model.model_json_schema()
    for name, cls in _models(model).items():
        _add_aliases(schema if cls is model else schema.get("$defs", {}).get(name, {}), cls)
    _open_free_keys(schema, source.free_keys)
    if source.schema_key:
        schema["properties"] = {
            "$schema": {"type": "string", "description": "the JSON Schema this file follows (for editors)"},
            **schema["properties"],
        }
    schema.pop("title", None)
    schema.pop("description", None)
    return {"$schema": DRAFT, "title": source.title, "description": source.description, **schema}


def render(source: SchemaSource) -> str:
    return json.dumps(build(source), indent=2, ensure_ascii=False) + "\n"


def stale() -> list[Path]:
    """Committed schema files that differ from what the models give."""
    out = []
    for source in SCHEMAS:
        target = path(source.name)
        try:
            current = target.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != render(source):
            out.append(target)
    return out


def write_all() -> list[Path]:
    """Regenerate every schema file; returns the files whose text changed."""
    changed = stale()
    for source in SCHEMAS:
        if path(source.name) in changed:
            path(source.name).write_text(render(source), encoding="utf-8")
    return changed
