"""The workflow the race-kill workload runs (imported by ``aqless-run`` processes as
``raced_workflow``): it starts two children of random lengths, races them (``ctx.first``),
notes the winner each run sees, then lingers before and after a step, so a kill often lands
after the race was decided and before anything of it was stored.

Tables (made by `create`):

- ``seen``: every run that got past the race: jid, attempt, the winner's name.
- ``legs``: every start of a child's code: the child's jid.
"""

from __future__ import annotations

import os
import random
import sqlite3

import anyio

import aqless

handlers = aqless.Handlers()

#: the longest a child runs, and the longest pause after the race and after the step
LEG, PAUSE = 2.0, 1.0


def connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=30)


def create(path: str) -> None:
    with connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE seen (jid TEXT, attempt INTEGER, winner TEXT)")
        db.execute("CREATE TABLE legs (jid TEXT)")


def note(path: str, table: str, *row: object) -> None:
    db = connect(path)
    try:
        with db:
            db.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)  # noqa: S608
    finally:
        db.close()


@handlers.register("raced_workflow.leg")
async def leg(job: aqless.Job) -> float:
    note(os.environ["RACED_WORKFLOW_DB"], "legs", job.jid)
    await anyio.sleep(float(job.data["seconds"]))
    return float(job.data["seconds"])


@handlers.workflow("raced_workflow.race")
async def race(ctx: aqless.WorkflowContext) -> str:
    path = os.environ["RACED_WORKFLOW_DB"]
    legs = [
        await ctx.child(
            "raced_workflow.leg", {"seconds": round(ctx.random() * LEG, 3)}, queue="legs", name=name
        )
        for name in ("a", "b")
    ]
    winner, _ = await ctx.first(*legs)
    note(path, "seen", ctx.job.jid, ctx.job.attempt or 0, winner.name)
    await anyio.sleep(random.uniform(0, PAUSE))  # noqa: S311 (a kill may land here)
    await ctx.step("after", lambda: winner.name)
    await anyio.sleep(random.uniform(0, PAUSE))  # noqa: S311
    return winner.name
