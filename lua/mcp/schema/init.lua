--- A JSON Schema 2020-12 validator (core and validation vocabularies, the applicators, local
--- references and the common formats). No network, ever: a `$ref` that does not resolve inside
--- the schema, or in the documents the host gives by URI (opts.schemas), is an error. Draft-07 spellings that MCP servers still send (`definitions`, array
--- `items` + `additionalItems`, `dependencies`, boolean `exclusiveMinimum`) are understood too.
--- `unevaluatedProperties`/`unevaluatedItems` see what the in-place applicators evaluated
--- (`$ref`, `allOf`, valid `anyOf`/`oneOf` branches, `if`/`then`/`else`, `dependentSchemas`);
--- `$dynamicRef` resolves through the dynamic scope of `$dynamicAnchor`s. Not implemented:
--- `contentEncoding`/`contentSchema` (annotations). Unknown keywords are ignored (an `$id` in one
--- identifies nothing). A `pattern` the regex engine cannot run (backreferences, lookbehind,
--- `\p{...}`) is run by lrexlib-pcre2 (`rex_pcre2`) when installed, else the value is reported as
--- unchecked, never silently passed. `make schema-suite` runs the official suite's cases.
---
--- Errors name the failing value with a JSON Pointer (`/items/2/name`; array indices count from 0).
local core = require("mcp.core")
local errors = require("mcp.errors")
local regex = require("mcp.schema.regex")

-- lrexlib-pcre2, when installed: the fallback for patterns regex.lua cannot run (false: absent).
local pcre2_lib
local function pcre2()
  if pcre2_lib == nil then
    local ok, lib = pcall(require, "rex_pcre2")
    pcre2_lib = ok and type(lib) == "table" and lib or false
  end
  return pcre2_lib
end

-- ECMAScript's long names (and aliases) of the General_Category values, which PCRE2 knows only by
-- their short names (Unicode's PropertyValueAliases.txt): \p{Letter} is \p{L}, \p{digit} \p{Nd}.
local GC_SHORT = {
  Letter = "L", Cased_Letter = "LC", Uppercase_Letter = "Lu", Lowercase_Letter = "Ll", Titlecase_Letter = "Lt",
  Modifier_Letter = "Lm", Other_Letter = "Lo", Mark = "M", Combining_Mark = "M", Nonspacing_Mark = "Mn",
  Spacing_Mark = "Mc", Enclosing_Mark = "Me", Number = "N", Decimal_Number = "Nd", digit = "Nd",
  Letter_Number = "Nl", Other_Number = "No", Punctuation = "P", punct = "P", Connector_Punctuation = "Pc",
  Dash_Punctuation = "Pd", Open_Punctuation = "Ps", Close_Punctuation = "Pe", Initial_Punctuation = "Pi",
  Final_Punctuation = "Pf", Other_Punctuation = "Po", Symbol = "S", Math_Symbol = "Sm", Currency_Symbol = "Sc",
  Modifier_Symbol = "Sk", Other_Symbol = "So", Separator = "Z", Space_Separator = "Zs", Line_Separator = "Zl",
  Paragraph_Separator = "Zp", Other = "C", Control = "Cc", cntrl = "Cc", Format = "Cf", Surrogate = "Cs",
  Private_Use = "Co", Unassigned = "Cn",
}

-- One \p{...} body in PCRE2's spelling: gc=X / General_Category=X / X by its short name, sc=X /
-- Script=X as the script's name; anything else as written (PCRE2 refuses what it does not know).
local function pcre_property(body)
  local name, value = body:match("^([%w_]+)=([%w_]+)$")
  if name == "gc" or name == "General_Category" then return GC_SHORT[value] or value end
  if name == "sc" or name == "Script" then return value end
  return GC_SHORT[body] or body
end

-- The pattern with ECMAScript's property escapes spelled for PCRE2 (escaped backslashes kept).
local function pcre_pattern(pat)
  if not pat:find("\\[pP]{") then return pat end
  local out, i = {}, 1
  while i <= #pat do
    local c = pat:sub(i, i)
    if c == "\\" then
      local body, close = pat:match("^[pP]{([^}]*)()}", i + 1)
      if body then
        out[#out + 1] = "\\" .. pat:sub(i + 1, i + 1) .. "{" .. pcre_property(body) .. "}"
        i = close + 1
      else
        out[#out + 1] = pat:sub(i, i + 1)
        i = i + 2
      end
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

--- Run an ECMAScript pattern on s: true/false, or nil and why it was not run.
local function pattern_test(pat, s)
  local ok, err = regex.test(pat, s)
  if ok ~= nil then return ok end
  local lib = pcre2()
  if lib then
    local flags = type(lib.flags) == "function" and lib.flags().UTF or nil
    local fine, hit = pcall(lib.find, s, pcre_pattern(pat), 1, flags)
    if fine then return hit ~= nil end
  end
  return nil, err
end

local M = {}

local NULL = core.null
local floor, huge = math.floor, math.huge
local sfmt = string.format

-- ---- values ----------------------------------------------------------------------------------

local function is_null(v)
  return v == nil or v == NULL or (type(v) == "userdata" and tostring(v) == "vim.NIL")
end

--- The JSON kind of a Lua value: "null", "boolean", "integer", "number", "string", "array",
--- "object", or "empty" for an unmarked empty table (the validator takes it as an object, as JSON
--- encodes it: {}; an empty array is mcp.json.array(), which json.decode("[]") returns too).
---@param v any
---@return string
local function kind(v)
  local t = type(v)
  if t == "string" or t == "boolean" then return t end
  if t == "number" then
    if v == floor(v) and v - v == 0 then return "integer" end
    return "number"
  end
  if is_null(v) then return "null" end
  if t == "table" then
    local mt = getmetatable(v)
    local jt = mt and mt.__jsontype
    if jt then return jt end
    if next(v) == nil then return "empty" end
    if v[1] ~= nil then
      local n = 0
      for k in pairs(v) do
        if type(k) ~= "number" then return "object" end
        n = n + 1
      end
      if n == #v then return "array" end
    end
    return "object"
  end
  return t
end
M.kind = kind

-- The kind a value has in JSON, which the validator checks: an unmarked empty table is an
-- object, as the codec has it (the encoder writes it as {}, the decoder marks every array, []
-- too, with json.array's metatable); an empty array is mcp.json.array().
local function json_kind(v)
  local k = kind(v)
  if k == "empty" then return "object" end
  return k
end

local function is_array(v)
  local k = kind(v)
  return k == "array" or k == "empty"
end

local function is_number(v)
  return type(v) == "number" and v == v and v ~= huge and v ~= -huge
end

--- JSON equality (1 == 1.0, key order irrelevant, arrays by position).
---@param a any
---@param b any
---@return boolean
local function equal(a, b)
  local ka, kb = json_kind(a), json_kind(b)
  if ka == "integer" then ka = "number" end
  if kb == "integer" then kb = "number" end
  if ka ~= kb then return false end
  if ka == "null" then return true end
  if ka == "array" then
    if #a ~= #b then return false end
    for i = 1, #a do
      if not equal(a[i], b[i]) then return false end
    end
    return true
  elseif ka == "object" then
    for k, v in pairs(a) do
      if b[k] == nil or not equal(v, b[k]) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return a == b
end
M.equal = equal

local function utf8_len(s)
  local _, cont = s:gsub("[\128-\191]", "")
  return #s - cont
end

local function show(v)
  local ok, s = pcall(core.json_encode, v)
  if not ok then return tostring(v) end
  if #s > 60 then s = s:sub(1, 57) .. "..." end
  return s
end

local function pointer_token(k)
  return (tostring(k):gsub("~", "~0"):gsub("/", "~1"))
end

-- ---- formats ---------------------------------------------------------------------------------

local function leap(y) return (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0 end
local MDAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

local function valid_date(s)
  local y, m, d = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
  if not y then return false end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if m < 1 or m > 12 or d < 1 then return false end
  local max = MDAYS[m]
  if m == 2 and leap(y) then max = 29 end
  return d <= max
end

local function valid_time(s, need_offset)
  local h, mi, sec, rest = s:match("^(%d%d):(%d%d):(%d%d)(.*)$")
  if not h then return false end
  rest = rest:gsub("^%.%d+", "")
  if rest == "" then
    if need_offset then return false end
  elseif not (rest == "Z" or rest == "z") then
    local oh, om = rest:match("^[+-](%d%d):(%d%d)$")
    if not oh or tonumber(oh) > 23 or tonumber(om) > 59 then return false end
  end
  return tonumber(h) <= 23 and tonumber(mi) <= 59 and tonumber(sec) <= 60
end

local function valid_hostname(s)
  if #s == 0 or #s > 253 then return false end
  s = s:gsub("%.$", "")
  for label in (s .. "."):gmatch("([^.]*)%.") do
    if #label < 1 or #label > 63 then return false end
    if not label:match("^[%w]$") and not label:match("^[%w][%w-]*[%w]$") then return false end
  end
  return true
end

local function valid_ipv4(s)
  local parts = { s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return false end
  for _, p in ipairs(parts) do
    if #p > 3 or (#p > 1 and p:sub(1, 1) == "0") or tonumber(p) > 255 then return false end
  end
  return true
end

local function valid_ipv6(s)
  if s:find("[^%x:.]") then return false end
  local groups, has_v4 = 8, false
  local v4 = s:match(":(%d+%.%d+%.%d+%.%d+)$")
  if v4 then
    if not valid_ipv4(v4) then return false end
    s = s:sub(1, #s - #v4) .. "0:0"
    has_v4 = true
  end
  if s:find(":::") then return false end
  local dbl = select(2, s:gsub("::", ""))
  if dbl > 1 then return false end
  local function count(part)
    if part == "" then return 0 end
    local n = 0
    for g in (part .. ":"):gmatch("([^:]*):") do
      if #g < 1 or #g > 4 then return nil end
      n = n + 1
    end
    return n
  end
  if dbl == 1 then
    local a, b = s:match("^(.-)::(.*)$")
    local na, nb = count(a), count(b)
    if not na or not nb then return false end
    return na + nb < groups
  end
  local n = count(s)
  return n == groups or (has_v4 and n == groups)
end

local EMAIL_LOCAL = "^[%w!#$%%&'*+/=?^_`{|}~-]+$"
local function valid_email(s)
  local l, d = s:match("^(.+)@([^@]+)$")
  if not l or #l > 64 then return false end
  if l:sub(1, 1) == "." or l:sub(-1) == "." or l:find("%.%.") then return false end
  for part in (l .. "."):gmatch("([^.]*)%.") do
    if not part:match(EMAIL_LOCAL) then return false end
  end
  if d:match("^%[.*%]$") then
    local ip = d:sub(2, -2)
    return valid_ipv4(ip) or (ip:sub(1, 5):lower() == "ipv6:" and valid_ipv6(ip:sub(6)))
  end
  return d:find(".", 1, true) ~= nil and valid_hostname(d)
end

local URI_CHARS = "^[%w%-._~:/?#%[%]@!$&'()*+,;=%%]*$"
local function valid_pct(s)
  for esc in s:gmatch("%%(..)") do
    if not esc:match("^%x%x$") then return false end
  end
  return not s:find("%%.?$") or s:match("%%%x%x$") ~= nil
end
local function valid_uri_reference(s)
  return s:match(URI_CHARS) ~= nil and valid_pct(s)
end
local function valid_uri(s)
  return s:match("^[%a][%w+.-]*:") ~= nil and valid_uri_reference(s)
end

--- Format checkers: name -> fn(string) -> boolean. Add or replace entries to change behaviour;
--- a format with no checker is accepted (formats are annotations unless known).
M.formats = {
  ["date-time"] = function(s)
    local d, t = s:match("^(%d%d%d%d%-%d%d%-%d%d)[Tt ](.+)$")
    return d ~= nil and valid_date(d) and valid_time(t, true)
  end,
  date = valid_date,
  time = function(s) return valid_time(s, false) end,
  email = valid_email,
  hostname = valid_hostname,
  ipv4 = valid_ipv4,
  ipv6 = valid_ipv6,
  uri = valid_uri,
  ["uri-reference"] = valid_uri_reference,
  iri = function(s) return s:match("^[%a][%w+.-]*:") ~= nil and not s:find("[%s<>\"{}|\\^`]") end,
  ["iri-reference"] = function(s) return not s:find("[%s<>\"{}|\\^`]") end,
  ["uri-template"] = function(s) return not s:find("[%s<>\"|\\^`]") end,
  uuid = function(s)
    return s:match("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") ~= nil
  end,
  duration = function(s)
    local date, time = s:match("^P([^T]*)T?(.*)$")
    if not date then return false end
    if s:find("T") and time == "" then return false end
    if date == "" and time == "" then return false end
    if date:match("^%d+W$") then return time == "" end
    if not (date == "" or date:match("^%d+Y%d+M%d+D$") or date:match("^%d+Y%d+M$") or date:match("^%d+Y$")
        or date:match("^%d+M%d+D$") or date:match("^%d+M$") or date:match("^%d+D$") or date:match("^%d+Y%d+D$")) then
      return false
    end
    if time == "" then return true end
    for _, p in ipairs({ "^%d+H%d+M%d+S$", "^%d+H%d+M$", "^%d+H$", "^%d+M%d+S$", "^%d+M$", "^%d+S$", "^%d+H%d+S$" }) do
      if time:match(p) then return true end
    end
    return false
  end,
  ["json-pointer"] = function(s)
    return (s == "" or s:sub(1, 1) == "/") and not s:find("~[^01]") and not s:find("~$")
  end,
  ["relative-json-pointer"] = function(s)
    local n, rest = s:match("^(%d+)(.*)$")
    if not n or (#n > 1 and n:sub(1, 1) == "0") then return false end
    return rest == "#" or rest == "" or M.formats["json-pointer"](rest)
  end,
  regex = function(s)
    local prog, _, unsupported = regex.compile(s)
    return prog ~= nil or unsupported == true
  end,
}

-- ---- references ------------------------------------------------------------------------------

local index_cache = setmetatable({}, { __mode = "k" })
local documents_cache = setmetatable({}, { __mode = "k" }) -- opts.schemas -> root -> index

local function strip_fragment(u) return (u:gsub("#.*$", "")) end

-- A path without its "." and ".." segments (RFC 3986 5.2.4): "/a/b/../c" is "/a/c".
local function remove_dot_segments(path)
  local segs, out = {}, {}
  for seg in (path .. "/"):gmatch("(.-)/") do segs[#segs + 1] = seg end
  for i, seg in ipairs(segs) do
    if seg == ".." then
      if #out > 1 or (#out == 1 and out[1] ~= "") then out[#out] = nil end
    elseif seg ~= "." then
      out[#out + 1] = seg
    end
    if (seg == ".." or seg == ".") and i == #segs then out[#out + 1] = "" end
  end
  return table.concat(out, "/")
end

-- A reference resolved against a base URI (RFC 3986, the cases schemas use).
local function join_uri(base, ref)
  if ref:match("^%a[%w+.-]*:") then return ref end
  if ref == "" then return base end
  if ref:sub(1, 2) == "//" then return (base:match("^%a[%w+.-]*:") or "") .. ref end
  local u
  if ref:sub(1, 1) == "/" then
    u = (base:match("^%a[%w+.-]*://[^/]*") or "") .. ref
  else
    u = base:gsub("[^/]*$", "") .. ref
  end
  if not (u:find("/%.%.?/") or u:find("/%.%.?$") or u:find("^%.%.?/")) then return u end
  local prefix, rest = u:match("^(%a[%w+.-]*://[^/?]*)(.*)$")
  if prefix == nil then prefix, rest = "", u end
  local path, query = rest:match("^([^?]*)(.*)$")
  return prefix .. remove_dot_segments(path) .. query
end

-- The keywords whose value is a schema (or an array of schemas), an object of schemas, or data.
local SUBSCHEMAS = { items = true, prefixItems = true, additionalItems = true, allOf = true, anyOf = true,
  oneOf = true, ["not"] = true, ["if"] = true, ["then"] = true, ["else"] = true, contains = true,
  additionalProperties = true, unevaluatedProperties = true, unevaluatedItems = true, propertyNames = true,
  contentSchema = true }
local SUBSCHEMA_MAPS = { ["$defs"] = true, definitions = true, properties = true, patternProperties = true,
  dependentSchemas = true, dependencies = true }
local NOT_SCHEMAS = { enum = true, const = true, default = true, examples = true }

-- The schema resources of root: ids (base URI -> schema, and each $id as written), anchors
-- ("base#name" -> schema), dynamic ($dynamicAnchor, same keys), names (anchor name -> first
-- schema: the lookup of earlier versions) and bases (subschema -> its base URI).
-- documents: the host's schemas by URI (opts.schemas), indexed after root as resources of their own.
local function index_of(root, documents)
  local cache = index_cache
  if documents ~= nil then
    cache = documents_cache[documents]
    if cache == nil then
      cache = setmetatable({}, { __mode = "k" })
      documents_cache[documents] = cache
    end
  end
  local idx = cache[root]
  if idx then return idx end
  idx = { ids = {}, anchors = {}, dynamic = {}, names = {}, bases = {} }
  local seen = {}
  local function anchor(s, base, name, dynamic)
    if type(name) ~= "string" then return end
    local key = base .. "#" .. name
    if dynamic then idx.dynamic[key] = s end
    if idx.anchors[key] == nil then idx.anchors[key] = s end
    if idx.names[name] == nil then idx.names[name] = s end
  end
  -- plain: the value of an unknown keyword, not a schema: an $id or anchor in it identifies
  -- nothing (a $ref may still point into it: its tables keep the enclosing base)
  local function walk(s, base, depth, plain)
    if type(s) ~= "table" or seen[s] or depth > 64 then return end
    seen[s] = true
    if kind(s) == "object" then
      if not plain and type(s["$id"]) == "string" then
        local raw = strip_fragment(s["$id"])
        base = join_uri(base, raw)
        idx.ids[base] = idx.ids[base] or s
        idx.ids[raw] = idx.ids[raw] or s
      end
      idx.bases[s] = base
      if not plain then
        anchor(s, base, s["$anchor"], false)
        anchor(s, base, s["$dynamicAnchor"], true)
      end
      for k, v in pairs(s) do
        if plain or not (SUBSCHEMAS[k] or SUBSCHEMA_MAPS[k]) then
          if not NOT_SCHEMAS[k] then walk(v, base, depth + 1, true) end
        elseif SUBSCHEMA_MAPS[k] and kind(v) == "object" then
          for _, sub in pairs(v) do walk(sub, base, depth + 1) end
        else
          walk(v, base, depth + 1)
        end
      end
    elseif kind(s) == "array" then
      for _, v in ipairs(s) do walk(v, base, depth + 1, plain) end
    end
  end
  local root_base = type(root) == "table" and type(root["$id"]) == "string" and strip_fragment(root["$id"]) or ""
  idx.ids[root_base] = root
  idx.ids[""] = idx.ids[""] or root
  walk(root, "", 0)
  for uri, doc in pairs(documents or {}) do
    if type(uri) == "string" and type(doc) == "table" then
      uri = strip_fragment(uri)
      idx.ids[uri] = idx.ids[uri] or doc
      walk(doc, uri, 0)
    end
  end
  cache[root] = idx
  return idx
end

local function unescape_token(t)
  t = t:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  return (t:gsub("~1", "/"):gsub("~0", "~"))
end

local function resolve_pointer(doc, ptr)
  if ptr == "" then return doc end
  if ptr:sub(1, 1) ~= "/" then return nil end
  local cur = doc
  for tok in (ptr:sub(2) .. "/"):gmatch("([^/]*)/") do
    tok = unescape_token(tok)
    if type(cur) ~= "table" then return nil end
    if is_array(cur) and tok:match("^%d+$") then
      cur = cur[tonumber(tok) + 1]
    else
      cur = cur[tok]
    end
    if cur == nil then return nil end
  end
  return cur
end

--- Resolve a reference found in a schema whose base URI is base; nil when it does not resolve
--- inside the root schema.
local function resolve_ref(idx, ref, base)
  local uri, frag = ref:match("^([^#]*)#?(.*)$")
  local target_base = join_uri(base, uri)
  local doc = idx.ids[target_base] or idx.ids[uri]
  if doc == nil then return nil end
  if frag == "" then return doc end
  if frag:sub(1, 1) == "/" then return resolve_pointer(doc, frag) end
  local name = unescape_token(frag)
  return idx.anchors[(idx.bases[doc] or target_base) .. "#" .. name] or idx.names[name]
end

-- ---- the validator ---------------------------------------------------------------------------

local validate -- forward

local function add(ctx, path, keyword, message)
  local e = ctx.errors
  if #e < ctx.max_errors then e[#e + 1] = { path = path, keyword = keyword, message = message } end
  ctx.failed = true
end

-- A value the validator could not check against a keyword (a pattern it cannot run).
local function unchecked(ctx, path, keyword, message)
  local u = ctx.unchecked
  if #u < ctx.max_errors then u[#u + 1] = { path = path, keyword = keyword, message = message } end
end

-- What the keywords applied to one instance evaluated: props (names), items (indices), all
-- (every item): the annotations unevaluatedProperties/unevaluatedItems read.
local function new_eval() return { props = {}, items = {}, all = false } end
-- What a scalar's keywords evaluated: nothing, ever (no keyword writes to it), so one table serves.
local SCALAR_EVAL = new_eval()

local function merge_eval(dst, src)
  if dst == nil then return end
  for k in pairs(src.props) do dst.props[k] = true end
  for i in pairs(src.items) do dst.items[i] = true end
  if src.all then dst.all = true end
end

-- Validate without recording errors; returns valid, first sub-error, what it evaluated.
local function try(ctx, s, v, path)
  local sub = { root = ctx.root, idx = ctx.idx, scope = ctx.scope, errors = {}, max_errors = 1,
    depth = ctx.depth, formats = ctx.formats, unchecked = ctx.unchecked }
  local ev = new_eval()
  validate(sub, s, v, path, ev)
  return not sub.failed, sub.errors[1], ev
end

local TYPE_OK = {
  string = function(k) return k == "string" end,
  number = function(k) return k == "number" or k == "integer" end,
  integer = function(k) return k == "integer" end,
  boolean = function(k) return k == "boolean" end,
  null = function(k) return k == "null" end,
  array = function(k) return k == "array" end,
  object = function(k) return k == "object" end,
}

local function check_type(ctx, t, v, path)
  local k = json_kind(v)
  if type(t) == "string" then
    local ok = TYPE_OK[t]
    if ok and not ok(k) then
      add(ctx, path, "type", "expected " .. t .. ", got "
        .. (kind(v) == "empty" and "empty object (an empty array is mcp.json.array())" or k))
    end
  elseif type(t) == "table" then
    for _, name in ipairs(t) do
      local ok = TYPE_OK[name]
      if ok == nil or ok(k) then return end
    end
    local names = {}
    for i, name in ipairs(t) do names[i] = tostring(name) end
    add(ctx, path, "type", "expected " .. table.concat(names, " or ") .. ", got " .. k)
  end
end

local function check_number(ctx, s, v, path)
  local min, max = s.minimum, s.maximum
  local xmin, xmax = s.exclusiveMinimum, s.exclusiveMaximum
  if xmin == true then xmin, min = min, nil end -- draft-04 boolean form
  if xmax == true then xmax, max = max, nil end
  if is_number(min) and v < min then add(ctx, path, "minimum", "must be >= " .. show(min)) end
  if is_number(max) and v > max then add(ctx, path, "maximum", "must be <= " .. show(max)) end
  if is_number(xmin) and v <= xmin then add(ctx, path, "exclusiveMinimum", "must be > " .. show(xmin)) end
  if is_number(xmax) and v >= xmax then add(ctx, path, "exclusiveMaximum", "must be < " .. show(xmax)) end
  local m = s.multipleOf
  if is_number(m) and m > 0 then
    local q = v / m
    if not is_number(q) or (q ~= floor(q) and math.abs(q - floor(q + 0.5)) > 1e-9) then
      add(ctx, path, "multipleOf", "must be a multiple of " .. show(m))
    end
  end
end

local function check_string(ctx, s, v, path)
  if type(s.minLength) == "number" or type(s.maxLength) == "number" then
    local n = utf8_len(v)
    if type(s.minLength) == "number" and n < s.minLength then
      add(ctx, path, "minLength", "must have at least " .. show(s.minLength) .. " characters")
    end
    if type(s.maxLength) == "number" and n > s.maxLength then
      add(ctx, path, "maxLength", "must have at most " .. show(s.maxLength) .. " characters")
    end
  end
  if type(s.pattern) == "string" then
    local ok, why = pattern_test(s.pattern, v)
    if ok == false then
      add(ctx, path, "pattern", "must match the pattern " .. show(s.pattern))
    elseif ok == nil then
      unchecked(ctx, path, "pattern", "not checked against the pattern " .. show(s.pattern) .. ": " .. tostring(why))
    end
  end
  if type(s.format) == "string" and ctx.formats then
    local f = M.formats[s.format]
    if f and not f(v) then add(ctx, path, "format", "must be a valid " .. s.format) end
  end
end

local function check_array(ctx, s, v, path, ev)
  local n = #v
  if type(s.minItems) == "number" and n < s.minItems then
    add(ctx, path, "minItems", "must have at least " .. show(s.minItems) .. " items")
  end
  if type(s.maxItems) == "number" and n > s.maxItems then
    add(ctx, path, "maxItems", "must have at most " .. show(s.maxItems) .. " items")
  end
  if s.uniqueItems == true then
    local dup = nil
    for i = 1, n do
      for j = i + 1, n do
        if not dup and equal(v[i], v[j]) then dup = sfmt("items %d and %d are equal", i - 1, j - 1) end
      end
    end
    if dup then add(ctx, path, "uniqueItems", dup) end
  end
  local prefix, rest = s.prefixItems, s.items
  if kind(rest) == "array" then prefix, rest = rest, s.additionalItems end -- draft-07 tuple
  local start = 1
  if type(prefix) == "table" then
    for i = 1, math.min(#prefix, n) do
      validate(ctx, prefix[i], v[i], path .. "/" .. (i - 1))
      ev.items[i] = true
    end
    start = #prefix + 1
  end
  if rest ~= nil then
    for i = start, n do
      validate(ctx, rest, v[i], path .. "/" .. (i - 1))
    end
    ev.all = true
  end
  if s.contains ~= nil then
    local hits = 0
    for i = 1, n do
      if try(ctx, s.contains, v[i], path .. "/" .. (i - 1)) then
        hits = hits + 1
        ev.items[i] = true
      end
    end
    local minc = type(s.minContains) == "number" and s.minContains or 1
    if hits < minc then
      add(ctx, path, "contains", "must contain at least " .. minc .. " matching item" .. (minc == 1 and "" or "s"))
    end
    if type(s.maxContains) == "number" and hits > s.maxContains then
      add(ctx, path, "maxContains", "must contain at most " .. show(s.maxContains) .. " matching items")
    end
  end
end

--- The string keys of a table, sorted (the order errors are reported in).
---@param t table
---@return string[]
local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  return keys
end
M.sorted_keys = sorted_keys

local function check_counts_required(ctx, s, v, path, keys)
  if type(s.minProperties) == "number" and #keys < s.minProperties then
    add(ctx, path, "minProperties", "must have at least " .. show(s.minProperties) .. " properties")
  end
  if type(s.maxProperties) == "number" and #keys > s.maxProperties then
    add(ctx, path, "maxProperties", "must have at most " .. show(s.maxProperties) .. " properties")
  end
  if type(s.required) == "table" then
    for _, name in ipairs(s.required) do
      if type(name) == "string" and v[name] == nil then
        add(ctx, path .. "/" .. pointer_token(name), "required", "required property is missing")
      end
    end
  end
end

-- Each name of list that v lacks, reported under keyword as required because k is present.
local function require_names(ctx, v, path, keyword, k, list)
  for _, name in ipairs(list) do
    if v[name] == nil then
      add(ctx, path .. "/" .. pointer_token(name), keyword, "required when " .. show(k) .. " is present")
    end
  end
end

-- dependencies (draft-07), dependentRequired and dependentSchemas (2019-09 on).
local function check_dependencies(ctx, s, v, path, ev)
  if type(s.dependencies) == "table" then
    for k, d in pairs(s.dependencies) do
      if v[k] ~= nil then
        if kind(d) == "array" then
          require_names(ctx, v, path, "dependencies", k, d)
        else
          validate(ctx, d, v, path, ev)
        end
      end
    end
  end
  if type(s.dependentRequired) == "table" then
    for k, list in pairs(s.dependentRequired) do
      if v[k] ~= nil and type(list) == "table" then require_names(ctx, v, path, "dependentRequired", k, list) end
    end
  end
  if type(s.dependentSchemas) == "table" then
    for k, d in pairs(s.dependentSchemas) do
      if v[k] ~= nil then validate(ctx, d, v, path, ev) end
    end
  end
end

-- One property k: properties, patternProperties, additionalProperties, propertyNames.
local function check_property(ctx, s, v, path, k, props, pprops, ev)
  local p = path .. "/" .. pointer_token(k)
  local matched = false
  if props and props[k] ~= nil then
    matched = true
    validate(ctx, props[k], v[k], p)
  end
  local unknown = false -- a patternProperties key no engine here runs: does it match k?
  if pprops then
    for pat, ps in pairs(pprops) do
      local hit, why = pattern_test(pat, k)
      if hit then
        matched = true
        validate(ctx, ps, v[k], p)
      elseif hit == nil then
        unknown = true
        unchecked(ctx, p, "patternProperties", "not checked against the pattern " .. show(pat) .. ": " .. tostring(why))
      end
    end
  end
  local addl = s.additionalProperties
  if matched or unknown or addl ~= nil then ev.props[k] = true end
  if not matched and unknown and addl ~= nil then
    -- additionalProperties applies only if the pattern does not match: unknown too, never a false error
    unchecked(ctx, p, "additionalProperties", "not checked: whether a patternProperties pattern matches "
      .. show(k) .. " is unknown")
  elseif not matched and addl ~= nil then
    if addl == false then
      add(ctx, p, "additionalProperties", "property is not allowed")
    else
      validate(ctx, addl, v[k], p)
    end
  end
  if s.propertyNames ~= nil then
    local ok, e = try(ctx, s.propertyNames, k, p)
    if not ok then add(ctx, p, "propertyNames", "invalid property name: " .. (e and e.message or "")) end
  end
end

local function check_object(ctx, s, v, path, ev)
  local keys = sorted_keys(v)
  check_counts_required(ctx, s, v, path, keys)
  check_dependencies(ctx, s, v, path, ev)
  local props, pprops = s.properties, s.patternProperties
  if type(props) ~= "table" then props = nil end
  if type(pprops) ~= "table" then pprops = nil end
  for _, k in ipairs(keys) do check_property(ctx, s, v, path, k, props, pprops, ev) end
end

-- unevaluatedProperties / unevaluatedItems: after every other keyword of s has run on v.
local function check_unevaluated(ctx, s, v, path, ev)
  local up, ui = s.unevaluatedProperties, s.unevaluatedItems
  local k = json_kind(v)
  if up ~= nil and k == "object" then
    for _, name in ipairs(sorted_keys(v)) do
      if not ev.props[name] then
        local p = path .. "/" .. pointer_token(name)
        if up == false then
          add(ctx, p, "unevaluatedProperties", "property is not allowed (not evaluated by any subschema)")
        else
          validate(ctx, up, v[name], p)
        end
        ev.props[name] = true
      end
    end
  end
  if ui ~= nil and k == "array" and not ev.all then
    for i = 1, #v do
      if not ev.items[i] then
        local p = path .. "/" .. (i - 1)
        if ui == false then
          add(ctx, p, "unevaluatedItems", "item is not allowed (not evaluated by any subschema)")
        else
          validate(ctx, ui, v[i], p)
        end
      end
    end
    ev.all = true
  end
end

-- A $dynamicRef whose first target carries the same $dynamicAnchor resolves to the outermost
-- schema resource in the dynamic scope that declares it.
local function dynamic_target(ctx, target, ref)
  local name = ref:match("#(.*)$")
  if name == nil or name:sub(1, 1) == "/" or type(target) ~= "table" or target["$dynamicAnchor"] ~= name then
    return target
  end
  for _, base in ipairs(ctx.scope) do
    local t = ctx.idx.dynamic[base .. "#" .. name]
    if t ~= nil then return t end
  end
  return target
end

local function check_ref(ctx, s, v, path, ev)
  for _, key in ipairs({ "$ref", "$dynamicRef" }) do
    local ref = s[key]
    if type(ref) == "string" then
      local target = resolve_ref(ctx.idx, ref, ctx.idx.bases[s] or "")
      if key == "$dynamicRef" then target = dynamic_target(ctx, target, ref) end
      if target == nil then
        add(ctx, path, key, "cannot resolve " .. key .. " " .. show(ref) .. " (only references inside the schema are followed)")
      else
        -- a reference into another resource enters its dynamic scope, even below its root
        local base, scope = ctx.idx.bases[target], ctx.scope
        local enter = base ~= nil and base ~= scope[#scope]
        if enter then scope[#scope + 1] = base end
        validate(ctx, target, v, path, ev)
        if enter then scope[#scope] = nil end
      end
    end
  end
end

local function check_enum(ctx, enum, v, path)
  for _, e in ipairs(enum) do
    if equal(e, v) then return end
  end
  local shown = {}
  for i, e in ipairs(enum) do
    if i > 8 then shown[#shown + 1] = "..." break end
    shown[#shown + 1] = show(e)
  end
  add(ctx, path, "enum", "must be one of " .. table.concat(shown, ", "))
end

local function check_any_of(ctx, list, v, path, ev)
  local first, any = nil, false
  for _, sub in ipairs(list) do
    local ok, e, sub_ev = try(ctx, sub, v, path) -- every branch: each valid one's annotations count
    if ok then
      any = true
      merge_eval(ev, sub_ev)
    end
    first = first or e
  end
  if any then return end
  add(ctx, path, "anyOf", "must match a schema in anyOf" .. (first and (" (first failure: " .. first.message .. ")") or ""))
end

local function check_one_of(ctx, list, v, path, ev)
  local hits, hit_ev = 0, nil
  for _, sub in ipairs(list) do
    local ok, _, sub_ev = try(ctx, sub, v, path)
    if ok then hits, hit_ev = hits + 1, sub_ev end
  end
  if hits == 1 then merge_eval(ev, hit_ev) end
  if hits ~= 1 then
    add(ctx, path, "oneOf", hits == 0 and "must match exactly one schema in oneOf (matches none)"
      or ("must match exactly one schema in oneOf (matches " .. hits .. ")"))
  end
end

-- allOf, anyOf, oneOf, not, if/then/else.
local function check_applicators(ctx, s, v, path, ev)
  if type(s.allOf) == "table" then
    for _, sub in ipairs(s.allOf) do validate(ctx, sub, v, path, ev) end
  end
  if type(s.anyOf) == "table" then check_any_of(ctx, s.anyOf, v, path, ev) end
  if type(s.oneOf) == "table" then check_one_of(ctx, s.oneOf, v, path, ev) end
  if s["not"] ~= nil and try(ctx, s["not"], v, path) then
    add(ctx, path, "not", "must not match the schema in not")
  end
  if s["if"] ~= nil then
    local ok, _, if_ev = try(ctx, s["if"], v, path)
    if ok then
      merge_eval(ev, if_ev)
      if s["then"] ~= nil then validate(ctx, s["then"], v, path, ev) end
    elseif s["else"] ~= nil then
      validate(ctx, s["else"], v, path, ev)
    end
  end
end

local function validate_keywords(ctx, s, v, path, ev)
  check_ref(ctx, s, v, path, ev)
  if s.type ~= nil then check_type(ctx, s.type, v, path) end
  if s.enum ~= nil and type(s.enum) == "table" then check_enum(ctx, s.enum, v, path) end
  if s.const ~= nil and not equal(s.const, v) then
    add(ctx, path, "const", "must equal " .. show(s.const))
  end
  local k = json_kind(v)
  if k == "number" or k == "integer" then check_number(ctx, s, v, path)
  elseif k == "string" then check_string(ctx, s, v, path) end
  if k == "array" then check_array(ctx, s, v, path, ev) end
  if k == "object" then check_object(ctx, s, v, path, ev) end
  check_applicators(ctx, s, v, path, ev)
  if s.unevaluatedProperties ~= nil or s.unevaluatedItems ~= nil then check_unevaluated(ctx, s, v, path, ev) end
end

-- ev: where to add what s evaluated of v (the caller's, for in-place applicators), or nil.
validate = function(ctx, s, v, path, ev)
  if s == true or s == nil then return end
  if s == false then
    add(ctx, path, "false", "no value is allowed here")
    return
  end
  if type(s) ~= "table" then return end
  ctx.depth = ctx.depth + 1
  if ctx.depth > 256 then
    ctx.depth = ctx.depth - 1
    add(ctx, path, "$ref", "schema recursion too deep")
    return
  end
  -- s's own evaluations: its unevaluated* keywords see them, not those of s's parent
  local own = type(v) == "table" and new_eval() or SCALAR_EVAL
  local resource = type(s["$id"]) == "string" and ctx.idx.bases[s]
  if resource == ctx.scope[#ctx.scope] then resource = nil end -- entered by the $ref that led here
  if resource then ctx.scope[#ctx.scope + 1] = resource end
  validate_keywords(ctx, s, v, path, own)
  merge_eval(ev, own)
  if resource then ctx.scope[#ctx.scope] = nil end
  ctx.depth = ctx.depth - 1
end

-- ---- API -------------------------------------------------------------------------------------

--- Every error of value against schema (an empty array when it is valid). Each error is
--- {path = JSON Pointer of the value, keyword = failing keyword, message = text}. The second
--- value lists, in the same shape, what was not checked (a `pattern` no regex engine here can
--- run): such a value is neither accepted nor rejected by that keyword.
---@param schema table|boolean
---@param value any
---@param opts table|nil formats (default true: assert known formats), max_errors (default 50), schemas (URI ->
--- schema: documents a `$ref` may name by URI, e.g. a shared definitions file; nothing is ever fetched)
---@return table[] errors, table[] unchecked
function M.errors(schema, value, opts)
  if type(schema) ~= "table" and type(schema) ~= "boolean" then
    error("mcp.schema: schema must be a table or a boolean", 2)
  end
  opts = opts or {}
  if opts.schemas ~= nil and type(opts.schemas) ~= "table" then
    error("mcp.schema: opts.schemas must be a table of URI -> schema", 2)
  end
  local idx = index_of(schema, opts.schemas)
  local root_base = type(schema) == "table" and idx.bases[schema] or ""
  local ctx = { root = schema, idx = idx, scope = {}, errors = {}, unchecked = {},
    max_errors = opts.max_errors or 50, depth = 0, formats = opts.formats ~= false }
  if type(schema) == "table" and type(schema["$id"]) ~= "string" then ctx.scope[1] = root_base end
  validate(ctx, schema, value, "")
  return ctx.errors, ctx.unchecked
end

--- "path: message" for one error ("(root)" for the whole value).
---@param e table
---@return string
function M.describe(e)
  return (e.path == "" and "(root)" or e.path) .. ": " .. e.message
end

--- Validate value against schema. Returns true, or nil and an mcp.Error (kind "validation")
--- whose message names the first failing path and whose data.errors lists every error
--- (data.unchecked: what could not be checked). When valid, the third value is the list of what
--- could not be checked (see errors()) if there is any: the value passed every keyword that ran.
---@param schema table|boolean
---@param value any
---@param opts table|nil formats, max_errors, schemas (see errors()), what (a noun for the message: "structuredContent")
---@return boolean|nil ok, mcp.Error|nil err, table[]|nil unchecked
function M.validate(schema, value, opts)
  if type(schema) ~= "table" and type(schema) ~= "boolean" then
    error("mcp.schema.validate: schema must be a table or a boolean", 2)
  end
  local list, skipped = M.errors(schema, value, opts)
  if #list == 0 then
    if #skipped > 0 then return true, nil, skipped end
    return true
  end
  local msg = M.describe(list[1])
  if #list > 1 then msg = msg .. " (and " .. (#list - 1) .. " more)" end
  if opts and opts.what then msg = opts.what .. " does not match its schema: " .. msg end
  return nil, errors.new(nil, msg, { errors = list, path = list[1].path, unchecked = skipped[1] and skipped or nil },
    { kind = "validation" })
end

return M
