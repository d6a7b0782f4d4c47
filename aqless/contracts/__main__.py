"""``python -m aqless.contracts --write``: write the verbs the variants derive from the
contracts (aqless.contracts.derive); without ``--write``, exit 1 if they are not current."""

from __future__ import annotations

import sys

from aqless.contracts.derive import derived_sources, write


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        for path in write():
            print(f"wrote {path}")  # noqa: T201 (a command's output)
        return 0
    stale = [path for path, text in derived_sources().items() if path.read_text() != text]
    for path in stale:
        print(f"{path} is not current: python -m aqless.contracts --write")  # noqa: T201
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
