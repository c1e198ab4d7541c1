"""What the page shows for each field: its widgets, built from the schema's JSON Schema.

Enumerations (polarity, emotion, phase, pattern, …) come from the schema's vocabulary, so a
schema file that extends one extends the page. Properties that name people are chosen among
the chunk's participants, properties that name messages are picked by clicking messages; item
confidences are a model's, not a person's, and are carried along unseen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from chatledger.annotate._state import SCALAR_FIELDS
from chatledger.core import extraction_json_schema

Widget = Literal[
    "text",
    "longtext",
    "enum",
    "speaker",
    "speakers",
    "evidence",
    "message",
    "number",
    "hidden",
    "subitems",
]
SPEAKER_PROPERTIES = frozenset({"owner", "speaker", "asked_by", "answered_by", "held_by", "actor"})
MESSAGE_PROPERTIES = frozenset({"start_message_id", "end_message_id", "message_id"})
LONG_TEXT = frozenset({"text", "question", "answer", "description"})


class PropertySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    widget: Widget
    nullable: bool = False
    values: list[str] = Field(default_factory=list)  # an enumeration's members
    props: list[PropertySpec] = Field(default_factory=list)  # a sub-list's item properties


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    # list: items with properties; strings: items that are texts; messages: items that are
    # message ids; text: one text (summary); object: one item or none (emotional arc)
    kind: Literal["list", "strings", "messages", "text", "object"]
    props: list[PropertySpec] = Field(default_factory=list)


def _label(name: str) -> str:
    return name.replace("_", " ")


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The schema node without ``$ref`` and ``anyOf [..., null]``, and whether null is allowed."""
    nullable = False
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        nullable = len(options) < len(node["anyOf"])
        node = options[0]
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node, nullable


def _property(name: str, node: Mapping[str, Any], defs: Mapping[str, Any]) -> PropertySpec:
    node, nullable = _resolve(node, defs)
    widget: Widget
    props: list[PropertySpec] = []
    values: list[str] = []
    if "enum" in node:
        widget, values = "enum", [str(v) for v in node["enum"]]
    elif name in SPEAKER_PROPERTIES:
        widget = "speaker"
    elif name == "made_by":
        widget = "speakers"
    elif name == "evidence":
        widget = "evidence"
    elif name in MESSAGE_PROPERTIES:
        widget = "message"
    elif name == "confidence":
        widget = "hidden"
    elif node.get("type") == "number":
        widget = "number"
    elif node.get("type") == "array":
        item, _ = _resolve(node["items"], defs)
        widget = "subitems"
        props = [_property(k, v, defs) for k, v in item.get("properties", {}).items()]
    else:
        widget = "longtext" if name in LONG_TEXT else "text"
    return PropertySpec(
        name=name, label=_label(name), widget=widget, nullable=nullable, values=values, props=props
    )


def form_spec(fields: list[str]) -> list[FieldSpec]:
    """The widgets of each field, in the order given."""
    schema = extraction_json_schema("v3")
    defs = schema.get("$defs", {})
    out: list[FieldSpec] = []
    for field in fields:
        node, _ = _resolve(schema["properties"][field], defs)
        if field == "summary":
            out.append(FieldSpec(name=field, label=_label(field), kind="text"))
            continue
        if field in SCALAR_FIELDS:
            props = [_property(k, v, defs) for k, v in node.get("properties", {}).items()]
            out.append(FieldSpec(name=field, label=_label(field), kind="object", props=props))
            continue
        item, _ = _resolve(node["items"], defs)
        if item.get("type") == "string":
            kind: Literal["strings", "messages"] = (
                "messages" if field == "evidence_message_ids" else "strings"
            )
            out.append(FieldSpec(name=field, label=_label(field), kind=kind))
            continue
        props = [_property(k, v, defs) for k, v in item.get("properties", {}).items()]
        out.append(FieldSpec(name=field, label=_label(field), kind="list", props=props))
    return out
