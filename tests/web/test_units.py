"""serve() and `aqless web`, the charts' geometry, and the live change summary."""

from __future__ import annotations

import functools

import anyio
import httpx
import pytest

from aqless.cli.web import web
from aqless.events import Event
from aqless.web import charts, serve
from aqless.web.live import MAX_NAMES, Changes
from tests.web.live_server import free_port


async def test_serve_answers_until_cancelled(server_url: str) -> None:
    port = free_port()
    async with anyio.create_task_group() as group:
        group.start_soon(functools.partial(serve, server_url, port=port, read_only=True))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            with anyio.fail_after(10):
                while True:
                    try:
                        page = await http.get("/")
                        break
                    except httpx.ConnectError:
                        await anyio.sleep(0.05)
        assert page.status_code == 200
        assert "read-only" in page.text
        group.cancel_scope.cancel()
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as http:
            await http.get(f"http://127.0.0.1:{port}/")


def test_the_command_line_documents_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        web.main(["--help"], prog_name="aqless web")
    assert exit.value.code == 0
    out = capsys.readouterr().out
    for option in ("--url", "--host", "--port", "--read-only", "--namespace"):
        assert option in out


def test_a_histogram_shows_the_used_buckets_with_their_units() -> None:
    counts = [0] * 148
    counts[3], counts[61], counts[120] = 5, 2, 1  # 3 s, 2 min, 2 h
    chart = charts.histogram("wait", counts)
    assert len(chart.bars) == 120 - 3 + 1
    assert chart.bars[0].title == "3s: 5 jobs"
    assert max(bar.height for bar in chart.bars) == pytest.approx(180 - 22 - 8)
    assert [charts.bucket_label(i) for i in (0, 59, 60, 118, 119, 141, 142, 147)] == [
        "0s", "59s", "1m", "59m", "1h", "23h", "1d", "6d",
    ]  # fmt: skip
    assert charts.histogram("run", [0] * 148).empty


def test_trend_charts_have_a_column_per_day() -> None:
    days = [f"2025-01-{d:02}" for d in range(1, 15)]
    bars = charts.grouped_bars("jobs", days, [("popped", [1] * 14), ("failed", [0] * 13 + [4])])
    assert len(bars.bars) == 28
    assert bars.bars[-1].title == "2025-01-14: 4 failed"
    assert bars.x_labels[0][1] == "01-01"
    line = charts.lines("times", days, [("wait", [0.5] * 14)])
    assert len(line.lines[0].dots) == 14
    assert charts.lines("times", days, [("wait", [0] * 14)]).empty


def test_changes_summarise_a_burst() -> None:
    changes = Changes()
    assert not changes.ready.is_set()
    changes.add(Event(kind="put", jid="j1", channel="ql:log", raw="", queue="emails"))
    changes.add(Event(kind="advanced", jid="j1", channel="ql:log", raw="", queue="a", to="b"))
    assert changes.ready.is_set()
    assert changes.take() == {
        "kinds": ["advanced", "put"],
        "queues": ["a", "b", "emails"],
        "jids": ["j1"],
        "more": False,
    }
    assert not changes.ready.is_set()
    for n in range(MAX_NAMES + 1):
        changes.add(Event(kind="put", jid=f"j{n}", channel="ql:log", raw=""))
    assert changes.take()["more"] is True
