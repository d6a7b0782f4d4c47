"""The workflow the random-kill workload runs (imported by ``aqless-run`` processes as
``killed_workflow``): ten steps, each writing its effect into SQLite through the job's
attempt fence, then lingering a moment, so a kill often lands after the effect was made and
before its result was kept.

Tables (made by `create`):

- ``runs``: every time a step's function started: jid, step, attempt.
- ``fence``: per jid, the latest attempt that wrote; an earlier attempt's write is refused.
- ``effects``: the steps' effects, one row each: jid, step, attempt, amount. A step's effect
  and its fence claim commit together, and a step run again after a kill finds its effect
  made and adds none.
"""

from __future__ import annotations

import os
import random
import sqlite3

import anyio

import aqless

handlers = aqless.Handlers()

STEPS = 10
#: the longest pause inside a step (after its effect) and between steps, in seconds
PAUSE = 0.12


def connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=30)


def create(path: str) -> None:
    with connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE runs (jid TEXT, step INTEGER, attempt INTEGER)")
        db.execute("CREATE TABLE fence (jid TEXT PRIMARY KEY, attempt INTEGER)")
        db.execute("CREATE TABLE effects (jid TEXT, step INTEGER, attempt INTEGER, amount INTEGER)")


def effect(path: str, jid: str, step: int, attempt: int) -> None:
    """Record the run, then make the step's effect once, fenced by `attempt`."""
    db = connect(path)
    try:
        with db:
            db.execute("INSERT INTO runs VALUES (?, ?, ?)", (jid, step, attempt))
        with db:  # one transaction: the claim and the effect land together or not at all
            claimed = db.execute(
                "INSERT INTO fence VALUES (?, ?) ON CONFLICT (jid) DO UPDATE"
                " SET attempt = excluded.attempt WHERE attempt <= excluded.attempt",
                (jid, attempt),
            ).rowcount
            if claimed != 1:
                raise RuntimeError(f"attempt {attempt} of {jid} is fenced out")
            made = db.execute(
                "SELECT 1 FROM effects WHERE jid = ? AND step = ?", (jid, step)
            ).fetchone()
            if made is None:
                db.execute(
                    "INSERT INTO effects VALUES (?, ?, ?, ?)", (jid, step, attempt, step * step)
                )
    finally:
        db.close()


@handlers.workflow("killed_workflow.ten")
async def ten(ctx: aqless.WorkflowContext) -> int:
    path = os.environ["KILLED_WORKFLOW_DB"]
    total = 0
    for n in range(STEPS):

        async def step(n: int = n) -> int:
            effect(path, ctx.job.jid, n, ctx.job.attempt or 0)
            await anyio.sleep(random.uniform(0, PAUSE))  # noqa: S311 (a kill may land here)
            return n * n

        total += await ctx.step(f"step-{n}", step)
        await anyio.sleep(random.uniform(0, PAUSE))  # noqa: S311
    return total
