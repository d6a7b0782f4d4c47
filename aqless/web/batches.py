"""The batches pages: every batch kept with its progress, and one batch's totals and
callbacks (each also served as JSON under /api)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from aqless.batches import Batch
from aqless.sharding.client import AnyClient
from aqless.web.reads import NotFound

JSON = dict[str, Any]
#: batches per page of the listing
PAGE = 50


def batch_document(batch: Batch) -> JSON:
    """A batch as the pages show it: its record, its share ended and its state."""
    return {**batch.to_json(), "fraction": batch.fraction, "state": batch.state}


async def batches(client: AnyClient, request: Request) -> JSON:
    try:
        page = max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        page = 1
    found = await client.batches.recent(offset=(page - 1) * PAGE, count=PAGE)
    return {
        "batches": [batch_document(batch) for batch in found.batches],
        "total": found.total,
        "page": page,
        "pages": max(1, -(-found.total // PAGE)),
    }


async def batch(client: AnyClient, request: Request) -> JSON:
    bid = request.path_params["bid"]
    found = await client.batches.get(bid)
    if found is None:
        raise NotFound(f"no batch {bid!r} (it may have expired)")
    return {"batch": batch_document(found)}
