"""What each page shows, read from the server as plain JSON values. Every page's HTML and
its `/api` twin come from the same loader here."""

from __future__ import annotations

import dataclasses
import datetime
import math
import platform
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from starlette.requests import Request

from aqless import rules, scripts
from aqless._connection.protocol import raising_aqless_errors
from aqless._version import __version__
from aqless.client import Client
from aqless.documents import (
    counts_document,
    group_document,
    job_details,
    job_document,
    priority_document,
    rate_limit_document,
    recurring_document,
    seen_worker_document,
    stats_document,
    worker_info_document,
)
from aqless.errors import InvalidValueError
from aqless.job import RecurringJob
from aqless.ops import known
from aqless.ops.listings import recurring_page, templates_by_id, throttle_documents
from aqless.sharding.client import AnyClient
from aqless.web import config_docs
from aqless.web.condition import memory_of
from aqless.web.finished import with_outcome
from aqless.web.held import with_next_start
from aqless.web.progress import with_progress

PAGE_SIZE: Final = 25
QUEUE_STATES: Final[tuple[str, ...]] = rules.RULES["state"].choices
TREND_DAYS: Final = 14
FAILED_SAMPLES: Final = 3

JSON = dict[str, Any]
Loader = Callable[[AnyClient, Request], Awaitable[JSON]]


class NotFound(Exception):
    """The page's subject does not exist (a 404)."""


def command_of(request: Request) -> str:
    """The name a refusal of the page's input gives its command: ``dashboard /queues``."""
    return f"dashboard {request.url.path}"


def query(request: Request, name: str, default: str) -> Any:
    """The query parameter `name` (else `default`) parsed by its rule in aqless.rules;
    InvalidValueError (a 400) when it breaks the rule."""
    return rules.parse(name, request.query_params.get(name, default), command_of(request))


def page_number(request: Request) -> int:
    """The ``page`` parameter (from 1; default 1)."""
    page: int = query(request, "page", "1")
    return page


def page_size(request: Request) -> int:
    """The ``size`` parameter: rows a page shows, 25 (the default), 50 or 100."""
    return int(
        rules.parse(
            "page_size", request.query_params.get("size", str(PAGE_SIZE)), command_of(request)
        )
    )


def window(request: Request) -> tuple[int, int, int]:
    """The page asked for, its size, and the offset of its first row."""
    page, size = page_number(request), page_size(request)
    return page, size, (page - 1) * size


def paging(request: Request, page: int, total: int, size: int = PAGE_SIZE) -> JSON:
    """The listing's page, pages, total and page size; a page past the last is refused."""
    pages = max(1, math.ceil(total / size))
    if page > pages:
        raise InvalidValueError(
            command_of(request), "page", page, f"a whole number from 1 up to {pages}, the last page"
        )
    return {"page": page, "pages": pages, "total": total, "size": size}


async def jobs_json(client: AnyClient, jids: Sequence[str]) -> list[JSON]:
    return [job_document(job) for job in await client.jobs.get_many(list(jids))]


async def overview(client: AnyClient, request: Request) -> JSON:
    queues = []
    for counts in await client.queues.counts():
        today = await client.queues[counts.name].stats()
        queues.append(
            {
                **counts_document(counts),
                "popped_today": today.wait.count,
                "completed_today": today.run.count,
                "failed_today": today.failed,
            }
        )
    groups = await client.jobs.failure_groups()
    tracked, _ = await client.jobs.tracked()
    return {
        "queues": queues,
        "workers": (await workers(client, request))["workers"],
        "failed": {"groups": len(groups), "jobs": sum(groups.values())},
        "tracked": len(tracked),
        "tags": await client.tags.top(count=20),
    }


async def queue(client: AnyClient, request: Request) -> JSON:
    name = request.path_params["name"]
    state: str = query(request, "state", "waiting")
    page, size, offset = window(request)
    await known.require(client, "queue", name)
    q = client.queues[name]
    counts = counts_document(await q.counts())
    jobs: list[JSON] = []
    if state == "waiting":
        # a peek lists the stalled jobs first (a pop takes them back first): they have their
        # own tab, and the page says how many come before these
        peeked = await q.peek(size, offset=offset + int(counts["stalled"]))
        jobs = [job_document(job) for job in peeked if job.state == "waiting"]
    elif state == "recurring":
        rjids = await q.jobs(state, offset=offset, count=size)
        jobs = [recurring_document(template) for template in await templates_by_id(client, rjids)]
    else:
        jobs = await jobs_json(client, await q.jobs(state, offset=offset, count=size))
    if state == "running":
        jobs = await with_progress(client, jobs)
    if state == "scheduled":
        jobs = await with_next_start(client, name, jobs)
    now = client.clock()
    days = []
    for back in range(TREND_DAYS - 1, -1, -1):
        moment = now - back * 86400
        stats = await q.stats(moment)
        day = datetime.datetime.fromtimestamp(moment, datetime.UTC).date().isoformat()
        days.append({"date": day, **stats_document(stats)})
    throttle = await q.throttle()
    return {
        "name": name,
        "counts": counts,
        "state": state,
        "states": list(QUEUE_STATES),
        "jobs": jobs,
        **paging(request, page, int(counts[state]), size),
        "throttle": {"maximum": throttle.maximum, "ttl": throttle.ttl},
        "rate_limit": rate_limit_document(await q.rate_limit.get()),
        "heartbeat": await q.heartbeat(),
        "groups": [group_document(group) for group in await q.groups()],
        "today": days[-1],
        "days": days,
    }


async def job(client: AnyClient, request: Request) -> JSON:
    jid = request.path_params["jid"]
    found = await client.jobs.get(jid)
    if found is None:
        raise NotFound(f"no job {jid!r}")
    queues = await client.queues.names()
    if isinstance(found, RecurringJob):
        runs = [at.isoformat(" ") for at in await found.next_runs(5)]
        job = recurring_document(found)
        return {"kind": "recurring", "job": job, "next_runs": runs, "queues": queues}
    details = await job_details(found.client, found)
    return {"kind": "job", "job": details, "queues": queues, "flow": await flow_of(client, jid)}


async def flow_of(client: AnyClient, jid: str) -> JSON | None:
    """The flow the job belongs to, as nested objects; None for a job of no flow."""
    tree = await client.flows.tree(jid)
    if tree is None or (not tree.children and tree.jid == jid):
        return None
    document: JSON = dataclasses.asdict(tree)
    return document


async def failed(client: AnyClient, request: Request) -> JSON:
    """A page of the failure groups, the biggest first, each with its newest jobs (only the
    page's groups are sampled: the work is bounded by the page, not by the groups kept)."""
    page, size, offset = window(request)
    counts = await client.jobs.failure_groups()
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    groups = []
    for group, count in ordered[offset : offset + size]:
        sample = await client.jobs.failed(group, count=FAILED_SAMPLES)
        groups.append(
            {"group": group, "count": count, "samples": await jobs_json(client, sample.jids)}
        )
    return {
        "groups": groups,
        **paging(request, page, len(ordered), size),
        "total": sum(counts.values()),  # failed jobs (the paging's total counts groups)
        "group_total": len(ordered),
    }


async def failed_group(client: AnyClient, request: Request) -> JSON:
    group = request.path_params["group"]
    page, size, offset = window(request)
    await known.require(client, "failure group", group)
    listing = await client.jobs.failed(group, offset=offset, count=size)
    jobs = await jobs_json(client, listing.jids)
    return {"group": group, "jobs": jobs, **paging(request, page, listing.total, size)}


async def tracked(client: AnyClient, request: Request) -> JSON:
    jobs, expired = await client.jobs.tracked()
    return {"jobs": [job_document(job) for job in jobs], "expired": expired}


async def tags(client: AnyClient, request: Request) -> JSON:
    tag = request.query_params.get("tag", "").strip()
    page, size, offset = window(request)
    result: JSON = {"tag": tag, "top": await client.tags.top(count=50), "jobs": []}
    if tag:
        listing = await client.jobs.tagged(tag, offset=offset, count=size)
        result["jobs"] = await jobs_json(client, listing.jids)
        result.update(paging(request, page, listing.total, size))
    else:
        result.update(paging(request, page, 0, size))
    return result


async def workers(client: AnyClient, request: Request) -> JSON:
    """The workers (holding jobs, or publishing a record), and the other clients qless
    lists (they popped, hold nothing and publish no record)."""
    found, others = await client.workers.seen()
    return {"workers": [seen_worker_document(seen) for seen in found], "others": others}


async def worker(client: AnyClient, request: Request) -> JSON:
    name = request.path_params["name"]
    await known.require(client, "worker", name)
    held = await client.workers.jobs(name)
    record = (await client.workers.records()).get(name)
    return {
        "name": name,
        "info": None if record is None else worker_info_document(record),
        "jobs": await jobs_json(client, held.jobs),
        "stalled": await jobs_json(client, held.stalled),
    }


async def recurring(client: AnyClient, request: Request) -> JSON:
    """A page of every queue's recurring jobs (`aqless.ops.listings.recurring_page`)."""
    page, size, offset = window(request)
    templates, total = await recurring_page(client, offset, size)
    return {
        "jobs": [recurring_document(template) for template in templates],
        **paging(request, page, total, size),
    }


async def throttles(client: AnyClient, request: Request) -> JSON:
    limits = [rate_limit_document(info) for info in await client.rate_limits.all()]
    if not client.sharded:
        return {"throttles": await throttle_documents(client), "rate_limits": limits}
    found = [  # each throttle on the one shard that holds it
        {**document, "shard": shard.id}
        for shard in client.shards.shards
        for document in await throttle_documents(client.shard(shard.id))
    ]
    for limit in limits:
        limit["shard"] = client.shard_of_limit(limit["id"])
    found.sort(key=lambda document: (document["id"], document["shard"]))
    return {"throttles": found, "rate_limits": limits}


async def config(client: AnyClient, request: Request) -> JSON:
    options = await client.config.all()
    return {"options": options, **config_docs.documented(options)}


async def patterns(client: AnyClient, request: Request) -> JSON:
    priorities = await client.queue_patterns.priorities()
    return {
        "identifiers": await client.queue_patterns.identifiers(),
        "priorities": [{**priority_document(group), "text": str(group)} for group in priorities],
    }


def server_of(info: dict[str, Any]) -> JSON:
    """The server's name and version from INFO: Valkey also reports a `redis_version`
    (the Redis version it is compatible with), so its own version is looked for first."""
    if "valkey_version" in info:
        return {
            "name": str(info.get("server_name") or "valkey"),
            "version": str(info["valkey_version"]),
        }
    return {"name": "redis", "version": str(info.get("redis_version", "unknown"))}


def software(client: Client) -> JSON:
    """What the about page says of aqless, its script and Python (`client`: any shard's)."""
    return {
        "aqless": __version__,
        "script": {
            "sha1": scripts.sha1(),
            "function": scripts.function_name(),
            "calls": "FCALL" if client.protocol.script.uses_functions else "EVALSHA",
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
    }


async def about(client: Client, request: Request) -> JSON:
    with raising_aqless_errors("about.info"):
        info: dict[str, Any] = await client.redis.info("server", "memory", "persistence")
    return {
        **software(client),
        "server": server_of(info),
        "memory": memory_of(info),
        "namespace": client.prefix,
    }


async def completed_total(client: AnyClient) -> int:
    """How many completed jobs are kept: the size of each server's completed set."""
    total = 0
    for server in client.servers:
        total += int(
            await server.protocol.plain("jobs.completed", "ZCARD", f"{server.prefix}completed")
        )
    return total


async def completed(client: AnyClient, request: Request) -> JSON:
    """A page of the completed jobs kept, the most recent first."""
    page, size, offset = window(request)
    listing = paging(request, page, await completed_total(client), size)
    jids = await client.jobs.completed(offset=offset, count=size)
    jobs = await with_outcome(client, await jobs_json(client, jids))
    return {"jobs": jobs, **listing}
