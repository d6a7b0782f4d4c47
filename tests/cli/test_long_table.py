"""Long listings are drawn a line at a time, in the look of the short ones."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aqless.cli.long_table import LongTable
from aqless.cli.render import LONG, table


def drawn(view: object, width: int = 80, color: bool = False) -> list[str]:
    console = Console(width=width, color_system="standard" if color else None, force_terminal=color)
    with console.capture() as captured:
        console.print(view)
    return captured.get().splitlines()


def rows(count: int) -> list[tuple[str, int]]:
    return [(f"job-{index}", index * 7) for index in range(count)]


def test_a_table_past_its_long_mark_is_drawn_a_line_at_a_time() -> None:
    assert isinstance(table(None, ("jid", "count#"), rows(LONG)), Table)
    assert isinstance(table(None, ("jid", "count#"), rows(LONG + 1)), LongTable)


def test_every_row_is_drawn_under_its_header_and_numbers_align_right() -> None:
    lines = drawn(table("recurring", ("jid", "count#"), rows(LONG + 50)))
    assert lines[0].strip() == "recurring"
    assert lines[1].split() == ["jid", "count"]
    assert set(lines[2].strip()) == {"─"}
    body = [line for line in lines[3:] if line.strip()]
    assert len(body) == LONG + 50
    assert body[0].split() == ["job-0", "0"]
    assert body[-1].split() == [f"job-{LONG + 49}", str((LONG + 49) * 7)]
    # the count column ends at the same cell on every line
    assert len({len(line.rstrip()) for line in body}) == 1


def test_a_line_too_wide_for_the_terminal_is_cut_at_its_widest_column() -> None:
    wide = [(f"job-{index}", "x" * 200) for index in range(LONG + 1)]
    lines = drawn(table(None, ("jid", "data"), wide), width=60)
    body = [line for line in lines[3:] if line.strip()]
    assert all(len(line) <= 60 for line in lines)
    assert body[0].startswith("  job-0 ")
    assert body[0].rstrip().endswith("x…")


def test_a_styled_cell_keeps_its_style() -> None:
    styled = [(Text("failed", style="red"), str(index)) for index in range(LONG + 1)]
    lines = drawn(table(None, ("state", "n#"), styled), color=True)
    assert "\x1b[31mfailed" in lines[3]
