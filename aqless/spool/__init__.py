"""Reliable push: a producer's puts kept in a bounded spool (in memory, or a file) while
the server cannot be reached, and sent in order, each exactly once, when it answers again.
``client.spool(...)`` makes one (see `Spool`)."""

from __future__ import annotations

from aqless.spool.spool import PutReceipt, Spool, SpoolStats

__all__ = ["PutReceipt", "Spool", "SpoolStats"]
