-- A put refuses data that is not JSON (CORE: "Arg data missing or not JSON"), which
-- cjson.decode tells by building the whole value: ~1.3 µs of the server's time per KB, most
-- of a 100 KB put's cost. `plain_json(text)` tells it for a large text of a plain shape
-- without building anything: an object or array (so never the refused `false`) with no
-- backslash and no NUL byte anywhere (so each string ends at the next quote, found by
-- memchr), compact (one space at most after a comma or a colon, as json.dumps writes),
-- numbers without exponent or leading zeros, true, false, null; at most PLAIN_JSON_VALUES
-- values. Everything it takes, cjson takes (a test compares them, text by text); anything
-- else (false) is decoded as before, so a refusal is cjson's, word for word.

local PLAIN_JSON_SIZE = 8192  -- below, cjson is as cheap as the walk
local PLAIN_JSON_VALUES = 64
local QUOTE, COMMA, COLON, SPACE = 34, 44, 58, 32
local OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, MINUS = 123, 125, 91, 93, 45

-- The position after one space, if there is one there.
local function after_space(text, at)
  if string.byte(text, at) == SPACE then return at + 1 end
  return at
end

-- The position after the value at `at` and the values left, or nil when it is not plain.
local function after_plain_value(text, at, left)
  left = left - 1
  if left < 0 then return nil end
  local c = string.byte(text, at)
  if c == QUOTE then
    local close = string.find(text, '"', at + 1, true)
    return close and close + 1, left
  elseif c == OPEN_OBJECT or c == OPEN_ARRAY then
    local object = c == OPEN_OBJECT
    local close = object and CLOSE_OBJECT or CLOSE_ARRAY
    at = at + 1
    if string.byte(text, at) == close then return at + 1, left end
    while true do
      if object then
        if string.byte(text, at) ~= QUOTE then return nil end
        local quote = string.find(text, '"', at + 1, true)
        if not quote or string.byte(text, quote + 1) ~= COLON then return nil end
        at = after_space(text, quote + 2)
      end
      at, left = after_plain_value(text, at, left)
      if not at then return nil end
      local after = string.byte(text, at)
      if after == close then return at + 1, left end
      if after ~= COMMA then return nil end
      at = after_space(text, at + 1)
    end
  elseif c == MINUS or (c ~= nil and c >= 48 and c <= 57) then
    local _, last = string.find(text, '^-?%d+', at)
    if not last then return nil end
    local digit = at
    if c == MINUS then digit = at + 1 end
    if string.byte(text, digit) == 48 and last > digit then return nil end  -- a leading zero
    local _, fraction = string.find(text, '^%.%d+', last + 1)
    return (fraction or last) + 1, left
  end
  local word = string.sub(text, at, at + 3)
  if word == 'true' or word == 'null' then return at + 4, left end
  if word == 'fals' and string.byte(text, at + 4) == 101 then return at + 5, left end
  return nil
end

-- Whether `text` is plain JSON, as above (false: decode it to tell).
local function plain_json(text)
  if type(text) ~= 'string' or #text < PLAIN_JSON_SIZE then return false end
  local c = string.byte(text, 1)
  if (c ~= OPEN_OBJECT and c ~= OPEN_ARRAY) or string.find(text, '\\', 1, true)
      or string.find(text, '\0', 1, true) then
    return false
  end
  return after_plain_value(text, 1, PLAIN_JSON_VALUES + 1) == #text + 1
end
