"""docs/reference/settings.md lists every environment variable, worker setting and server
option, in tables made from the code that defines them (tests/support/settings_page.py),
kept current: ``AQLESS_WRITE_SETTINGS_PAGE=1`` writes them again."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support import settings_page

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "settings.md"
START = "<!-- generated: tests/support/settings_page.py -->\n"


def test_the_settings_page_shows_the_current_tables() -> None:
    text = PAGE.read_text(encoding="utf-8")
    prose, marker, tables = text.partition(START)
    assert marker, f"{PAGE} has no {START.strip()} line"
    current = settings_page.generated()
    if os.environ.get("AQLESS_WRITE_SETTINGS_PAGE") == "1":
        PAGE.write_text(prose + START + "\n" + current, encoding="utf-8")
        return
    assert tables == "\n" + current, "run with AQLESS_WRITE_SETTINGS_PAGE=1 to write it again"


def test_every_variable_the_package_reads_is_listed() -> None:
    named = set()
    for path in settings_page.PACKAGE.rglob("*.py"):
        named |= set(re.findall(r"\bAQLESS_[A-Z][A-Z_]*[A-Z]\b", path.read_text("utf-8")))
    listed = set(settings_page.environment_rows())
    assert named - listed == set()
    assert {"AQLESS_URL", "AQLESS_CONCURRENCY", "AQLESS_HOME", "REDIS_URL"} <= listed
