--- Text from a server, a file or the network, made safe to write to a terminal: C0 controls
--- (ESC, CR, BEL, backspace...), DEL, the C1 controls (U+0080..U+009F, and the raw bytes 0x80..0x9F
--- a non-UTF-8 terminal reads as CSI/OSC), the bidirectional formatting controls (U+202E...) and
--- any byte that is not valid UTF-8 become visible escapes (`\x1b`, `\u009b`, `\u202e`), so
--- such text cannot set the window title, write the clipboard (OSC 52), move the cursor, erase
--- what was printed before it or reorder how it reads.
local M = {}

local sbyte, schar, sfind, sformat = string.byte, string.char, string.find, string.format

local function hexbyte(c) return sformat("\\x%02x", sbyte(c)) end

local MASK = { [2] = 32, [3] = 16, [4] = 8 }

-- The length of the valid UTF-8 sequence at i (not a C1 control), or nil.
local function utf8_len(s, i)
  local c = sbyte(s, i)
  local len, min
  if c >= 0xC2 and c <= 0xDF then
    len, min = 2, 0x80
  elseif c >= 0xE0 and c <= 0xEF then
    len, min = 3, 0x800
  elseif c >= 0xF0 and c <= 0xF4 then
    len, min = 4, 0x10000
  else
    return nil
  end
  local cp = c % MASK[len]
  for k = 1, len - 1 do
    local b = sbyte(s, i + k)
    if b == nil or b < 0x80 or b > 0xBF then return nil end
    cp = cp * 64 + (b - 0x80)
  end
  if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then return nil end
  return len, cp
end

-- The bidirectional formatting controls (LRM, RLM, ALM, the embeddings, overrides and isolates):
-- on a terminal that shows bidirectional text they reorder what follows, so a command or URL
-- would read otherwise than it is ("Trojan Source").
local BIDI = { [0x061C] = true, [0x200E] = true, [0x200F] = true }
for cp = 0x202A, 0x202E do BIDI[cp] = true end
for cp = 0x2066, 0x2069 do BIDI[cp] = true end

-- Non-ASCII bytes: valid sequences stay, C1 controls, bidi controls and invalid bytes are escaped.
local function escape_high(s)
  if not sfind(s, "[\128-\255]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = sfind(s, "[\128-\255]", i)
    if j == nil then
      out[#out + 1] = s:sub(i)
      break
    end
    out[#out + 1] = s:sub(i, j - 1)
    local len, cp = utf8_len(s, j)
    if len and BIDI[cp] then
      out[#out + 1] = sformat("\\u%04x", cp) -- reorders what follows on a bidi terminal
      i = j + len
    elseif len and cp >= 0xA0 then
      out[#out + 1] = s:sub(j, j + len - 1)
      i = j + len
    elseif len then
      out[#out + 1] = sformat("\\u%04x", cp) -- a C1 control, UTF-8 encoded
      i = j + len
    else
      out[#out + 1] = hexbyte(schar(sbyte(s, j)))
      i = j + 1
    end
  end
  return table.concat(out)
end

--- s with every terminal control escaped. Tabs stay; newlines stay when opts.keep_newlines
--- (multi-line text such as a tool's result), else they are escaped too (one-line fields such as
--- a name or a URL). Non-strings go through tostring first.
---@param s any
---@param opts table|nil { keep_newlines = boolean }
---@return string
function M.escape(s, opts)
  if type(s) ~= "string" then s = tostring(s) end
  local pat = (opts and opts.keep_newlines) and "[%z\1-\8\11-\31\127]" or "[%z\1-\8\10-\31\127]"
  return escape_high((s:gsub(pat, hexbyte)))
end

--- escape() keeping newlines: for multi-line text.
---@param s any
---@return string
function M.escape_text(s)
  return M.escape(s, { keep_newlines = true })
end

return M
