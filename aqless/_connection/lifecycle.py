"""A client's lifecycle, the same for every client (plain, sharded, blocking): made
(UNOPENED), opened (OPENED), closed (CLOSED). A closed client takes no call and is never
opened again (ClientClosedError); closing twice is harmless."""

from __future__ import annotations

import enum

from aqless.errors import ClientClosedError

__all__ = ["ClientState", "Lifecycle"]


class ClientState(enum.Enum):
    #: made, not opened yet (a plain client given a server's URL already answers calls)
    UNOPENED = 1
    #: opened: `open` (or ``async with``) succeeded
    OPENED = 2
    #: closed: refuses every call and every open
    CLOSED = 3


class Lifecycle:
    """One client's state, and the refusals that follow from it."""

    def __init__(self, client: str) -> None:
        self.state = ClientState.UNOPENED
        self._client = client  # how the refusal names it ("this client", "this ShardedClient")

    def check_usable(self) -> None:
        """Raise ClientClosedError once the client was closed (to open it again, or to
        call it)."""
        if self.state is ClientState.CLOSED:
            raise ClientClosedError(f"{self._client} is closed; make a new one")

    def opened(self) -> None:
        """The client opened (unless it was closed meanwhile, by a refusing check)."""
        self.check_usable()
        self.state = ClientState.OPENED

    def close(self) -> bool:
        """Mark the client closed; whether it was not closed already (what to release
        then)."""
        first = self.state is not ClientState.CLOSED
        self.state = ClientState.CLOSED
        return first
