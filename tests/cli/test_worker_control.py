"""aqless worker quiet/stop/resume: a running aqless worker obeys within a second, says so
in its record (the mode `aqless workers` shows), and each request is audited."""

from __future__ import annotations

import anyio

import aqless
from aqless.ops import audit
from tests.support.cli import Cli
from tests.support.worker_processes import eventually

pytest_plugins = ["tests.support.client_fixtures"]

#: how long a request may take to reach a worker (it reads its key every second)
WITHIN = 1.5


async def mode_reaches(worker: aqless.Worker, mode: str) -> None:
    await eventually(lambda: worker.mode == mode, WITHIN, f"{worker.name} {mode}")


async def recorded_mode(client: aqless.Client, name: str) -> str | None:
    record = (await client.workers.records()).get(name)
    return None if record is None else record.mode


async def record_says(client: aqless.Client, name: str, mode: str | None, within: float) -> None:
    """Wait until the worker's record says `mode` (None: until it has a record)."""

    async def there() -> bool:
        found = await recorded_mode(client, name)
        return found is not None if mode is None else found == mode

    await eventually(there, within, f"{name}'s record says {mode or 'anything'}")


async def test_quiet_resume_and_stop_a_running_worker_from_the_cli(
    client: aqless.Client, run_cli: Cli
) -> None:
    worker = aqless.Worker(client, ["q"], interval=0.1)
    name = worker.name
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)

        await record_says(client, name, None, 3)

        outcome = await run_cli("worker", "quiet", name)
        assert outcome.code == 0, outcome.stderr
        assert "takes no more jobs" in outcome.stdout
        await mode_reaches(worker, "quiet")

        await record_says(client, name, "quiet", 0.5)  # written at once on the change
        (listed,) = (await run_cli("--json", "workers")).json()
        assert listed["info"]["mode"] == "quiet"
        row = next(line for line in (await run_cli("workers")).stdout.splitlines() if name in line)
        assert " quiet " in row
        jid = await client.queues["q"].put("app.A", {})
        await anyio.sleep(0.3)  # three polls' time: a running worker would have popped it
        found = await client.jobs.get(jid)
        assert isinstance(found, aqless.Job)
        assert found.state == "waiting"

        assert (await run_cli("--json", "worker", "resume", name)).json() == {
            "worker": name,
            "asked": "resume",
        }
        await mode_reaches(worker, "running")
        assert (await run_cli("worker", "stop", name)).code == 0
        await eventually(lambda: worker.state == "stopped", WITHIN + 1, "stopped")

    actions = [(entry.action, entry.targets) for entry in await audit.read(client)]
    assert actions == [
        ("worker stop", (name,)),
        ("worker resume", (name,)),
        ("worker quiet", (name,)),
    ]


async def test_a_worker_without_a_record_is_refused_with_the_closest_names(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.queues["q"].put("app.A", {})
    await client.queues["q"].pop(worker="ruby-worker")  # another client's: no record
    outcome = await run_cli("worker", "quiet", "ruby-worker")
    assert outcome.code == 1
    assert "no aqless worker 'ruby-worker'" in outcome.stderr
    assert await client.redis.keys("ql:aqless:control:*") == []
    refused = await run_cli("worker", "kill", "ruby-worker")
    assert refused.code == 2  # no such command


async def test_a_paused_worker_says_so_in_its_record_at_once(
    client: aqless.Client, run_cli: Cli
) -> None:
    worker = aqless.Worker(client, ["q"], interval=0.1)
    name = worker.name
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)

        await record_says(client, name, "running", 3)
        worker.pause()  # as SIGUSR2 does
        await record_says(client, name, "paused", 0.5)
        (listed,) = (await run_cli("--json", "workers")).json()
        assert listed["info"]["mode"] == "paused"
        worker.resume_popping()
        await record_says(client, name, "running", 0.5)
        worker.stop()
