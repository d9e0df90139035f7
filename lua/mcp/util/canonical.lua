--- Canonical JSON and its SHA-256 digest, byte-for-byte what the TypeScript reference hashes
--- (`canonicalJSON` + `hashCanonical` of @ai-sdk): object keys sorted by UTF-16 code units, no
--- whitespace, strings escaped exactly as JSON.stringify does, numbers spelled as JavaScript
--- spells them. Used by the tool and MCP App fingerprints.
local core = require("mcp.core")

-- Interpreted under LuaJIT: 2.1.0-beta3 (Neovim 0.7's, and this machine's luajit) compiled a trace
-- of json_type that, in Neovim under load, encoded a whole fingerprint input as "{}" or "[]", so
-- an unchanged pinned tool was held as changed (spec/nvim/pins_stress.lua). This code runs once
-- per tool call or listing: its speed does not matter, its answer must not depend on the JIT.
if jit then jit.off(true, true) end

local M = {}

--- A value that encodes as the bare token `undefined`, as a JavaScript template interpolating an
--- undefined value does (the tool fingerprint's missing title).
M.UNDEFINED = setmetatable({}, { __tostring = function() return "undefined" end })

local NULL = core.null
local floor, huge = math.floor, math.huge
local mtype = math.type
local sfmt, schar = string.format, string.char
local concat, sort = table.concat, table.sort

-- ---- numbers ---------------------------------------------------------------------------------

-- Shortest round-trip decimal digits of a finite, non-zero double: digits (no leading or
-- trailing zeros) and n, the position of the decimal point (value = 0.digits * 10^n).
local function shortest_digits(x)
  local s
  for p = 1, 17 do
    s = sfmt("%." .. (p - 1) .. "e", x)
    if p == 17 or tonumber(s) == x then break end
  end
  local mant, exp = s:match("^-?([^e]+)e([-+]%d+)$")
  local digits = mant:gsub("[^%d]", "") -- drops the decimal point, whatever the locale spells it
  digits = digits:gsub("0+$", "")
  if digits == "" then digits = "0" end
  return digits, tonumber(exp) + 1
end

--- The JavaScript spelling of a number (Number.prototype.toString, as JSON.stringify uses it).
--- Raises on NaN and infinities, as the reference does.
---@param x number
---@return string
function M.number(x)
  if x ~= x or x == huge or x == -huge then
    error("mcp.canonical: cannot serialize NaN or Infinity to canonical JSON", 2)
  end
  if mtype and mtype(x) == "integer" then
    if x > -9007199254740992 and x < 9007199254740992 then return sfmt("%d", x) end
    x = x + 0.0 -- beyond 2^53 JavaScript holds the nearest double
  end
  if x == 0 then return "0" end -- also -0
  if x == floor(x) and x > -1e15 and x < 1e15 then return sfmt("%.0f", x) end
  local sign = ""
  if x < 0 then sign, x = "-", -x end
  local digits, n = shortest_digits(x)
  local k = #digits
  if k <= n and n <= 21 then
    return sign .. digits .. string.rep("0", n - k)
  elseif 0 < n and n <= 21 then
    return sign .. digits:sub(1, n) .. "." .. digits:sub(n + 1)
  elseif -6 < n and n <= 0 then
    return sign .. "0." .. string.rep("0", -n) .. digits
  end
  local e = n - 1
  local es = e < 0 and ("e-" .. -e) or ("e+" .. e)
  if k == 1 then return sign .. digits .. es end
  return sign .. digits:sub(1, 1) .. "." .. digits:sub(2) .. es
end

-- ---- strings ---------------------------------------------------------------------------------

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
  ["\r"] = "\\r", ["\t"] = "\\t" }
for b = 0, 31 do
  local c = schar(b)
  if not ESCAPES[c] then ESCAPES[c] = sfmt("\\u%04x", b) end
end

--- A JSON string literal exactly as JSON.stringify writes it (UTF-8 passes through; only `"`,
--- `\` and control characters are escaped).
---@param s string
---@return string
function M.string(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return ESCAPES[c] end) .. '"'
end

-- ---- key order: UTF-16 code units ------------------------------------------------------------

-- UTF-8 byte order equals code point order; UTF-16 order differs only where a supplementary
-- character (4-byte UTF-8, a surrogate pair in UTF-16: 0xD800..) meets U+E000..U+FFFF (3-byte
-- UTF-8 with lead byte 0xEE or 0xEF). Decode to code units only when such bytes occur.
local utf16_units = require("mcp.util.utf8").utf16_units

local function key_less(a, b)
  if not (a:find("[\238-\244]") and b:find("[\238-\244]")) then return a < b end
  local ua, ub = utf16_units(a), utf16_units(b)
  for i = 1, math.min(#ua, #ub) do
    if ua[i] ~= ub[i] then return ua[i] < ub[i] end
  end
  return #ua < #ub
end
M.key_less = key_less

-- ---- values ----------------------------------------------------------------------------------

local function json_type(t)
  local mt = getmetatable(t)
  local jt = mt and mt.__jsontype
  if jt then return jt end
  if next(t) == nil then return "object" end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" then return "object" end
    n = n + 1
  end
  for i = 1, n do
    if t[i] == nil then error("mcp.canonical: a table mixes or skips array indices", 0) end
  end
  return "array"
end

local function write(v, out, depth)
  local tv = type(v)
  if v == nil or v == NULL then
    out[#out + 1] = "null"
  elseif v == M.UNDEFINED then
    out[#out + 1] = "undefined"
  elseif tv == "string" then
    out[#out + 1] = M.string(v)
  elseif tv == "number" then
    out[#out + 1] = M.number(v)
  elseif tv == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif tv == "table" then
    if depth > 512 then error("mcp.canonical: nesting too deep (a cycle?)", 0) end
    if json_type(v) == "array" then
      out[#out + 1] = "["
      local n = #v
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        write(v[i], out, depth + 1)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do
        if type(k) ~= "string" then
          error("mcp.canonical: an object key is a " .. type(k) .. ", not a string", 0)
        end
        keys[#keys + 1] = k
      end
      sort(keys, key_less)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = M.string(k)
        out[#out + 1] = ":"
        write(v[k], out, depth + 1)
      end
      out[#out + 1] = "}"
    end
  elseif tv == "userdata" and (rawequal(v, NULL) or tostring(v) == "vim.NIL") then
    out[#out + 1] = "null"
  else
    error("mcp.canonical: cannot encode a " .. tv, 0)
  end
end

--- Canonical JSON text of a value (raises on a value JSON cannot hold).
---@param v any
---@return string
function M.encode(v)
  local out = {}
  write(v, out, 0)
  return concat(out)
end

--- base64url without padding of SHA-256 over s (OpenSSL's libcrypto).
---@param s string
---@return string
function M.sha256_b64url(s)
  return core.base64_encode(core.sha256(s), "url")
end

--- base64url(SHA-256(canonical JSON of v)), the reference's hashCanonical.
---@param v any
---@return string
function M.digest(v)
  return M.sha256_b64url(M.encode(v))
end

return M
