"""What the `aqless` group itself needs, kept light so that the command starts fast: the
global settings, the not-found exit, and the JSON text of a document."""

from __future__ import annotations

import json
from dataclasses import dataclass

import click


@dataclass(frozen=True, slots=True)
class Settings:
    """The group's options, shared with every subcommand through the click context."""

    url: str | None
    namespace: str | None
    json: bool
    deployment: str | None = None


class NotFound(click.ClickException):
    """The thing asked for does not exist (an unknown jid, group, worker...): exit 1."""

    exit_code = 1


def to_json(document: object, *, indent: int | None = 2) -> str:
    separators = None if indent else (",", ":")
    return json.dumps(document, indent=indent, separators=separators, ensure_ascii=False)
