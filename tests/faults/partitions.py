"""Network partitions for the fault suite: workers cut off from their server by a proxy that
blackholes (tests.support.blackhole_proxy), or, as root with ``ip netns``, each worker in a
network namespace of its own whose link to the server is taken down (packets vanish, the
kernel's TCP retransmits; nothing is reset)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

import aqless
from tests.faults.harness import QUEUE, safely, workers
from tests.faults.history import HISTORY_JOBS, Findings, Puts, check, settled
from tests.support.worker_processes import Spawner, WorkerProcess

#: A worker of the history scenarios: 5 jobs at once, failing jobs retried after 0.2 s.
WORKER = ("-i", "historyjobs", "-c", "5", "--interval", "1", "--backoff", "0.2", QUEUE)


@contextlib.contextmanager
def history_workers(url: str, folder: Path) -> Iterator[Spawner]:
    """A Spawner (see harness.workers) whose folder also holds ``historyjobs``."""
    with workers(url, folder) as spawn:
        (folder / "historyjobs.py").write_text(HISTORY_JOBS)
        yield spawn


@dataclass
class Outcome:
    """A scenario's end: the checker's findings and what the workers did."""

    findings: Findings
    logs: list[str]  # each worker's
    dead: list[str]  # the workers that had ended by then, and how
    cuts: list[float] = field(default_factory=list)  # seconds each
    drained_in: float = 0.0

    @classmethod
    def of(
        cls, findings: Findings, started: list[WorkerProcess], cuts: list[float], drained: float
    ) -> Outcome:
        dead = [f"{w.pid}: exit {w.process.returncode}" for w in started if not w.running()]
        return cls(findings, [w.log() for w in started], dead, cuts, drained)

    def __str__(self) -> str:
        cuts = ", ".join(f"{seconds:.1f}" for seconds in self.cuts) or "-"
        return (
            f"{self.findings}; cuts (s): {cuts}; workers dead at the end: {len(self.dead)}; "
            f"settled {self.drained_in:.1f} s after the last cut"
        )


async def serving(spawn: Spawner, count: int, **options: object) -> list[WorkerProcess]:
    """`count` workers (``WORKER``), once each serves: a worker whose start meets the fault
    exits (status 4, see docs/guides/worker.md), which is not what these tests are about."""
    started = [spawn(*WORKER, **options) for _ in range(count)]  # type: ignore[arg-type]
    for worker in started:
        await worker.logged(" serving ", timeout=60)
    return started


async def settle(client: aqless.Client, puts: Puts, timeout: float) -> float:
    """Wait until every job put has ended; the seconds it took (AssertionError after
    `timeout`, naming what is left)."""
    started = time.monotonic()
    while not await safely(_settled(client, puts), 0):
        if time.monotonic() - started > timeout:
            findings = await check(client, puts)
            raise AssertionError(f"not settled after {timeout} s: {findings.stuck or findings}")
        await anyio.sleep(0.2)
    return time.monotonic() - started


async def _settled(client: aqless.Client, puts: Puts) -> int:
    return int(await settled(client, puts.plans))


class NetnsLinks:
    """One network namespace per worker, each joined to the server's (the root namespace)
    by a veth pair; ``cut(i)`` takes the pair down, ``heal(i)`` brings it up. Needs root
    and ``ip``: ``available()`` says whether this machine can."""

    def __init__(self, count: int) -> None:
        self.tag = uuid.uuid4().hex[:6]
        self.count = count
        self.names = [f"aqp{self.tag}{n}" for n in range(count)]
        self.server_address = "10.239.0.1"  # each namespace reaches it over its own link

    @staticmethod
    def available() -> bool:
        if os.geteuid() != 0 or shutil.which("ip") is None:
            return False
        probe = f"aqprobe{uuid.uuid4().hex[:6]}"
        made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, check=False)
        if made.returncode != 0:
            return False
        subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
        return True

    def _ip(self, *arguments: str, namespace: str | None = None) -> None:
        prefix = ["ip", "netns", "exec", namespace] if namespace else []
        subprocess.run([*prefix, "ip", *arguments], check=True, capture_output=True)

    def __enter__(self) -> NetnsLinks:
        with contextlib.suppress(subprocess.CalledProcessError):  # another run's: shared
            self._ip("addr", "add", f"{self.server_address}/32", "dev", "lo")
        for n, name in enumerate(self.names):
            host, peer = f"{name}h", f"{name}p"
            self._ip("netns", "add", name)
            self._ip("link", "add", host, "type", "veth", "peer", "name", peer)
            self._ip("link", "set", peer, "netns", name)
            subnet = f"10.240.{n}"
            self._ip("addr", "add", f"{subnet}.1/24", "dev", host)
            self._ip("link", "set", host, "up")
            self._ip("addr", "add", f"{subnet}.2/24", "dev", peer, namespace=name)
            self._ip("link", "set", peer, "up", namespace=name)
            self._ip("link", "set", "lo", "up", namespace=name)
            self._ip("route", "add", f"{self.server_address}/32", "via", f"{subnet}.1",
                     namespace=name)  # fmt: skip
        return self

    def __exit__(self, *exc_info: object) -> None:
        for name in self.names:
            with contextlib.suppress(subprocess.CalledProcessError):
                self._ip("link", "del", f"{name}h")
            with contextlib.suppress(subprocess.CalledProcessError):
                self._ip("netns", "del", name)
        listed = subprocess.run(
            ["ip", "netns", "list"], capture_output=True, text=True, check=False
        )
        if "aqp" not in listed.stdout:  # the last run here: the server's address goes too
            with contextlib.suppress(subprocess.CalledProcessError):
                self._ip("addr", "del", f"{self.server_address}/32", "dev", "lo")

    def prefix(self, n: int) -> tuple[str, ...]:
        """The command prefix that runs a process in namespace `n`."""
        return ("ip", "netns", "exec", self.names[n])

    def cut(self, n: int) -> None:
        self._ip("link", "set", f"{self.names[n]}h", "down")

    def heal(self, n: int) -> None:
        self._ip("link", "set", f"{self.names[n]}h", "up")
