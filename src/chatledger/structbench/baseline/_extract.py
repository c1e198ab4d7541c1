"""A rule-based extractor for the generated emails: the no-model baseline row.

It walks the JSON Schema, and fills each field from regular expressions keyed on the field's
name and its parents' names, using the cue phrases the templates write ("Total:", "due by",
"Account:", the signature block, …). Fields it cannot find get an empty value of the right type
(``""``, ``0``, ``null`` when allowed), so its DOC shows how often that breaks the schema. It
knows the generated set's templates; on other data it is only a weak heuristic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from chatledger.structbench.baseline import _lists as rows
from chatledger.structbench.baseline._text import (
    EMAIL_PATTERN,
    PHONE_PATTERN,
    amount_after,
    find_dates,
    find_times,
    first,
    parse_count,
    signature,
)
from chatledger.structbench.dataset import Document, Json, Prediction

BASELINE_STRATEGY = "rule_baseline"
BASELINE_MODEL = "rules:structbench-v1"
_CURRENCY_CUES = (("€", "EUR"), ("£", "GBP"), ("$", "USD"), ("EUR", "EUR"), ("GBP", "GBP"),
                  ("USD", "USD"))  # fmt: skip
_NOT_FOUND = object()


class RuleExtractor:
    """Fills one schema from one email."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.signature = signature(text)
        self.dates = find_dates(text)
        self._rows: dict[str, list[dict[str, Any]]] = {}

    # --- the schema walk ----------------------------------------------------------------------

    def fill(self, schema: Json, path: tuple[str, ...] = ()) -> Json:
        kind = _type_of(schema)
        if kind == "object":
            return {
                key: self.fill(sub, (*path, key))
                for key, sub in (schema.get("properties") or {}).items()
            }
        if kind == "array":
            items = schema.get("items") or {}
            key = path[-1] if path else ""
            if _type_of(items) == "object":
                return [_from_row(items, row) for row in self.rows(key, items)]
            return self.strings(key)
        value = self.scalar(path, schema)
        return _empty(schema) if value is _NOT_FOUND or value is None else value

    def rows(self, key: str, items: Json) -> list[dict[str, Any]]:
        names = set((items.get("properties") or {}).keys())
        if key == "attendees":
            reader: Callable[[str], list[dict[str, Any]]] = (
                rows.rsvp_attendees if "meal" in names else rows.meeting_attendees
            )
        else:
            found = {
                "items": rows.order_items,
                "lines": rows.invoice_lines,
                "agenda": rows.agenda,
                "passengers": rows.passengers,
                "flights": rows.flights,
                "experience": rows.experience,
            }.get(key)
            if found is None:
                return []
            reader = found
        cache_key = f"{key}:{reader.__name__}"
        if cache_key not in self._rows:
            self._rows[cache_key] = reader(self.text)
        return self._rows[cache_key]

    def strings(self, key: str) -> list[str]:
        if key == "attendees":
            return [r["name"] for r in rows.meeting_attendees(self.text)]
        if key == "skills":
            return rows.skills(self.text)
        if key == "steps_tried":
            return rows.steps_tried(self.text)
        return []

    # --- scalars ------------------------------------------------------------------------------

    def scalar(self, path: tuple[str, ...], schema: Json) -> Any:
        key = path[-1] if path else ""
        context = set(path[:-1])
        for reader in (self._ids, self._people, self._places, self._when, self._amounts,
                       self._choices, self._details):  # fmt: skip
            value = reader(key, context, schema)
            if value is not _NOT_FOUND:
                return value
        enum = schema.get("enum")
        if enum:
            return self._first_enum(enum)
        return _NOT_FOUND

    def _ids(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if key == "order_number":
            return first(r"\b((?:PO|ORD|SO)-\d{5})\b", t)
        if key == "invoice_number":
            return first(r"\b(INV-\d{4}-\d{4})\b", t)
        if key == "account_id" or (key == "id" and "account" in context):
            return first(r"\b(ACC-\d+)\b", t)
        if key == "job_reference":
            return first(r"\b(JR-\d+)\b", t)
        if key == "error_code":
            return first(r"\b(E-\d{4})\b", t)
        if key == "booking_reference":
            return first(r"(?:reference is|reservation|booking|trip|confirmation|E-ticket) "
                         r"([A-Z0-9]{6})\b", t)  # fmt: skip
        if key == "vat_id":
            return first(r"VAT ID: (\S+)", t)
        if key in ("flight_number", "departure_date", "origin", "destination") or (
            "flight" in context
        ):
            flights = self.rows("flights", {})
            field = {"flight_number": "number", "departure_date": "date"}.get(key, key)
            return flights[0].get(field) if flights else _NOT_FOUND
        if key == "seat":
            return first(r"seat (\w+)", t)
        return _NOT_FOUND

    def _people(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if schema.get("format") == "email" or key == "email" or key.endswith("_email"):
            if "vendor" in context:
                return first(r"VAT ID: \S+ · (\S+@\S+)", t)
            emails = EMAIL_PATTERN.findall(t)
            return emails[-1] if emails else _NOT_FOUND
        if key == "phone":
            return first(f"({PHONE_PATTERN.pattern})", t)
        if not (key == "name" or key.endswith("_name")):
            return _NOT_FOUND
        who = key.removesuffix("_name") if key != "name" else ""
        parties = context | {who}
        if parties & {"event"}:
            return first(r"RSVP – (.+)$", t, flags=re.M)
        if parties & {"venue"}:
            return first(r"(?:\d{4}, | at )([^,()]+?)(?: in |, )[A-Z][\w]+\)?\.$", t, flags=re.M)
        if parties & {"hotel"}:
            return first(r"(?:Hotel: |reserved )(.+?)(?:, | in )", t)
        if parties & {"vendor"}:
            return self.signature[1] if len(self.signature) > 1 else _NOT_FOUND
        if parties & {"passenger", "contact", "client"}:
            return first(r"^(?:Dear|Hello) (.+),$", t, flags=re.M)
        return self.signature[0] if self.signature else _NOT_FOUND

    def _places(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if key == "room":
            return first(r"(?:meet in |Location: |Where: )(.+?)(?: \(|, )", t)
        if key == "building":
            return first(r"(?:meet in .+? \(|Location: .+?, |Where: .+?, )(.+?)(?:\)|\.|$)", t,
                         flags=re.M)  # fmt: skip
        if key not in ("street", "city", "postal_code", "country"):
            return _NOT_FOUND
        if "location" in context or ("applicant" in context):
            m = re.search(r"(?:based in|live in) ([^,(]+?)(?:, | \()([^.)]+)", t)
            return (m[1] if key == "city" else m[2]) if m and key in ("city", "country") else None
        if "vendor" in context:
            m = re.search(r"^(\d+ .+?), (.+?) ([A-Z][^,]+), (.+)$", t, re.M)
            parts = {"street": 1, "postal_code": 2, "city": 3, "country": 4}
            return m[parts[key]] if m else _NOT_FOUND
        block = re.search(r"ship \w+ to:\n(.+)\n(\S+(?: \S+)?) (\S+)\n(.+)", t)
        if block:
            return {"street": block[1], "postal_code": block[2], "city": block[3],
                    "country": block[4]}[key]  # fmt: skip
        line = re.search(r"Delivery address: (.+?), (\S+) (.+?), (.+?)\.$", t, re.M)
        if line:
            return {"street": line[1], "city": line[2], "postal_code": line[3],
                    "country": line[4]}[key]  # fmt: skip
        return _NOT_FOUND

    def _when(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        cue = {
            "issue_date": r"issued on|dated",
            "issued": r"issued on|dated",
            "due_date": r"due by|pay by|Due date:",
            "due": r"due by|pay by|Due date:",
            "available_from": r"available from|start on",
            "check_in": r"check-in|from",
            "check_out": r"check-out| to ",
        }.get(key)
        if cue is not None:
            m = re.search(cue, t)
            after = [d for d in self.dates if m and d.start >= m.end()]
            return after[0].value if after else _NOT_FOUND
        if schema.get("format") == "date" or key.endswith("date") or key == "occurred_on":
            return self.dates[0].value if self.dates else _NOT_FOUND
        if key in ("start_time", "departure_time"):
            times = find_times(t)
            return times[0].value if times else _NOT_FOUND
        if key == "duration_minutes":
            found = first(r"\b(\d+)[- ]min", t)
            return int(found) if found else _NOT_FOUND
        return _NOT_FOUND

    def _amounts(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if key == "total":
            value = amount_after(t, "total")
            return value if value is not None else amount_after(t, "comes to")
        if key == "subtotal":
            return amount_after(t, "Subtotal")
        if key == "tax":
            return amount_after(t, "VAT ")
        if key == "tax_rate":
            found = first(r"VAT (\d+)%", t)
            return int(found) if found else _NOT_FOUND
        if key == "currency":
            positions = [(t.find(cue), code) for cue, code in _CURRENCY_CUES if cue in t]
            return min(positions)[1] if positions else _NOT_FOUND
        if key == "party_size":
            found = first(r"(?:party of|count|we'll be|so|\() (\w+)(?: seats| attending|\.|\)|$)",
                          t, flags=re.M)  # fmt: skip
            count = parse_count(found) if found else None
            return count if count is not None else _NOT_FOUND
        if key == "years_experience":
            found = first(r"\b(\w+) years", t)
            count = parse_count(found) if found else None
            return count if count is not None else _NOT_FOUND
        return _NOT_FOUND

    def _choices(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if key in ("shipping_method", "method"):
            m = re.search(r"ship (\w+) to|(\w+) shipping", t)
            found = (m[1] or m[2]).lower() if m else None
            return found or _NOT_FOUND
        if key == "response":
            m = re.search(r"\b(?:RSVP: |a )(yes|no|maybe)\b", t)
            return m[1] if m else _NOT_FOUND
        if key == "plan":
            found = first(r"(\w+) plan", t)
            return found.lower() if found else _NOT_FOUND
        if key in ("category", "priority"):
            return self._first_enum(schema.get("enum") or [])
        return _NOT_FOUND

    def _details(self, key: str, context: set[str], schema: Json) -> Any:
        t = self.text
        if key == "title":
            return first(r"^Subject: (?:Invitation: |Meeting: )?(.+)$", t, flags=re.M)
        if key == "position":
            return first(r"Application – (.+?) \(", t)
        if key == "company":
            return first(r"(?:Attn: [^,]+, |work done for |invoice \S+ for )(.+?)(?:, issued|\.|$)",
                         t, flags=re.M)  # fmt: skip
        if key == "product":
            return first(r"(?:problem with|writing about|noticed that .+ in) ([A-Z][\w ]+?)[:.]", t)
        if key == "os":
            return first(r"(?:I'm on|Setup:) (.+?)(?: with|,) (?:app )?version", t)
        if key == "app_version":
            return first(r"version ([\d.]+)", t)
        if key == "date":
            return self.dates[0].value if self.dates else _NOT_FOUND
        return _NOT_FOUND

    def _first_enum(self, values: Iterable[Any]) -> Any:
        best: tuple[int, Any] | None = None
        for value in values:
            if not isinstance(value, str):
                continue
            m = re.search(rf"\b{re.escape(value)}\b", self.text, re.IGNORECASE)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), value)
        return best[1] if best else _NOT_FOUND


def _type_of(schema: Json) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and isinstance(schema, dict):
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    return str(kind)


def _empty(schema: Json) -> Json:
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind:
        return None
    return {"string": "", "number": 0, "integer": 0, "boolean": False}.get(str(kind))


def _from_row(schema: Json, row: dict[str, Any]) -> Json:
    out: dict[str, Json] = {}
    for key, sub in (schema.get("properties") or {}).items():
        if _type_of(sub) == "object":
            out[key] = _from_row(sub, row)
        elif key in row and row[key] is not None:
            out[key] = row[key]
        else:
            out[key] = [] if _type_of(sub) == "array" else _empty(sub)
    return out


def extract_by_rules(text: str, schema: Json) -> Json:
    """The baseline's JSON for one email and schema."""
    return RuleExtractor(text).fill(schema)


def baseline_predictions(documents: Iterable[Document]) -> list[Prediction]:
    """One prediction per document, written as compact JSON (the baseline never fences)."""
    return [
        Prediction(
            id=d.id,
            output=json.dumps(extract_by_rules(d.input, d.schema), ensure_ascii=False),
            strategy=BASELINE_STRATEGY,
            model=BASELINE_MODEL,
        )
        for d in documents
    ]
