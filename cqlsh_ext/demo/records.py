"""JSON documents that look like real order records, in the Keyspaces compression article's size mix.

The article measured 11,876 JSON objects: about 8 % <= 1 KB, 86 % 1-4 KB, 4 % 4-20 KB and 2 % 20-67 KB.
Records here are generated (seeded, no network) to land in the same buckets.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

#: (upper bound of the bucket in bytes, share of records)
SIZE_MIX = ((1024, 0.08), (4096, 0.86), (20 * 1024, 0.04), (67 * 1024, 0.02))

_FIRST = [
    "Ana",
    "Ben",
    "Chen",
    "Dara",
    "Emil",
    "Fatima",
    "Goran",
    "Hana",
    "Ivan",
    "Julia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tomas",
    "Uma",
    "Viktor",
    "Wen",
    "Yara",
]
_LAST = [
    "Almeida",
    "Brown",
    "Costa",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Weber",
]
_CITIES = [
    ("Seattle", "WA", "US"),
    ("Austin", "TX", "US"),
    ("Dublin", "", "IE"),
    ("Berlin", "", "DE"),
    ("Lyon", "", "FR"),
    ("Osaka", "", "JP"),
    ("Toronto", "ON", "CA"),
    ("Porto", "", "PT"),
]
_PRODUCTS = [
    ("Espresso beans 1kg", "GROCERY"),
    ("Trail running shoes", "SPORTS"),
    ("USB-C hub 7-in-1", "ELECTRONICS"),
    ("Cast iron skillet", "HOME"),
    ("Noise cancelling headphones", "ELECTRONICS"),
    ("Yoga mat", "SPORTS"),
    ("Fountain pen", "OFFICE"),
    ("Linen shirt", "APPAREL"),
    ("Board game: Carcassonne", "TOYS"),
    ("LED desk lamp", "HOME"),
    ("Merino wool socks", "APPAREL"),
    ("Mechanical keyboard", "ELECTRONICS"),
]
_STATUSES = ["PLACED", "PAID", "PICKING", "SHIPPED", "DELIVERED", "RETURN_REQUESTED"]
_NOTES = [
    "Leave at the side door.",
    "Gift wrap, no invoice in the box please.",
    "Customer called about delivery window.",
    "Address verified by phone.",
    "Fragile: ship in double box.",
    "Split shipment approved by customer.",
]


def _target_size(rng: random.Random) -> int:
    roll, low = rng.random(), 200
    for high, share in SIZE_MIX:
        if roll < share:
            return rng.randint(low, high - 64)
        roll -= share
        low = high
    return rng.randint(low, SIZE_MIX[-1][0] - 64)


def order(rng: random.Random, number: int) -> dict[str, Any]:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    city, region, country = rng.choice(_CITIES)
    return {
        "orderId": f"ORD-{2024_000000 + number}",
        "status": rng.choice(_STATUSES),
        "placedAt": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
        "customer": {
            "id": f"C{rng.randint(100000, 999999)}",
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}@example.com",
            "shippingAddress": {
                "line1": f"{rng.randint(1, 999)} {rng.choice(_LAST)} Street",
                "city": city,
                "region": region,
                "postalCode": f"{rng.randint(10000, 99999)}",
                "country": country,
            },
        },
        "items": [],
        "payment": {
            "method": rng.choice(["card", "paypal", "invoice"]),
            "currency": "USD",
            "captured": rng.random() < 0.8,
        },
        "notes": [],
        "events": [],
    }


def documents(count: int, seed: int = 1) -> Iterator[str]:
    """`count` compact JSON documents, deterministic for a seed."""
    rng = random.Random(seed)
    for number in range(count):
        doc = order(rng, number)
        target = _target_size(rng)
        # The document's compact JSON length, kept up to date as parts are added (dumping the
        # whole document after each part made generation quadratic in its size).
        size = len(json.dumps(doc, separators=(",", ":")))
        while size < target:
            name, category = rng.choice(_PRODUCTS)
            step = rng.choice(("item", "item", "event", "note"))
            if step == "item":
                part: Any = {
                    "sku": f"SKU-{rng.randint(10000, 99999)}",
                    "name": name,
                    "category": category,
                    "quantity": rng.randint(1, 4),
                    "unitPrice": round(rng.uniform(3, 400), 2),
                }
                where = doc["items"]
            elif step == "event":
                part = {
                    "type": rng.choice(_STATUSES),
                    "at": doc["placedAt"],
                    "by": rng.choice(["system", "warehouse", "support"]),
                }
                where = doc["events"]
            else:
                part, where = rng.choice(_NOTES), doc["notes"]
            size += len(json.dumps(part, separators=(",", ":"))) + (1 if where else 0)
            where.append(part)
        yield json.dumps(doc, separators=(",", ":"))
