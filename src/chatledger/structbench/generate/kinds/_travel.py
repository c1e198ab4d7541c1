"""Travel booking confirmations: passengers, flights and a hotel stay."""

from __future__ import annotations

import random
import string
from datetime import date, timedelta
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
from chatledger.structbench.generate._pools import AIRLINES, AIRPORTS, CURRENCIES, HOTELS, person
from chatledger.structbench.generate._schema import (
    DATE,
    PERSON,
    PRICE,
    STRING,
    TIME,
    Schema,
    array,
    described,
    obj,
)
from chatledger.structbench.generate._surface import money_writer, render_date, render_time

IATA = described(STRING, "three-letter IATA airport code")
CITY_OF = dict(AIRPORTS)


class TravelKind(EmailKind):
    name = "travel"
    title = "Travel booking"

    def record(self, rng: random.Random) -> Record:
        alphabet = string.ascii_uppercase + string.digits
        origin, destination = rng.sample([code for code, _ in AIRPORTS], 2)
        out_day = random_date(rng)
        back_day = out_day + timedelta(days=rng.randint(2, 12))
        passengers = []
        for _ in range(rng.randint(1, 3)):
            name, email = person(rng)
            seat = f"{rng.randint(3, 38)}{rng.choice('ABCDEF')}"
            passengers.append({"name": name, "email": email, "seat": seat})
        flights = [self._flight(rng, origin, destination, out_day)]
        if rng.random() < 0.6:
            flights.append(self._flight(rng, destination, origin, back_day))
        return {
            "booking_reference": "".join(rng.choice(alphabet) for _ in range(6)),
            "passengers": passengers,
            "flights": flights,
            "hotel": {
                "name": rng.choice(HOTELS),
                "city": CITY_OF[destination],
                "check_in": out_day.isoformat(),
                "check_out": back_day.isoformat(),
            },
            "total": money(rng.uniform(240, 3200)),
            "currency": rng.choice(CURRENCIES),
        }

    @staticmethod
    def _flight(rng: random.Random, origin: str, destination: str, day: date) -> dict[str, str]:
        carrier = rng.choice(AIRLINES)[0]
        return {
            "number": f"{carrier}{rng.randint(100, 4999)}",
            "origin": origin,
            "destination": destination,
            "date": day.isoformat(),
            "departure_time": f"{rng.randint(6, 21):02d}:{rng.choice((5, 20, 35, 50)):02d}",
        }

    def render(self, rng: random.Random, r: Record) -> str:
        lead = r["passengers"][0]
        ref = r["booking_reference"]
        write = money_writer(rng, r["currency"])
        lines = [f"Subject: {pick(rng, 'Booking confirmation', 'Your trip', 'E-ticket')} {ref}"]
        lines += ["", pick(rng, f"Dear {lead['name']},", f"Hello {lead['name']},"), ""]
        lines.append(
            pick(
                rng,
                f"Thank you for booking with us. Your booking reference is {ref}.",
                f"Your reservation {ref} is confirmed.",
                f"Good news: booking {ref} has been ticketed.",
            )
        )
        lines.append("")
        for n, f in enumerate(r["flights"]):
            label = "Outbound" if n == 0 else "Return"
            day = render_date(rng, f["date"])
            at = render_time(rng, f["departure_time"])
            origin, destination = f["origin"], f["destination"]
            if rng.random() < 0.5:
                lines.append(
                    f"{label}: flight {f['number']} from {CITY_OF[origin]} ({origin}) to "
                    f"{CITY_OF[destination]} ({destination}) on {day}, departing {at}."
                )
            else:
                lines += [
                    f"{label} flight {f['number']}",
                    f"  {origin} → {destination}",
                    f"  {day}, departs {at}",
                ]
        lines.append("")
        if len(r["passengers"]) == 1:
            lines.append(f"Passenger: {lead['name']}, seat {lead['seat']} (outbound)")
        else:
            lines.append("Passengers and outbound seats:")
            lines += [f"- {p['name']}: {p['seat']}" for p in r["passengers"]]
        h = r["hotel"]
        lines += [
            "",
            pick(
                rng,
                f"Hotel: {h['name']}, {h['city']} — check-in {render_date(rng, h['check_in'])}, "
                f"check-out {render_date(rng, h['check_out'])}.",
                f"We have also reserved {h['name']} in {h['city']} from "
                f"{render_date(rng, h['check_in'])} to {render_date(rng, h['check_out'])}.",
            ),
            "",
            pick(
                rng,
                f"Total charged: {write(r['total'])}.",
                f"The total price of {write(r['total'])} has been charged to your card.",
            ),
            f"We will send updates to {lead['email']}.",
            "",
            pick(rng, "Have a pleasant trip!", "Safe travels,", "Kind regards,"),
            pick(rng, "The Wayfarer Travel team", "Mira at Northstar Trips", "Skyline Bookings"),
        ]
        return "\n".join(lines)

    def view(self, r: Record, depth: int) -> dict[str, Any]:
        lead, first = r["passengers"][0], r["flights"][0]
        reference = take(r, "booking_reference")
        price = take(r, "total", "currency")
        if depth == 1:
            return {
                **reference,
                "passenger_name": lead["name"],
                "flight_number": first["number"],
                "departure_date": first["date"],
                **take(first, "origin", "destination"),
            }
        if depth == 2:
            passenger = take(lead, "name", "email")
            return {**reference, "passenger": passenger, "flight": dict(first), **price}
        if depth == 3:
            return {
                **reference,
                "passengers": [take(p, "name", "seat") for p in r["passengers"]],
                "flights": [dict(f) for f in r["flights"]],
                "hotel": dict(r["hotel"]),
            }
        flights = [
            {
                **take(f, "number", "date", "departure_time"),
                "route": take(f, "origin", "destination"),
            }
            for f in r["flights"]
        ]
        contact = take(lead, "name", "email")
        return {
            **reference,
            "contact": contact,
            "flights": flights,
            "hotel": dict(r["hotel"]),
            **price,
        }

    def properties(self, depth: int) -> dict[str, Schema]:
        flight = obj({
            "number": STRING, "origin": IATA, "destination": IATA, "date": DATE,
            "departure_time": TIME,
        })  # fmt: skip
        hotel = obj({"name": STRING, "city": STRING, "check_in": DATE, "check_out": DATE})
        if depth == 1:
            return {
                "booking_reference": STRING, "passenger_name": STRING, "flight_number": STRING,
                "departure_date": DATE, "origin": IATA, "destination": IATA,
            }  # fmt: skip
        if depth == 2:
            return {"booking_reference": STRING, "passenger": PERSON, "flight": flight, **PRICE}
        if depth == 3:
            return {
                "booking_reference": STRING,
                "passengers": array(obj({"name": STRING, "seat": STRING})),
                "flights": array(flight), "hotel": hotel,
            }  # fmt: skip
        return {
            "booking_reference": STRING, "contact": PERSON,
            "flights": array(obj({
                "number": STRING, "date": DATE, "departure_time": TIME,
                "route": obj({"origin": IATA, "destination": IATA}),
            })),
            "hotel": hotel, **PRICE,
        }  # fmt: skip


TRAVEL = register_kind(TravelKind())
