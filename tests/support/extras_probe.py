"""Run by tests/test_extras.py with the Python of a fresh virtual environment where aqless
is installed with one extra (or none): imports every module of the package and prints, as
JSON, ``{module: "ok" | "<exception type>: <message>"}``. It imports nothing of the tests."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def outcome(name: str) -> str:
    try:
        importlib.import_module(name)
    except Exception as error:  # each module's failure is the report
        return f"{type(error).__name__}: {error}"
    return "ok"


def main() -> None:
    import aqless

    root = Path(aqless.__file__).parent
    names = sorted(
        ".".join(("aqless", *path.relative_to(root).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for path in root.rglob("*.py")
        if path.name != "__main__.py"
    )
    json.dump({name: outcome(name) for name in names}, sys.stdout)


if __name__ == "__main__":
    main()
