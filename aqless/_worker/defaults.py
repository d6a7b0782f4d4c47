"""The worker's defaults, in one place: ``Worker``'s arguments, ``aqless-run``'s options
(and so their environment variables) and the pytest plugin's workers read them here."""

from __future__ import annotations

from typing import Final, Literal

#: Jobs run at once (``concurrency``, ``--concurrency``).
CONCURRENCY: Final = 10
#: Jobs popped beyond the free slots and held for one (``prefetch``, ``--prefetch``); None:
#: the worker decides, holding one while its runs are short (aqless._worker.holding).
PREFETCH: Final = None
#: The order queues are popped in (``reserver``, ``--reserver``).
RESERVER: Final[Literal["ordered"]] = "ordered"
#: Seconds between polls while idle (``interval``, ``--interval``).
INTERVAL: Final = 5.0
#: Seconds running jobs get to finish after a stop (``grace``, ``--grace``).
GRACE: Final = 30.0
#: Seconds between re-reading which queues the patterns match (``refresh``).
REFRESH: Final = 60.0
#: The longest delay between retries (``Backoff.cap``, ``RetryPolicy.cap``, ``--backoff-cap``).
BACKOFF_CAP: Final = 300.0
#: Seconds between polls of the pytest plugin's workers (``aqless_worker``), which run
#: in bursts: short, so a test waits little for a job that becomes due.
TESTING_INTERVAL: Final = 0.1
