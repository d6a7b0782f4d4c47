"""A realistic payload: seeded JSON made to look like an application's, for every benchmark.

A page of orders with ids (random UUIDs), names, e-mail addresses, dates, prices and short
free-text notes; the same seed gives the same bytes on every run and in every process (zstd
level 1 squeezes 100 KB of it about 3.9 to 1, where "x" padding shrinks 4,500-fold).
``benchmarks/codecs.py`` encodes the page itself; ``benchmarks/compare.py`` (its
``--payload-text realistic``) cuts its text to each payload size for every library.

Stdlib only: the peers' runners import it in their own venvs.
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

FIRST = ("Ada", "Grace", "Linus", "Alan", "Barbara", "Ken", "Dennis", "Margaret", "Edsger")
LAST = ("Lovelace", "Hopper", "Torvalds", "Turing", "Liskov", "Thompson", "Ritchie", "Knuth")
LETTERS = "abcdefghijklmnopqrstuvwxyz     "
SEED = 7
COMPACT = (",", ":")


def order(rng: random.Random) -> dict[str, Any]:
    """One made-up order."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "customer": {
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 999)}@example.com",
            "address": f"{rng.randint(1, 999)} {rng.choice(('Oak', 'Elm', 'Main'))} Street",
        },
        "created": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
        "lines": [
            {
                "sku": f"SKU-{rng.randint(10000, 99999)}",
                "qty": rng.randint(1, 5),
                "price": round(rng.uniform(1, 500), 2),
            }
            for _ in range(rng.randint(1, 4))
        ],
        "status": rng.choice(("paid", "pending", "shipped")),
        "note": "".join(rng.choice(LETTERS) for _ in range(rng.randint(0, 40))),
    }


def payload(size: int = 100_000, seed: int = SEED) -> dict[str, Any]:
    """About `size` bytes of JSON: a page of orders, as many as make the list's compact
    JSON at least `size` long."""
    rng = random.Random(seed)  # noqa: S311 - made-up data, not secrets
    orders: list[dict[str, Any]] = []
    length = 2  # "[]", then each order's JSON and a comma between two
    while length < size:
        orders.append(order(rng))
        length += len(json.dumps(orders[-1], separators=COMPACT)) + (len(orders) > 1)
    return {"page": 1, "orders": orders}


def text(size: int, seed: int = SEED) -> str:
    """Exactly `size` characters of the page's compact JSON, its double quotes made single,
    so that a JSON encoder stores the text as it is (no escapes) and every library, JSON or
    pickle, carries the same bytes."""
    whole = json.dumps(payload(size, seed), separators=COMPACT).replace('"', "'")
    return whole[:size]
