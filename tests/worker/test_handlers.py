"""Which code runs a job: registered functions and classes, imports from allowed modules
only, and the failures of a klass the worker cannot or must not find."""

from __future__ import annotations

import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import aqless
from aqless import Handlers, Job, JobState
from tests.support.worker import history_of, process, until_state

# Which code runs a job is decided in the worker's process, whatever the server: the two unix
# kinds only (what differs by kind is tested on every kind in test_running, test_pushes...).

UNKNOWN = "q-UnknownJobClassError"


async def test_registered_async_and_sync_functions(client: aqless.Client) -> None:
    handlers = Handlers()
    threads: dict[str, str] = {}

    @handlers.register("app.jobs.async_job")
    async def async_job(job: Job) -> None:
        threads["async"] = threading.current_thread().name

    @handlers.register("app.jobs.sync_job")
    def sync_job(job: Job) -> None:
        threads["sync"] = threading.current_thread().name

    for klass in ("app.jobs.async_job", "app.jobs.sync_job"):
        job = await process(client, handlers, klass)
        assert job.state == JobState.COMPLETE, job.failure
    assert threads["async"] == threading.current_thread().name
    assert threads["sync"] != threading.current_thread().name  # sync code runs in a thread


async def test_registered_by_default_name(client: aqless.Client) -> None:
    handlers = Handlers()
    seen: list[Any] = []

    @handlers.register
    async def named(job: Job) -> None:
        seen.append(job.data)

    jid = await client.queues["q"].put(named, {"n": 1})
    job = await process(client, handlers, f"{named.__module__}.{named.__qualname__}")
    assert job.state == JobState.COMPLETE
    assert (await until_state(client, jid, JobState.COMPLETE)).state == JobState.COMPLETE
    assert {"n": 1} in seen


class Pipeline:
    """One method per queue: verify, then ship; anything else goes to process."""

    calls: list[tuple[str, str]] = []  # noqa: RUF012  # a record shared with the test

    async def verify(self, job: Job) -> None:
        self.calls.append(("verify", job.jid))
        await job.complete("ship")

    def ship(self, job: Job) -> None:
        self.calls.append(("ship", job.jid))

    async def process(self, job: Job) -> None:
        self.calls.append(("process", job.jid))


async def test_class_with_one_method_per_queue(client: aqless.Client) -> None:
    handlers = Handlers()
    handlers.add(Pipeline, "app.Pipeline")
    Pipeline.calls = []
    job = await process(client, handlers, "app.Pipeline", queue="verify", queues=["verify", "ship"])
    assert job.state == JobState.COMPLETE
    assert Pipeline.calls == [("verify", job.jid), ("ship", job.jid)]
    assert [e.details.get("queue") for e in job.history if e.what == "put"] == ["verify", "ship"]

    Pipeline.calls = []
    other = await process(client, handlers, "app.Pipeline", queue="elsewhere")
    assert other.state == JobState.COMPLETE
    assert Pipeline.calls == [("process", other.jid)]


class Kinds:
    """A static, a class and an instance method."""

    calls: list[str] = []  # noqa: RUF012

    @staticmethod
    async def static(job: Job) -> None:
        Kinds.calls.append("static")

    @classmethod
    def klass(cls, job: Job) -> None:
        cls.calls.append("class")

    def process(self, job: Job) -> None:
        assert isinstance(self, Kinds)
        self.calls.append("instance")


async def test_static_class_and_instance_methods(client: aqless.Client) -> None:
    handlers = Handlers()
    handlers.add(Kinds, "app.Kinds")
    Kinds.calls = []
    for queue in ("static", "klass", "other"):
        job = await process(client, handlers, "app.Kinds", queue=queue)
        assert job.state == JobState.COMPLETE, job.failure
    assert Kinds.calls == ["static", "class", "instance"]


class NeedsArguments:
    def __init__(self, required: str) -> None:
        self.required = required

    def process(self, job: Job) -> None:
        pass


class NoMethod:
    def other(self, job: Job) -> None:
        pass


async def test_class_that_cannot_be_made_fails_the_job(client: aqless.Client) -> None:
    """An instance method's class is made with no arguments: a class that refuses fails the
    job (and does not take the worker down)."""
    handlers = Handlers()
    handlers.add(NeedsArguments, "app.NeedsArguments")
    handlers.add(NoMethod, "app.NoMethod")
    job = await process(client, handlers, "app.NeedsArguments")
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-TypeError"
    job = await process(client, handlers, "app.NoMethod")
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == UNKNOWN
    assert "neither a 'q' method nor a 'process' method" in job.failure.message


# -- importing ---------------------------------------------------------------------------------


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package of job code on sys.path (a new name for every test), with ``tasks`` (job
    code) and ``evil`` (whose import writes the file ``imported`` in tmp_path)."""
    name = f"aqless_test_jobs_{uuid.uuid4().hex[:10]}"
    root = tmp_path / "path" / name
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "tasks.py").write_text(
        "CALLS = []\n"
        "async def hello(job):\n"
        "    CALLS.append(job.data)\n"
        "class Greeter:\n"
        "    def process(self, job):\n"
        "        CALLS.append(('greeter', job.queue_name))\n"
        "NOT_CALLABLE = 3\n"
    )
    marker = tmp_path / "imported"
    (root / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\nasync def run(job):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "path"))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


async def test_allowed_module_is_imported(client: aqless.Client, package: str) -> None:
    handlers = Handlers(allow=[f"{package}.tasks"])
    job = await process(client, handlers, f"{package}.tasks.hello", {"hi": 1})
    assert job.state == JobState.COMPLETE, job.failure
    job = await process(client, handlers, f"{package}.tasks.Greeter", queue="greet")
    assert job.state == JobState.COMPLETE, job.failure
    assert sys.modules[f"{package}.tasks"].CALLS == [{"hi": 1}, ("greeter", "greet")]


async def test_a_module_not_allowed_is_never_imported(
    client: aqless.Client, package: str, tmp_path: Path
) -> None:
    handlers = Handlers(allow=[f"{package}.tasks"])
    for klass in (
        "os.system",
        "subprocess.Popen",
        f"{package}.evil.run",
        f"{package}x.evil.run",  # the allowed name is a prefix of it, not its package
        f"{package}.tasksevil.run",
    ):
        modules_before = set(sys.modules)
        job = await process(client, handlers, klass, {"cmd": "touch /tmp/pwned"})
        assert job.state == JobState.FAILED, klass
        assert job.failure is not None
        assert job.failure.group == UNKNOWN
        assert "nothing was imported" in job.failure.message, job.failure.message
        assert f"{package}.evil" not in sys.modules
        assert set(sys.modules) - modules_before <= {f"{package}.tasks", package}
    assert not (tmp_path / "imported").exists()
    assert f"{package}.evil" not in sys.modules


async def test_without_allow_list_nothing_is_imported(
    client: aqless.Client, package: str, tmp_path: Path
) -> None:
    job = await process(client, Handlers(), f"{package}.evil.run")
    assert job.failure is not None
    assert job.failure.group == UNKNOWN
    assert "allowed: none" in job.failure.message
    assert not (tmp_path / "imported").exists()
    assert package not in sys.modules


@pytest.mark.parametrize(
    ("attribute", "says"),
    [("missing", "has no callable 'missing'"), ("NOT_CALLABLE", "has no callable")],
)
async def test_allowed_module_without_the_attribute(
    client: aqless.Client, package: str, attribute: str, says: str
) -> None:
    handlers = Handlers(allow=[package])
    job = await process(client, handlers, f"{package}.tasks.{attribute}")
    assert job.failure is not None
    assert job.failure.group == UNKNOWN
    assert says in job.failure.message


async def test_allowed_module_that_does_not_exist(client: aqless.Client, package: str) -> None:
    handlers = Handlers(allow=[package])
    job = await process(client, handlers, f"{package}.absent.run")
    assert job.failure is not None
    assert job.failure.group == UNKNOWN
    assert "cannot import" in job.failure.message


@pytest.mark.parametrize(
    "klass", ["plain", "a..b", "1a.b", "a.b;rm -rf", "a.b.", ".a.b", "a b.c", "a.__import__ x"]
)
async def test_malformed_klass(client: aqless.Client, klass: str) -> None:
    job = await process(client, Handlers(allow=["a"]), klass)
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == UNKNOWN
    assert history_of(job)[-1] == "failed"
