"""put --file: many jobs from JSON lines, pipelined, with their fields in Redis."""

from __future__ import annotations

import json
from pathlib import Path

import aqless
from tests.support.cli import Cli
from tests.support.clients import get_job

pytest_plugins = ["tests.support.client_fixtures"]


async def test_put_a_file_of_json_lines(
    client: aqless.Client, run_cli: Cli, tmp_path: Path
) -> None:
    lines = [json.dumps({"data": {"i": i}, "tags": ["bulk"]}) for i in range(2400)]
    lines[7] = json.dumps({"klass": "app.Special", "jid": "special", "priority": 9, "data": [1]})
    lines.insert(100, "")  # blank lines are skipped
    source = tmp_path / "jobs.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = await run_cli(
        "--json", "put", "bulk", "app.Bulk", "--file", str(source), "--retries", "3"
    )
    document = outcome.json()
    assert outcome.stderr == ""  # no progress bar off a terminal
    assert len(document["jids"]) == 2400 == len(set(document["jids"]))
    assert (await client.queues["bulk"].counts()).waiting == 2400
    special = await get_job(client, "special")
    assert (special.klass_name, special.priority, special.data, special.tags) == (
        "app.Special", 9, [1], (),
    )  # fmt: skip
    other = await get_job(client, document["jids"][0])
    assert (other.klass_name, other.data, other.tags) == ("app.Bulk", {"i": 0}, ("bulk",))
    assert other.original_retries == special.original_retries == 3  # the options are defaults
    assert len((await client.jobs.tagged("bulk", count=5000)).jids) == 2399


async def test_put_from_standard_input(client: aqless.Client, run_cli: Cli) -> None:
    text = '{"klass": "app.A", "data": {"x": 1}}\n{"klass": "app.B"}\n'
    outcome = await run_cli("put", "q", "--file", "-", input=text)
    assert outcome.code == 0
    assert "put 2 jobs into q" in outcome.stdout
    assert sorted(job.klass_name for job in await client.queues["q"].peek(5)) == ["app.A", "app.B"]


async def test_a_bad_line_puts_nothing(client: aqless.Client, run_cli: Cli) -> None:
    for text, complaint in (
        ('{"klass": "app.A"}\n{oops\n', "line 2 is not JSON"),
        ('{"klass": "app.A"}\n[1]\n', "line 2 is not a JSON object"),
        ('{"klass": "app.A", "colour": "red"}\n', "unknown fields colour"),
        ('{"data": {}}\n', "line 1 names no klass"),
    ):
        outcome = await run_cli("put", "q", "--file", "-", input=text)
        assert outcome.code == 2
        assert complaint in outcome.stderr
    assert await client.queues.names() == []


async def test_put_a_file_of_plain_payloads(
    client: aqless.Client, run_cli: Cli, tmp_path: Path
) -> None:
    source = tmp_path / "payloads.jsonl"
    source.write_text('{"n": 1}\n\n[2]\n"three"\n', encoding="utf-8")
    records = await run_cli("put", "bulk", "app.Bulk", "--file", str(source))
    assert records.code == 2
    assert "line 1: unknown fields n" in records.stderr
    assert "give --payloads" in records.stderr
    no_class = await run_cli("put", "bulk", "--payloads", "--file", str(source))
    assert no_class.code == 2
    assert "give KLASS or --class" in no_class.stderr
    document = (
        await run_cli(
            "--json", "put", "bulk", "--class", "app.Bulk", "--payloads", "--file", str(source),
            "--priority", "3",
        )
    ).json()  # fmt: skip
    jobs = await client.jobs.get_many(document["jids"])
    assert [(job.klass_name, job.data, job.priority) for job in jobs] == [
        ("app.Bulk", {"n": 1}, 3), ("app.Bulk", [2], 3), ("app.Bulk", "three", 3),
    ]  # fmt: skip
    one = (await run_cli("--json", "put", "bulk", "--class", "app.One", '{"x": 1}')).json()
    (job,) = await client.jobs.get_many(one["jids"])
    assert (job.klass_name, job.data) == ("app.One", {"x": 1})
