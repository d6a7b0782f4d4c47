"""Flows under faults (marker ``faults``), through real ``aqless-run`` processes.

What "exactly once" means for a flow's parent (docs/guides/flows.md): its *outcome* is
committed once, after all of its children ended: one accepted completion (one ``done`` in
its history) with the result built from all of its children's results, every other attempt
refused. Its *code* may start more than once (a worker killed while running it): those
starts are counted and reported, not asserted. The parent's effect outside Redis (an SQLite
row keyed by its jid) is fenced by its attempt, with examples/fenced_writes.py's claim and
write, so that it too is there once, as the accepted attempt wrote it.

- 100 flows of 20 children drain while 8 workers are SIGKILLed, one each tenth of them;
- a worker frozen (SIGSTOP) in a parent's code past its lock: another takes the parent and
  completes it; woken (SIGCONT), the frozen one's write and completion are refused.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

import aqless
from aqless.flows import FlowNode
from tests.faults.harness import QUEUE, Killer, completed, drained, own_server, prepare, workers
from tests.support.worker_processes import WorkerProcess, eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

#: 2,100 jobs (200 flows made this the slowest test of the suite: the kills, spread over the
#: drain, are what it is about)
FLOWS, CHILDREN = 100, 20
KILLS = 8

#: The jobs of the flows' workers (``-i flowjobs``): a child returns its index; a parent
#: records its start (by the server's clock) and what it read of its children, writes its
#: result to its row of effects.db (claimed by its attempt, written only while that attempt
#: owns it; a refused write is recorded in `refused`) and returns it. A parent put with
#: ``freeze`` stops its own process (SIGSTOP) on its first attempt, its row claimed and its
#: result built, before it writes and returns: a worker frozen at the worst moment.
FLOW_JOBS = """
import contextlib
import json
import os
import signal
import sqlite3

import anyio

from examples.fenced_writes import claim, write


def effects():
    return contextlib.closing(sqlite3.connect("effects.db", timeout=60))


async def child(job):
    await anyio.sleep(0.1)
    return job.data["i"]


async def parent(job):
    seconds, micro = await job.client.redis.time()
    start = {"jid": job.jid, "attempt": job.attempt, "at": seconds + micro / 1e6}
    await job.client.redis.rpush("flow:starts", json.dumps(start))
    results = await job.children_results()
    values = sorted(child.value() for child in results)
    states = sorted({str(child.state) for child in results})
    read = {"jid": job.jid, "values": values, "states": states}
    await job.client.redis.rpush("flow:reads", json.dumps(read))
    result = {"sum": sum(values), "values": values, "attempt": job.attempt}
    with effects() as db:
        with db:
            db.execute("INSERT OR IGNORE INTO reports VALUES (?, '', 0)", (job.jid,))
        claimed = claim(db, job.jid, job.attempt)
    if job.data.get("freeze") and job.attempt == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    # (no await from here on: a frozen worker woken up sends its outcome at once)
    with effects() as db:
        if not (claimed and write(db, job.jid, job.attempt, json.dumps(result))):
            with db:
                db.execute("INSERT INTO refused VALUES (?, ?)", (job.jid, job.attempt))
    return result
"""

WORKER = ("-i", "flowjobs", "-c", "10", "--interval", "1", "--backoff", "0.2", QUEUE)


def flow(number: int, children: int = CHILDREN, *, freeze: bool = False) -> FlowNode:
    nodes = [
        FlowNode("flowjobs.child", {"i": i}, queue=QUEUE, name=f"c{i}", retries=50)
        for i in range(children)
    ]
    data = {"flow": number, "freeze": freeze}
    return FlowNode("flowjobs.parent", data, queue=QUEUE, retries=50, children=nodes)


def job_module(folder: Path) -> None:
    """The job module and its empty effects database in the workers' folder."""
    (folder / "flowjobs.py").write_text(FLOW_JOBS)
    with contextlib.closing(sqlite3.connect(folder / "effects.db")) as db:
        db.execute("PRAGMA journal_mode=WAL")  # readers and one writer at once
        with db:
            db.execute("CREATE TABLE reports (id TEXT PRIMARY KEY, body TEXT, attempt INTEGER)")
            db.execute("CREATE TABLE refused (id TEXT, attempt INTEGER)")


def effects(folder: Path) -> dict[str, tuple[Any, int]]:
    """The effects database's rows: jid -> (the written result, the attempt owning it)."""
    with contextlib.closing(sqlite3.connect(folder / "effects.db")) as db:
        rows = db.execute("SELECT id, body, attempt FROM reports").fetchall()
    return {jid: (json.loads(body) if body else None, attempt) for jid, body, attempt in rows}


def refused_writes(folder: Path) -> list[tuple[str, int]]:
    with contextlib.closing(sqlite3.connect(folder / "effects.db")) as db:
        return [(jid, attempt) for jid, attempt in db.execute("SELECT id, attempt FROM refused")]


async def records(client: aqless.Client, key: str) -> list[dict[str, Any]]:
    return [json.loads(text) for text in await client.redis.lrange(key, 0, -1)]


async def accepted(
    client: aqless.Client, folder: Path, root: str, children: int = CHILDREN
) -> dict[str, Any]:
    """The parent's one accepted outcome, checked: complete with one ``done`` in its
    history, its stored result built from all of its children's results by its current
    attempt (the one the script accepted), and its effect's row written by that attempt
    with that result. Returns the result."""
    job = await client.jobs.get(root)
    assert isinstance(job, aqless.Job)
    assert job.state == aqless.JobState.COMPLETE, root
    assert [entry.what for entry in job.history].count("done") == 1, job.history
    attempt = int(await client.redis.hget(f"ql:j:{root}", "attempt") or 0)
    result = await client.result(root, timeout=30)  # complete: no wait
    assert result == {
        "sum": sum(range(children)),
        "values": list(range(children)),
        "attempt": attempt,
    }
    assert effects(folder)[root] == (result, attempt), root
    return dict(result)


async def test_sigkilled_workers_commit_every_parents_outcome_once_after_all_its_children(
    tmp_path: Path,
) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        job_module(tmp_path)
        async with aqless.Client(server.url) as client:
            await prepare(client)
            roots = [(await client.flows.put(flow(number))).root for number in range(FLOWS)]
            total = FLOWS * (CHILDREN + 1)
            killer = Killer(spawn, client, WORKER)
            killer.start(3)
            async with anyio.create_task_group() as group:
                await killer.kill_during(group, total, KILLS)
                assert await completed(client) < total, "the flows drained before the kills"
                await drained(client, total, timeout=60, spawned=spawn.started)

            starts = await records(client, "flow:starts")
            for read in await records(client, "flow:reads"):  # every run read them all
                assert read["values"] == list(range(CHILDREN)), read
                assert read["states"] == ["complete"], read
            for root in roots:
                await accepted(client, tmp_path, root)
                first_start = min(start["at"] for start in starts if start["jid"] == root)
                job = await client.jobs.get(root)
                assert isinstance(job, aqless.Job)
                assert not job.dependencies  # released: the parent depends on nothing now
                finished = await _children_finished(client, root)
                assert max(finished) <= first_start, root
            # the effect is there once per parent, and for no other job
            assert set(effects(tmp_path)) == set(roots)
            runs = Counter(start["jid"] for start in starts)
            assert set(runs) == set(roots)
            reruns = sum(runs.values()) - len(runs)
            print(  # noqa: T201 - information: a parent's code may start again
                f"\n{FLOWS} flows: {killer.kills} kills; parent code starts "
                f"{sum(runs.values())} ({reruns} again after a kill or a lost lock); "
                f"fenced writes refused {len(refused_writes(tmp_path))}; completions "
                f"accepted {len(roots)}"
            )


async def _children_finished(client: aqless.Client, root: str) -> list[float]:
    """When each child of `root` completed (the `ql:completed` scores)."""
    results = await client.redis.hget(f"ql:j:{root}", "flow_children")
    jids = json.loads(results or "[]")
    assert len(jids) == CHILDREN
    scores = await client.redis.zmscore("ql:completed", jids)
    finished = [float(score) for score in scores if score is not None]
    assert len(finished) == CHILDREN
    return finished


def frozen(process: WorkerProcess) -> bool:
    """Whether the process is stopped (SIGSTOP): state T in /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{process.pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.parametrize("same_name", [True, False], ids=["same-name", "another-name"])
async def test_a_frozen_workers_late_completion_of_a_parent_is_refused(
    tmp_path: Path, same_name: bool
) -> None:
    """A worker freezes in the parent's code, its row claimed; the parent's lock (1 s)
    expires, another worker (under the same name, which only the attempt tells apart, or
    another) takes the parent and completes it. Woken, the frozen worker's write and
    completion are refused: one completion, the second attempt's result and row."""
    name = ("-n", "flows-worker") if same_name else ()
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        job_module(tmp_path)
        async with aqless.Client(server.url) as client:
            await prepare(client, heartbeat=1)
            root = (await client.flows.put(flow(0, children=3, freeze=True))).root
            zombie = spawn(*name, *WORKER)
            await eventually(lambda: frozen(zombie), 60, "the worker froze in the parent")
            rescuer = spawn(*name, *WORKER)  # takes the parent once its lock expired
            await drained(client, 4, timeout=60, jids=[root], spawned=spawn.started)
            first = await accepted(client, tmp_path, root, 3)
            assert first["attempt"] == 2

            zombie.send(signal.SIGCONT)
            stale = f"Job {root} attempt 1 is stale: the job is on attempt 2"
            await zombie.logged(f"could not complete job {root}: Complete(): {stale}", 30)
            await zombie.logged(f"job {root} (flowjobs.parent, queue {QUEUE}): lost", 30)
            assert refused_writes(tmp_path) == [(root, 1)]
            assert await accepted(client, tmp_path, root, 3) == first  # the first kept, alone
            starts = await records(client, "flow:starts")
            assert [start["attempt"] for start in starts] == [1, 2]
            assert zombie.running()
            assert rescuer.running()
            # the woken worker works on, alone now
            rescuer.send(signal.SIGKILL)
            await rescuer.exited()
            await client.flows.put(flow(1, children=1))
            await drained(client, 6, timeout=60, spawned=spawn.started)
