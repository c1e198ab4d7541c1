"""Replies to event invitations: yes / no / maybe, who comes and what they eat."""

from __future__ import annotations

import random
from typing import Any

from chatledger.structbench.generate._kind import (
    EmailKind,
    Record,
    join_names,
    pick,
    random_date,
    register_kind,
    take,
)
from chatledger.structbench.generate._pools import PLACES, person
from chatledger.structbench.generate._schema import (
    DATE,
    INTEGER,
    PERSON,
    STRING,
    Schema,
    array,
    described,
    enum,
    obj,
)
from chatledger.structbench.generate._surface import render_count, render_date

EVENTS = ("Annual Summer Gala", "Product Launch Party", "Alumni Reunion Dinner",
          "Charity Quiz Night", "Spring Networking Breakfast", "Board Holiday Lunch",
          "Founders' Day Reception")  # fmt: skip
VENUES = ("The Glasshouse", "Riverside Pavilion", "Hotel Bellevue Ballroom", "Old Mill Hall",
          "Rooftop Terrace 21")  # fmt: skip
MEALS = ("vegetarian", "vegan", "fish", "chicken", "beef")
ALLERGIES = ("nuts", "gluten", "shellfish", "dairy", "eggs")
RESPONSES = ("yes", "no", "maybe")
PARTY_SIZE = described(INTEGER, "number of people attending, 0 when declining")


class RsvpKind(EmailKind):
    name = "rsvp"
    title = "Event RSVP"

    def record(self, rng: random.Random) -> Record:
        name, email = person(rng)
        response = rng.choices(RESPONSES, weights=(6, 2, 2))[0]
        attendees: list[dict[str, Any]] = []
        if response != "no":
            names = [name] + [person(rng)[0] for _ in range(rng.randint(0, 3))]
            for who in names:
                allergies = rng.sample(ALLERGIES, rng.choice((0, 0, 1, 2)))
                attendees.append({"name": who, "meal": rng.choice(MEALS), "allergies": allergies})
        return {
            "event": {
                "name": rng.choice(EVENTS),
                "date": random_date(rng).isoformat(),
                "venue": {"name": rng.choice(VENUES), "city": rng.choice(PLACES).city},
            },
            "guest": {"name": name, "email": email},
            "response": response,
            "party_size": len(attendees),
            "attendees": attendees,
        }

    def render(self, rng: random.Random, r: Record) -> str:
        e, g = r["event"], r["guest"]
        when = render_date(rng, e["date"])
        size = render_count(rng, r["party_size"])
        lines = [f"Subject: RSVP – {e['name']}", ""]
        lines += [pick(rng, "Hi Events team,", "Dear organisers,", "Hello,"), ""]
        lines.append(
            pick(
                rng,
                f"Thanks for the invitation to the {e['name']} on {when} at {e['venue']['name']}, "
                f"{e['venue']['city']}.",
                f"Re: {e['name']} ({when}, {e['venue']['name']} in {e['venue']['city']}).",
            )
        )
        if r["response"] == "yes":
            lines.append(
                pick(
                    rng,
                    f"RSVP: yes — please count {size} seats for us.",
                    f"It's a yes from me! We will be a party of {size}.",
                )
            )
        elif r["response"] == "maybe":
            lines.append(
                pick(
                    rng,
                    f"Please put me down as a maybe for now; if we come we'll be {size}.",
                    f"RSVP: maybe (party of {size}) — I'll confirm next week.",
                )
            )
        else:
            lines.append(
                pick(
                    rng,
                    f"Unfortunately it's a no from me, so {size} seats for us this time.",
                    f"RSVP: no — we can't make it ({size} attending).",
                )
            )
        if r["attendees"]:
            lines += ["", pick(rng, "Meal choices:", "Food preferences:", "Menu:")]
            for a in r["attendees"]:
                note = f" (allergic to {join_names(a['allergies'])})" if a["allergies"] else ""
                lines.append(f"- {a['name']}: {a['meal']}{note}")
        lines += ["", pick(rng, "See you there,", "Warm regards,", "Best,"), g["name"], g["email"]]
        return "\n".join(lines)

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        e, g = r["event"], r["guest"]
        if depth == 1:
            return {
                "event_name": e["name"],
                "event_date": e["date"],
                "guest_name": g["name"],
                **take(r, "response", "party_size"),
            }
        common = {"event": take(e, "name", "date"), "guest": dict(g), "response": r["response"]}
        if depth == 2:
            return {**common, "party_size": r["party_size"]}
        if depth == 3:
            return {**common, "attendees": [take(a, "name", "meal") for a in r["attendees"]]}
        return {
            **common,
            "event": {**take(e, "name", "date"), "venue": dict(e["venue"])},
            "attendees": [
                {**take(a, "name", "meal"), "allergies": list(a["allergies"])}
                for a in r["attendees"]
            ],
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        response = enum(*RESPONSES)
        if depth == 1:
            return {
                "event_name": STRING, "event_date": DATE, "guest_name": STRING,
                "response": response, "party_size": PARTY_SIZE,
            }  # fmt: skip
        event = obj({"name": STRING, "date": DATE})
        if depth == 2:
            return {"event": event, "guest": PERSON, "response": response, "party_size": PARTY_SIZE}
        if depth == 3:
            return {
                "event": event, "guest": PERSON, "response": response,
                "attendees": array(obj({"name": STRING, "meal": enum(*MEALS)})),
            }  # fmt: skip
        return {
            "event": obj({
                "name": STRING, "date": DATE,
                "venue": obj({"name": STRING, "city": STRING}),
            }),
            "guest": PERSON, "response": response,
            "attendees": array(obj({
                "name": STRING, "meal": enum(*MEALS), "allergies": array(enum(*ALLERGIES)),
            })),
        }  # fmt: skip


RSVP = register_kind(RsvpKind())
