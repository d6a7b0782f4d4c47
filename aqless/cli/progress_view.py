"""A job's progress in the terminal: a bar, the percentage, the message and its age."""

from __future__ import annotations

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from aqless.cli.render import ago
from aqless.progress import Progress

BAR_WIDTH = 30


def progress_view(progress: Progress) -> RenderableType:
    """``progress  [bar] 40% resized 4 of 10 (3s ago)``: the message as text, never markup."""
    view = Table.grid(padding=(0, 1))
    view.add_row(
        Text("progress ", style="bold"),
        ProgressBar(total=1.0, completed=progress.fraction, width=BAR_WIDTH),
        Text(f"{progress.fraction:.0%}", style="bold"),
        Text(progress.message),
        Text(f"({ago(progress.at)})", style="dim"),
    )
    return view
