"""Meeting requests: when, where, who (required or optional) and the agenda."""

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
from chatledger.structbench.generate._pools import person
from chatledger.structbench.generate._schema import (
    DATE,
    EMAIL,
    INTEGER,
    PERSON,
    STRING,
    TIME,
    Schema,
    array,
    described,
    enum,
    obj,
)
from chatledger.structbench.generate._surface import render_date, render_time

TITLES = ("Q3 budget review", "Website relaunch kickoff", "Quarterly sales sync",
          "Supplier contract renewal", "Onboarding plan for new hires", "Data platform roadmap",
          "Customer feedback workshop", "Office move planning",
          "Security audit follow-up")  # fmt: skip
TOPICS = ("Budget status", "Timeline and milestones", "Open risks", "Hiring needs",
          "Vendor shortlist", "Launch checklist", "Metrics review", "Next steps",
          "Customer escalations", "Training schedule")  # fmt: skip
ROOMS = ("Room 4.12", "Boardroom A", "Meeting room Atlas", "Room B-204", "The Loft",
         "Conference room Maple")  # fmt: skip
BUILDINGS = ("North Tower", "Building 2", "Harbour Office", "Main Campus", "Riverside Hub")
ROLES = ("required", "optional")
DURATION = described(INTEGER, "length of the meeting in minutes")
ATTENDEE: Schema = obj({"name": STRING, "email": EMAIL, "role": enum(*ROLES)})


class MeetingKind(EmailKind):
    name = "meeting"
    title = "Meeting request"

    def record(self, rng: random.Random) -> Record:
        organizer, organizer_email = person(rng)
        attendees = []
        for k in range(rng.randint(2, 5)):
            name, email = person(rng)
            role = "required" if k == 0 else rng.choice(ROLES)
            attendees.append({"name": name, "email": email, "role": role})
        people = [organizer] + [a["name"] for a in attendees]
        agenda = [
            {"topic": topic, "presenters": rng.sample(people, rng.randint(1, 2))}
            for topic in rng.sample(TOPICS, rng.randint(2, 4))
        ]
        return {
            "title": rng.choice(TITLES),
            "organizer": {"name": organizer, "email": organizer_email},
            "date": random_date(rng).isoformat(),
            "start_time": f"{rng.randint(8, 17):02d}:{rng.choice((0, 15, 30, 45)):02d}",
            "duration_minutes": rng.choice((30, 45, 60, 90, 120)),
            "location": {"room": rng.choice(ROOMS), "building": rng.choice(BUILDINGS)},
            "attendees": attendees,
            "agenda": agenda,
        }

    def render(self, rng: random.Random, r: Record) -> str:
        when = render_date(rng, r["date"])
        at = render_time(rng, r["start_time"])
        minutes = r["duration_minutes"]
        loc = r["location"]
        lines = [f"Subject: {pick(rng, 'Invitation: ', 'Meeting: ', '')}{r['title']}", ""]
        lines.append(pick(rng, "Hi all,", "Hello everyone,", "Dear colleagues,", "Hi team,"))
        lines.append("")
        if rng.random() < 0.5:
            lines.append(
                f"I'd like to set up a {minutes}-minute meeting on {when} at {at} "
                f"for our {r['title']}."
            )
            lines.append(
                pick(
                    rng,
                    f"We'll meet in {loc['room']} ({loc['building']}).",
                    f"Location: {loc['room']}, {loc['building']}.",
                )
            )
        else:
            lines += [
                f"Topic: {r['title']}",
                f"Date: {when}",
                f"Time: {at} ({minutes} min)",
                f"Where: {loc['room']}, {loc['building']}",
            ]
        lines.append("")
        lines += self._attendees(rng, r["attendees"])
        lines.append("")
        lines += self._agenda(rng, r["agenda"])
        lines.append("")
        if rng.random() < 0.4:
            lines.append(pick(rng, "Coffee will be provided.", "Please bring your laptops.",
                              "Let me know if the time does not work for you."))  # fmt: skip
            lines.append("")
        org = r["organizer"]
        lines += [pick(rng, "Thanks,", "Best,", "Regards,"), org["name"], org["email"]]
        return "\n".join(lines)

    def _attendees(self, rng: random.Random, attendees: list[dict[str, str]]) -> list[str]:
        if rng.random() < 0.5:
            out = ["Attendees:"]
            for a in attendees:
                out.append(f"- {a['name']} <{a['email']}> ({a['role']})")
            return out
        required = [f"{a['name']} ({a['email']})" for a in attendees if a["role"] == "required"]
        optional = [f"{a['name']} ({a['email']})" for a in attendees if a["role"] == "optional"]
        out = [f"Required: {join_names(required)}."]
        if optional:
            out.append(f"Optional, join if you can: {join_names(optional)}.")
        return out

    def _agenda(self, rng: random.Random, agenda: list[dict[str, Any]]) -> list[str]:
        if rng.random() < 0.5:
            out = ["Agenda:"]
            for n, item in enumerate(agenda, start=1):
                out.append(f"{n}. {item['topic']} – {join_names(item['presenters'])}")
            return out
        parts = [f"{item['topic']} (led by {join_names(item['presenters'])})" for item in agenda]
        return [f"On the agenda: {'; '.join(parts)}."]

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        org = r["organizer"]
        attendees = [dict(a) for a in r["attendees"]]
        title = r["title"]
        when = take(r, "date", "start_time", "duration_minutes")
        if depth == 1:
            room = r["location"]["room"]
            return {"title": title, "organizer_name": org["name"], **when, "room": room}
        if depth == 2:
            names = [a["name"] for a in attendees]
            return {"title": title, "organizer": dict(org), **when, "attendees": names}
        if depth == 3:
            return {"title": title, **when, "organizer": dict(org), "attendees": attendees}
        return {
            "title": title,
            "schedule": when,
            "location": dict(r["location"]),
            "attendees": attendees,
            "agenda": [
                {"topic": a["topic"], "presenters": list(a["presenters"])} for a in r["agenda"]
            ],
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        when = {"date": DATE, "start_time": TIME, "duration_minutes": DURATION}
        if depth == 1:
            return {"title": STRING, "organizer_name": STRING, **when, "room": STRING}
        if depth == 2:
            return {"title": STRING, "organizer": PERSON, **when, "attendees": array(STRING)}
        if depth == 3:
            return {"title": STRING, **when, "organizer": PERSON, "attendees": array(ATTENDEE)}
        return {
            "title": STRING,
            "schedule": obj(when),
            "location": obj({"room": STRING, "building": STRING}),
            "attendees": array(ATTENDEE),
            "agenda": array(obj({"topic": STRING, "presenters": array(STRING)})),
        }


MEETING = register_kind(MeetingKind())
