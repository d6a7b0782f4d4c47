"""Batches under worker kills (marker ``faults``): 100 batches drain through real ``aqless-run``
processes while one is SIGKILLed every 2 s. Each member's end is counted by the script in
the same call that completes it, so no callback may be lost or put twice: every batch ends
with its on_success and on_complete jobs put once each (one `put` in each one's history,
and one jid per batch and event among the callbacks' side effects), and no on_death."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import anyio
import pytest

import aqless
from aqless import BatchCallback, PutRequest
from tests.faults.harness import Killer, account, completed, own_server, prepare, workers
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

BATCHES, MEMBERS = 50, 8
#: workers killed while they drain, one each sixth of the jobs (members and callbacks)
KILLS = 4
CALLBACKS = "batch:callbacks"

#: The job module of the test's workers: short members, callbacks that record what they got.
BATCH_JOBS = """
import json

import anyio


async def member(job):
    await anyio.sleep(0.25)
    await job.client.redis.rpush("fault:done", job.jid)


async def callback(job):
    batch = job.data["batch"]
    record = json.dumps([batch["id"], batch["event"], job.jid, batch["done"], batch["failed"]])
    await job.client.redis.rpush("batch:callbacks", record)
"""

WORKER = ("-i", "batchjobs", "-c", "10", "--interval", "1", "q", "callbacks")


async def test_no_callback_is_lost_or_doubled_while_workers_are_killed(tmp_path: Path) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        (tmp_path / "batchjobs.py").write_text(BATCH_JOBS)
        async with aqless.Client(server.url) as client:
            await prepare(client)
            bids: list[str] = []
            for n in range(BATCHES):
                requests = [PutRequest("batchjobs.member", retries=20) for _ in range(MEMBERS)]
                bids.append(
                    await client.batches.put(
                        [("q", request) for request in requests],
                        on_success=BatchCallback("batchjobs.callback", "callbacks"),
                        on_complete=BatchCallback("batchjobs.callback", "callbacks"),
                        on_death=BatchCallback("batchjobs.callback", "callbacks"),
                        description=f"batch {n}",
                    )
                )
            killer = Killer(spawn, client, WORKER)
            killer.start(3)
            expected = 2 * BATCHES  # on_success and on_complete of each

            async def finished() -> bool:
                records = await client.redis.lrange(CALLBACKS, 0, -1)
                ran = {tuple(json.loads(record)[:2]) for record in records}
                counts = await client.queues["callbacks"].counts()
                return len(ran) >= expected and counts.waiting + counts.running == 0

            jobs = BATCHES * MEMBERS + expected  # the callbacks are jobs too
            async with anyio.create_task_group() as group:
                await killer.kill_during(group, jobs, KILLS)
                assert await completed(client) < jobs, "the batches drained before the kills"
                await eventually(finished, 90, "every batch's callbacks run")

            records = [json.loads(r) for r in await client.redis.lrange(CALLBACKS, 0, -1)]
            jids_by_event: dict[tuple[str, str], set[str]] = defaultdict(set)
            for bid, event, jid, done, failed in records:
                assert (done, failed) == (MEMBERS, 0)
                jids_by_event[bid, event].add(jid)
            assert set(jids_by_event) == {(b, e) for b in bids for e in ("success", "complete")}
            assert all(len(jids) == 1 for jids in jids_by_event.values()), "a callback doubled"
            for bid in bids:
                batch = await client.batches.get(bid)
                assert batch is not None
                assert (batch.pending, batch.done, batch.failed) == (0, MEMBERS, 0)
                assert not batch.callbacks["death"].fired
                for kind in ("success", "complete"):
                    state = batch.callbacks[kind]
                    assert jids_by_event[bid, kind] == {state.jid}
                    history = await client.redis.lrange(f"ql:j:{state.jid}-history", 0, -1)
                    puts = [entry for entry in history if json.loads(entry)[1] == "put"]
                    assert len(puts) == 1, f"the {kind} callback of {bid} was put {len(puts)} times"
            member_jids = [
                str(jid)
                for jid in await client.redis.zrange("ql:completed", 0, -1)
                if await client.redis.hget(f"ql:j:{jid!s}", "batch")
            ]
            assert len(member_jids) == BATCHES * MEMBERS
            report = await account(client, server.url, member_jids)
            assert report.lost == []
            assert report.violations == []
            print(  # noqa: T201  # the figures, shown with -s or on failure
                f"\n{BATCHES} batches, {len(records)} callbacks run "
                f"({len(records) - expected} run again after a kill), {killer.kills} kills"
            )
