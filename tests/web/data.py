"""A small, realistic deployment for the pages to show: every state, failures, a paused
and throttled queue, a recurring job, workers, tags and a day of statistics."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import aqless
import aqless.puts

TRACEBACK = """Traceback (most recent call last):
  File "app/jobs.py", line 42, in send
    smtp.send(message)
TimeoutError: the SMTP server did not answer within 30 s"""


@dataclass
class Deployment:
    waiting: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    scheduled: str = ""
    depends: str = ""
    recurring: str = ""
    completed: list[str] = field(default_factory=list)


async def populate(client: aqless.Client) -> Deployment:
    made = Deployment()
    emails = client.queues["emails"]
    for n in range(6):
        jid = await emails.put(
            "app.jobs.SendEmail",
            {"to": f"user{n}@example.com", "template": "welcome", "attempt": 1},
            tags=["welcome", f"user-{n}"] if n % 2 else ["welcome"],
            priority=10 if n == 0 else 0,
        )
        made.waiting.append(jid)
    for job in await emails.pop_many(2, worker="mail-worker-1"):
        made.running.append(job.jid)
        made.waiting.remove(job.jid)
    for job in await emails.pop_many(2, worker="mail-worker-2"):
        await job.complete()
        made.completed.append(job.jid)
        made.waiting.remove(job.jid)
    made.scheduled = await emails.put("app.jobs.SendDigest", {"day": "monday"}, delay=3600)
    made.depends = await emails.put("app.jobs.Followup", {}, depends=[made.waiting[0]])
    reports = client.queues["reports"]
    made.recurring = await reports.recur("app.jobs.DailyReport", {"kind": "sales"}, interval=86400)
    for n in range(4):
        await reports.put("app.jobs.Export", {"n": n}, tags=["export"])
    for job in await reports.pop_many(5, worker="report-worker"):
        if job.data.get("n", 3) < 3:  # the recurring job's first spawn is popped too
            await job.fail("smtp.Timeout" if job.data["n"] else "ValueError", TRACEBACK)
            made.failed.append(job.jid)
        else:
            await job.complete()
            made.completed.append(job.jid)
    billing = client.queues["billing"]
    await billing.put("app.jobs.Invoice", {"invoice": 7}, tags=["billing"])
    await billing.pause()
    await billing.set_throttle(2)
    return made


async def put_as_another_client(
    client: aqless.Client, queue: str, klass: str, data: object, tags: list[str] | None = None
) -> str:
    """A job put by the script alone, as another qless client may put it: into a queue
    whose name aqless's own doors refuse (markup with spaces, aqless.rules). Its jid."""
    options = [] if tags is None else ["tags", json.dumps(tags)]
    jid = aqless.puts.new_jid()
    text = json.dumps(data)
    return await client.protocol.text(
        "queue.put", client.worker_name, queue, jid, klass, text, 0, *options
    )
