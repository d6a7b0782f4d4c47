"""mypy --strict sees typed jobs end to end: a program using them is checked by mypy, and the
wrong uses (each marked ``# error: <code>``) are the errors it reports, no more, no fewer."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent.parent

PROGRAM = """
from __future__ import annotations

from dataclasses import dataclass

import aqless

handlers = aqless.Handlers()


@dataclass
class Order:
    sku: str
    quantity: int = 1


@dataclass
class Invoice:
    number: int


@handlers.register
async def charge(job: aqless.Job, order: Order) -> None:
    total: int = order.quantity
    name: str = order.sku
    wrong: int = order.sku  # error: assignment
    print(total, name, wrong)


@handlers.register(timeout=5)
def bill(job: aqless.Job, invoice: Invoice) -> None:
    print(invoice.number)


async def welcome(job: aqless.Job) -> None:
    print(job.data)


async def main(queue: aqless.Queue) -> None:
    await queue.put(charge, Order("a"))
    await queue.put(charge, {"sku": "a"}, priority=2)  # JSON form: checked at put
    await queue.put(bill, Invoice(3), delay=1)
    await queue.put(welcome, {"anything": [1]})
    await queue.put(welcome)
    await queue.put("app.jobs.charge", 3)
    await queue.put(charge, Invoice(3))  # error: arg-type
    await queue.put(charge, "sku")  # error: arg-type
    await queue.put(bill, Order("a"))  # error: arg-type
    await queue.put(charge)  # error: arg-type
"""


def test_mypy_checks_put_against_the_handlers_data_type(tmp_path: Path) -> None:
    program = tmp_path / "typed_program.py"
    program.write_text(PROGRAM)
    expected = {
        (number, code)
        for number, line in enumerate(PROGRAM.splitlines(), 1)
        for code in re.findall(r"# error: ([a-z-]+)", line)
    }
    stdout, stderr, _ = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--no-error-summary",
            "--show-error-codes",
            str(program),
        ]
    )
    error = re.compile(r"typed_program\.py:(\d+): error: .*\[([a-z-]+)\]$", re.M)
    found = {(int(number), code) for number, code in error.findall(stdout)}
    assert len(expected) == 5
    assert found == expected, stdout + stderr
