"""The table of aqless against the peers (docs/migrating.md, "Against the other queues"): where
a peer has a feature aqless has not, the page says why (issue 19's promise)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).parent.parent / "docs" / "migrating.md"
PEERS = ("qless", "reqless-py", "arq", "saq", "BullMQ", "taskiq", "streaq", "dramatiq", "rq")


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## Against the other queues")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def rows() -> dict[str, dict[str, str]]:
    lines = [line for line in section().splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    table = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == len(header), line
        table[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return table


def explained() -> list[str]:
    return [name.lower() for name in re.findall(r"^- \*\*(.+?)\*\*", section(), re.MULTILINE)]


def test_every_peer_of_the_survey_has_a_column() -> None:
    columns = next(iter(rows().values())).keys()
    assert {"aqless", *PEERS, "Celery"} <= set(columns)


def test_a_feature_a_peer_has_and_aqless_has_not_is_explained() -> None:
    table = rows()
    assert len(table) >= 25
    unexplained = [
        feature
        for feature, cells in table.items()
        if not cells["aqless"].startswith("Y")
        and any(value == "Y" for name, value in cells.items() if name != "aqless")
        and not any(feature.lower() in note for note in explained())
    ]
    assert unexplained == []
