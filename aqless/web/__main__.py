"""``python -m aqless.web``: the ``aqless web`` command (aqless.cli.web), under this name."""

from __future__ import annotations

from collections.abc import Sequence

from aqless.cli.web import web


def main(argv: Sequence[str] | None = None) -> None:
    web.main(args=argv, prog_name="python -m aqless.web", max_content_width=100)


if __name__ == "__main__":
    main()
