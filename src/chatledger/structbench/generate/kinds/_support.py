"""Support requests: who, which product and account, what went wrong, what was tried."""

from __future__ import annotations

import random
from typing import Any

from chatledger.structbench.generate._kind import (
    EmailKind,
    Record,
    pick,
    random_date,
    register_kind,
    take,
)
from chatledger.structbench.generate._pools import SOFTWARE_PRODUCTS, code, person
from chatledger.structbench.generate._schema import (
    DATE,
    EMAIL,
    STRING,
    Schema,
    array,
    enum,
    obj,
)
from chatledger.structbench.generate._surface import render_date

CATEGORIES = ("billing", "technical", "account", "shipping")
PRIORITIES = ("low", "medium", "high", "urgent")
PLANS = ("free", "pro", "business")
SYSTEMS = ("Windows 11", "macOS 14", "Ubuntu 22.04", "iOS 17", "Android 14", "ChromeOS")
STEPS = ("restarted the app", "cleared the cache", "reinstalled the software",
         "logged out and back in", "tried a different browser", "updated to the latest version",
         "reset my password", "checked the status page")  # fmt: skip
SYMPTOMS = {
    "billing": ("I was charged twice this month", "my invoice shows the wrong amount",
                "the refund I was promised never arrived"),
    "technical": ("the app crashes on start-up", "sync stops halfway through",
                  "exports come out empty"),
    "account": ("I cannot log in any more", "my two-factor codes are rejected",
                "my team members lost access"),
    "shipping": ("the license key was never delivered", "my hardware token has not arrived",
                 "the parcel was sent to an old address"),
}  # fmt: skip


class SupportKind(EmailKind):
    name = "support"
    title = "Support request"

    def record(self, rng: random.Random) -> Record:
        name, email = person(rng)
        category = rng.choice(CATEGORIES)
        return {
            "customer": {"name": name, "email": email, "account_id": code(rng, "ACC", 6)},
            "plan": rng.choice(PLANS),
            "product": rng.choice(SOFTWARE_PRODUCTS),
            "category": category,
            "priority": rng.choice(PRIORITIES),
            "symptom": rng.choice(SYMPTOMS[category]),
            "error_code": f"E-{rng.randint(1000, 9999)}",
            "occurred_on": random_date(rng).isoformat(),
            "environment": {
                "os": rng.choice(SYSTEMS),
                "app_version": f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            },
            "steps_tried": rng.sample(STEPS, rng.randint(1, 3)),
        }

    def render(self, rng: random.Random, r: Record) -> str:
        c, env = r["customer"], r["environment"]
        when = render_date(rng, r["occurred_on"])
        lines: list[str] = []
        if rng.random() < 0.7:
            lines += [
                f"Subject: {pick(rng, 'Help needed', 'Problem with', 'Issue:')} "
                f"{r['product']} ({r['error_code']})",
                "",
            ]
        lines += [pick(rng, "Hello support,", "Hi,", "Dear Support Team,", "Hello,"), ""]
        lines.append(
            pick(
                rng,
                f"Since {when}, I have had a problem with {r['product']}: {r['symptom']}.",
                f"I'm writing about {r['product']}: {r['symptom']} (first noticed on {when}).",
                f"On {when} I noticed that {r['symptom']} in {r['product']}.",
            )
        )
        lines.append(
            pick(
                rng,
                f"The error message says {r['error_code']}.",
                f"Every time I get error {r['error_code']}.",
                f"The screen shows code {r['error_code']}.",
            )
        )
        lines.append(
            pick(
                rng,
                f"I'm on {env['os']} with version {env['app_version']} of the app.",
                f"Setup: {env['os']}, app version {env['app_version']}.",
            )
        )
        steps = r["steps_tried"]
        if rng.random() < 0.5:
            lines += ["", "What I have tried so far:"] + [f"- {s}" for s in steps]
        else:
            lines.append(f"So far I have {', then '.join(steps)}, with no luck.")
        lines.append("")
        lines.append(
            pick(
                rng,
                f"I think this is a {r['category']} issue and I'd rate it {r['priority']} "
                "priority.",
                f"Category: {r['category'].capitalize()} / Priority: {r['priority'].capitalize()}",
                f"Please treat this as {r['priority']} priority — it's a {r['category']} "
                "problem for us.",
            )
        )
        lines.append(
            pick(
                rng,
                f"My account ID is {c['account_id']} ({r['plan']} plan).",
                f"Account: {c['account_id']}, on the {r['plan'].capitalize()} plan.",
            )
        )
        lines += ["", pick(rng, "Thanks in advance,", "Regards,", "Best,"), c["name"], c["email"]]
        return "\n".join(lines)

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        c = r["customer"]
        issue = take(r, "category", "priority", "error_code", "occurred_on")
        if depth == 1:
            return {
                "customer_name": c["name"],
                "customer_email": c["email"],
                "account_id": c["account_id"],
                **take(r, "product", "category", "priority"),
            }
        if depth == 2:
            return {"customer": dict(c), "product": r["product"], **issue}
        if depth == 3:
            return {
                "customer": dict(c),
                "product": r["product"],
                "issue": {**issue, "environment": dict(r["environment"])},
                "steps_tried": list(r["steps_tried"]),
            }
        account = {"id": c["account_id"], "plan": r["plan"]}
        return {
            "ticket": {
                "product": r["product"],
                "customer": {**take(c, "name", "email"), "account": account},
            },
            "issue": issue,
            "environment": dict(r["environment"]),
            "steps_tried": list(r["steps_tried"]),
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        customer = obj({"name": STRING, "email": EMAIL, "account_id": STRING})
        issue_fields: dict[str, Schema] = {
            "category": enum(*CATEGORIES),
            "priority": enum(*PRIORITIES),
            "error_code": STRING,
            "occurred_on": DATE,
        }
        environment = obj({"os": STRING, "app_version": STRING})
        if depth == 1:
            return {
                "customer_name": STRING, "customer_email": EMAIL, "account_id": STRING,
                "product": STRING, "category": enum(*CATEGORIES), "priority": enum(*PRIORITIES),
            }  # fmt: skip
        if depth == 2:
            return {"customer": customer, "product": STRING, **issue_fields}
        if depth == 3:
            return {
                "customer": customer, "product": STRING,
                "issue": obj({**issue_fields, "environment": environment}),
                "steps_tried": array(STRING),
            }  # fmt: skip
        return {
            "ticket": obj({
                "product": STRING,
                "customer": obj({
                    "name": STRING, "email": EMAIL,
                    "account": obj({"id": STRING, "plan": enum(*PLANS)}),
                }),
            }),
            "issue": obj(issue_fields), "environment": environment, "steps_tried": array(STRING),
        }  # fmt: skip


SUPPORT = register_kind(SupportKind())
