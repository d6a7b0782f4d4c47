"""The completed page shows each job's queue (from its history: a complete job's queue
field is empty), when it finished, how long its last run took and its result, escaped."""

from __future__ import annotations

import json

import httpx

import aqless
from tests.support.clients import START, ManualClock, pop_one

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


#: A queue named with markup (a queue's name holds no space: aqless.rules).
QUEUE = "q" + PAYLOAD.replace(" ", "_")


async def test_completed_jobs_show_queue_finish_duration_and_result(
    server_url: str, client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    clock = ManualClock()
    async with aqless.Client(server_url, clock=clock) as timed:
        queue = timed.queues[QUEUE]
        answered = await queue.put("app.Answer", {})
        popped = await pop_one(queue, worker="w")
        clock.advance(90)
        await popped.complete(result={"html": PAYLOAD, "n": 1})
        silent = await queue.put("app.Silent", {})
        popped = await pop_one(queue, worker="w")
        await popped.complete()
    api = (await app_client.get("/api/completed")).json()
    jobs = {job["jid"]: job for job in api["jobs"]}
    assert {jobs[answered]["queue"], jobs[silent]["queue"]} == {QUEUE}
    assert jobs[answered]["finished_at"] == START + 90
    assert (jobs[answered]["duration"], jobs[silent]["duration"]) == (90, 0)
    compact = json.dumps({"html": PAYLOAD, "n": 1}, separators=(",", ":"), ensure_ascii=False)
    assert jobs[answered]["result_preview"] == compact
    assert jobs[answered]["result"]["value"] == {"html": PAYLOAD, "n": 1}
    assert jobs[silent]["result"] is None

    page = (await app_client.get("/completed")).text
    assert PAYLOAD not in page
    assert page.count('<td class="queue"><a href="/queues/q%3Cscript%3E') == 2
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "1 min 30 s" in page
    assert "under 1 s" in page  # history keeps whole seconds
    assert "2023-11-14 22:14:50 UTC" in page
    assert "<code>{&#34;html&#34;:&#34;&lt;script&gt;" in page


async def test_a_long_result_is_previewed_on_one_line(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.Big", {})
    await (await pop_one(client.queues["q"], worker="w")).complete(result=["y" * 50] * 100)
    (job,) = (await app_client.get("/api/completed")).json()["jobs"]
    assert len(job["result_preview"]) == 120
    assert job["result_preview"].endswith("…")
    assert "\n" not in job["result_preview"]


async def test_a_taken_back_job_shows_its_last_run_from_the_take_back(
    server_url: str, app_client: httpx.AsyncClient
) -> None:
    """A job popped, then taken back by its worker (a new attempt, a `taken-back` history
    entry, not a second pop): its last run is timed from the take-back."""
    clock = ManualClock()
    async with aqless.Client(server_url, clock=clock, worker_name="w") as timed:
        queue = timed.queues["q"]
        jid = await queue.put("app.Job", {})
        await pop_one(queue, worker="w")
        clock.advance(100)
        (taken,) = await timed.protocol.json("worker.takeBack", "w", jid)
        assert [entry["what"] for entry in taken["history"]] == ["put", "popped", "taken-back"]
        clock.advance(7)
        await timed.protocol.call("job.complete", jid, "w", "q", "{}")
    answer = await app_client.get("/api/completed")
    (job,) = [job for job in answer.json()["jobs"] if job["jid"] == jid]
    assert job["duration"] == 7
