"""The tables of docs/reference/settings.md, made from the code that defines each setting:
the commands' options (click: ``aqless``, ``aqless-run``, every subcommand), the worker's
settings (`aqless.WorkerSettings`, each checked by its rule in `aqless.rules`), the server's
config options (`aqless.rules.CONFIG`, their defaults in the script's config.lua) and the
few variables read outside any command (listed here, with the module that reads them)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import click

import aqless
from aqless import rules
from aqless._worker import settings as worker_settings
from aqless.cli.app import cli
from aqless.run import main as run_command

PACKAGE = Path(aqless.__file__).parent
CONFIG_LUA = PACKAGE / "scripts" / "lua" / "lib" / "config.lua"

#: Variables read outside any command's options: who reads them, and what for.
OUTSIDE: dict[str, tuple[str, str]] = {
    "AQLESS_URL": (
        "`aqless.Client()`, `aqless.sync.Client()`",
        "The server's URL when none is given.",
    ),
    "REDIS_URL": ("`aqless.Client()`", "The server's URL when none is given and no AQLESS_URL."),
    "AQLESS_HOME": (
        "the embedded server",
        "Its data folder (default: `$XDG_DATA_HOME/aqless/valkey`, else "
        "`~/.local/share/aqless/valkey`).",
    ),
    "XDG_DATA_HOME": ("the embedded server", "Where its data folder goes when no AQLESS_HOME."),
    "AQLESS_TEST_URL": (
        "the pytest plugin",
        "A server for the `aqless_url` fixture instead of a private embedded one.",
    ),
    "AQLESS_KEYS": (
        "every client given no codec (the CLI, the dashboard, workers)",
        "A key ring for payload codecs, `id:base64key,...`, the writing key first: encrypted "
        "job data is sealed and opened with it (docs/guides/codecs.md).",
    ),
    "AQLESS_BLOB_DIR": (
        "every client given no codec",
        "The claim-check directory of payload codecs: payloads kept apart are read from it.",
    ),
    "AQLESS_SCRIPT_CONNECTION": (
        "the client",
        "`redis-py`: send the script's calls through redis-py's connections (a diagnostic).",
    ),
    "AQLESS_AUDIT_LENGTH": ("the dashboard, the CLI", "Entries the audit log of actions keeps."),
}


def _commands(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):  # asked, not read: `aqless` loads its commands lazily
        context = click.Context(command)
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is not None:
                yield from _commands(sub, f"{path} {name}")


def _first_sentence(text: str | None) -> str:
    """The help's first sentence, without the variable it names (the table's first column)."""
    text = re.sub(r" \(env [A-Z_]+\)|; env [A-Z_]+", "", " ".join((text or "").split()))
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


def environment_rows() -> dict[str, list[tuple[str, str]]]:
    """Every variable: the places that read it, each with what it means there."""
    found: dict[str, list[tuple[str, str]]] = {}
    for root, name in ((cli, "aqless"), (run_command, "aqless-run")):
        for path, command in _commands(root, name):
            for parameter in command.params:
                if not isinstance(parameter, click.Option) or not parameter.envvar:
                    continue
                names = (
                    [parameter.envvar]
                    if isinstance(parameter.envvar, str)
                    else list(parameter.envvar)
                )
                flag = max(parameter.opts, key=len)
                for variable in names:
                    found.setdefault(variable, []).append(
                        (f"`{path} {flag}`", _first_sentence(parameter.help))
                    )
    for variable, (where, meaning) in OUTSIDE.items():
        found.setdefault(variable, []).append((where, meaning))
    return found


def environment_table() -> str:
    lines = ["| variable | read by | meaning |", "|---|---|---|"]
    for variable, uses in sorted(environment_rows().items()):
        where = ", ".join(dict.fromkeys(use for use, _ in uses))
        meaning = next(text for _, text in uses if text).replace("|", "\\|")
        lines.append(f"| `{variable}` | {where} | {meaning} |")
    return "\n".join(lines) + "\n"


def worker_table() -> str:
    lines = [
        "| `Worker(...)` | default | `aqless-run` | environment | must be | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for each in dataclasses.fields(aqless.WorkerSettings):
        how = worker_settings.setting_of(each)
        rule = rules.RULES[how.rule] if how.rule else None
        flags = ", ".join(f"`{flag}`" for flag in how.flags(each.name))
        if how.unit:
            flags += f" ({how.unit})"
        default = "none" if each.default is None else f"`{each.default!r}`"
        unit = f" ({rule.unit})" if rule and rule.unit else ""
        must = rule.expected() if rule else "a folder"
        help_text = _first_sentence(how.help).replace("|", "\\|")
        lines.append(
            f"| `{each.name}`{unit} | {default} | {flags} | `{how.env(each.name)}` | {must} "
            f"| {help_text} |"
        )
    return "\n".join(lines) + "\n"


def config_defaults() -> dict[str, str]:
    """The script's fallbacks (config.lua's FALLBACKS): an option's value when unset."""
    text = CONFIG_LUA.read_text(encoding="utf-8")
    block = text[text.index("FALLBACKS = {") : text.index("}", text.index("FALLBACKS = {"))]
    return dict(re.findall(r"\['([a-z-]+)'\]\s*=\s*([0-9.]+)", block))


def config_table() -> str:
    defaults = config_defaults()
    lines = ["| option | default | must be | unit | meaning |", "|---|---|---|---|---|"]
    for name, rule in rules.CONFIG.items():
        default = f"`{defaults[name]}`" if name in defaults else "unset"
        lines.append(f"| `{name}` | {default} | {rule.expected()} | {rule.unit} | {rule.meaning} |")
    return "\n".join(lines) + "\n"


def generated() -> str:
    """The page's generated part: its three tables under their headings."""
    return (
        "## Environment variables\n\n"
        + environment_table()
        + "\n## Worker settings\n\n"
        + worker_table()
        + "\n## Server options\n\n"
        + config_table()
    )
