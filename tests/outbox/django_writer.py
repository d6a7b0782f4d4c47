"""A Django program for test_django.py: in its database (DATABASE_URL, SQLite or
PostgreSQL), it makes the outbox table, commits two puts in ``transaction.atomic()``,
rolls one back, refuses one whose data is not JSON, and prints the committed jids.

Usage: python django_writer.py DATABASE_URL
"""

from __future__ import annotations

import json
import sys
from urllib.parse import urlparse

import django
from django.conf import settings
from django.db import transaction

from aqless.errors import PayloadError
from aqless.outbox import DjangoOutbox


def database(url: str) -> dict[str, object]:
    """Django's DATABASES entry of a SQLAlchemy URL."""
    parsed = urlparse(url)
    if parsed.scheme.startswith("sqlite"):
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": parsed.path.removeprefix("/")}
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parsed.path.removeprefix("/"),
        "USER": parsed.username,
        "HOST": parsed.hostname,
        "PORT": parsed.port,
    }


class Rollback(Exception):
    """Leaves an atomic block, rolling it back."""


def main(url: str) -> None:
    settings.configure(DATABASES={"default": database(url)}, USE_TZ=True)
    django.setup()
    outbox = DjangoOutbox()
    outbox.create_table()
    with transaction.atomic():
        committed = [
            outbox.queues["emails"].put("app.SendEmail", {"n": 1}),
            *outbox.queues["emails"].put_many([]),
        ]
        try:
            outbox.queues["emails"].put("app.SendEmail", {"n": {1, 2}})
        except PayloadError:
            committed.append(outbox.queues["emails"].put("app.SendEmail", {"n": 2}, priority=3))
    try:
        with transaction.atomic():
            outbox.queues["emails"].put("app.SendEmail", {"rolled_back": True})
            raise Rollback
    except Rollback:
        pass
    sys.stdout.write(json.dumps(committed) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
