"""`aqless.WorkerSettings`, the worker's settings declared once: each field is one
`aqless-run` option and environment variable (and no option configures the worker
otherwise), each is checked by its rule when made, `Worker` takes them whole or as
keywords, and the worker guide's table is made from them (``AQLESS_WRITE_SETTINGS=1``
writes it again)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, get_args, get_type_hints

import click
import pytest

import aqless
from aqless import rules
from aqless._worker import settings as worker_settings
from aqless._worker.reservers import RESERVERS, Reserver, ReserverName
from aqless._worker.settings import WorkerKeywords, WorkerSettings, setting_of
from aqless.run import RunOptions, main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "worker.md"
TABLE_HEAD = "| `Worker(...)` | `aqless-run` | environment | must be |\n"

#: aqless-run's own options: where the worker's code comes from, the server, the
#: processes, the log; none of them a setting of the worker
COMMAND_OPTIONS = {
    "queues",
    "url",
    "namespace",
    "name",
    "imports",
    "allow",
    "registries",
    "middleware",
    "backoff",
    "backoff_cap",
    "processes",
    "paths",
    "wait_for_server",
    "allow_eviction",
    "outbox_url",
    "verbose",
    "log_json",
    "log_file",
    "check_only",
    "child",
    "version",
}

FIELDS = [each.name for each in dataclasses.fields(WorkerSettings)]


def options() -> list[click.Option]:
    return [parameter for parameter in main.params if isinstance(parameter, click.Option)]


def parsed(*arguments: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """What aqless-run's options parse `arguments` (and `env`) into, without running it."""
    with pytest.MonkeyPatch.context() as patch:
        for variable, value in (env or {}).items():
            patch.setenv(variable, value)
        context = main.make_context("aqless-run", [*arguments, "q"])
    return context.params


def test_each_setting_is_exactly_one_option_and_one_environment_variable() -> None:
    for each in dataclasses.fields(WorkerSettings):
        how = setting_of(each)
        matching = [option for option in options() if option.name == each.name]
        assert len(matching) == 1, each.name
        (option,) = matching
        assert tuple(option.opts) == how.flags(each.name)
        assert option.opts[-1] == how.long_flag(each.name)
        named = "AQLESS_" + option.opts[-1].removeprefix("--").replace("-", "_").upper()
        assert option.envvar == how.env(each.name) == named
        assert option.help == how.help
        assert option.is_flag == how.is_flag(), each.name


def test_every_option_is_a_setting_or_one_of_the_command_s_own() -> None:
    names = [option.name for option in options()]
    assert len(names) == len(set(names))
    assert set(names) == set(FIELDS) | COMMAND_OPTIONS
    assert not set(FIELDS) & COMMAND_OPTIONS
    variables = [option.envvar for option in options() if option.envvar]
    assert len(variables) == len(set(variables))


def test_the_options_parse_into_the_settings_by_their_rules() -> None:
    assert WorkerSettings(**{name: parsed()[name] for name in FIELDS}) == WorkerSettings()
    given = parsed("-c", "3", "--max-memory", "2", "--isolate", "--timeout", "1.5")
    assert (given["concurrency"], given["max_memory"], given["isolate"]) == (3, 2 << 20, True)
    assert given["job_timeout"] == 1.5
    from_env = parsed(
        env={"AQLESS_ISOLATE_MAX_JOBS": "4", "AQLESS_BURST": "1", "AQLESS_REFRESH": "0.5"}
    )
    assert (from_env["isolate_max_jobs"], from_env["burst"], from_env["refresh"]) == (4, True, 0.5)
    for arguments in (["--prefetch", "1.5"], ["--reserver", "random"], ["--max-memory", "0"]):
        with pytest.raises(click.BadParameter, match="must be"):
            parsed(*arguments)


def test_each_setting_is_checked_by_its_rule_when_made() -> None:
    bad: dict[str, Any] = {
        "concurrency": 0,
        "prefetch": 1.5,
        "reserver": "random",
        "priorities": "yes",
        "interval": 0,
        "grace": -1,
        "refresh": float("inf"),
        "job_timeout": 0,
        "max_jobs": 0,
        "max_memory": 0,
        "resume": 1,
        "burst": None,  # None is "not set" only where the default is
        "isolate": "no",
        "isolate_max_jobs": 0,
    }
    assert set(bad) == {name for name in FIELDS if setting_of_name(name).rule}
    for name, value in bad.items():
        with pytest.raises(aqless.InvalidValueError, match=rf"^Worker: {name} must be "):
            WorkerSettings(**{name: value})
        with pytest.raises(aqless.InvalidValueError, match=f"{name} must be"):
            WorkerSettings().replace(**{name: value})
    with pytest.raises(aqless.InvalidValueError, match="concurrency must be"):
        WorkerSettings(concurrency=None)  # type: ignore[arg-type]
    assert WorkerSettings(max_jobs=None).max_jobs is None
    assert WorkerSettings(workdir="jobs").workdir == Path("jobs")  # type: ignore[arg-type]
    assert WorkerSettings(concurrency=3.0).concurrency == 3  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        WorkerSettings().concurrency = 5  # type: ignore[misc]


def setting_of_name(name: str) -> worker_settings.Setting:
    return setting_of(next(f for f in dataclasses.fields(WorkerSettings) if f.name == name))


def test_the_keywords_are_the_fields() -> None:
    keywords = get_type_hints(WorkerKeywords)
    fields = get_type_hints(WorkerSettings)
    assert list(keywords) == FIELDS
    for name in FIELDS:
        if name != "workdir":  # a keyword may also name the folder as a str
            assert keywords[name] == fields[name], name
    assert get_args(ReserverName) == RESERVERS


def test_the_run_options_hold_the_settings_whole() -> None:
    assert "settings" in {f.name for f in dataclasses.fields(RunOptions)}
    assert not set(FIELDS) & {f.name for f in dataclasses.fields(RunOptions)}


async def test_a_worker_takes_its_settings_whole_or_as_keywords(client: aqless.Client) -> None:
    settings = WorkerSettings(concurrency=3, prefetch=2, interval=0.5, burst=True)
    whole = aqless.Worker(client, ["q"], settings)
    assert whole.settings is settings
    assert (whole.concurrency, whole.prefetch, whole.interval, whole.burst) == (3, 2, 0.5, True)
    keywords = aqless.Worker(client, ["q"], concurrency=3, prefetch=2, interval=0.5, burst=True)
    assert keywords.settings == settings
    both = aqless.Worker(client, ["q"], settings, concurrency=7, refresh=2.0)
    assert (both.concurrency, both.prefetch, both.refresh) == (7, 2, 2.0)
    assert both.settings == settings.replace(concurrency=7, refresh=2.0)
    custom = Reserver("shuffled")
    assert aqless.Worker(client, ["q"], reserver=custom).reserver is custom
    with pytest.raises(aqless.InvalidValueError, match=r"^Worker: grace must be"):
        aqless.Worker(client, ["q"], settings, grace=-1)


def test_the_guide_s_table_is_made_from_the_settings() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    before, head, rest = text.partition(TABLE_HEAD)
    assert head, "the worker guide has no settings table"
    table = head + rest[: rest.index("\n\n") + 1]
    current = worker_settings.table_markdown()
    if os.environ.get("AQLESS_WRITE_SETTINGS") == "1":
        GUIDE.write_text(before + current + text[len(before) + len(table) :], encoding="utf-8")
        return
    assert table == current, "run with AQLESS_WRITE_SETTINGS=1 to write it again"
    for name in FIELDS:
        how = setting_of_name(name)
        assert how.rule is None or how.rule in rules.RULES
