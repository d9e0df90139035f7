--- A small, strict YAML reader for the frontmatter of a skill's SKILL.md (the subset that Agent
--- Skills use): block mappings and sequences, plain, single- and double-quoted scalars (also over
--- several lines), literal and folded block scalars (`|`, `>`, with chomping and indentation
--- indicators), one-line or multi-line flow collections (`[a, b]`, `{k: v}`), comments, and the
--- YAML 1.2 core schema for plain scalars (null, booleans, integers, floats, strings).
---
--- Anything else is refused with an error naming the line: anchors, aliases, tags, directives,
--- complex keys, merge keys, tabs in indentation, duplicate keys, more than one document, and
--- plain scalars YAML itself rejects (`key: a: b`). Refusing is the safe answer here: the parsed
--- frontmatter is compared with the server's listing before a skill is loaded, and a construct
--- read differently by two parsers must not slip through.
local json = require("mcp.json")

local M = {}

local NULL = json.null
-- Deepest nesting of collections accepted (frontmatter is shallow; this bounds the recursion).
local MAX_DEPTH = 64

-- Raised inside the parser, caught by parse_yaml.
local function fail(lineno, msg)
  error({ frontmatter_error = true, line = lineno, message = msg }, 0)
end

-- ---- scalars -----------------------------------------------------------------------------------

local function utf8_char(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then
    return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40)
  end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
  end
  return string.char(0xF0 + math.floor(cp / 0x40000), 0x80 + math.floor(cp / 0x1000) % 0x40,
    0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end

local SIMPLE_ESCAPES = {
  ["0"] = "\0", a = "\a", b = "\b", t = "\t", ["\t"] = "\t", n = "\n", v = "\v", f = "\f", r = "\r",
  e = "\27", [" "] = " ", ['"'] = '"', ["/"] = "/", ["\\"] = "\\",
  N = utf8_char(0x85), _ = utf8_char(0xA0), L = utf8_char(0x2028), P = utf8_char(0x2029),
}
local HEX_ESCAPES = { x = 2, u = 4, U = 8 }

-- The core schema's fixed words: null, booleans, infinities and NaN.
local PLAIN_WORDS = {
  [""] = NULL, ["~"] = NULL, null = NULL, Null = NULL, NULL = NULL,
  ["true"] = true, True = true, TRUE = true, ["false"] = false, False = false, FALSE = false,
  [".inf"] = math.huge, [".Inf"] = math.huge, [".INF"] = math.huge,
  ["+.inf"] = math.huge, ["+.Inf"] = math.huge, ["+.INF"] = math.huge,
  ["-.inf"] = -math.huge, ["-.Inf"] = -math.huge, ["-.INF"] = -math.huge,
  [".nan"] = 0 / 0, [".NaN"] = 0 / 0, [".NAN"] = 0 / 0,
}

--- Plain scalar -> Lua value by the YAML 1.2 core schema.
local function resolve_plain(s)
  local word = PLAIN_WORDS[s]
  if word ~= nil then return word end
  if s:match("^[-+]?%d+$") then
    local n = tonumber(s)
    if n ~= nil then return n end
  end
  if s:match("^0o[0-7]+$") then return tonumber(s:sub(3), 8) end
  if s:match("^0x%x+$") then return tonumber(s:sub(3), 16) end
  if s:match("^[-+]?%.%d+$") or s:match("^[-+]?%d+%.?%d*$")
    or s:match("^[-+]?%.%d+[eE][-+]?%d+$") or s:match("^[-+]?%d+%.?%d*[eE][-+]?%d+$") then
    local n = tonumber(s)
    if n ~= nil then return n end
  end
  return s
end
M.resolve_plain = resolve_plain

-- The first character of a plain scalar may not be one of these (YAML indicators).
local function check_plain_start(s, lineno)
  local c = s:sub(1, 1)
  if c == "&" then fail(lineno, "anchors (&) are not supported") end
  if c == "*" then fail(lineno, "aliases (*) are not supported") end
  if c == "!" then fail(lineno, "tags (!) are not supported") end
  if c == "@" or c == "`" then fail(lineno, "a plain scalar cannot start with '" .. c .. "'") end
  if c == "%" then fail(lineno, "directives (%) are not supported") end
  if c == "," or c == "]" or c == "}" then fail(lineno, "unexpected '" .. c .. "'") end
  if (c == "?" or c == ":" or c == "-") and (#s == 1 or s:sub(2, 2):match("%s")) then
    if c == "?" then fail(lineno, "complex keys (?) are not supported") end
    fail(lineno, "unexpected '" .. c .. "'")
  end
end

--- Remove a trailing comment (" #...") from plain text; the text never holds quotes here.
local function strip_comment(s)
  if s:sub(1, 1) == "#" then return "" end
  local p = s:find("%s#")
  if p then s = s:sub(1, p - 1) end
  return (s:gsub("%s+$", ""))
end

-- ---- lines ---------------------------------------------------------------------------------------

-- lines[i] = {no = source line number, indent = n, text = content after the indentation}
local function split_lines(src, first_lineno)
  local lines = {}
  local no = first_lineno - 1
  for raw in (src .. "\n"):gmatch("([^\n]*)\n") do
    no = no + 1
    local ws, rest = raw:match("^([ \t]*)(.-)%s*$")
    if rest ~= "" and ws:find("\t") then fail(no, "tabs are not allowed in indentation") end
    lines[#lines + 1] = { no = no, indent = #ws, text = rest, raw = raw }
  end
  return lines
end

local function is_blank(line)
  return line.text == "" or line.text:sub(1, 1) == "#"
end

local Parser = {}
Parser.__index = Parser

function Parser:next_content(i)
  local lines = self.lines
  while lines[i] and is_blank(lines[i]) do i = i + 1 end
  return i
end

-- ---- quoted scalars (possibly over several lines) -----------------------------------------------

--- Read the characters of a quoted scalar from s at pos (just after the opening quote q) up to
--- its closing quote or the end of s, appending them to out. Returns the position after the
--- closing quote, or nil at the end of s; a double-quoted scalar's line that ends in an unescaped
--- backslash then leaves LINEJOIN last in out. In a flow collection (in_flow: s is the joined
--- collection) a backslash at the end is an unknown escape and surrogate or out-of-range escapes
--- are refused; elsewhere a surrogate pair is one code point.
local LINEJOIN = "\0LINEJOIN"
local function read_quoted(s, pos, q, out, lineno, in_flow)
  while true do
    local c = s:sub(pos, pos)
    if c == "" then return nil end
    if c == q then
      if q == "'" and s:sub(pos + 1, pos + 1) == "'" then
        out[#out + 1] = "'"
        pos = pos + 2
      else
        return pos + 1
      end
    elseif c == "\\" and q == '"' then
      local e = s:sub(pos + 1, pos + 1)
      if e == "" and not in_flow then
        out[#out + 1] = LINEJOIN
        pos = pos + 1
      elseif SIMPLE_ESCAPES[e] then
        out[#out + 1] = SIMPLE_ESCAPES[e]
        pos = pos + 2
      elseif HEX_ESCAPES[e] then
        local n = HEX_ESCAPES[e]
        local hex = s:sub(pos + 2, pos + 1 + n)
        if #hex ~= n or not hex:match("^%x+$") then fail(lineno, "bad \\" .. e .. " escape") end
        local cp = tonumber(hex, 16)
        pos = pos + 2 + n
        if e == "x" then
          out[#out + 1] = string.char(cp)
        else
          if in_flow and (cp >= 0xD800 and cp <= 0xDFFF or cp > 0x10FFFF) then
            fail(lineno, "surrogate or out-of-range escapes are not supported in flow collections")
          end
          if cp >= 0xD800 and cp <= 0xDBFF then
            local lo = s:match("^\\u(%x%x%x%x)", pos)
            lo = lo and tonumber(lo, 16)
            if not lo or lo < 0xDC00 or lo > 0xDFFF then fail(lineno, "unpaired surrogate escape") end
            cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
            pos = pos + 6
          elseif cp >= 0xDC00 and cp <= 0xDFFF or cp > 0x10FFFF then
            fail(lineno, "bad code point escape")
          end
          out[#out + 1] = utf8_char(cp)
        end
      else
        fail(lineno, "unknown escape \\" .. e)
      end
    else
      out[#out + 1] = c
      pos = pos + 1
    end
  end
end

--- Read a quoted scalar starting at column `col` of self.lines[i].text. Returns the string, the
--- index of the line holding the closing quote and the text after it.
function Parser:quoted(i, col, min_indent)
  local lines = self.lines
  local text = lines[i].text
  local q = text:sub(col, col)
  local out = {}
  local pos = col + 1
  while true do
    local after = read_quoted(text, pos, q, out, lines[i].no)
    if after then return table.concat(out), i, text:sub(after) end
    -- line break inside the scalar: fold
    local trailing_escape = false
    if q == '"' then
      -- a line ending in an unescaped backslash joins without a space
      if out[#out] == LINEJOIN then
        out[#out] = nil
        trailing_escape = true
      end
    end
    if not trailing_escape then
      -- trailing white space of the line is not content
      while #out > 0 and (out[#out] == " " or out[#out] == "\t") do out[#out] = nil end
    end
    local blanks = 0
    i = i + 1
    while lines[i] and lines[i].text == "" do
      blanks = blanks + 1
      i = i + 1
    end
    if not lines[i] then fail(lines[#lines].no, "unterminated quoted scalar") end
    if lines[i].indent < min_indent then fail(lines[i].no, "bad indentation inside a quoted scalar") end
    if lines[i].text:match("^%-%-%-") or lines[i].text:match("^%.%.%.") then
      fail(lines[i].no, "document marker inside a quoted scalar")
    end
    if not trailing_escape then
      out[#out + 1] = blanks > 0 and ("\n"):rep(blanks) or " "
    end
    text = lines[i].text
    pos = 1
  end
end

--- After a quoted scalar or a flow collection only a comment may follow on its line.
local function expect_end(rest, lineno)
  if rest:match("^%s*$") or rest:match("^%s+#") then return end
  fail(lineno, "unexpected text after a value: " .. rest)
end

-- ---- flow collections ----------------------------------------------------------------------------

--- The items of a flow collection (kind "sequence" or "mapping") in s from pos, just after its
--- opening bracket, to its closing one: item(pos) reads one item and returns the position after
--- it. Returns the position after the closing bracket.
local function flow_items(s, pos, lineno, close, kind, item)
  while true do
    pos = s:find("[^ ]", pos) or #s + 1
    local d = s:sub(pos, pos)
    if d == close then return pos + 1 end
    if d == "" then fail(lineno, "unterminated flow " .. kind) end
    pos = s:find("[^ ]", item(pos)) or #s + 1
    d = s:sub(pos, pos)
    if d == "," then
      pos = pos + 1
    elseif d ~= close then
      fail(lineno, "expected ',' or '" .. close .. "' in a flow " .. kind)
    end
  end
end

--- Flow parser over one string (the lines of a multi-line collection joined with spaces).
local function flow_value(s, pos, lineno, depth)
  depth = (depth or 0) + 1
  if depth > MAX_DEPTH then fail(lineno, "flow collections nested too deeply") end
  pos = s:find("[^ ]", pos) or #s + 1
  local c = s:sub(pos, pos)
  if c == "[" then
    local arr = json.array()
    return arr, flow_items(s, pos + 1, lineno, "]", "sequence", function(p)
      local v
      v, p = flow_value(s, p, lineno, depth)
      arr[#arr + 1] = v
      return p
    end)
  elseif c == "{" then
    local obj = json.object()
    return obj, flow_items(s, pos + 1, lineno, "}", "mapping", function(p)
      local key, v
      key, p = flow_value(s, p, lineno, depth)
      if type(key) ~= "string" then key = tostring(key == NULL and "null" or key) end
      p = s:find("[^ ]", p) or #s + 1
      if s:sub(p, p) ~= ":" then fail(lineno, "expected ':' in a flow mapping") end
      v, p = flow_value(s, p + 1, lineno, depth)
      if obj[key] ~= nil then fail(lineno, "duplicate key '" .. key .. "'") end
      obj[key] = v
      return p
    end)
  elseif c == '"' or c == "'" then
    -- quoted scalar on the joined string (no line breaks left in it)
    local out = {}
    local after = read_quoted(s, pos + 1, c, out, lineno, true)
    if not after then fail(lineno, "unterminated quoted scalar") end
    return table.concat(out), after
  else
    -- plain scalar: up to , [ ] { } or ": "
    local p = pos
    while p <= #s do
      local ch = s:sub(p, p)
      if ch == "," or ch == "]" or ch == "}" or ch == "[" or ch == "{" then break end
      if ch == ":" and (p == #s or s:sub(p + 1, p + 1):match("[ ,%]}]")) then break end
      if ch == "#" and p > pos and s:sub(p - 1, p - 1) == " " then
        fail(lineno, "comments inside flow collections are not supported")
      end
      p = p + 1
    end
    local raw = s:sub(pos, p - 1):gsub("%s+$", "")
    if raw == "" then fail(lineno, "empty value in a flow collection") end
    check_plain_start(raw, lineno)
    return resolve_plain(raw), p
  end
end

--- A flow collection starting at self.lines[i].text:sub(col), maybe over several lines. The
--- lines are scanned once each (state kept across them) to find where the collection ends.
function Parser:flow(i, col, min_indent)
  local lines = self.lines
  local first_no = lines[i].no
  local depth, q, escaped = 0, nil, false
  local parts, offset = {}, 0
  local function scan(s)
    local p = 1
    while p <= #s do
      local ch = s:sub(p, p)
      if escaped then
        escaped = false
      elseif q then
        if ch == "\\" and q == '"' then
          escaped = true
        elseif ch == q then
          if q == "'" and s:sub(p + 1, p + 1) == "'" then p = p + 1 else q = nil end
        end
      elseif ch == '"' or ch == "'" then
        q = ch
      elseif ch == "[" or ch == "{" then
        depth = depth + 1
        if depth > MAX_DEPTH then fail(first_no, "flow collections nested too deeply") end
      elseif ch == "]" or ch == "}" then
        depth = depth - 1
        if depth == 0 then return p end
      end
      p = p + 1
    end
    return nil
  end
  local text = lines[i].text:sub(col)
  local stop = scan(text)
  parts[1] = text
  while not stop do
    offset = offset + #parts[#parts]
    i = i + 1
    if not lines[i] then fail(first_no, "unterminated flow collection") end
    text = lines[i].text
    if text ~= "" then
      if lines[i].indent < min_indent then fail(lines[i].no, "bad indentation inside a flow collection") end
      text = " " .. text
      escaped = false -- a line break ends an escape-less backslash run too
      parts[#parts + 1] = text
      stop = scan(text)
    end
  end
  local joined = table.concat(parts)
  stop = offset + stop
  local v, pos = flow_value(joined:sub(1, stop), 1, first_no, 0)
  if pos ~= stop + 1 then fail(first_no, "unexpected text in a flow collection") end
  expect_end(joined:sub(stop + 1), lines[i].no)
  return v, i + 1
end

-- ---- block scalars -------------------------------------------------------------------------------

-- A block scalar header's indicators after the style: chomp ("", "-", "+") and explicit indentation
-- ("" or a digit), either order.
local function block_indicators(rest, lineno)
  local chomp, explicit
  local a, b = rest:match("^([+-]?)([1-9]?)")
  local c, d = rest:match("^([1-9]?)([+-]?)")
  local used
  if a ~= "" or b ~= "" then chomp, explicit, used = a, b, #a + #b else chomp, explicit, used = d, c, #c + #d end
  expect_end(rest:sub(used + 1), lineno)
  return chomp, explicit
end

-- The body lines of a block scalar from line j: the lines and the content indentation (nil when
-- the body is only blank lines), and the index of the next line.
local function block_body(lines, j, parent_indent, content_indent)
  local body = {}
  while lines[j] do
    local l = lines[j]
    if l.text ~= "" then
      if content_indent == nil then
        if l.indent <= parent_indent then break end
        content_indent = l.indent
      end
      if l.indent < content_indent then break end
    end
    body[#body + 1] = l
    j = j + 1
  end
  return body, content_indent, j
end

-- Folded style (">"): lines joined by spaces, except around blank and more-indented lines.
local function fold(texts, last)
  local out, prev, blanks = {}, nil, 0
  for k = 1, last do
    local t = texts[k]
    if t == "" then
      blanks = blanks + 1
    else
      local more = t:match("^[ \t]") ~= nil
      if prev == nil then
        out[#out + 1] = ("\n"):rep(blanks) .. t
      elseif prev == "normal" and not more then
        out[#out + 1] = (blanks == 0 and " " or ("\n"):rep(blanks)) .. t
      else
        out[#out + 1] = "\n" .. ("\n"):rep(blanks) .. t
      end
      prev = more and "more" or "normal"
      blanks = 0
    end
  end
  return table.concat(out)
end

-- The final line breaks by the chomping indicator: strip ("-"), keep ("+") or clip ("").
local function chomped(value, chomp, last, trailing)
  if last > 0 then
    if chomp == "-" then return value end
    if chomp == "+" then return value .. "\n" .. ("\n"):rep(trailing) end
    return value .. "\n"
  end
  if chomp == "+" then return ("\n"):rep(trailing) end
  return value
end

function Parser:block_scalar(i, header, parent_indent)
  local lines = self.lines
  local style = header:sub(1, 1)
  local chomp, explicit = block_indicators(header:sub(2), lines[i].no)
  local body, content_indent, j = block_body(lines, i + 1, parent_indent,
    explicit ~= "" and parent_indent + tonumber(explicit) or nil)
  -- trailing blank lines are not part of the body text but count for `keep` chomping
  local texts = {}
  for k, l in ipairs(body) do
    if l.text == "" then
      local extra = content_indent and #l.raw > content_indent and l.raw:sub(content_indent + 1) or ""
      texts[k] = extra
    else
      texts[k] = l.raw:sub((content_indent or 0) + 1)
    end
  end
  local last = #texts
  while last > 0 and texts[last]:match("^%s*$") and body[last].text == "" do last = last - 1 end
  local value = style == "|" and table.concat(texts, "\n", 1, last) or fold(texts, last)
  return chomped(value, chomp, last, #texts - last), j
end

-- ---- block structure -----------------------------------------------------------------------------

--- The value after "key:" or "- " (text `rest` on line i, whose node is indented at `indent`).
--- Returns the value and the index of the next line to read.
function Parser:inline_value(i, rest, indent)
  local lines = self.lines
  local col = #lines[i].text - #rest + 1
  if rest == "" or rest:sub(1, 1) == "#" then
    local j = self:next_content(i + 1)
    local l = lines[j]
    if l and l.indent > indent then return self:block(j, l.indent) end
    if l and l.indent == indent and self.in_mapping_value and (l.text:match("^%-%s") or l.text == "-") then
      return self:sequence(j, indent) -- "key:" followed by "- item" at the key's indentation
    end
    return NULL, i + 1
  end
  local c = rest:sub(1, 1)
  if c == '"' or c == "'" then
    local s, last, after = self:quoted(i, col, indent + 1)
    expect_end(after, lines[last].no)
    return s, last + 1
  end
  if c == "[" or c == "{" then return self:flow(i, col, indent) end
  if c == "|" or c == ">" then return self:block_scalar(i, rest, indent) end
  check_plain_start(rest, lines[i].no)
  local first = strip_comment(rest)
  if first:find(":%s") or first:sub(-1) == ":" then
    fail(lines[i].no, "a plain value cannot hold ': ' (quote it)")
  end
  -- continuation lines: more indented than the node, folded with spaces
  local parts, j = { first }, i + 1
  local blanks = 0
  local ended_by_comment = rest:find("%s#") ~= nil
  while lines[j] and not ended_by_comment do
    local l = lines[j]
    if l.text == "" then
      blanks = blanks + 1
    elseif l.indent > indent and l.text:sub(1, 1) ~= "#" then
      local t = strip_comment(l.text)
      if t:find(":%s") or t:sub(-1) == ":" then
        fail(l.no, "a plain value cannot hold ': ' (quote it)")
      end
      parts[#parts + 1] = blanks > 0 and ("\n"):rep(blanks) or " "
      parts[#parts + 1] = t
      blanks = 0
      if l.text:find("%s#") then ended_by_comment = true end
    else
      break
    end
    j = j + 1
  end
  -- trailing blank lines were not consumed as content
  while j > i + 1 and lines[j - 1].text == "" do j = j - 1 end
  return resolve_plain(table.concat(parts)), j
end

--- The key of a block mapping entry: returns key, rest of the line after ':'.
local function split_key(text, lineno)
  local c = text:sub(1, 1)
  if c == '"' or c == "'" then
    local ok, key, after = pcall(function()
      local s, p = flow_value(text, 1, lineno)
      return s, text:sub(p)
    end)
    if not ok then error(key, 0) end
    local rest = after:match("^%s*:%s(.*)$") or (after:match("^%s*:$") and "")
    if rest == nil then fail(lineno, "expected ':' after a quoted key") end
    return key, (rest:gsub("^%s+", ""))
  end
  if c == "?" and (text:sub(2, 2) == "" or text:sub(2, 2):match("%s")) then
    fail(lineno, "complex keys (?) are not supported")
  end
  local p = 1
  while true do
    p = text:find(":", p, true)
    if not p then fail(lineno, "expected 'key: value'") end
    local nxt = text:sub(p + 1, p + 1)
    if nxt == "" or nxt:match("%s") then break end
    p = p + 1
  end
  local key = text:sub(1, p - 1):gsub("%s+$", "")
  if key == "" then fail(lineno, "empty key") end
  check_plain_start(key, lineno)
  if key:find("%s#") then fail(lineno, "expected 'key: value'") end
  if key == "<<" then fail(lineno, "merge keys (<<) are not supported") end
  return key, (text:sub(p + 1):gsub("^%s+", ""))
end

function Parser:mapping(i, indent)
  local lines = self.lines
  local map = json.object()
  i = self:next_content(i)
  while lines[i] do
    local l = lines[i]
    if l.indent < indent then break end
    if l.indent > indent then fail(l.no, "bad indentation") end
    if l.text:match("^%-%s") or l.text == "-" then fail(l.no, "a sequence item where a mapping key was expected") end
    if l.text:match("^%-%-%-") or l.text:match("^%.%.%.") then fail(l.no, "only one YAML document is allowed") end
    local key, rest = split_key(l.text, l.no)
    if map[key] ~= nil then fail(l.no, "duplicate key '" .. key .. "'") end
    local saved = self.in_mapping_value
    self.in_mapping_value = true
    local v, nxt = self:inline_value(i, rest, indent)
    self.in_mapping_value = saved
    map[key] = v
    i = self:next_content(nxt)
  end
  return map, i
end

--- Whether the text after "- " starts a nested node on the item's line ("- key: v", "- - x").
local function starts_nested(rest)
  if rest == "" or rest:sub(1, 1) == "#" then return false end
  if rest:match("^%-%s") or rest == "-" then return true end
  local c = rest:sub(1, 1)
  if c == "[" or c == "{" or c == "|" or c == ">" then return false end
  if c == '"' or c == "'" then
    local ok, after = pcall(function()
      local _, p = flow_value(rest, 1, 0)
      return rest:sub(p)
    end)
    return ok and (after:match("^%s*:%s") ~= nil or after:match("^%s*:$") ~= nil)
  end
  return rest:find(":%s") ~= nil or rest:sub(-1) == ":"
end

function Parser:sequence(i, indent)
  local lines = self.lines
  local seq = json.array()
  i = self:next_content(i)
  while lines[i] do
    local l = lines[i]
    if l.indent < indent then break end
    if l.indent > indent then fail(l.no, "bad indentation") end
    if not (l.text:match("^%-%s") or l.text == "-") then break end
    local rest = l.text:sub(2):gsub("^%s+", "")
    local v, nxt
    local saved = self.in_mapping_value
    self.in_mapping_value = false
    if starts_nested(rest) then
      -- "- key: value" or "- - x": a nested node starting on the item's line
      local inner = l.indent + (#l.text - #rest)
      lines[i] = { no = l.no, indent = inner, text = rest, raw = l.raw }
      v, nxt = self:block(i, inner)
    else
      v, nxt = self:inline_value(i, rest, indent)
    end
    self.in_mapping_value = saved
    seq[#seq + 1] = v
    i = self:next_content(nxt)
  end
  return seq, i
end

function Parser:block(i, indent)
  local l = self.lines[i]
  self.depth = (self.depth or 0) + 1
  if self.depth > MAX_DEPTH then fail(l.no, "collections nested too deeply") end
  local v, nxt = self:node(i, indent, l)
  self.depth = self.depth - 1
  return v, nxt
end

function Parser:node(i, indent, l)
  if l.text:match("^%-%s") or l.text == "-" then return self:sequence(i, indent) end
  local c = l.text:sub(1, 1)
  if c == "[" or c == "{" then return self:flow(i, 1, indent) end
  if (c == '"' or c == "'") and not l.text:find(":%s") and l.text:sub(-1) ~= ":" then
    local s, last, after = self:quoted(i, 1, indent)
    expect_end(after, self.lines[last].no)
    return s, last + 1
  end
  if not l.text:find(":%s") and l.text:sub(-1) ~= ":" then
    -- a lone scalar as a nested node
    return self:inline_value(i, l.text, indent - 1)
  end
  return self:mapping(i, indent)
end

--- Parse YAML text (the frontmatter block, without its `---` lines) into a table.
---@param text string
---@param first_lineno integer|nil line number of the first line in the file (default 1)
---@return table|nil value, string|nil err
function M.parse_yaml(text, first_lineno)
  if type(text) ~= "string" then error("frontmatter.parse_yaml: text must be a string", 2) end
  local ok, res = pcall(function()
    local p = setmetatable({ lines = split_lines(text:gsub("\r\n", "\n"), first_lineno or 1) }, Parser)
    for _, l in ipairs(p.lines) do
      if l.indent == 0 and l.text:match("^%%") then fail(l.no, "directives (%) are not supported") end
    end
    local i = p:next_content(1)
    if not p.lines[i] then return json.object() end
    if p.lines[i].indent ~= 0 then fail(p.lines[i].no, "bad indentation") end
    local first = p.lines[i].text
    if first:match("^%-%s") or first == "-" or first:match("^[%[{\"']") and not first:find(":%s") then
      fail(p.lines[i].no, "the frontmatter must be a mapping")
    end
    local v, nxt = p:mapping(i, 0)
    nxt = p:next_content(nxt)
    if p.lines[nxt] then fail(p.lines[nxt].no, "unexpected content") end
    return v
  end)
  if ok then return res end
  if type(res) == "table" and res.frontmatter_error then
    return nil, ("line %d: %s"):format(res.line, res.message)
  end
  error(res, 0)
end

--- Split a SKILL.md into its frontmatter (parsed) and its body. The file must begin with a line
--- `---` (after an optional UTF-8 BOM), and the frontmatter ends at the next line `---`.
---@param text string the whole SKILL.md
---@return table|nil frontmatter, string|nil body_or_err
function M.split(text)
  if type(text) ~= "string" then error("frontmatter.split: text must be a string", 2) end
  local s = text
  if s:sub(1, 3) == "\239\187\191" then s = s:sub(4) end
  local first_end = s:match("^%-%-%-[ \t]*\r?\n()")
  if not first_end then return nil, "SKILL.md does not begin with a '---' frontmatter block" end
  -- find the closing delimiter line
  local pos = first_end
  while true do
    local line_end = s:find("\n", pos, true)
    local line = s:sub(pos, (line_end or #s + 1) - 1):gsub("\r$", "")
    if line:match("^%-%-%-[ \t]*$") then
      local yaml = s:sub(first_end, pos - 1)
      local fm, err = M.parse_yaml(yaml, 2)
      if not fm then return nil, "SKILL.md frontmatter " .. err end
      local body = line_end and s:sub(line_end + 1) or ""
      return fm, body
    end
    if not line_end then break end
    pos = line_end + 1
  end
  return nil, "SKILL.md frontmatter has no closing '---' line"
end

return M
