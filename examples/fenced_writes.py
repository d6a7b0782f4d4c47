"""Fencing a job's own writes with its attempt: a database row that only the job's latest
attempt may change.

Every pop of a job is a new attempt (``job.attempt``: 1, 2, ...). The server refuses the
verbs of an earlier attempt (``StaleAttemptError``), but the job's code may also write
elsewhere, here an SQLite row: each UPDATE names the attempt it was made by, and changes
nothing once a later attempt has claimed the row.

The two attempts are made by hand: the first pauses past its lock (1 s here), the same
worker name pops the job again, and the first wakes up while the second still works.

    python examples/fenced_writes.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
import sqlite3

import aqless


def claim(db: sqlite3.Connection, report: int, attempt: int) -> bool:
    """Make `attempt` the row's owner, unless a later attempt already is."""
    with db:
        cursor = db.execute(
            "UPDATE reports SET attempt = ? WHERE id = ? AND attempt < ?",
            (attempt, report, attempt),
        )
    return cursor.rowcount == 1


def write(db: sqlite3.Connection, report: int, attempt: int, body: str) -> bool:
    """Write the row's body, only while `attempt` owns it."""
    with db:
        cursor = db.execute(
            "UPDATE reports SET body = ? WHERE id = ? AND attempt = ?", (body, report, attempt)
        )
    return cursor.rowcount == 1


async def build_report(job: aqless.Job, db: sqlite3.Connection, pause: float = 0) -> None:
    """The job's code: claim the row, work (`pause`), write the result, complete."""
    report, attempt = job.data["report"], job.attempt or 0
    if not claim(db, report, attempt):
        print(f"attempt {attempt}: a later attempt owns report {report}; stopping")
        return
    await asyncio.sleep(pause)
    if not write(db, report, attempt, f"built by attempt {attempt}"):
        print(f"attempt {attempt}: its write changed nothing (a later attempt owns the row)")
    try:
        await job.complete()
        print(f"attempt {attempt}: completed")
    except aqless.LockLostError as refused:  # StaleAttemptError: a later attempt runs
        print(f"attempt {attempt}: complete refused ({type(refused).__name__}): {refused.detail}")


async def main() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE reports (id INTEGER PRIMARY KEY, body TEXT, attempt INTEGER)")
    db.execute("INSERT INTO reports VALUES (7, '', 0)")
    async with aqless.Client(namespace="example-fenced", worker_name="reporter") as client:
        await client.config.set("heartbeat", 1)  # 1 s locks, reclaimed as soon as they lapse
        await client.config.set("grace-period", 0)
        queue = client.queues["reports"]
        await queue.put("reports.Build", {"report": 7})
        first = await queue.pop()
        assert first is not None
        slow = asyncio.create_task(build_report(first, db, pause=2.0))  # past its lock
        await asyncio.sleep(1.2)
        second = await queue.pop()  # the same worker name takes the job again
        assert second is not None
        print(f"popped attempt {first.attempt}, then attempt {second.attempt}")
        await asyncio.gather(slow, build_report(second, db, pause=1.5))
        (body,) = db.execute("SELECT body FROM reports WHERE id = 7").fetchone()
        print(f"report 7: {body}")


if __name__ == "__main__":
    asyncio.run(main())
