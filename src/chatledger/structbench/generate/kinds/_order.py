"""Purchase orders a customer sends to a shop."""

from __future__ import annotations

import random
from collections.abc import Callable
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
from chatledger.structbench.generate._pools import (
    COMPANIES,
    CURRENCIES,
    PRODUCTS,
    address,
    code,
    person,
    phone,
)
from chatledger.structbench.generate._schema import (
    ADDRESS,
    DATE,
    EMAIL,
    INTEGER,
    NUMBER,
    PERSON,
    PRICE,
    STRING,
    Schema,
    array,
    enum,
    obj,
)
from chatledger.structbench.generate._surface import money_writer, render_count, render_date

SHIPPING = ("standard", "express", "overnight")
ITEM: Schema = obj({"sku": STRING, "name": STRING, "quantity": INTEGER, "unit_price": NUMBER})


class OrderKind(EmailKind):
    name = "order"
    title = "Purchase order"

    def record(self, rng: random.Random) -> Record:
        name, email = person(rng)
        currency = rng.choice(CURRENCIES)
        items: list[dict[str, Any]] = []
        for product, prefix, low, high in rng.sample(PRODUCTS, rng.randint(1, 4)):
            items.append(
                {
                    "sku": code(rng, prefix, rng.choice((3, 4))),
                    "name": product,
                    "quantity": rng.randint(1, 12),
                    "unit_price": money(rng.uniform(low, high)),
                }
            )
        total = money(sum(i["quantity"] * i["unit_price"] for i in items))
        return {
            "order_number": code(rng, rng.choice(("PO", "ORD", "SO")), 5),
            "order_date": random_date(rng).isoformat(),
            "customer": {
                "name": name,
                "email": email,
                "phone": phone(rng),
                "company": rng.choice(COMPANIES),
            },
            "items": items,
            "shipping_address": address(rng),
            "shipping_method": rng.choice(SHIPPING),
            "total": total,
            "currency": currency,
        }

    def render(self, rng: random.Random, r: Record) -> str:
        c = r["customer"]
        number, when = r["order_number"], render_date(rng, r["order_date"])
        lines: list[str] = []
        if rng.random() < 0.6:
            subject = pick(rng, f"Order {number}", f"New order – {number}",
                           f"Purchase order {number} ({c['company']})")  # fmt: skip
            lines += [f"Subject: {subject}", ""]
        lines.append(pick(rng, "Hello,", "Hi team,", "Good morning,", "Dear Sales Team,"))
        lines.append("")
        lines.append(
            pick(
                rng,
                f"I'd like to place an order (reference {number}) dated {when}.",
                f"Please find our purchase order {number} below. Order date: {when}.",
                f"Following our call, here is order #{number}, placed on {when}.",
                f"On behalf of {c['company']} I am sending order {number} ({when}).",
            )
        )
        if rng.random() < 0.4:
            lines.append(pick(rng, "We need these for the new office.",
                              "Same supplier terms as last time, I assume.",
                              "Sorry for the short notice!"))  # fmt: skip
        lines.append("")
        write = money_writer(rng, r["currency"])
        lines += self._items(rng, r, write)
        lines.append("")
        total = write(r["total"])
        lines.append(
            pick(
                rng,
                f"Total: {total}",
                f"That comes to {total} in total.",
                f"By my count the order total is {total}.",
            )
        )
        lines += self._shipping(rng, r)
        lines.append("")
        closing = pick(rng, "Thanks,", "Best regards,", "Kind regards,", "Cheers,")
        if rng.random() < 0.5:
            lines += [closing, c["name"], c["company"], f"{c['email']} | {c['phone']}"]
        else:
            lines += [
                f"If anything is unclear, call me on {c['phone']} or write to {c['email']}.",
                "",
                closing,
                c["name"],
            ]
        return "\n".join(lines)

    def _items(self, rng: random.Random, r: Record, write: Callable[[float], str]) -> list[str]:
        style = rng.randrange(3)
        out = [pick(rng, "Items:", "We would like:", "Order lines:", "Please send:")]
        for i in r["items"]:
            qty = render_count(rng, i["quantity"])
            price = write(i["unit_price"])
            if style == 0:
                out.append(f"- {i['quantity']} x {i['name']} (SKU {i['sku']}) at {price} each")
            elif style == 1:
                out.append(f"  {i['sku']} | {i['name']} | qty {i['quantity']} | {price}")
            else:
                out.append(f"{qty} of the {i['name']} ({i['sku']}), {price} per unit;")
        return out

    def _shipping(self, rng: random.Random, r: Record) -> list[str]:
        a, method = r["shipping_address"], r["shipping_method"]
        if rng.random() < 0.5:
            return [
                "",
                f"Please ship {method} to:",
                a["street"],
                f"{a['postal_code']} {a['city']}",
                a["country"],
            ]
        return [
            f"Delivery address: {a['street']}, {a['city']} {a['postal_code']}, {a['country']}.",
            f"{method.capitalize()} shipping, please.",
        ]

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        c = r["customer"]
        items = [dict(i) for i in r["items"]]
        head = take(r, "order_number", "order_date")
        price = take(r, "total", "currency")
        if depth == 1:
            return {
                "order_number": r["order_number"],
                "customer_name": c["name"],
                "customer_email": c["email"],
                "order_date": r["order_date"],
                **price,
            }
        if depth == 2:
            return {
                **head,
                "customer": take(c, "name", "email", "phone"),
                "shipping_address": dict(r["shipping_address"]),
                **price,
            }
        if depth == 3:
            return {
                **head,
                "customer": take(c, "name", "email"),
                "items": items,
                "shipping_method": r["shipping_method"],
                **price,
            }
        shipping = {"method": r["shipping_method"], "address": dict(r["shipping_address"])}
        customer = {**take(c, "name", "email"), "shipping": shipping}
        return {**head, "customer": customer, "items": items, **price}

    def properties(self, depth: int) -> dict[str, Schema]:
        head = {"order_number": STRING, "order_date": DATE}
        if depth == 1:
            return {
                "order_number": STRING, "customer_name": STRING, "customer_email": EMAIL,
                "order_date": DATE, **PRICE,
            }  # fmt: skip
        if depth == 2:
            return {
                **head, "customer": obj({"name": STRING, "email": EMAIL, "phone": STRING}),
                "shipping_address": ADDRESS, **PRICE,
            }  # fmt: skip
        if depth == 3:
            return {
                **head, "customer": PERSON, "items": array(ITEM),
                "shipping_method": enum(*SHIPPING), **PRICE,
            }  # fmt: skip
        shipping = obj({"method": enum(*SHIPPING), "address": ADDRESS})
        customer = obj({"name": STRING, "email": EMAIL, "shipping": shipping})
        return {**head, "customer": customer, "items": array(ITEM), **PRICE}


ORDER = register_kind(OrderKind())
