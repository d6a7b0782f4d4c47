"""aqless.rules: each kind of rule keeps what it allows and refuses the rest, by name."""

from __future__ import annotations

import math

import pytest

from aqless import rules
from aqless.errors import InvalidArgumentError, InvalidValueError


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
