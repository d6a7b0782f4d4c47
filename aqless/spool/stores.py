"""Where a spool keeps its puts: in memory (`MemoryStore`), or also in a file
(`FileStore`) that outlives the process.

A spool file is append-only: each put is a line of JSON (`SpooledPut.line`), and each flush
that the server took appends ``{"done": N}``, meaning every put numbered N or less landed,
or, when it took puts of one shard of a sharded deployment while older puts of another
wait, ``{"gone": [N, ...]}``, naming the puts that landed.
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
from collections import Counter
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import IO

import anyio

from aqless.errors import ConfigurationError
from aqless.spool.entries import SpooledPut

logger = logging.getLogger(__name__)


class MemoryStore:
    """The puts of a spool, in the order they came; lost with the process. A sharded
    client's puts carry their shard: each shard's puts are read and dropped apart."""

    def __init__(self) -> None:
        self._puts: dict[int, SpooledPut] = {}  # by number, oldest first
        self._per_shard: Counter[int | None] = Counter()
        self.next_number = 1
        self.name = "memory"

    @property
    def depth(self) -> int:
        return len(self._puts)

    def waiting(self, shard: int | None) -> int:
        """How many puts for `shard` wait (None: a plain client's)."""
        return self._per_shard[shard]

    def shards(self) -> list[int | None]:
        """The shards whose puts wait, by their oldest put."""
        return list(dict.fromkeys(put.shard for put in self._puts.values()))

    def append(self, put: SpooledPut) -> None:
        self._puts[put.number] = put
        self._per_shard[put.shard] += 1
        self.next_number = put.number + 1

    def head(self, count: int, shard: int | None = None) -> list[SpooledPut]:
        """The `count` oldest puts for `shard` (fewer when fewer wait)."""
        found: list[SpooledPut] = []
        for put in self._puts.values():
            if len(found) == count:
                break
            if put.shard == shard:
                found.append(put)
        return found

    def drop(self, numbers: Collection[int]) -> None:
        """Forget the puts numbered `numbers`: the server took them."""
        for number in numbers:
            put = self._puts.pop(number, None)
            if put is not None:
                self._per_shard[put.shard] -= 1

    def _keep_all(self, puts: Iterable[SpooledPut]) -> None:
        for put in puts:
            MemoryStore.append(self, put)

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
            self._keep_all(_read(path))
            self._file = _rewritten(path, self._puts.values())
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

    def drop(self, numbers: Collection[int]) -> None:
        super().drop(numbers)
        if self.depth:
            through = max(numbers)  # every put left newer: all up to it are done
            done = (
                {"done": through} if next(iter(self._puts)) > through else {"gone": sorted(numbers)}
            )
            self._file.write(json.dumps(done).encode() + b"\n")
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
        elif "gone" in entry:
            for number in entry["gone"]:
                pending.pop(int(number), None)
        else:
            put = SpooledPut.from_entry(entry)
            pending[put.number] = put
    return [pending[number] for number in sorted(pending)]


def _rewritten(path: Path, puts: Iterable[SpooledPut]) -> IO[bytes]:
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
