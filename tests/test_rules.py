"""aqless.rules: each kind of rule keeps what it allows and refuses the rest, by name."""

from __future__ import annotations

import math

import pytest

from aqless import rules
from aqless.errors import InvalidArgumentError, InvalidValueError
from aqless.scripts import options


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tags", "vip"),
        ("tags", [""]),
        ("depends", "abc"),
        ("queue", ""),
        ("queue", "a b"),
        ("queue", "a\tb"),
        ("queue", "a\nb"),
        ("queue", "x" * 10_000),
        ("delay", -5),
        ("delay", math.nan),
        ("delay", math.inf),
        ("delay", True),
        ("retries", -1),
        ("retries", 1.5),
        ("count", 0),
        ("offset", -1),
        ("reason", ""),
        ("group", ""),
    ],
)
def test_a_bad_value_is_refused_naming_its_input(name: str, value: object) -> None:
    with pytest.raises(InvalidValueError) as refused:
        rules.check(name, value, "cmd")
    assert refused.value.option == name
    assert isinstance(refused.value, InvalidArgumentError)
    assert refused.value.expected in str(refused.value)


@pytest.mark.parametrize(
    ("name", "value", "kept"),
    [
        ("tags", ["vip", "big spender"], ["vip", "big spender"]),
        ("tags", ("a",), ["a"]),
        ("retries", 3.0, 3),
        ("delay", 0, 0),
        ("queue", "emails", "emails"),
        ("group", "tenant 7", "tenant 7"),
    ],
)
def test_a_good_value_is_kept(name: str, value: object, kept: object) -> None:
    assert rules.check(name, value, "cmd") == kept


def test_text_is_parsed_as_the_rules_type() -> None:
    assert rules.parse("delay", " 1.5 ", "cmd") == 1.5
    assert rules.parse("retries", "3", "cmd") == 3
    assert rules.parse("tags", "a, b,", "cmd") == ["a", "b"]
    with pytest.raises(InvalidValueError):
        rules.parse("retries", "three", "cmd")
    with pytest.raises(InvalidValueError):
        rules.parse("delay", "nan", "cmd")


def test_every_rule_says_what_it_wants() -> None:
    table = rules.table_markdown()
    for name, rule in rules.RULES.items():
        assert f"`{name}`" in table
        assert rule.expected()
        assert rule.meaning


def test_a_dotted_rule_names_its_input_by_its_last_part() -> None:
    with pytest.raises(InvalidValueError) as refused:
        rules.check("worker.prefetch", 1.5, "Worker")
    assert str(refused.value) == "Worker: prefetch must be a whole number from 0, not 1.5"
    assert rules.parse("recurring.offset", "0", "cmd") == 0


def test_each_config_option_is_described_by_its_one_rule() -> None:
    for name, rule in options.OPTIONS.items():
        assert rules.RULES[name] is rule
    assert options.describe("emails-heartbeat") is rules.RULES["<queue>-heartbeat"]
    assert rules.CONFIG.items() <= rules.RULES.items()
    with pytest.raises(InvalidValueError, match="heartbeat must be a positive number of sec"):
        options.checked_value("heartbeat", "-5")
    assert options.checked_value("hearbeat", "-5", force=True) == "-5"
