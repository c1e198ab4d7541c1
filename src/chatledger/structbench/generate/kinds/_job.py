"""Job applications: the candidate, the position and their work history."""

from __future__ import annotations

import random
from typing import Any

from chatledger.structbench.generate._kind import (
    EmailKind,
    Record,
    article,
    join_names,
    pick,
    random_date,
    register_kind,
    take,
)
from chatledger.structbench.generate._pools import COMPANIES, PLACES, code, person, phone
from chatledger.structbench.generate._schema import (
    DATE,
    EMAIL,
    INTEGER,
    STRING,
    Schema,
    array,
    nullable,
    obj,
)
from chatledger.structbench.generate._surface import render_count, render_date

POSITIONS = ("Senior Data Analyst", "Frontend Developer", "Product Designer",
             "Operations Manager", "Customer Success Lead", "Backend Engineer",
             "Marketing Coordinator", "Financial Controller", "QA Engineer")  # fmt: skip
SKILLS = ("Python", "SQL", "Figma", "TypeScript", "project management", "Excel", "Tableau",
          "customer onboarding", "Kubernetes", "copywriting", "budgeting", "German", "Spanish",
          "React", "test automation")  # fmt: skip
TITLES = ("Analyst", "Developer", "Designer", "Team Lead", "Coordinator", "Engineer",
          "Consultant", "Intern")  # fmt: skip
ROLE: Schema = obj({
    "title": STRING, "company": STRING, "start_year": INTEGER, "end_year": nullable(INTEGER),
})  # fmt: skip


class JobKind(EmailKind):
    name = "job_application"
    title = "Job application"

    def record(self, rng: random.Random) -> Record:
        name, email = person(rng)
        place = rng.choice(PLACES)
        year = 2025
        roles = []
        for n in range(rng.randint(1, 3)):
            length = rng.randint(1, 4)
            roles.append(
                {
                    "title": rng.choice(TITLES),
                    "company": rng.choice(COMPANIES),
                    "start_year": year - length,
                    "end_year": None if n == 0 and rng.random() < 0.5 else year,
                }
            )
            year -= length + rng.randint(0, 1)
        return {
            "applicant": {
                "name": name,
                "email": email,
                "phone": phone(rng),
                "city": place.city,
                "country": place.country,
            },
            "position": rng.choice(POSITIONS),
            "job_reference": code(rng, "JR", 5),
            "available_from": random_date(rng).isoformat(),
            "years_experience": rng.randint(2, 15),
            "skills": rng.sample(SKILLS, rng.randint(2, 5)),
            "experience": roles,
        }

    def render(self, rng: random.Random, r: Record) -> str:
        a = r["applicant"]
        ref, position = r["job_reference"], r["position"]
        lines = [f"Subject: Application – {position} ({ref})", ""]
        lines += [pick(rng, "Dear Hiring Manager,", "Dear recruitment team,", "Hello,"), ""]
        lines.append(
            pick(
                rng,
                f"I am applying for the {position} position (reference {ref}).",
                f"Please consider my application for your opening {ref}, {position}.",
                f"I saw your advert for {article(position)} {position} (ref. {ref}) and would love "
                "to apply.",
            )
        )
        years = render_count(rng, r["years_experience"])
        lines.append(
            pick(
                rng,
                f"I have {years} years of experience and I am based in {a['city']}, "
                f"{a['country']}.",
                f"With {years} years in the field, I currently live in {a['city']} "
                f"({a['country']}).",
            )
        )
        lines.append("")
        lines.append(pick(rng, "My recent roles:", "Work history:", "Where I have worked:"))
        for role in r["experience"]:
            end = "present" if role["end_year"] is None else str(role["end_year"])
            lines.append(
                pick(
                    rng,
                    f"- {role['title']} at {role['company']}, {role['start_year']}–{end}",
                    f"- {role['start_year']} to {end}: {role['title']}, {role['company']}",
                )
            )
        lines.append("")
        lines.append(
            pick(
                rng,
                f"Key skills: {', '.join(r['skills'])}.",
                f"I am comfortable with {join_names(r['skills'])}.",
            )
        )
        lines.append(
            pick(
                rng,
                f"I could start on {render_date(rng, r['available_from'])}.",
                f"I am available from {render_date(rng, r['available_from'])}.",
            )
        )
        lines += [
            "",
            pick(rng, "Kind regards,", "Yours sincerely,", "Best wishes,"),
            a["name"],
            pick(rng, f"{a['email']} · {a['phone']}", f"Phone: {a['phone']}\nEmail: {a['email']}"),
        ]
        return "\n".join(lines)

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        a = r["applicant"]
        roles = [dict(x) for x in r["experience"]]
        contact = take(a, "name", "email", "phone")
        if depth == 1:
            return {
                "applicant_name": a["name"],
                **take(a, "email", "phone"),
                **take(r, "position", "job_reference", "available_from"),
            }
        if depth == 2:
            return {
                "applicant": contact,
                **take(r, "position", "job_reference", "years_experience"),
                "skills": list(r["skills"]),
            }
        if depth == 3:
            return {
                "applicant": contact,
                **take(r, "position", "job_reference"),
                "experience": roles,
                "skills": list(r["skills"]),
            }
        location = take(a, "city", "country")
        return {
            "candidate": {
                "name": a["name"],
                "contact": {**take(a, "email", "phone"), "location": location},
            },
            "application": take(r, "position", "job_reference", "available_from"),
            "experience": roles,
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        contact = obj({"name": STRING, "email": EMAIL, "phone": STRING})
        if depth == 1:
            return {
                "applicant_name": STRING, "email": EMAIL, "phone": STRING, "position": STRING,
                "job_reference": STRING, "available_from": DATE,
            }  # fmt: skip
        if depth == 2:
            return {
                "applicant": contact, "position": STRING, "job_reference": STRING,
                "years_experience": INTEGER, "skills": array(STRING),
            }  # fmt: skip
        if depth == 3:
            return {
                "applicant": contact, "position": STRING, "job_reference": STRING,
                "experience": array(ROLE), "skills": array(STRING),
            }  # fmt: skip
        return {
            "candidate": obj({
                "name": STRING,
                "contact": obj({
                    "email": EMAIL, "phone": STRING,
                    "location": obj({"city": STRING, "country": STRING}),
                }),
            }),
            "application": obj({
                "position": STRING, "job_reference": STRING, "available_from": DATE,
            }),
            "experience": array(ROLE),
        }  # fmt: skip


JOB = register_kind(JobKind())
