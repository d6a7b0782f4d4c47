"""Real ``aqless-run`` processes for the tests. A test module imports the fixtures
(``from tests.support.worker_processes import aq_fixture, spawn_fixture``) and uses them by
their names:

- ``spawn``: starts ``aqless-run`` in a temporary folder holding the job module ``aqjobs``
  (JOBS below), on the test server; every process it started (and their children) is killed
  at teardown.
- ``aq``: an open Client on a flushed server, lock heartbeat 1 s, no grace period.

The job code records what it does as Redis writes (RPUSH of the jid to a list), so the tests
count exactly what ran.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path

import anyio
import pytest

import aqless

#: The job module every spawned worker can import (``-i aqjobs``).
JOBS = '''
import os
import time

import anyio
import redis

URL = os.environ["AQLESS_URL"]


async def _seconds(job, key):
    value = await job.client.redis.get(key)
    return float(value) if value is not None else float(job.data.get(key, 0))


async def noop(job):
    await job.client.redis.rpush("done", job.jid)


async def sleeper(job):
    """Sleeps `sleep` seconds (the Redis key, else the job's data) between two marks. The
    seconds are read before the first mark: a test that sees the job started may set the
    key for the next runs (read after the mark, a loaded machine let a first run read the
    next runs' 0 s and end at once)."""
    r = job.client.redis
    seconds = await _seconds(job, "sleep")
    # the pid first: a test that sees the job started may kill its worker at once
    await r.rpush("pids", f"{os.getpid()} {job.worker_name}")
    await r.rpush("started", job.jid)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await r.rpush("cancelled", f"{job.jid} {time.time()}")
        raise
    await r.rpush("done", job.jid)


def sync_sleeper(job):
    r = redis.Redis.from_url(URL)
    r.rpush("sync-started", job.jid)
    time.sleep(float(job.data["sleep"]))
    r.rpush("sync-done", job.jid)


def sync_pid_sleeper(job):
    r = redis.Redis.from_url(URL)
    r.rpush("sync-pids", os.getpid())
    time.sleep(float(job.data["sleep"]))
    r.rpush("sync-done", job.jid)


async def sandboxed(job):
    found = sorted(os.listdir(job.sandbox))
    (job.sandbox / "left-over").write_text(job.jid)
    await job.client.redis.rpush("sandboxes", f"{job.sandbox} {','.join(found)}")
'''

#: A module on the worker's path that must never be imported by a payload.
EVIL = """
import pathlib
pathlib.Path(__file__).with_name("IMPORTED").write_text("evil was imported")


def run(job):
    pass
"""

#: Seconds any wait of these tests may take before it fails.
PATIENCE = 20.0
_CLEAN_ENV = {name: value for name, value in os.environ.items() if not name.startswith("AQLESS_")}
#: The folder that holds the aqless these tests import (the checkout under test), first on
#: the path of every process spawned: ``python -m aqless.run`` in a temporary folder would
#: otherwise import the checkout the environment's editable install points at, which from
#: a worktree is another checkout, changed by others while the tests run (issue 28).
CHECKOUT = str(Path(aqless.__file__).resolve().parent.parent)
_CLEAN_ENV["PYTHONPATH"] = os.pathsep.join(
    [CHECKOUT, *[folder for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep) if folder]]
)


class WorkerProcess:
    """One ``aqless-run`` process; its stderr (the log) goes to a file."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log_path = log

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def send(self, number: signal.Signals) -> None:
        self.process.send_signal(number)

    def send_to(self, child: int, number: signal.Signals) -> None:
        """Signal one of this process's children (a supervisor's worker)."""
        assert child in self.children(), f"{child} is not a child of {self.pid}"
        os.kill(child, number)

    async def exited(self, timeout: float = PATIENCE) -> int:
        """The exit status, once the process has exited (fails after `timeout`)."""
        await eventually(lambda: self.process.poll() is not None, timeout, f"{self} exited")
        return self.process.returncode

    async def logged(self, text: str, timeout: float = PATIENCE, times: int = 1) -> None:
        """Wait until `text` is in the log `times` times (once per process of a supervisor)."""
        await eventually(
            lambda: self.log().count(text) >= times, timeout, f"{text!r} {times}x in the log"
        )

    def running(self) -> bool:
        return self.process.poll() is None

    def children(self) -> list[int]:
        return children(self.pid)

    def __repr__(self) -> str:
        return f"<aqless-run {self.pid}: {' '.join(map(str, self.process.args))}>"  # type: ignore[arg-type]


def children(pid: int) -> list[int]:
    """The pids of a live process's children (Linux)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split()]


def descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


class Spawner:
    """Starts ``aqless-run`` processes in `folder` on `url`; kills them all in `close()`."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.started: list[WorkerProcess] = []
        (folder / "aqjobs.py").write_text(JOBS)
        (folder / "evil.py").write_text(EVIL)

    def __call__(
        self,
        *arguments: str,
        env: dict[str, str] | None = None,
        url: bool = True,
        verbosity: int = 1,
        prefix: Sequence[str] = (),
    ) -> WorkerProcess:
        """``aqless-run -v <arguments>`` with AQLESS_URL set (unless `url` is False); as
        many ``-v`` as `verbosity` says; run by `prefix` (``ip netns exec ns``) if given."""
        environment = {**_CLEAN_ENV, **({"AQLESS_URL": self.url} if url else {}), **(env or {})}
        log = self.folder / f"worker-{len(self.started)}.log"
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                [*prefix, sys.executable, "-m", "aqless.run", *["-v"] * verbosity, *arguments],
                cwd=self.folder,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
        worker = WorkerProcess(process, log)
        self.started.append(worker)
        return worker

    def close(self) -> None:
        for worker in self.started:
            for pid in [*descendants(worker.pid), worker.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            worker.process.wait(timeout=10)


@pytest.fixture(name="spawn")
def spawn_fixture(server_url: str, tmp_path: Path) -> Iterator[Spawner]:
    spawner = Spawner(server_url, tmp_path)
    try:
        yield spawner
    finally:
        spawner.close()


@pytest.fixture(name="aq")
async def aq_fixture(server_url: str) -> AsyncIterator[aqless.Client]:
    """An open client on a flushed server: 1 s locks, reclaimed at once when they expire."""
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
        await client.config.set("heartbeat", 1)
        await client.config.set("grace-period", 0)
        yield client


@pytest.fixture(name="valkey_only")
def valkey_only_fixture(server_url: str, request: pytest.FixtureRequest) -> None:
    """Slow process tests, and those that need no server, run on Valkey 9 only."""
    if request.node.callspec.params.get("server_url") != "valkey9":
        pytest.skip("runs on Valkey 9 only")


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], timeout: float = PATIENCE, what: str = ""
) -> None:
    """Wait until `condition()` is true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"not true after {timeout} s: {what or condition}")
        await anyio.sleep(0.02)


async def listed(client: aqless.Client, key: str) -> list[str]:
    return [str(item) for item in await client.redis.lrange(key, 0, -1)]


async def count_reaches(
    client: aqless.Client, key: str, count: int, timeout: float = PATIENCE
) -> None:
    async def reached() -> bool:
        return int(await client.redis.llen(key)) >= count

    await eventually(reached, timeout, f"{count} items in {key!r}")


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def pids_and_names(aq: aqless.Client) -> list[tuple[int, str]]:
    """(pid, worker name) of every run of ``aqjobs.sleeper``, in order."""
    entries = [entry.split() for entry in await listed(aq, "pids")]
    return [(int(pid), name) for pid, name in entries]


#: The arguments of a worker running the job module, polling every second.
WORKER = ("-i", "aqjobs", "--interval", "1")


async def put(aq: aqless.Client, klass: str, count: int, queue: str = "q") -> list[str]:
    return [await aq.queues[queue].put(klass) for _ in range(count)]


async def running_sleepers(
    aq: aqless.Client, spawn: Spawner, count: int, *arguments: str, sleep: float
) -> tuple[WorkerProcess, list[str]]:
    """A worker (WORKER + `arguments`, queue q) running `count` sleepers of `sleep` s."""
    await aq.redis.set("sleep", sleep)
    jids = await put(aq, "aqjobs.sleeper", count)
    worker = spawn(*WORKER, *arguments, "q")
    await count_reaches(aq, "started", count)
    return worker, jids


async def states(aq: aqless.Client, jids: list[str]) -> Counter[str]:
    """How many of the jobs are in each state."""
    return Counter(str(job.state) for job in await aq.jobs.get_many(jids))


async def reach_states(
    aq: aqless.Client, jids: list[str], expected: dict[str, int], timeout: float = PATIENCE
) -> None:
    """Wait until the jobs are in the `expected` states (a worker reports an outcome just
    after the code's side effects). The wait may include a worker process's start (its
    imports took over 5 s on a loaded 2-core machine), hence PATIENCE."""

    async def reached() -> bool:
        return await states(aq, jids) == expected

    await eventually(reached, timeout, f"jobs {expected}")
