"""Listings the dashboard and the CLI share, each a bounded read of one server: every
recurring template (one call a queue, a page of templates a call), the throttles (from
aqless's index, never a scan of the keyspace), and the sweep that adds to that index the
throttles other qless clients set, one short SCAN step at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from aqless.client import Client
from aqless.documents import Document, throttle_document
from aqless.job import RecurringJob
from aqless.models import ThrottleInfo
from aqless.sharding.client import AnyClient

#: Recurring templates read in one call.
TEMPLATES_A_CALL: Final = 1000

#: Keys one SCAN step of the throttle sweep looks at (a step holds the server well under a
#: millisecond).
SWEEP_STEP: Final = 1000


async def recurring_templates(server: Client, queues: Sequence[str] = ()) -> list[RecurringJob]:
    """The recurring templates of `queues` (every queue when none) on one server, queue by
    queue: the ids a page at a time, then their templates in one call."""
    found: list[RecurringJob] = []
    for name in list(queues) or await server.queues.names():
        offset = 0
        while True:
            rjids = await server.queues[name].jobs(
                "recurring", offset=offset, count=TEMPLATES_A_CALL
            )
            if rjids:
                reply = await server.protocol.json("recurringJob.getMulti", *rjids)
                found += [RecurringJob(server, template) for template in reply or []]
            if len(rjids) < TEMPLATES_A_CALL:
                break
            offset += len(rjids)
    return found


async def recurring_page(
    client: AnyClient, offset: int, count: int
) -> tuple[list[RecurringJob], int]:
    """`count` recurring templates from the `offset`-th, of every queue on every server (in
    the order `recurring_templates` lists them), and how many there are in all: each
    server's queue counts in one call, then only the queues the page reaches, two calls
    each. The work is bounded by the page and the number of queues, never by the templates
    kept."""
    listed = [
        (server, counts.name, counts.recurring)
        for server in client.servers
        for counts in await server.queues.counts()
        if counts.recurring
    ]
    found: list[RecurringJob] = []
    for server, name, held in listed:
        if offset >= held:
            offset -= held
            continue
        if len(found) < count:
            rjids = await server.queues[name].jobs(
                "recurring", offset=offset, count=count - len(found)
            )
            if rjids:
                reply = await server.protocol.json("recurringJob.getMulti", *rjids)
                found += [RecurringJob(server, template) for template in reply or []]
        offset = 0
    return found, sum(held for _, _, held in listed)


async def templates_by_id(client: AnyClient, rjids: Sequence[str]) -> list[RecurringJob]:
    """The recurring templates among `rjids` that exist, in their order: one call a server
    (each shard asked for them all, as a template's shard is not known from its id)."""
    if not rjids:
        return []
    found: dict[str, RecurringJob] = {}
    for server in client.servers:
        reply = await server.protocol.json("recurringJob.getMulti", *rjids)
        found.update((str(t["jid"]), RecurringJob(server, t)) for t in reply or [])
    return [found[rjid] for rjid in rjids if rjid in found]


@dataclass(frozen=True, slots=True)
class ListedThrottle:
    """A throttle as the listing finds it: its settings, how many jobs hold it and wait."""

    info: ThrottleInfo
    locks: int
    pending: int


async def listed_throttles(server: Client) -> list[ListedThrottle]:
    """The throttles with a record on one server, by id: those aqless's index names (every
    throttle an aqless client set) and every queue's own; one call, no scan."""
    reply = await server.protocol.json("throttle.all")
    return [
        ListedThrottle(ThrottleInfo.from_json(item), int(item["locks"]), int(item["pending"]))
        for item in reply or []
    ]


async def throttle_documents(server: Client) -> list[Document]:
    """Each listed throttle's document (`aqless.documents.throttle_document`): the holders
    and the waiters read only for a throttle that has some."""
    documents = []
    for listed in await listed_throttles(server):
        named = server.throttles[listed.info.id]
        locks = await named.locks() if listed.locks else []
        pending = await named.pending() if listed.pending else []
        documents.append(throttle_document(listed.info, locks=locks, pending=pending))
    return documents


async def reindex_throttles(
    server: Client, *, step: int = SWEEP_STEP, advance: Callable[[int], None] | None = None
) -> int:
    """Add to aqless's index the throttles set by other clients (which keep none): SCAN the
    namespace's ``th:`` hashes a step of `step` keys at a time, each step a round trip of
    its own, so that other clients are never held more than a step. `advance` is told how
    many keys each step looked at. Returns how many throttles were added."""
    prefix = f"{server.prefix}th:"
    pattern = glob_escape(prefix) + "*"
    added, cursor = 0, "0"
    while True:
        cursor_reply, keys = await server.protocol.plain(
            "throttle.reindex", "SCAN", cursor, "MATCH", pattern, "COUNT", step, "TYPE", "hash"
        )
        names = [text(key)[len(prefix) :] for key in keys]
        if names:
            added += int(await server.protocol.call("throttle.index", *names))
        if advance is not None:
            advance(step)
        cursor = text(cursor_reply)
        if cursor == "0":
            return added


def glob_escape(text: str) -> str:
    """`text` as a SCAN pattern matching itself only."""
    return "".join(f"\\{char}" if char in "*?[]\\" else char for char in text)


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
