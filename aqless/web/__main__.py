"""``python -m aqless.web`` names the command that serves the dashboard: ``aqless web``
(``python -m aqless.cli web``). The dashboard does not import the command line, which
imports it."""

from __future__ import annotations

import sys

USAGE = (
    "the dashboard is served by `aqless web` (or `python -m aqless.cli web`), "
    "with the same options: see `aqless web --help`"
)


def main() -> int:
    sys.stderr.write(USAGE + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
