"""docs/reference/inputs.md ends with the table of aqless.rules (`table_markdown`), kept
current: ``AQLESS_WRITE_INPUTS=1`` writes it again."""

from __future__ import annotations

import os
from pathlib import Path

from aqless import rules

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "inputs.md"
HEADING = "## The rules\n"


def test_the_inputs_page_shows_every_rule_as_the_table_says() -> None:
    text = PAGE.read_text(encoding="utf-8")
    prose, _, table = text.partition(HEADING)
    explained, _, rows = table.partition("\n\n| input |")
    current = rules.table_markdown()
    if os.environ.get("AQLESS_WRITE_INPUTS") == "1":
        PAGE.write_text(f"{prose}{HEADING}{explained}\n\n{current}", encoding="utf-8")
        return
    assert "| input |" + rows == current, "run with AQLESS_WRITE_INPUTS=1 to write it again"
