"""queues, peek, stats, pause/unpause."""

from __future__ import annotations

import dataclasses

import aqless
from aqless.cli.histogram import LABELS, bar
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_queues_table_and_json(client: aqless.Client, run_cli: Cli) -> None:
    for _ in range(3):
        await client.queues["emails"].put("app.Send", {})
    await client.queues["reports"].put("app.Report", {}, delay=60)
    await pop_one(client.queues["emails"], worker="w-1")
    await client.queues["reports"].pause()
    table = await run_cli("queues")
    lines = {line.split()[0]: line.split() for line in table.stdout.splitlines() if line.strip()}
    assert lines["emails"][1:3] == ["2", "1"]  # waiting, running
    assert lines["reports"][4] == "1"
    assert lines["reports"][-1] == "paused"
    assert lines["(all)"][1:5] == ["2", "1", "0", "1"]
    document = (await run_cli("--json", "queues")).json()
    assert document == [dataclasses.asdict(c) for c in await client.queues.counts()]


async def test_peek_lists_the_next_jobs_without_taking_them(
    client: aqless.Client, run_cli: Cli
) -> None:
    low = await client.queues["q"].put("app.Low", {"n": 1})
    high = await client.queues["q"].put("app.High", {"n": 2}, priority=5)
    outcome = await run_cli("peek", "q", "-n", "5")
    assert outcome.stdout.index(high) < outcome.stdout.index(low)
    assert "app.High" in outcome.stdout
    assert '{"n": 2}' in outcome.stdout
    document = (await run_cli("--json", "peek", "q", "-n", "1")).json()
    assert [job["jid"] for job in document] == [high]
    assert (await client.queues["q"].counts()).waiting == 2


async def test_stats_draws_the_histograms_and_json_matches(
    client: aqless.Client, run_cli: Cli
) -> None:
    for _ in range(4):
        await client.queues["q"].put("app.A", {})
    for _ in range(4):
        await (await pop_one(client.queues["q"])).complete()
    outcome = await run_cli("stats", "q")
    assert "wait: 4 jobs" in outcome.stdout
    assert "run: 4 jobs" in outcome.stdout
    assert any(line.split()[:3] == ["0s", "█" * 40, "4"] for line in outcome.stdout.splitlines())
    document = (await run_cli("--json", "stats", "q")).json()
    stats = await client.queues["q"].stats()
    assert document["wait"]["count"] == stats.wait.count == 4
    assert document["run"]["histogram"] == list(stats.run.histogram)
    empty = await run_cli("stats", "q", "--date", "2001-01-01")
    assert "wait: 0 jobs" in empty.stdout
    assert "no samples" in empty.stdout
    assert (await run_cli("stats", "q", "--date", "yesterday")).code == 2


def test_histogram_labels_and_bars() -> None:
    assert (len(LABELS), LABELS[0], LABELS[59], LABELS[60], LABELS[119], LABELS[-1]) == (
        148, "0s", "59s", "1m", "1h", "6d",
    )  # fmt: skip
    assert bar(10, 10, width=4) == "████"
    assert bar(1, 1000, width=4) == "▏"  # a sliver, never nothing
    assert bar(0, 10) == ""


async def test_pause_and_unpause(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["q"].put("app.A", {})
    assert (await run_cli("pause", "q")).code == 0
    assert (await client.queues["q"].counts()).paused
    assert await client.queues["q"].pop() is None
    assert (await run_cli("unpause", "q")).code == 0
    assert not (await client.queues["q"].counts()).paused


async def test_pausing_a_queue_never_seen_warns_and_pauses_it(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.queues["emails"].put("app.A", {})
    outcome = await run_cli("pause", "emials", "emails")
    assert outcome.code == 0
    assert (
        "warning: no queue 'emials' (did you mean 'emails'?): no job was ever put in it;"
        " paused all the same"
    ) in " ".join(outcome.stderr.split())
    assert "'emails' (" not in outcome.stderr
    await client.queues["emials"].put("app.A", {})
    assert await client.queues["emials"].pop() is None  # paused before its first job
    document = (await run_cli("--json", "unpause", "nosuchqueue")).json()
    assert document == {"unpaused": ["nosuchqueue"], "unseen": ["nosuchqueue"]}


async def test_pause_with_stop_jobs_times_out_the_running_jobs(
    client: aqless.Client, run_cli: Cli
) -> None:
    queue = client.queues["q"]
    for name in ("a", "b", "c"):
        await queue.put("app.A", {}, jid=name)
    running = [await queue.pop(), await queue.pop()]
    other = client.queues["other"]
    await other.put("app.A", {}, jid="elsewhere")
    assert await other.pop() is not None
    result = await run_cli("--json", "pause", "q", "--stop-jobs")
    assert result.code == 0
    document = result.json()
    assert document["paused"] == ["q"]
    assert sorted(document["timed_out"]["q"]) == sorted(job.jid for job in running if job)
    assert len(document["timed_out"]["q"]) == 2
    assert (await queue.counts()).paused
    assert await queue.jobs(aqless.JobState.RUNNING) == []
    assert (await other.counts()).running == 1  # another queue's jobs go on
    text = await run_cli("pause", "q", "--stop-jobs")
    assert "paused q; timed out 0 running jobs" in text.stdout


async def test_stats_scaling_shows_each_queue_s_slots_and_json_matches(
    client: aqless.Client, run_cli: Cli
) -> None:
    for name in ("a", "b"):
        for _ in range(3):
            await client.queues[name].put("app.A", {})
    await (await pop_one(client.queues["a"])).complete()
    outcome = await run_cli("stats", "--scaling", "--target", "0.5")
    assert outcome.code == 0, outcome.stderr
    assert "worker slots for a p95 wait under 500 ms" in outcome.stdout
    rows = {line.split()[0]: line.split() for line in outcome.stdout.splitlines() if line.strip()}
    assert rows["a"][1:3] == ["2", "0"]  # waiting, running
    assert rows["b"][1:3] == ["3", "0"]
    every = (await run_cli("--json", "stats", "--scaling")).json()
    assert sorted(reading["queue"] for reading in every) == ["a", "b"]
    one = (await run_cli("--json", "stats", "a", "--scaling", "--sample", "0.2")).json()
    assert (one["queue"], one["waiting"], one["completed"], one["target_p95"]) == ("a", 2, 1, 2.0)
    assert 0.2 <= one["window"] < 3600  # the sample's, not the day's
    assert one["slots"] >= 1


async def test_stats_scaling_refuses_what_does_not_fit(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("stats")).code == 2  # no queue, no --scaling
    assert (await run_cli("stats", "--scaling", "--target", "0")).code == 2
    assert (await run_cli("stats", "q", "--scaling", "--date", "2024-05-01")).code == 2
