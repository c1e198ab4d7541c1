"""Leaf paths of JSON values and nesting depth of values and schemas.

A *leaf* is a scalar (string, number, boolean, null) or an empty container; its path joins the
object keys and list indices above it with dots (``items.0.sku``). The root's own path is ``""``
(only seen when the whole value is a scalar or an empty container). Keys that themselves contain
dots are not escaped: they are vanishingly rare in extraction schemas and the paths stay readable.
"""

from __future__ import annotations

from typing import Any

Json = Any  # a value as json.loads returns it: dict, list, str, int, float, bool or None


def flatten(value: Json) -> dict[str, Json]:
    """Map each leaf path of ``value`` to the leaf."""
    leaves: dict[str, Json] = {}
    _flatten_into(value, "", leaves)
    return leaves


def _flatten_into(value: Json, prefix: str, leaves: dict[str, Json]) -> None:
    if isinstance(value, dict):
        if not value:
            leaves[prefix] = {}
            return
        for key, child in value.items():
            _flatten_into(child, f"{prefix}.{key}" if prefix else str(key), leaves)
    elif isinstance(value, list):
        if not value:
            leaves[prefix] = []
            return
        for index, child in enumerate(value):
            _flatten_into(child, f"{prefix}.{index}" if prefix else str(index), leaves)
    else:
        leaves[prefix] = value


def value_depth(value: Json) -> int:
    """Nesting of objects/arrays: a scalar is 0, a flat object 1, an object holding a list of
    objects 3."""
    if isinstance(value, dict):
        return 1 + max((value_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((value_depth(v) for v in value), default=0)
    return 0


_MAX_REF_HOPS = 32  # a recursive schema has no finite depth; stop following $ref after this


def schema_depth(schema: Json) -> int:
    """The deepest object/array nesting a schema allows, counted like :func:`value_depth`.

    Follows local ``$ref`` (``#/...``), and ``anyOf``/``oneOf``/``allOf`` take their deepest
    branch."""
    return _schema_depth(schema, schema, 0)


def _schema_depth(node: Json, root: Json, hops: int) -> int:
    if not isinstance(node, dict) or hops > _MAX_REF_HOPS:
        return 0
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        return _schema_depth(_resolve_pointer(root, ref), root, hops + 1)
    depth = 0
    for combinator in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(combinator, []) or []:
            depth = max(depth, _schema_depth(branch, root, hops))
    types = node.get("type")
    type_set = set(types) if isinstance(types, list) else {types}
    properties = node.get("properties")
    if isinstance(properties, dict) or "object" in type_set:
        children = properties.values() if isinstance(properties, dict) else []
        depth = max(depth, 1 + max((_schema_depth(c, root, hops) for c in children), default=0))
    items = node.get("items")
    prefix_items = node.get("prefixItems")
    if items is not None or prefix_items is not None or "array" in type_set:
        branches = [items] if isinstance(items, dict) else []
        branches += prefix_items if isinstance(prefix_items, list) else []
        depth = max(depth, 1 + max((_schema_depth(b, root, hops) for b in branches), default=0))
    return depth


def _resolve_pointer(root: Json, ref: str) -> Json:
    node = root
    for raw in ref.lstrip("#").split("/"):
        if not raw:
            continue
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def wildcard_path(path: str) -> str:
    """``items.0.sku`` → ``items.*.sku``: the form dataset weights may use for every list item."""
    return ".".join("*" if part.isdigit() else part for part in path.split("."))


def leaf_level(path: str) -> int:
    """How many objects/arrays enclose a leaf: ``total`` 1, ``customer.name`` 2,
    ``items.0.sku`` 3 (root object, the list, the item)."""
    return 1 + path.count(".") if path else 0
