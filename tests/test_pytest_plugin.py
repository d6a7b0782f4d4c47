"""The pytest plugin, as a project using aqless meets it: run inside a fresh pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

PROJECT_TESTS = """
import aqless

handlers = aqless.Handlers()
seen = []


@handlers.register("jobs.Welcome")
async def welcome(job):
    seen.append(job.data["user"])
    if job.data["user"] == 13:
        raise ValueError("unlucky")


async def test_the_worker_runs_until_idle(aqless_client, aqless_queue, aqless_worker):
    for user in (1, 2, 13):
        await aqless_queue.put("jobs.Welcome", {"user": user})
    counters = await aqless_worker(handlers, queues=[aqless_queue.name])
    assert (counters.completed, counters.failed) == (2, 1)
    assert sorted(seen) == [1, 2, 13]
    assert await aqless_client.jobs.failure_groups() == {
        f"{aqless_queue.name}-ValueError": 1
    }


async def test_every_test_starts_on_an_empty_server(aqless_client):
    assert await aqless_client.queues.names() == []


def test_a_unit_test_needs_no_server():
    job = aqless.Job.build("jobs.Welcome", {"user": 7})
    assert job.data == {"user": 7}
"""


def test_a_project_uses_the_fixtures(pytester: pytest.Pytester, server_url: str) -> None:
    pytester.makepyfile(test_project=PROJECT_TESTS)
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AQLESS_TEST_URL", server_url)
        result = pytester.runpytest_subprocess("-p", "no:valkey", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_the_plugin_starts_its_own_server_when_given_no_url(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_own_server="""
async def test_put(aqless_queue):
    jid = await aqless_queue.put("jobs.Welcome", {})
    assert (await aqless_queue.peek())[0].jid == jid
"""
    )
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("AQLESS_TEST_URL", raising=False)
        result = pytester.runpytest_subprocess("-p", "no:valkey", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_testing_helpers_import_without_pytest() -> None:
    """A user install has no pytest: ``from aqless.testing import perform`` still works."""
    code = (
        "import sys; sys.modules['pytest'] = None; sys.modules['pytest_asyncio'] = None\n"
        "from aqless.testing import RunWorker, perform\n"
        "print(perform.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "perform"), done.stderr
