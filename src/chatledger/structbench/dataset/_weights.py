"""Weights of ground-truth paths for WV (DESIGN §8): from the dataset, else the default rule.

Default rule, for a leaf at ``path``:  ``weight = importance(last key) / level``

- ``level`` is how many objects/arrays enclose the leaf (``total`` 1, ``customer.email`` 2,
  ``items.0.sku`` 3): a top-level fact outweighs a detail buried in a sub-object, and the many
  leaves of a long list do not drown the few top-level ones.
- ``importance`` is 2 for the fields a downstream system keys or bills on — identifiers
  (``…id``, ``…number``, ``…reference``, ``sku``, ``code``), e-mail addresses, money and
  quantities (``total``, ``amount``, ``price``, ``quantity``, ``tax``, ``subtotal``) and dates or
  times (``…date``, ``…time``, ``due``, ``check_in``/``check_out``) — 1.5 for names and
  other who/where fields (``name``, ``city``, ``country``, ``origin``, ``destination``), 1
  for everything else. The last key that is not a list index is the one looked at.

Dataset weights map a path to a weight; a path may use ``*`` for any list index
(``items.*.sku``). An exact path wins over its wildcard form; paths the dataset does not name get
the default rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from chatledger.structbench.dataset._paths import leaf_level, wildcard_path

_KEY_FIELD = re.compile(
    r"(^|_)(id|number|no|reference|ref|sku|code|email|iban|vat_id)$"
    r"|(^|_)(total|amount|price|unit_price|quantity|qty|tax|subtotal|cost|fare|salary)(_|$)"
    r"|(^|_)(date|time|due|issued|check_in|check_out|start|end|deadline)(_|$)"
    r"|_(date|time|at|on)$"
)
_WHO_WHERE_FIELD = re.compile(
    r"(^|_)(name|city|country|origin|destination|company|organization|vendor|client|"
    r"customer|applicant|guest|position|title|product)(_|$)"
)
KEY_FIELD_IMPORTANCE = 2.0
WHO_WHERE_IMPORTANCE = 1.5


def field_importance(path: str) -> float:
    """2, 1.5 or 1 by the last named key of ``path`` (see the module docstring)."""
    names = [part for part in path.split(".") if part and not part.isdigit()]
    key = names[-1].lower() if names else ""
    if _KEY_FIELD.search(key):
        return KEY_FIELD_IMPORTANCE
    if _WHO_WHERE_FIELD.search(key):
        return WHO_WHERE_IMPORTANCE
    return 1.0


def default_weight(path: str) -> float:
    return field_importance(path) / max(1, leaf_level(path))


def resolve_weights(paths: Iterable[str], given: Mapping[str, float] | None) -> dict[str, float]:
    """The weight of each ground-truth path: dataset weight (exact, then wildcard) or default."""
    resolved: dict[str, float] = {}
    for path in paths:
        if given:
            weight = given.get(path)
            if weight is None:
                weight = given.get(wildcard_path(path))
            if weight is not None:
                resolved[path] = float(weight)
                continue
        resolved[path] = default_weight(path)
    return resolved
