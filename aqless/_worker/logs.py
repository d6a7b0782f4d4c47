"""Logging for the commands: plain lines for people, JSON lines for log collectors; to
stderr or appended to a file (reopened on request, for log rotation)."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

__all__ = ["JsonFormatter", "configure", "reopen_files"]

# attributes every LogRecord has; anything else was passed in `extra=` and is kept
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, process, extras, error."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(verbosity: int, *, structured: bool, file: Path | None = None) -> None:
    """Warnings and errors by default; INFO with one -v, DEBUG with two; appended to `file`
    when given, else written to stderr."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler: logging.Handler = (
        logging.StreamHandler(sys.stderr)
        if file is None
        else logging.FileHandler(file, mode="a", encoding="utf-8")
    )
    handler.setFormatter(
        JsonFormatter()
        if structured
        else logging.Formatter("%(asctime)s %(levelname)-7s [%(process)d] %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    if verbosity < 3:  # redis-py's connection chatter only at -vvv
        logging.getLogger("redis").setLevel(max(level, logging.INFO))


def reopen_files() -> list[str]:
    """Reopen the files the logs go to (after a rotation moved them); the paths reopened."""
    reopened = []
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            fresh = open(handler.baseFilename, "a", encoding=handler.encoding)  # noqa: SIM115
            old = handler.setStream(fresh)
            if old is not None:
                old.close()
            reopened.append(handler.baseFilename)
    return reopened
