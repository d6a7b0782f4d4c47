"""Where a spool keeps its puts: in memory (`MemoryStore`), or also in a file
(`FileStore`) that outlives the process.

A spool file is append-only: each put is a line of JSON (`SpooledPut.line`), and each flush
that the server took appends ``{"done": N}``, meaning every put numbered N or less landed.
A put's line is fsynced before its call returns; the puts of concurrent calls share one
fsync, made in a thread so that the event loop goes on meanwhile. A ``done`` line is not
waited for: lost in a crash, it only makes the next process send puts again, which their
dedup ids drop. Opening the file reads the puts not done
(a line torn by a crash mid-write is dropped: its put was never accepted), then writes them
alone to a new file that replaces the old (fsynced, renamed); once every put is done, the
file is emptied. A lock on ``<path>.lock`` keeps a second process off the same file."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
from collections import deque
from pathlib import Path
from typing import IO

import anyio

from aqless.errors import ConfigurationError
from aqless.spool.entries import SpooledPut

logger = logging.getLogger(__name__)


class MemoryStore:
    """The puts of a spool, in the order they came; lost with the process."""

    def __init__(self) -> None:
        self._puts: deque[SpooledPut] = deque()
        self.next_number = 1
        self.name = "memory"

    @property
    def depth(self) -> int:
        return len(self._puts)

    def append(self, put: SpooledPut) -> None:
        self._puts.append(put)
        self.next_number = put.number + 1

    def head(self, count: int) -> list[SpooledPut]:
        """The `count` oldest puts (fewer when fewer wait)."""
        return [self._puts[index] for index in range(min(count, len(self._puts)))]

    def drop_through(self, number: int) -> None:
        """Forget the puts numbered `number` or less: the server took them."""
        while self._puts and self._puts[0].number <= number:
            self._puts.popleft()

    async def synced(self) -> None:
        """Return once every put appended so far is kept (in memory: at once)."""
        return None

    def close(self) -> None:
        return None


class FileStore(MemoryStore):
    """A MemoryStore that writes every change to an append-only file first (fsynced), and
    starts from the puts a file of an earlier process left."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.name = str(path)
        self._lock = _locked(path)
        try:
            for put in _read(path):
                super().append(put)
            self._file = _rewritten(path, self._puts)
        except BaseException:
            self._lock.close()
            raise
        self._written = 0  # puts' lines written (perhaps not yet on disk)
        self._kept = 0  # of those, the ones fsynced
        self._syncing: asyncio.Future[None] | None = None

    def append(self, put: SpooledPut) -> None:
        self._file.write(put.line())
        self._written += 1
        super().append(put)

    async def synced(self) -> None:
        wanted = self._written
        while self._kept < wanted:
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._sync())
            await asyncio.shield(self._syncing)

    async def _sync(self) -> None:
        """One fsync for every line written so far (in a thread)."""
        try:
            self._file.flush()
            covered = self._written
            await anyio.to_thread.run_sync(os.fsync, self._file.fileno())
            self._kept = covered
        finally:
            self._syncing = None

    def drop_through(self, number: int) -> None:
        super().drop_through(number)
        if self.depth:
            self._file.write(json.dumps({"done": number}).encode() + b"\n")
            self._file.flush()
        else:  # nothing left: start the file again
            self._file.truncate(0)

    def close(self) -> None:
        self._file.close()
        self._lock.close()


def _locked(path: Path) -> IO[bytes]:
    """The open lock file of `path`, locked; ConfigurationError if another process holds
    it."""
    lock = (path.parent / f"{path.name}.lock").open("ab")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        lock.close()
        raise ConfigurationError(
            f"the spool file {path} is in use by another process (one spool file per process)"
        ) from error
    return lock


def _read(path: Path) -> list[SpooledPut]:
    """The puts of `path` not done, in order."""
    if not path.exists():
        return []
    pending: dict[int, SpooledPut] = {}
    lines = path.read_bytes().split(b"\n")
    for index, line in enumerate(lines):
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            if index == len(lines) - 1:  # torn by a crash mid-write: never accepted
                logger.warning("spool %s: dropped a torn last line (a put never accepted)", path)
                continue
            raise ConfigurationError(
                f"the spool file {path} is damaged at line {index + 1}"
            ) from None
        if "done" in entry:
            done = int(entry["done"])
            pending = {number: put for number, put in pending.items() if number > done}
        else:
            put = SpooledPut.from_entry(entry)
            pending[put.number] = put
    return [pending[number] for number in sorted(pending)]


def _rewritten(path: Path, puts: deque[SpooledPut]) -> IO[bytes]:
    """`path` written again with `puts` alone (a new file, fsynced, then renamed over
    it), open to append."""
    fresh = path.parent / f"{path.name}.new"
    with fresh.open("wb") as file:
        file.write(b"".join(put.line() for put in puts))
        file.flush()
        os.fsync(file.fileno())
    fresh.replace(path)
    with contextlib.suppress(OSError):  # the rename made durable where the system allows
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return path.open("ab")
