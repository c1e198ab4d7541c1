"""Invented people, places, products and companies the email generator draws from.

All names are made up by combining common first and last names; addresses are plausible but not
real ones; e-mail domains use reserved or invented names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FIRST_NAMES = (
    "Amara", "Ben", "Carmen", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ibrahim", "Julia",
    "Kenji", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tara",
    "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zofia", "Aiden", "Beatriz", "Chidi", "Daria",
    "Emeka", "Freya", "Gustavo", "Helga", "Ines", "Jonas", "Kavya", "Liam", "Marta", "Noah",
    "Olga", "Pablo", "Ravi", "Sofia", "Tomas", "Ulla", "Viktor", "Yara",
)  # fmt: skip
LAST_NAMES = (
    "Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Fernandes", "Novak",
    "Schultz", "Ramirez", "Petrov", "Adeyemi", "Bianchi", "Chen", "Dubois", "Eriksen",
    "Gallagher", "Horvat", "Iyer", "Jansen", "Kaur", "Laine", "Mensah", "Nakamura", "O'Neill",
    "Park", "Quispe", "Rossi", "Silva", "Thompson", "Uchida", "Vasquez", "Weber", "Yilmaz",
    "Zhang", "Andersson", "Brennan", "Castillo", "Duarte", "Fischer",
)  # fmt: skip
COMPANIES = (
    "Brightwater Supplies", "Northwind Traders", "Larkspur Labs", "Copperleaf Studio",
    "Bluefin Logistics", "Harbor & Pine", "Quillstone Consulting", "Redwood Analytics",
    "Silverline Media", "Tidewell Foods", "Oakridge Systems", "Meridian Works",
    "Juniper Print Co.", "Falcon Ridge Outfitters", "Greenhollow Farms", "Ironbark Tools",
)  # fmt: skip
EMAIL_DOMAINS = ("example.com", "example.org", "example.net", "mail.test", "inbox.test")


@dataclass(frozen=True)
class Place:
    city: str
    country: str
    postal_code_format: str  # '#' = digit, 'A' = capital letter
    streets: tuple[str, ...]


PLACES = (
    Place("Lisbon", "Portugal", "####-###", ("Rua das Flores", "Avenida da Liberdade")),
    Place("Lyon", "France", "#####", ("Rue Mercière", "Quai Saint-Antoine")),
    Place("Munich", "Germany", "#####", ("Leopoldstraße", "Sendlinger Straße")),
    Place("Rotterdam", "Netherlands", "#### AA", ("Witte de Withstraat", "Coolsingel")),
    Place("Austin", "United States", "#####", ("Congress Avenue", "South Lamar Blvd")),
    Place("Toronto", "Canada", "A#A #A#", ("Queen Street West", "Spadina Avenue")),
    Place("Manchester", "United Kingdom", "M# #AA", ("Deansgate", "Oldham Street")),
    Place("Melbourne", "Australia", "####", ("Collins Street", "Brunswick Street")),
    Place("Osaka", "Japan", "###-####", ("Midosuji", "Sakaisuji")),
    Place("Nairobi", "Kenya", "#####", ("Kenyatta Avenue", "Moi Avenue")),
    Place("Valencia", "Spain", "#####", ("Calle de Colón", "Carrer de Russafa")),
    Place("Gothenburg", "Sweden", "### ##", ("Kungsportsavenyn", "Linnégatan")),
)

# (product name, SKU prefix, low price, high price)
PRODUCTS = (
    ("Ergonomic Office Chair", "CHR", 149.0, 389.0),
    ("Standing Desk Frame", "DSK", 229.0, 549.0),
    ("Wireless Keyboard", "KBD", 39.0, 119.0),
    ("USB-C Docking Station", "DCK", 89.0, 249.0),
    ('27" Monitor', "MON", 179.0, 459.0),
    ("Noise-Cancelling Headset", "HDS", 59.0, 299.0),
    ("Laser Printer Toner", "TNR", 24.0, 89.0),
    ("A4 Copy Paper (box)", "PPR", 18.0, 42.0),
    ("Desk Lamp", "LMP", 22.0, 78.0),
    ("Cable Organizer Kit", "CBL", 9.0, 29.0),
    ("Whiteboard Markers (12 pack)", "MRK", 7.0, 19.0),
    ("Webcam 1080p", "CAM", 45.0, 139.0),
    ("Laptop Stand", "STD", 25.0, 89.0),
    ("External SSD 1TB", "SSD", 79.0, 179.0),
    ("Coffee Beans 1kg", "COF", 14.0, 36.0),
    ("Filing Cabinet", "CAB", 119.0, 329.0),
)

SOFTWARE_PRODUCTS = (
    "LedgerLite", "CloudDesk", "PhotoVault", "TaskPilot", "InvoiceFlow", "MeetSync",
    "ShopCart Pro", "DataBridge",
)  # fmt: skip
AIRPORTS = (
    ("LIS", "Lisbon"), ("LYS", "Lyon"), ("MUC", "Munich"), ("AMS", "Amsterdam"),
    ("AUS", "Austin"), ("YYZ", "Toronto"), ("MAN", "Manchester"), ("MEL", "Melbourne"),
    ("KIX", "Osaka"), ("NBO", "Nairobi"), ("VLC", "Valencia"), ("GOT", "Gothenburg"),
    ("CDG", "Paris"), ("FRA", "Frankfurt"), ("JFK", "New York"), ("SIN", "Singapore"),
)  # fmt: skip
AIRLINES = (("TP", "TAP"), ("LH", "Lufthansa"), ("KL", "KLM"), ("BA", "British Airways"),
            ("AC", "Air Canada"), ("QF", "Qantas"), ("SK", "SAS"), ("IB", "Iberia"))  # fmt: skip
HOTELS = ("Hotel Aurora", "The Linden House", "Harbourview Suites", "Casa Mirador",
          "Parkside Inn", "Grand Meridian", "Hotel Nordlys", "The Copper Key")  # fmt: skip
CURRENCIES = ("USD", "EUR", "GBP")
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def person(rng: random.Random) -> tuple[str, str]:
    """(full name, e-mail address)."""
    first = rng.choice(FIRST_NAMES)
    last = rng.choice(LAST_NAMES)
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first[0]}{last}",
            f"{first}{rng.randint(1, 99)}",
            f"{first}_{last}",
        )
    )
    local = "".join(c for c in local.lower() if c.isalnum() or c in "._")
    return f"{first} {last}", f"{local}@{rng.choice(EMAIL_DOMAINS)}"


def phone(rng: random.Random) -> str:
    digits = [str(rng.randint(0, 9)) for _ in range(9)]
    return rng.choice(
        (
            "+{} {}{}{} {}{}{} {}{}{}",
            "+{} ({}{}{}) {}{}{}-{}{}{}",
            "+{} {}{}{}-{}{}{}-{}{}{}",
        )
    ).format(rng.choice(("1", "31", "33", "44", "49", "351")), *digits)


def postal_code(rng: random.Random, fmt: str) -> str:
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    return "".join(
        str(rng.randint(0, 9)) if c == "#" else rng.choice(letters) if c == "A" else c for c in fmt
    )


def address(rng: random.Random) -> dict[str, str]:
    place = rng.choice(PLACES)
    return {
        "street": f"{rng.randint(1, 240)} {rng.choice(place.streets)}",
        "city": place.city,
        "postal_code": postal_code(rng, place.postal_code_format),
        "country": place.country,
    }


def code(rng: random.Random, prefix: str, digits: int) -> str:
    return f"{prefix}-{rng.randint(10 ** (digits - 1), 10**digits - 1)}"
