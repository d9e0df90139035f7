--- A small backtracking matcher for the ECMAScript regular expressions JSON Schema's `pattern`
--- and `patternProperties` use. Works on Unicode code points of UTF-8 text. Supported: literals,
--- `.`, classes `[...]` with ranges and negation, `\d \D \w \W \s \S \b \B`, escapes (`\n`,
--- `\xHH`, `\uHHHH`, `\u{H...}`, `\cX`, punctuation), `^ $`, groups `(...)`, `(?:...)`, named
--- groups, lookahead `(?=...)`/`(?!...)`, alternation, and the quantifiers `* + ? {n} {n,}
--- {n,m}` with their lazy forms. Backreferences, lookbehind and `\p{...}` are reported as
--- unsupported, and so is a match that exceeds its step budget, so that callers can fail open.
local M = {}

local utf8_codes = require("mcp.util.utf8").codes
M.utf8_codes = utf8_codes

local function is_digit(c) return c >= 48 and c <= 57 end
local function is_word(c)
  return (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95
end
local SPACES = { [9] = true, [10] = true, [11] = true, [12] = true, [13] = true, [32] = true, [0xA0] = true,
  [0x1680] = true, [0x2028] = true, [0x2029] = true, [0x202F] = true, [0x205F] = true, [0x3000] = true,
  [0xFEFF] = true }
local function is_space(c) return SPACES[c] == true or (c >= 0x2000 and c <= 0x200A) end
local function is_line_end(c) return c == 10 or c == 13 or c == 0x2028 or c == 0x2029 end

local function unsupported(what)
  error({ unsupported = what }, 0)
end

-- ---- parser ----------------------------------------------------------------------------------

local Parser = {}
Parser.__index = Parser

function Parser:peek(o) return self.p[self.i + (o or 0)] end
function Parser:next()
  local c = self.p[self.i]
  self.i = self.i + 1
  return c
end
function Parser:fail(msg) error({ syntax = msg .. " at character " .. self.i }, 0) end

local function hexval(c)
  if c == nil then return nil end
  if c >= 48 and c <= 57 then return c - 48 end
  if c >= 65 and c <= 70 then return c - 55 end
  if c >= 97 and c <= 102 then return c - 87 end
  return nil
end

function Parser:hex(n)
  local v = 0
  for _ = 1, n do
    local h = hexval(self:peek())
    if h == nil then return nil end
    v = v * 16 + h
    self.i = self.i + 1
  end
  return v
end

-- Class escapes: the predicate and whether it is negated (\D, \W, \S).
local PRED_ESCAPES = {
  d = { is_digit, false }, D = { is_digit, true }, w = { is_word, false }, W = { is_word, true },
  s = { is_space, false }, S = { is_space, true },
}
-- Control escapes: their code points.
local CONTROL_ESCAPES = { n = 10, r = 13, t = 9, v = 11, f = 12 }

-- \u after the 'u': \u{...} or four hex digits; anything else is a literal 'u' (Annex B).
function Parser:unicode_escape()
  if self:peek() == 123 then -- \u{...}
    self.i = self.i + 1
    local v, n = 0, 0
    while self:peek() and self:peek() ~= 125 do
      local h = hexval(self:next())
      if h == nil then self:fail("bad \\u{...} escape") end
      v, n = v * 16 + h, n + 1
    end
    if self:next() ~= 125 or n == 0 then self:fail("bad \\u{...} escape") end
    return v
  end
  return self:hex(4) or 117
end

-- \c after the 'c': a control letter, or a literal backslash followed by c (Annex B).
function Parser:control_escape()
  local l = self:peek()
  if l and ((l >= 65 and l <= 90) or (l >= 97 and l <= 122)) then
    self.i = self.i + 1
    return l % 32
  end
  return 92
end

-- An escape after '\'. Returns a code point, or a predicate table {pred=fn, neg=bool}, or an
-- assertion node (outside classes only).
function Parser:escape(in_class)
  local c = self:next()
  if c == nil then self:fail("trailing backslash") end
  local ch = string.char(c < 128 and c or 63)
  local pred = PRED_ESCAPES[ch]
  if pred then return { pred = pred[1], neg = pred[2] or nil } end
  if ch == "b" then
    if in_class then return 8 end
    return { t = "wordb", neg = false }
  end
  if ch == "B" and not in_class then return { t = "wordb", neg = true } end
  if CONTROL_ESCAPES[ch] then return CONTROL_ESCAPES[ch] end
  if ch == "0" and not (self:peek() and is_digit(self:peek())) then return 0 end
  if ch == "x" then return self:hex(2) or 120 end
  if ch == "u" then return self:unicode_escape() end
  if ch == "c" then return self:control_escape() end
  if ch == "p" or ch == "P" then unsupported("\\" .. ch .. "{...} property escapes") end
  if ch == "k" and self:peek() == 60 then unsupported("named backreferences") end
  if is_digit(c) and c ~= 48 then
    if in_class then return c end
    unsupported("backreferences")
  end
  return c -- an escaped literal
end

function Parser:class()
  local node = { t = "class", ranges = {}, preds = {} }
  if self:peek() == 94 then
    node.neg = true
    self.i = self.i + 1
  end
  while true do
    local c = self:next()
    if c == nil then self:fail("unterminated character class") end
    if c == 93 then break end -- also right after '[': [] matches nothing, [^] anything
    local lo
    if c == 92 then
      lo = self:escape(true)
    else
      lo = c
    end
    if type(lo) == "table" then
      node.preds[#node.preds + 1] = lo
    elseif self:peek() == 45 and self:peek(1) and self:peek(1) ~= 93 then
      self.i = self.i + 1
      local hc = self:next()
      local hi = hc
      if hc == 92 then hi = self:escape(true) end
      if type(hi) == "table" then -- [a-\d]: '-' is literal (Annex B)
        node.ranges[#node.ranges + 1] = { lo, lo }
        node.ranges[#node.ranges + 1] = { 45, 45 }
        node.preds[#node.preds + 1] = hi
      else
        if hi < lo then self:fail("range out of order in character class") end
        node.ranges[#node.ranges + 1] = { lo, hi }
      end
    else
      node.ranges[#node.ranges + 1] = { lo, lo }
    end
  end
  return node
end

function Parser:quantifier()
  local c = self:peek()
  local min, max
  if c == 42 then min, max = 0, math.huge
  elseif c == 43 then min, max = 1, math.huge
  elseif c == 63 then min, max = 0, 1
  elseif c == 123 then
    local save = self.i
    self.i = self.i + 1
    local function num()
      local v, any = 0, false
      while self:peek() and is_digit(self:peek()) do
        v, any = v * 10 + (self:next() - 48), true
      end
      return any and v or nil
    end
    min = num()
    if min ~= nil then
      if self:peek() == 44 then
        self.i = self.i + 1
        max = num() or math.huge
      else
        max = min
      end
    end
    if min == nil or self:peek() ~= 125 then
      self.i = save -- not a quantifier: a literal '{' (Annex B)
      return nil
    end
    if max < min then self:fail("numbers out of order in {} quantifier") end
  else
    return nil
  end
  self.i = self.i + 1
  local lazy = false
  if self:peek() == 63 then
    lazy = true
    self.i = self.i + 1
  end
  return min, max, lazy
end

function Parser:alternation()
  local alts = { self:sequence() }
  while self:peek() == 124 do
    self.i = self.i + 1
    alts[#alts + 1] = self:sequence()
  end
  return alts
end

-- A group after its '(': (...), (?:...), (?=...), (?!...), (?<name>...).
function Parser:group()
  local kind = "group"
  if self:peek() == 63 then
    local k = self:peek(1)
    if k == 58 then self.i = self.i + 2
    elseif k == 61 then kind = "ahead"; self.i = self.i + 2
    elseif k == 33 then kind = "nahead"; self.i = self.i + 2
    elseif k == 60 and (self:peek(2) == 61 or self:peek(2) == 33) then unsupported("lookbehind")
    elseif k == 60 then -- (?<name>...)
      self.i = self.i + 2
      while self:peek() and self:peek() ~= 62 do self.i = self.i + 1 end
      if self:next() ~= 62 then self:fail("bad group name") end
    else self:fail("bad group") end
  end
  local alts = self:alternation()
  if self:next() ~= 41 then self:fail("missing )") end
  return { t = kind, alts = alts }
end

-- An escape outside a class as a node: an assertion, a one-predicate class or a character.
function Parser:escape_node()
  local e = self:escape(false)
  if type(e) ~= "table" then return { t = "char", cp = e } end
  if e.t then return e end
  return { t = "class", ranges = {}, preds = { e } }
end

-- The atom that starts with c (already consumed).
local ATOMS = { [94] = "bol", [36] = "eol", [46] = "any" }
function Parser:atom(c)
  if ATOMS[c] then return { t = ATOMS[c] } end
  if c == 91 then return self:class() end
  if c == 40 then return self:group() end
  if c == 41 then self:fail("unmatched )") end
  if c == 92 then return self:escape_node() end
  if c == 42 or c == 43 or c == 63 then self:fail("nothing to repeat") end
  return { t = "char", cp = c }
end

function Parser:sequence()
  local seq = {}
  while true do
    local c = self:peek()
    if c == nil or c == 124 or c == 41 then return seq end
    self.i = self.i + 1
    local node = self:atom(c)
    if node.t ~= "bol" and node.t ~= "eol" and node.t ~= "wordb" then
      local min, max, lazy = self:quantifier()
      if min ~= nil then
        if node.t == "ahead" or node.t == "nahead" then self:fail("nothing to repeat") end
        node = { t = "rep", node = node, min = min, max = max, lazy = lazy }
      end
    end
    seq[#seq + 1] = node
  end
end

-- ---- matcher ---------------------------------------------------------------------------------

local function class_has(node, c)
  local hit = false
  for _, r in ipairs(node.ranges) do
    if c >= r[1] and c <= r[2] then hit = true break end
  end
  if not hit then
    for _, p in ipairs(node.preds) do
      local v = p.pred(c)
      if p.neg then v = not v end
      if v then hit = true break end
    end
  end
  if node.neg then return not hit end
  return hit
end

local BUDGET = 200000

local function matcher(s)
  local n = #s
  local steps = 0
  local m_seq, m_node

  local function m_alts(alts, pos, k)
    for _, seq in ipairs(alts) do
      local r = m_seq(seq, 1, pos, k)
      if r then return r end
    end
    return nil
  end

  local function m_rep(node, count, pos, k)
    local function again(p)
      if p == pos then return nil end -- an empty iteration cannot make progress
      return m_rep(node, count + 1, p, k)
    end
    if count < node.min then
      return m_node(node.node, pos, function(p)
        if p == pos and count + 1 >= node.min then return m_rep(node, node.min, p, k) end
        return m_rep(node, count + 1, p, k)
      end)
    end
    if node.lazy then
      local r = k(pos)
      if r then return r end
      if count < node.max then return m_node(node.node, pos, again) end
      return nil
    end
    if count < node.max then
      local r = m_node(node.node, pos, again)
      if r then return r end
    end
    return k(pos)
  end

  m_node = function(node, pos, k)
    steps = steps + 1
    if steps > BUDGET then unsupported("too many steps") end
    local t = node.t
    if t == "char" then
      if pos <= n and s[pos] == node.cp then return k(pos + 1) end
      return nil
    elseif t == "any" then
      if pos <= n and not is_line_end(s[pos]) then return k(pos + 1) end
      return nil
    elseif t == "class" then
      if pos <= n and class_has(node, s[pos]) then return k(pos + 1) end
      return nil
    elseif t == "bol" then
      if pos == 1 then return k(pos) end
      return nil
    elseif t == "eol" then
      if pos == n + 1 then return k(pos) end
      return nil
    elseif t == "wordb" then
      local a = pos > 1 and is_word(s[pos - 1])
      local b = pos <= n and is_word(s[pos])
      if (a ~= b) ~= node.neg then return k(pos) end
      return nil
    elseif t == "group" then
      return m_alts(node.alts, pos, k)
    elseif t == "ahead" then
      if m_alts(node.alts, pos, function(p) return p end) then return k(pos) end
      return nil
    elseif t == "nahead" then
      if m_alts(node.alts, pos, function(p) return p end) then return nil end
      return k(pos)
    elseif t == "rep" then
      return m_rep(node, 0, pos, k)
    end
    error("regex: unknown node " .. tostring(t))
  end

  m_seq = function(seq, i, pos, k)
    if i > #seq then return k(pos) end
    return m_node(seq[i], pos, function(p) return m_seq(seq, i + 1, p, k) end)
  end

  return m_alts
end

-- ---- API -------------------------------------------------------------------------------------

local cache = setmetatable({}, { __mode = "v" })

--- Compile an ECMAScript pattern. Returns the program, or nil and a message; the third value is
--- true when the pattern uses unsupported syntax (rather than being invalid).
---@param pattern string
---@return table|nil prog, string|nil err, boolean|nil unsupported
function M.compile(pattern)
  local hit = cache[pattern]
  if hit then return hit end
  local p = setmetatable({ p = utf8_codes(pattern), i = 1 }, Parser)
  local ok, res = pcall(function()
    local alts = p:alternation()
    if p:peek() ~= nil then p:fail("unmatched )") end
    return alts
  end)
  if not ok then
    if type(res) == "table" and res.unsupported then return nil, "unsupported: " .. res.unsupported, true end
    if type(res) == "table" and res.syntax then return nil, res.syntax end
    return nil, tostring(res)
  end
  local prog = { alts = res, source = pattern }
  cache[pattern] = prog
  return prog
end

--- Does the pattern match somewhere in s (JSON Schema semantics: unanchored search)? Returns
--- true/false, or nil and a message when the pattern is invalid, unsupported or too costly.
---@param pattern string|table a pattern or a compiled program
---@param s string
---@return boolean|nil, string|nil
function M.test(pattern, s)
  local prog, err = pattern
  if type(pattern) == "string" then
    prog, err = M.compile(pattern)
    if not prog then return nil, err end
  end
  local codes = utf8_codes(s)
  local m_alts = matcher(codes)
  local ok, res = pcall(function()
    for start = 1, #codes + 1 do
      if m_alts(prog.alts, start, function(p) return p end) then return true end
    end
    return false
  end)
  if not ok then
    if type(res) == "table" and res.unsupported then return nil, "pattern too costly to evaluate" end
    return nil, "pattern could not be evaluated: " .. tostring(res)
  end
  return res
end

return M
