"""Invoices a supplier sends: parties, dates, lines, tax and totals. Ships dataset weights."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from chatledger.structbench.generate._kind import (
    EmailKind,
    Record,
    money,
    pick,
    random_date,
    register_kind,
    take,
)
from chatledger.structbench.generate._pools import COMPANIES, CURRENCIES, address, person
from chatledger.structbench.generate._schema import (
    ADDRESS,
    CURRENCY,
    DATE,
    EMAIL,
    INTEGER,
    NUMBER,
    PERSON,
    PRICE,
    STRING,
    Schema,
    array,
    described,
    obj,
)
from chatledger.structbench.generate._surface import money_writer, render_count, render_date

SERVICES = (("Consulting hours", 80.0, 160.0), ("Website maintenance", 200.0, 900.0),
            ("Logo design", 300.0, 1200.0), ("Hosting (annual)", 90.0, 480.0),
            ("Copywriting", 60.0, 140.0), ("Photography session", 250.0, 800.0),
            ("Translation, per page", 25.0, 60.0), ("Workshop facilitation", 400.0, 1500.0),
            ("Software licence seat", 15.0, 75.0), ("Data cleaning", 70.0, 130.0))  # fmt: skip
TAX_RATES = (19, 20, 21, 23)
VAT_PREFIXES = ("DE", "FR", "NL", "PT", "ES")
LINE: Schema = obj({"description": STRING, "quantity": INTEGER, "unit_price": NUMBER})
TAX_RATE = described(INTEGER, "tax rate in percent")
# Money decides whether an invoice is paid right: the total and the due date count triple, the
# invoice number double; everything else keeps the default rule.
_WEIGHTS = {
    1: {"total": 3.0, "due_date": 3.0, "invoice_number": 2.0},
    2: {"amounts.total": 3.0, "due_date": 3.0, "invoice_number": 2.0},
    3: {"totals.total": 3.0, "due_date": 3.0, "invoice_number": 2.0, "lines.*.unit_price": 1.0},
    4: {"totals.total": 3.0, "dates.due": 3.0, "invoice_number": 2.0, "lines.*.unit_price": 1.0},
}


class InvoiceKind(EmailKind):
    name = "invoice"
    title = "Invoice"

    def record(self, rng: random.Random) -> Record:
        vendor_contact, vendor_email = person(rng)
        client_name, _ = person(rng)
        vendor, client = rng.sample(COMPANIES, 2)
        issued = random_date(rng)
        lines: list[dict[str, Any]] = [
            {
                "description": service,
                "quantity": rng.randint(1, 12),
                "unit_price": money(rng.uniform(low, high)),
            }
            for service, low, high in rng.sample(SERVICES, rng.randint(1, 4))
        ]
        subtotal = money(sum(x["quantity"] * x["unit_price"] for x in lines))
        rate = rng.choice(TAX_RATES)
        tax = money(subtotal * rate / 100)
        return {
            "invoice_number": f"INV-{issued.year}-{rng.randint(1, 9999):04d}",
            "issue_date": issued.isoformat(),
            "due_date": (issued + timedelta(days=rng.choice((14, 30, 45)))).isoformat(),
            "vendor": {
                "name": vendor,
                "contact": vendor_contact,
                "email": vendor_email,
                "vat_id": rng.choice(VAT_PREFIXES) + str(rng.randint(10**8, 10**9 - 1)),
                "address": address(rng),
            },
            "client": {"name": client_name, "company": client},
            "lines": lines,
            "subtotal": subtotal,
            "tax_rate": rate,
            "tax": tax,
            "total": money(subtotal + tax),
            "currency": rng.choice(CURRENCIES),
        }

    def render(self, rng: random.Random, r: Record) -> str:
        v, c = r["vendor"], r["client"]
        write = money_writer(rng, r["currency"])
        number = r["invoice_number"]
        issued = render_date(rng, r["issue_date"])
        due = render_date(rng, r["due_date"])
        lines = [f"Subject: {pick(rng, 'Invoice', 'Your invoice', 'Invoice attached:')} {number}"]
        lines += ["", f"Attn: {c['name']}, {c['company']}"] if rng.random() < 0.3 else [""]
        lines += [pick(rng, f"Dear {c['name']},", f"Hello {c['name']},"), ""]
        lines.append(
            pick(
                rng,
                f"Please find below invoice {number} for {c['company']}, issued on {issued}.",
                f"Here is our invoice {number} dated {issued} for the work done for "
                f"{c['company']}.",
            )
        )
        lines.append("")
        if rng.random() < 0.5:
            for x in r["lines"]:
                qty = render_count(rng, x["quantity"])
                lines.append(f"* {x['description']}: {qty} × {write(x['unit_price'])}")
        else:
            lines.append("Description | Qty | Unit price")
            for x in r["lines"]:
                lines.append(f"{x['description']} | {x['quantity']} | {write(x['unit_price'])}")
        lines += [
            "",
            f"Subtotal: {write(r['subtotal'])}",
            f"VAT {r['tax_rate']}%: {write(r['tax'])}",
            f"Total due: {write(r['total'])}",
            "",
            pick(
                rng,
                f"Payment is due by {due}.",
                f"Please pay by {due} at the latest.",
                f"Due date: {due}",
            ),
        ]
        a = v["address"]
        lines += [
            "",
            pick(rng, "Many thanks,", "Best regards,", "Kind regards,"),
            v["contact"],
            v["name"],
            f"{a['street']}, {a['postal_code']} {a['city']}, {a['country']}",
            f"VAT ID: {v['vat_id']} · {v['email']}",
        ]
        return "\n".join(lines)

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        v = r["vendor"]
        lines = [dict(x) for x in r["lines"]]
        head = take(r, "invoice_number", "issue_date", "due_date")
        if depth == 1:
            rest = take(r, "issue_date", "due_date", "total", "currency")
            return {"invoice_number": r["invoice_number"], "vendor_name": v["name"], **rest}
        if depth == 2:
            return {
                **head,
                "vendor": take(v, "name", "email", "vat_id"),
                "amounts": take(r, "subtotal", "tax", "total"),
                "currency": r["currency"],
            }
        if depth == 3:
            return {
                **head,
                "vendor": take(v, "name", "email"),
                "lines": lines,
                "totals": take(r, "subtotal", "tax", "total", "currency"),
            }
        return {
            "invoice_number": r["invoice_number"],
            "dates": {"issued": r["issue_date"], "due": r["due_date"]},
            "parties": {
                "vendor": {**take(v, "name", "vat_id"), "address": dict(v["address"])},
                "client": dict(r["client"]),
            },
            "lines": lines,
            "totals": take(r, "subtotal", "tax_rate", "tax", "total", "currency"),
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        head = {"invoice_number": STRING, "issue_date": DATE, "due_date": DATE}
        if depth == 1:
            return {
                "invoice_number": STRING, "vendor_name": STRING, "issue_date": DATE,
                "due_date": DATE, **PRICE,
            }  # fmt: skip
        if depth == 2:
            return {
                **head,
                "vendor": obj({"name": STRING, "email": EMAIL, "vat_id": STRING}),
                "amounts": obj({"subtotal": NUMBER, "tax": NUMBER, "total": NUMBER}),
                "currency": CURRENCY,
            }
        if depth == 3:
            return {
                **head, "vendor": PERSON, "lines": array(LINE),
                "totals": obj({"subtotal": NUMBER, "tax": NUMBER, **PRICE}),
            }  # fmt: skip
        return {
            "invoice_number": STRING,
            "dates": obj({"issued": DATE, "due": DATE}),
            "parties": obj({
                "vendor": obj({"name": STRING, "vat_id": STRING, "address": ADDRESS}),
                "client": obj({"name": STRING, "company": STRING}),
            }),
            "lines": array(LINE),
            "totals": obj({"subtotal": NUMBER, "tax_rate": TAX_RATE, "tax": NUMBER, **PRICE}),
        }  # fmt: skip

    def weights(self, depth: int) -> dict[str, float] | None:
        return dict(_WEIGHTS[depth])


INVOICE = register_kind(InvoiceKind())
