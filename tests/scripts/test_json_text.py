"""A large put's data told to be JSON without decoding it (lua/lib/jsontext.lua's plain_json).

Everything plain_json takes, cjson.decode must take: put's refusal of data that is not JSON
is cjson's, so a text plain_json wrongly took would be stored where it was refused before.
Each text is put to both (plain_json alone, from its module's own source, and cjson.decode),
and the put's verdict is checked against cjson's on the same server.
"""

from __future__ import annotations

import json
import random
from importlib import resources

import pytest

from tests.conftest import Lua
from tests.scripts.expect import refused

SIZE = 8192  # jsontext.lua's PLAIN_JSON_SIZE
PAD = "x" * SIZE
SOURCE = resources.files("aqless.scripts").joinpath("lua", "lib", "jsontext.lua").read_text()
VERDICTS = (
    SOURCE
    + """
local verdicts = {}
for i, text in ipairs(ARGV) do
  local plain = plain_json(text) and 1 or 0
  local decoded = pcall(cjson.decode, text) and 1 or 0
  verdicts[i] = {plain, decoded}
end
return verdicts
"""
)

PLAIN = [
    json.dumps({"n": 1, "pad": PAD}),  # json.dumps's spacing
    json.dumps({"n": 1, "pad": PAD}, separators=(",", ":")),  # aqless's
    json.dumps([PAD, -1, 0, 10, 2.5, -0.125, True, False, None, [], {}, {"a": [PAD]}]),
    '{"raw":"\t\x01\x7f\xc3\xa9\xff","pad":"' + PAD + '"}',  # cjson takes raw bytes
]
NOT_PLAIN_BUT_JSON = [
    json.dumps({"pad": PAD, "e": 1e300}),  # an exponent
    json.dumps({"pad": PAD, "q": 'a"b'}),  # a backslash
    json.dumps({"pad": PAD, "é": 1}),
    json.dumps(PAD),  # not an object or array
    ' {"pad":"' + PAD + '"}',
    '{"pad":"' + PAD + '"} ',
    '{"pad":  "' + PAD + '"}',
    '{"pad":"' + PAD + '","n":01}',  # cjson takes a leading zero
    '{"pad":"' + PAD + '","n":1.}',  # and a point without digits
    json.dumps([0] * 100 + [PAD]),  # more values than plain_json walks
    "[" * 70 + json.dumps(PAD) + "]" * 70,
]
NOT_JSON = [
    '{"pad":"' + PAD + '"',
    '{"pad":"' + PAD + '",}',
    '{"pad":"' + PAD + '"}x',
    '["' + PAD + '",]',
    '["' + PAD + '" 1]',
    '{"pad":"' + PAD,
    '{"pad":"' + PAD + '","n":-}',
    '{"pad":"' + PAD + '","n":.5}',
    '{"pad":"' + PAD + '","n":tru}',
    '{"pad":"' + PAD + '","n":falsy}',
    '{"pad":"' + PAD + '","n":nul}',
    '{"pad":"' + PAD + '",n:1}',
    '{"pad":"' + PAD + '"\x00}',
    '{"pad":"a\x00' + PAD + '"}',
    '{"pad" "' + PAD + '"}',
    '["' + PAD + '"}',
    '{"pad":["' + PAD + '"}]',
]


async def verdicts(lua: Lua, texts: list[str]) -> list[tuple[int, int]]:
    reply = await lua.redis.eval(VERDICTS, 0, *texts)
    return [(plain, decoded) for plain, decoded in reply]


async def test_plain_json_takes_the_plain_shapes(lua: Lua) -> None:
    assert await verdicts(lua, PLAIN) == [(1, 1)] * len(PLAIN)


async def test_other_json_is_left_to_cjson(lua: Lua) -> None:
    assert await verdicts(lua, NOT_PLAIN_BUT_JSON) == [(0, 1)] * len(NOT_PLAIN_BUT_JSON)


async def test_plain_json_takes_nothing_cjson_refuses(lua: Lua) -> None:
    assert await verdicts(lua, NOT_JSON) == [(0, 0)] * len(NOT_JSON)


async def test_mutated_texts_are_taken_only_where_cjson_takes_them(lua: Lua) -> None:
    """Random one-byte edits of plain texts: plain_json's yes is always cjson's yes."""
    chosen = random.Random(21)  # noqa: S311 (a fixed sample of edits)
    alphabet = '{}[]",:-.0123456789 eE+truefalsnl\\\x00x'
    texts = []
    for _ in range(600):
        text = chosen.choice(PLAIN)
        # where the structure is: the start, the end, and just past the first pad
        at = chosen.choice([0, len(text) - 40, SIZE]) + chosen.randrange(0, 40)
        texts.append(text[:at] + chosen.choice(alphabet) + text[at + chosen.randint(0, 1) :])
    for plain, decoded in await verdicts(lua, texts):
        assert decoded or not plain


async def test_a_large_put_stores_its_data_as_given(lua: Lua) -> None:
    for n, text in enumerate(PLAIN + NOT_PLAIN_BUT_JSON):
        assert await lua("queue.put", 1, "w", "q", f"j{n}", "K", text, 0) == f"j{n}"
        assert await lua.redis.hget(f"ql:j:j{n}", "data") == text


@pytest.mark.parametrize("text", NOT_JSON[:3])
async def test_a_large_put_of_what_is_not_json_is_refused_as_before(lua: Lua, text: str) -> None:
    """The refusal is cjson's error, as it always was."""
    cjson = "local ok, error = pcall(cjson.decode, ARGV[1]) return error"
    error = await lua.redis.eval(cjson, 0, text)
    message = await refused(lua, None, "queue.put", 1, "w", "q", "j", "K", text, 0)
    assert error.split(": ", 1)[-1] in message
