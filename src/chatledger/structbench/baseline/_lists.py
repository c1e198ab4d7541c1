"""List readers of the rule-based baseline: one function per kind of list in the templates.

Each returns rows of plain facts keyed by the schema's field names. Each reads the most common
layout of its list and leaves the others unread (prose order lines, bulleted invoice lines, the
"Required: …" sentence of meeting invitations, "led by" agendas, the block layout of flights,
"year to year:" work histories): the baseline is a floor to beat, not an oracle.
"""

from __future__ import annotations

import re
from typing import Any

from chatledger.structbench.baseline._text import (
    AMOUNT,
    find_dates,
    find_times,
    parse_amount,
    split_names,
)

Row = dict[str, Any]


def order_items(text: str) -> list[Row]:
    rows: list[Row] = []
    bullet = re.compile(rf"^- (\d+) x (.+?) \(SKU ([A-Z]+-\d+)\) at {AMOUNT} each", re.M)
    table = re.compile(rf"^\s*([A-Z]+-\d+) \| (.+?) \| qty (\d+) \| {AMOUNT}", re.M)
    for m in bullet.finditer(text):
        rows.append({"sku": m[3], "name": m[2], "quantity": int(m[1]),
                     "unit_price": float(m[4].replace(",", ""))})  # fmt: skip
    for m in table.finditer(text):
        rows.append({"sku": m[1], "name": m[2], "quantity": int(m[3]),
                     "unit_price": float(m[4].replace(",", ""))})  # fmt: skip
    return rows


def invoice_lines(text: str) -> list[Row]:
    rows: list[Row] = []
    for m in re.finditer(r"^(.+?) \| (\d+) \| (.+)$", text, re.M):
        if m[1] != "Description":
            rows.append({"description": m[1], "quantity": int(m[2]),
                         "unit_price": parse_amount(m[3])})  # fmt: skip
    return rows


def meeting_attendees(text: str) -> list[Row]:
    return [
        {"name": m[1], "email": m[2], "role": m[3]}
        for m in re.finditer(r"^- (.+?) <(.+?)> \((required|optional)\)", text, re.M)
    ]


def agenda(text: str) -> list[Row]:
    return [
        {"topic": m[1], "presenters": split_names(m[2])}
        for m in re.finditer(r"^\d+\. (.+?) – (.+)$", text, re.M)
    ]


def passengers(text: str) -> list[Row]:
    single = re.search(r"Passenger: (.+?), seat (\w+)", text)
    if single:
        return [{"name": single[1], "seat": single[2]}]
    return [{"name": m[1], "seat": m[2]} for m in re.finditer(r"^- (.+?): (\d+[A-F])$", text, re.M)]


def flights(text: str) -> list[Row]:
    rows: list[tuple[int, Row]] = []
    sentence = re.compile(
        r"flight ([A-Z]{2}\d+) from .+? \(([A-Z]{3})\) to .+? \(([A-Z]{3})\) on (.+?), "
        r"departing (.+?)\.$",
        re.M,
    )
    for pattern in (sentence,):
        for m in pattern.finditer(text):
            dates, times = find_dates(m[4]), find_times(m[5])
            rows.append(
                (
                    m.start(),
                    {
                        "number": m[1],
                        "origin": m[2],
                        "destination": m[3],
                        "date": dates[0].value if dates else None,
                        "departure_time": times[0].value if times else None,
                    },
                )
            )
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def experience(text: str) -> list[Row]:
    rows: list[tuple[int, Row]] = []
    for m in re.finditer(r"^- (.+?) at (.+?), (\d{4})–(\d{4}|present)$", text, re.M):
        rows.append((m.start(), _role(m[1], m[2], m[3], m[4])))
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def _role(title: str, company: str, start: str, end: str) -> Row:
    return {
        "title": title,
        "company": company,
        "start_year": int(start),
        "end_year": None if end == "present" else int(end),
    }


def rsvp_attendees(text: str) -> list[Row]:
    rows: list[Row] = []
    for m in re.finditer(r"^- (.+?): (\w+)(?: \(allergic to (.+?)\))?$", text, re.M):
        rows.append({"name": m[1], "meal": m[2], "allergies": split_names(m[3] or "")})
    return rows


def skills(text: str) -> list[str]:
    found = re.search(r"(?:Key skills:|comfortable with) (.+?)\.$", text, re.M)
    return split_names(found[1]) if found else []


def steps_tried(text: str) -> list[str]:
    block = re.search(r"tried so far:\n((?:- .+\n?)+)", text)
    if block:
        return [line[2:].strip() for line in block[1].splitlines() if line.startswith("- ")]
    prose = re.search(r"So far I have (.+?), with no luck", text)
    return [s.strip() for s in prose[1].split(", then ")] if prose else []
