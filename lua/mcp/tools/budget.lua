--- A result budget: content parts (mcp.convert_content) cut to at most a number of bytes, so a
--- tool that returns a whole log or database dump does not flood the model's context. Text is
--- cut at a UTF-8 character boundary; a binary part (image, audio, blob) that does not fit whole
--- is dropped. A text part at the end says how much was cut.
local M = {}

-- The bytes a part costs: its text, or its decoded data.
local function cost(p)
  if type(p.text) == "string" then return #p.text end
  if type(p.data) == "string" then return #p.data end
  return 0
end

-- s cut to at most n bytes, never inside a UTF-8 sequence.
local function utf8_prefix(s, n)
  if #s <= n then return s end
  local i = n + 1
  while i > 1 and s:byte(i) and s:byte(i) >= 0x80 and s:byte(i) < 0xC0 do i = i - 1 end
  return s:sub(1, i - 1)
end

local function copy(p)
  local c = {}
  for k, v in pairs(p) do c[k] = v end
  return c
end

--- Cut parts to max_bytes (text and binary payload bytes; the other fields are not counted).
--- Returns the parts unchanged when they fit; else a new array with what fits and, last, a
--- marker {type="text", text="[result cut: N of M bytes not shown ...]", cut={bytes=N,
--- total=M, max_bytes=max_bytes}}.
---@param parts table[] content parts
---@param max_bytes integer at least 0
---@return table[] parts, integer cut the bytes left out (0 when nothing was)
function M.cut(parts, max_bytes)
  if type(parts) ~= "table" then error("mcp.tools.cut_result: parts must be an array", 2) end
  if type(max_bytes) ~= "number" or max_bytes < 0 or max_bytes ~= math.floor(max_bytes) then
    error("mcp.tools.cut_result: max_bytes must be an integer >= 0", 2)
  end
  local total = 0
  for _, p in ipairs(parts) do total = total + cost(p) end
  if total <= max_bytes then return parts, 0 end
  local out, left = {}, max_bytes
  for _, p in ipairs(parts) do
    local c = cost(p)
    if c <= left then
      out[#out + 1] = p
      left = left - c
    elseif type(p.text) == "string" and left > 0 then
      local q = copy(p)
      q.text = utf8_prefix(p.text, left)
      out[#out + 1] = q
      left = left - #q.text
    end
  end
  local cut = total - (max_bytes - left)
  out[#out + 1] = {
    type = "text",
    text = ("[result cut: %d of %d bytes not shown (limit %d bytes)]"):format(cut, total, max_bytes),
    cut = { bytes = cut, total = total, max_bytes = max_bytes },
  }
  return out, cut
end

return M
