--- The one UTF-8 decoder of the Lua layer (Lua 5.1 has no utf8 library): code points for the
--- JSON Schema regex engine, UTF-16 code units for canonical JSON's key order. Lenient: a byte
--- that starts no valid sequence (a stray continuation byte) is a code point of its own, and a
--- sequence cut short at the end of the string is read byte by byte.
local M = {}

local sbyte = string.byte
local floor = math.floor

--- The code points of s, in order.
---@param s string
---@return integer[]
function M.codes(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = sbyte(s, i)
    local cp, len = c, 1
    if c >= 0xF0 and i + 3 <= n then
      local c2, c3, c4 = sbyte(s, i + 1, i + 3)
      cp, len = (c - 0xF0) * 0x40000 + (c2 - 0x80) * 0x1000 + (c3 - 0x80) * 0x40 + (c4 - 0x80), 4
    elseif c >= 0xE0 and i + 2 <= n then
      local c2, c3 = sbyte(s, i + 1, i + 2)
      cp, len = (c - 0xE0) * 0x1000 + (c2 - 0x80) * 0x40 + (c3 - 0x80), 3
    elseif c >= 0xC0 and i + 1 <= n then
      cp, len = (c - 0xC0) * 0x40 + (sbyte(s, i + 1) - 0x80), 2
    end
    out[#out + 1] = cp
    i = i + len
  end
  return out
end

--- The UTF-16 code units of s (a code point above U+FFFF becomes a surrogate pair), as
--- JavaScript strings hold them.
---@param s string
---@return integer[]
function M.utf16_units(s)
  local out = {}
  for _, cp in ipairs(M.codes(s)) do
    if cp >= 0x10000 then
      local v = cp - 0x10000
      out[#out + 1] = 0xD800 + floor(v / 0x400)
      out[#out + 1] = 0xDC00 + v % 0x400
    else
      out[#out + 1] = cp
    end
  end
  return out
end

return M
