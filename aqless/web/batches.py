"""The batches pages: every batch kept with its progress, and one batch's totals, callbacks
and members, a page at a time (each also served as JSON under /api)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from aqless.batches import Batch
from aqless.documents import job_document
from aqless.sharding.client import AnyClient
from aqless.web.reads import NotFound, paging, window

JSON = dict[str, Any]
#: (about) members per page of a batch
PAGE = 50


def batch_document(batch: Batch) -> JSON:
    """A batch as the pages show it: its record, its share ended and its state."""
    return {**batch.to_json(), "fraction": batch.fraction, "state": batch.state}


async def batches(client: AnyClient, request: Request) -> JSON:
    """A page of the batches kept, newest first (``page``, ``size`` as every listing)."""
    page, size, offset = window(request)
    found = await client.batches.recent(offset=offset, count=size)
    return {
        "batches": [batch_document(batch) for batch in found.batches],
        **paging(request, page, found.total, size),
    }


async def members(client: AnyClient, bid: str, token: str) -> JSON:
    """A page of the batch's members from `token` (``0``: the first): each jid with its
    outcome (pending, done, failed) and its job when it is still kept, and the token of the
    next page (None after the last). One HSCAN of the batch's members hash (a small hash
    comes whole: the page is a slice of it, the token ``<cursor>.<skip>``), then one read of
    the page's jobs: bounded by the page, whatever the batch's size."""
    cursor, _, skip_text = token.partition(".")
    if not cursor.isdigit() or not (skip_text or "0").isdigit():
        cursor, skip_text = "0", "0"
    skip = int(skip_text or 0)
    following, items = "0", []
    for shard in client.servers:  # a batch lives on one shard: the one that has it
        key = f"{shard.prefix}batch:{bid}-members"
        following, items = await shard.protocol.plain(
            "batch.members", "HSCAN", key, cursor, "COUNT", PAGE
        )
        if items or str(following) != "0":
            break
    pairs = list(zip(items[::2], items[1::2], strict=True))
    outcomes = {str(jid): str(outcome) for jid, outcome in pairs[skip : skip + PAGE]}
    if skip + PAGE < len(pairs):
        after: str | None = f"{cursor}.{skip + PAGE}"
    else:
        after = None if str(following) == "0" else str(following)
    jobs = {job.jid: job_document(job) for job in await client.jobs.get_many(list(outcomes))}
    rows = [{"jid": j, "outcome": o, "job": jobs.get(j)} for j, o in outcomes.items()]
    return {"members": rows, "cursor": token, "next": after}


async def batch(client: AnyClient, request: Request) -> JSON:
    bid = request.path_params["bid"]
    found = await client.batches.get(bid)
    if found is None:
        raise NotFound(f"no batch {bid!r} (it may have expired)")
    page = await members(client, bid, request.query_params.get("members", "0"))
    return {"batch": batch_document(found), **page}
