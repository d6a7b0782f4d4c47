"""How long a poison job takes to reach ``failed``: a job whose code kills its worker process
(``os._exit``) every time, run by ``aqless-run --processes 1`` (a supervisor replacing the
worker). Each attempt lasts until its lock expires (the queue's ``heartbeat``), plus the
``grace-period`` (the first pop past the lock warns, the first one after the grace period
takes the job back, spending a retry), plus the worker's poll ``--interval``; the attempt
after the last retry fails the job into ``failed-retries-<queue>``.

Defaults are the server's and the worker's (60 s locks, 10 s grace, a poll every 5 s) with 2
retries; prints the seconds from the put to ``failed``, the attempts, and the supervisor's
respawn pauses. Runs on the embedded Valkey or --url, in the namespace ``aqbench`` (whose
keys are deleted before and after; nothing else is touched).

    python benchmarks/poison.py [--heartbeat 60] [--grace 10] [--retries 2] [--interval 5]
        [--url redis://...]
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.worker_drain import NAMESPACE, clean  # noqa: E402

QUEUE = "poison"
ATTEMPTS = f"{NAMESPACE}:poison:attempts"

JOBS = f'''
import os


async def poison(job):
    await job.client.redis.incr("{ATTEMPTS}")
    os._exit(1)
'''


def supervisor(url: str, folder: Path, interval: float) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "aqless.run", "-v", "--url", url, "--namespace", NAMESPACE]
    command += ["-i", "poisonjobs", "-p", "1", "--interval", str(interval), QUEUE]
    with (folder / "supervisor.log").open("wb") as log:
        return subprocess.Popen(  # noqa: S603  # our own command
            command, cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )


async def until_failed(client: aqless.Client, jid: str) -> None:
    while True:
        job = await client.jobs.get(jid)
        if isinstance(job, aqless.Job) and job.state == "failed":
            return
        await anyio.sleep(0.05)


async def run(options: argparse.Namespace) -> None:
    from aqless import embedded

    url = options.url or await anyio.to_thread.run_sync(embedded.default_url)
    with tempfile.TemporaryDirectory(prefix="aqless-bench-") as name:
        folder = Path(name)
        (folder / "poisonjobs.py").write_text(JOBS)
        async with aqless.Client(url, namespace=NAMESPACE) as client:
            await clean(client)
            await client.config.set("heartbeat", options.heartbeat)
            await client.config.set("grace-period", options.grace)
            process = supervisor(url, folder, options.interval)
            try:
                started = time.monotonic()
                jid = await client.queues[QUEUE].put(
                    "poisonjobs.poison", {}, retries=options.retries
                )
                await until_failed(client, jid)
                seconds = time.monotonic() - started
                job = await client.jobs.get(jid)
                attempts = int(await client.redis.get(ATTEMPTS) or 0)
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
            await clean(client)
        log = (folder / "supervisor.log").read_text(errors="replace")
    pauses = ", ".join(re.findall(r"replacing it in ([0-9.]+) s", log))
    group = job.failure.group if isinstance(job, aqless.Job) and job.failure else "?"
    sys.stdout.write(
        f"server {url}; heartbeat {options.heartbeat} s, grace-period {options.grace} s, "
        f"retries {options.retries}, worker --interval {options.interval} s\n"
        f"poison job failed after {seconds:.1f} s and {attempts} attempts (group {group}); "
        f"{seconds / max(attempts, 1):.1f} s per attempt; respawn pauses: {pauses} s\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heartbeat", type=float, default=60.0, help="lock length, seconds")
    parser.add_argument("--grace", type=float, default=10.0, help="grace-period, seconds")
    parser.add_argument("--retries", type=int, default=2, help="the poison job's retries")
    parser.add_argument("--interval", type=float, default=5.0, help="the worker's poll interval")
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
