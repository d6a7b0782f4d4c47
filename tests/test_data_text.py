"""A put's data text: msgspec's where it writes the stdlib encoder's bytes, else the stdlib's
(aqless._connection.data_text). Other qless clients read the stored text, so it must not
change by a byte; the stored text of a real put is checked in tests/test_queue.py. A job's
data read: msgspec's where it reads the text, else json's, as the same values."""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aqless._connection.data_text import decode_data, encode_data, written_alike
from aqless._connection.protocol import encode_json
from aqless.errors import PayloadError

pytest.importorskip("msgspec")


def as_text(encoded: str | bytes) -> str:
    return encoded.decode("ascii") if isinstance(encoded, bytes) else encoded


ALIKE = [
    {"n": 1, "pad": "x" * 64},
    {"n": 1, "pad": "x" * 100_000},
    "".join(chr(c) for c in range(127)),  # every escape json writes
    {"".join(chr(c) for c in range(127)): [None, True, False, 0, -1, 2**70, -(2**200)]},
    [0.0, -0.0, 1e-4, -1e-4, 0.1, 1.5, 100.0, 9999999999999998.0, 123456789012345.6],
    ({"a": ()}, [[], {}], ("t",)),  # tuples are arrays for both
]
UNLIKE = [
    "café",  # json escapes non-ASCII, msgspec writes UTF-8
    {"é": 1},
    "\x7f",  # json escapes DEL
    {"k\x7f": 1},
    [1e16, 1e-5, 9.999999999999999e-05, 1e300, 5e-324],  # json's exponent notation
    {1: "int key"},  # json writes "1"
    [True] * 257,  # more values than the walk is worth
]


@pytest.mark.parametrize("value", ALIKE)
def test_msgspec_encodes_what_it_writes_as_json_does(value: Any) -> None:
    assert written_alike(value)
    encoded = encode_data(value, "job data")
    assert isinstance(encoded, bytes)
    assert as_text(encoded) == encode_json(value, "job data")


@pytest.mark.parametrize("value", UNLIKE)
def test_what_msgspec_would_write_otherwise_goes_to_json(value: Any) -> None:
    assert not written_alike(value)
    assert encode_data(value, "job data") == encode_json(value, "job data")


@pytest.mark.parametrize(
    "value",
    [
        {"when": datetime.date(2024, 1, 1)},  # msgspec would write these
        {1, 2},
        {"x": math.nan},
        {"x": math.inf},
        b"bytes",
        {"x": object()},
    ],
)
def test_what_json_refuses_is_still_refused(value: Any) -> None:
    with pytest.raises(PayloadError, match="job data is not JSON-serializable"):
        encode_data(value, "job data")


def test_a_cycle_is_refused_as_json_refuses_it() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(PayloadError, match="Circular reference"):
        encode_data(cycle, "job data")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=30,
)


@given(json_values)
def test_any_json_value_is_written_as_json_writes_it(value: Any) -> None:
    assert as_text(encode_data(value, "job data")) == encode_json(value, "job data")


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down (1 == 1.0 == True would not tell), -0.0 as
    -0.0, NaN as NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    return bool(a == b)


@given(json_values, st.booleans())
def test_any_json_text_is_read_as_json_reads_it(value: Any, ascii: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii)
    assert same(decode_data(text), json.loads(text))
    assert same(decode_data(text.encode()), json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        "NaN",  # msgspec refuses these, json reads them: as it always did here
        "[Infinity, -Infinity]",
        "1e400",
        "-1.7976931348623159e308",
        '"\\ud800"',  # an escaped lone surrogate
        '{"a": 1, "a": 2}',  # the last wins
        "1" * 4000,
        "-0.0",
        "9007199254740993.0",
        "123456789e-330",
        '"\ud800"',  # a lone surrogate in the text itself (a str, not UTF-8)
    ],
)
def test_texts_msgspec_refuses_or_reads_differently_are_read_as_json_does(text: str) -> None:
    assert same(decode_data(text), json.loads(text))


@pytest.mark.parametrize("text", ["", "[1,]", "01", "{'a': 1}", '"\t"', "1" * 5000])
def test_what_json_refuses_to_read_is_refused(text: str) -> None:
    """Refused with json's own error (its text included): msgspec's is never raised."""
    try:
        json.loads(text)
    except ValueError as error:
        refusal = error
    with pytest.raises(type(refusal), match=re.escape(str(refusal))):
        decode_data(text)


def test_nesting_too_deep_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(RecursionError):
        decode_data("[" * 100_000 + "]" * 100_000)
