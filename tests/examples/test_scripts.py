"""The example scripts run as they are (a fresh process each, AQLESS_URL set) and print what
they promise; examples/demo.py has its own test in tests/test_examples.py."""

from __future__ import annotations

import pytest

from tests.support.examples import EXAMPLES, run_example

# example -> lines its output must contain
PROMISES = {
    "pipelines.py": ["went through: underpants -> unknown -> profit", "'profit': 120"],
    "dependencies.py": ["dinner is depends, waiting for 2 jobs", "cooked in order: stuffing"],
    "recurring.py": ["every 1 s into clock", "ran 2 spawns", "recurring job cancelled"],
    "cron.py": [
        "after two starts: ['nightly-report'] (one template)",
        "30 2 * * * (Europe/Paris) next runs:",
        "ran 2 jobs on the cron schedule",
    ],
    "schedules.py": [
        "never two at once: True",
        "upstream paused after its failures: True",
        "backfilled yesterday: 24 runs, then 0 (each once)",
    ],
    "throttles.py": ["12 mails sent, at most 2 at once"],
    "checkpointed_import.py": [
        "rows: the job is waiting",
        "attempt 1 started at row 0",
        "(the checkpoint: True)",
        "10000 rows imported, each exactly once: True",
        "checkpoint after completion: None",
    ],
    "workflow.py": [
        "parked: waiting for signal 'approval'",
        "signal: woken",
        "'approved by': 'mia', 'shipped': 'shipped to Oslo'",
        "step charge: {'amount': 42, 'receipt': '",
        "runs: {'charge': '1', 'ship': '1'}",
        "postage: 27",
        "parcels run once each: True",
        "quote: swiftly: 7",
        "the slow carrier cancelled: True",
    ],
    "deduplication.py": [
        "5 puts of charge:7 made 1 job, 1 waiting",
        "second welcome deduplicated: True (same job: True)",
        "3 keystrokes left 1 job",
        "indexed: ['ann']",
    ],
    "rate_limits.py": ["12 calls, 5 a second: at least 2 s", "reports: 6 of 100 starts used"],
    "progress.py": ["the resize's last: 100% resized 10 of 10", ": 100% archive written"],
    "events_consumer.py": [
        "order 1: put",
        "order 1: completed",
        "order 2: failed (orders-RuntimeError)",
        "order 4: complete",
    ],
    "flows.py": [
        "invoice: {'total': 42.5, 'missing': ['gone']}",
        "chain: 111",
        "shop.Invoice ROOT [complete]",
        "cancelled 3 jobs: the invoice and its 2 prices",
    ],
    "results.py": [
        "{'total': 10.99}",
        "empty quote failed in quotes-ValueError: ValueError: nothing to price",
        'kept with the job: {"total":10.99}',
    ],
    "encrypted_jobs.py": [
        "stored: ['aes-gcm'] under key k1; card in clear: False",
        "without the key: encrypted (key k1)",
        "the worker opened it: {'charged': '1234'}",
        "a large payload is kept apart: True",
        "blobs swept with their job: 1",
    ],
    "middleware.py": ["2 completed, 1 failed; stored: ['book', 'lamp']"],
    "typed_jobs.py": [
        "put refused: the data does not fit Parcel: data.grams: expected an integer, got a string",
        "2 shipped: ['1 Main St', '2 High St']",
        "failed into parcels-JobDataError: __main__.ship: the data does not fit Parcel: "
        "data: missing field 'address'",
    ],
    "outbox.py": [
        "waiting in the outbox: 2",
        "relayed 2 puts",
        "relayed again: 0",
        "receipts sent for orders [1, 3]",
    ],
    "groups.py": [
        "acme: 200 waiting, weight 2, limit 1000 per 60s",
        "bolt: 5 waiting, weight 1, limit none",
        "215 reports built; the small tenants' 15",
    ],
    "one_at_a_time.py": ["applied in order: 1 2 3 4 5", "balance 300; worker: 5 completed"],
    "spool.py": [
        "order A-1: job",
        "spooled\nwaiting in the spool: 3",
        "waiting in the spool: 3",
        "found in the file: 3",
        "flushed 3; waiting in the spool: 0",
        "order A-4: queued",
        "receipts sent, in order: A-1 A-2 A-3 A-4",
    ],
    "observability.py": [
        'aqless_jobs_total{klass="reports.Build",outcome="completed",queue="reports"} 2.0',
        'aqless_failed_jobs{group="reports-ValueError"} 1.0',
    ],
}


@pytest.mark.parametrize("name", sorted(PROMISES))
@pytest.mark.deployments(
    "valkey9",
    reason="a Python process per example, for what it shows; the calls it makes run on "
    "Valkey 9 and Redis 7 in the client and script tests",
)
def test_an_example_runs_and_shows_what_it_says(name: str, server_url: str) -> None:
    import redis

    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    result = run_example(name, server_url)
    for promise in PROMISES[name]:
        assert promise in result.stdout, result.stdout


def test_every_example_is_tested() -> None:
    tested = {*PROMISES, "demo.py", "fastapi_app.py", "aiohttp_app.py", "flask_app.py"}
    tested.add("sharded.py")  # needs a Cluster: tests/sharding/test_client.py runs it
    tested.add("sharded_resize.py")  # tests/sharding/test_live.py runs it
    tested.add("sync_sharded.py")  # tests/sync/test_sharded.py runs it
    tested.add("sharded_limits.py")  # tests/sharding/test_limits_hooks.py runs it
    tested.add("signups.py")  # the Flask and Django tests run its handlers, and aqless-run
    tested |= {"batches.py", "fenced_writes.py"}  # tested below
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested


def test_observability_traces_one_tree(server_url: str) -> None:
    result = run_example("observability.py", server_url)
    spans = [line.split() for line in result.stdout.splitlines() if line.startswith("span ")]
    # span NAME... trace T span S <- P
    by_id = {fields[-3]: fields for fields in spans}
    roots = [fields for fields in spans if fields[-1] == "(root)"]
    assert [" ".join(root[1:3]) for root in roots] == ["nightly reports"]
    processes = [fields for fields in spans if fields[1] == "process"]
    assert len(processes) == 3
    for process in processes:
        send = by_id[process[-1]]
        assert send[1] == "send"
        assert send[-1] == roots[0][-3]
        assert process[-5] == roots[0][-5]  # one trace


@pytest.mark.deployments("valkey9", reason="a Python process per example")
def test_the_batches_example_runs_its_callbacks_once(server_url: str) -> None:
    result = run_example("batches.py", server_url)
    assert "put 4 jobs as batch 'album 7 thumbnails': 4 pending" in result.stdout
    assert "failed: 3 done, 1 failed" in result.stdout
    assert result.stdout.count("callback ") == 2  # death and complete, once each


@pytest.mark.deployments("valkey9", reason="a Python process per example")
def test_fenced_writes_keep_only_the_latest_attempts_row_and_result(server_url: str) -> None:
    result = run_example("fenced_writes.py", server_url)
    assert "popped attempt 1, then attempt 2" in result.stdout
    assert "attempt 1: its write changed nothing" in result.stdout
    assert "attempt 1: complete refused (StaleAttemptError)" in result.stdout
    assert "attempt 2: completed" in result.stdout
    assert "report 7: built by attempt 2" in result.stdout
