"""Claim-check stores: where payloads over a threshold go, the job keeping a reference.

A store is anything with the three methods of `BlobStore`, called synchronously by the
codec as it encodes and decodes (a put, a job read). `DirectoryStore` keeps each blob as a
file of a local (or mounted, shared) directory. Blobs are named ``<jid>.<random>``, so
`sweep` can tell which job each belongs to and delete those whose job is gone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote, unquote

from aqless.errors import BlobMissingError, BlobStoreError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["BlobStore", "DirectoryStore", "sweep"]


class BlobStore(Protocol):
    """What the claim check needs of a store. `put` raises BlobStoreError (or any OSError,
    which the codec turns into one) when it cannot keep the blob."""

    def put(self, name: str, blob: bytes) -> None: ...

    def get(self, name: str) -> bytes: ...

    def delete(self, name: str) -> None: ...

    def names(self, older_than: float) -> Iterable[str]:
        """The names of the blobs written more than `older_than` seconds ago."""
        ...


class DirectoryStore:
    """Blobs as files of `directory` (made when missing), written to a temporary name then
    renamed, so that a reader never sees part of one."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.directory)!r})"

    def _path(self, name: str) -> Path:
        return self.directory / quote(name, safe="")

    def put(self, name: str, blob: bytes) -> None:
        path = self._path(name)
        partial = path.with_name(path.name + ".part")
        try:
            partial.write_bytes(blob)
            partial.replace(path)
        except OSError as error:
            raise BlobStoreError(
                f"the store {self.directory} did not keep {name}: {error}"
            ) from error

    def get(self, name: str) -> bytes:
        try:
            return self._path(name).read_bytes()
        except FileNotFoundError as error:
            raise BlobMissingError("", f"blob {name} is not in {self.directory}") from error

    def delete(self, name: str) -> None:
        self._path(name).unlink(missing_ok=True)

    def names(self, older_than: float) -> Iterable[str]:
        before = time.time() - older_than
        for path in self.directory.iterdir():
            if not path.name.endswith(".part") and path.stat().st_mtime < before:
                yield unquote(path.name)


def owner(name: str) -> str:
    """The jid a blob's name belongs to."""
    return name.rsplit(".", 1)[0]


async def sweep(
    store: BlobStore,
    exists: Callable[[list[str]], Awaitable[list[bool]]],
    *,
    grace: float = 3600.0,
) -> int:
    """Deletes the blobs whose job no longer exists (`exists` tells, for a list of jids),
    among those written more than `grace` seconds ago (a put in flight has written its blob
    but not yet its job); returns how many it deleted."""
    names = list(store.names(grace))
    jids = sorted({owner(name) for name in names})
    alive = {jid for jid, there in zip(jids, await exists(jids), strict=True) if there}
    gone = [name for name in names if owner(name) not in alive]
    for name in gone:
        store.delete(name)
    return len(gone)
