"""README's table of aqless against the peers: where a peer has a feature aqless has not,
README says why (issue 19's promise)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"
PEERS = ("qless", "reqless-py", "arq", "saq", "BullMQ", "taskiq", "streaq", "dramatiq", "rq")


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Against the other queues")
    return text[start : text.index("\n## ", start + 1)]


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
