--- A JSON Schema 2020-12 validator (core and validation vocabularies, the applicators, local
--- references and the common formats). No network, ever: a `$ref` that does not resolve inside
--- the schema is an error. Draft-07 spellings that MCP servers still send (`definitions`, array
--- `items` + `additionalItems`, `dependencies`, boolean `exclusiveMinimum`) are understood too.
--- Not implemented: `unevaluatedProperties`, `unevaluatedItems`, `$dynamicRef` scoping (treated
--- as `$ref`), `contentEncoding`/`contentSchema` (annotations). Unknown keywords are ignored.
---
--- Errors name the failing value with a JSON Pointer (`/items/2/name`; array indices count from 0).
local core = require("mcp.core")
local errors = require("mcp.errors")
local regex = require("mcp.schema.regex")

local M = {}

local NULL = core.null
local floor, huge = math.floor, math.huge
local sfmt = string.format

-- ---- values ----------------------------------------------------------------------------------

local function is_null(v)
  return v == nil or v == NULL or (type(v) == "userdata" and tostring(v) == "vim.NIL")
end

--- The JSON kind of a Lua value: "null", "boolean", "integer", "number", "string", "array",
--- "object", or "empty" for an unmarked empty table (it matches both array and object).
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
  local ka, kb = kind(a), kind(b)
  if ka == "integer" then ka = "number" end
  if kb == "integer" then kb = "number" end
  if ka == "empty" and (kb == "array" or kb == "object") then ka = kb end
  if kb == "empty" and (ka == "array" or ka == "object") then kb = ka end
  if ka ~= kb then return false end
  if ka == "null" or ka == "empty" then return true end
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

-- Every subschema's $id (as written, without fragment), $anchor and $dynamicAnchor.
local function index_of(root)
  local idx = index_cache[root]
  if idx then return idx end
  idx = { ids = {}, anchors = {} }
  local seen = {}
  local function walk(s, depth)
    if type(s) ~= "table" or seen[s] or depth > 64 then return end
    seen[s] = true
    if kind(s) == "object" then
      if type(s["$id"]) == "string" then idx.ids[(s["$id"]:gsub("#.*$", ""))] = s end
      if type(s["$anchor"]) == "string" then idx.anchors[s["$anchor"]] = s end
      if type(s["$dynamicAnchor"]) == "string" and idx.anchors[s["$dynamicAnchor"]] == nil then
        idx.anchors[s["$dynamicAnchor"]] = s
      end
      for k, v in pairs(s) do
        if k ~= "enum" and k ~= "const" and k ~= "default" and k ~= "examples" then walk(v, depth + 1) end
      end
    elseif kind(s) == "array" then
      for _, v in ipairs(s) do walk(v, depth + 1) end
    end
  end
  walk(root, 0)
  index_cache[root] = idx
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

--- Resolve a reference against the root schema; nil when it does not resolve locally.
local function resolve_ref(root, ref)
  local base, frag = ref:match("^([^#]*)#?(.*)$")
  local doc = root
  if base ~= "" then
    local rid = type(root) == "table" and root["$id"]
    if type(rid) == "string" and rid:gsub("#.*$", "") == base then
      doc = root
    else
      doc = index_of(root).ids[base]
      if doc == nil then return nil end
    end
  end
  if frag == "" then return doc end
  if frag:sub(1, 1) == "/" then return resolve_pointer(doc, frag) end
  return index_of(root).anchors[unescape_token(frag)]
end

-- ---- the validator ---------------------------------------------------------------------------

local validate -- forward

local function add(ctx, path, keyword, message)
  local e = ctx.errors
  if #e < ctx.max_errors then e[#e + 1] = { path = path, keyword = keyword, message = message } end
  ctx.failed = true
end

-- Validate without recording errors; returns valid, first sub-error.
local function try(ctx, s, v, path)
  local sub = { root = ctx.root, errors = {}, max_errors = 1, depth = ctx.depth, formats = ctx.formats }
  validate(sub, s, v, path)
  return not sub.failed, sub.errors[1]
end

local TYPE_OK = {
  string = function(k) return k == "string" end,
  number = function(k) return k == "number" or k == "integer" end,
  integer = function(k) return k == "integer" end,
  boolean = function(k) return k == "boolean" end,
  null = function(k) return k == "null" end,
  array = function(k) return k == "array" or k == "empty" end,
  object = function(k) return k == "object" or k == "empty" end,
}

local function check_type(ctx, t, v, path)
  local k = kind(v)
  if type(t) == "string" then
    local ok = TYPE_OK[t]
    if ok and not ok(k) then
      add(ctx, path, "type", "expected " .. t .. ", got " .. (k == "empty" and "empty table" or k))
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
    if q ~= floor(q) and math.abs(q - floor(q + 0.5)) > 1e-9 then
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
    local ok = regex.test(s.pattern, v)
    if ok == false then add(ctx, path, "pattern", "must match the pattern " .. show(s.pattern)) end
  end
  if type(s.format) == "string" and ctx.formats then
    local f = M.formats[s.format]
    if f and not f(v) then add(ctx, path, "format", "must be a valid " .. s.format) end
  end
end

local function check_array(ctx, s, v, path)
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
    end
    start = #prefix + 1
  end
  if rest ~= nil then
    for i = start, n do
      validate(ctx, rest, v[i], path .. "/" .. (i - 1))
    end
  end
  if s.contains ~= nil then
    local hits = 0
    for i = 1, n do
      if try(ctx, s.contains, v[i], path .. "/" .. (i - 1)) then hits = hits + 1 end
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
local function check_dependencies(ctx, s, v, path)
  if type(s.dependencies) == "table" then
    for k, d in pairs(s.dependencies) do
      if v[k] ~= nil then
        if kind(d) == "array" then
          require_names(ctx, v, path, "dependencies", k, d)
        else
          validate(ctx, d, v, path)
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
      if v[k] ~= nil then validate(ctx, d, v, path) end
    end
  end
end

-- One property k: properties, patternProperties, additionalProperties, propertyNames.
local function check_property(ctx, s, v, path, k, props, pprops)
  local p = path .. "/" .. pointer_token(k)
  local matched = false
  if props and props[k] ~= nil then
    matched = true
    validate(ctx, props[k], v[k], p)
  end
  if pprops then
    for pat, ps in pairs(pprops) do
      if regex.test(pat, k) then
        matched = true
        validate(ctx, ps, v[k], p)
      end
    end
  end
  local addl = s.additionalProperties
  if not matched and addl ~= nil then
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

local function check_object(ctx, s, v, path)
  local keys = sorted_keys(v)
  check_counts_required(ctx, s, v, path, keys)
  check_dependencies(ctx, s, v, path)
  local props, pprops = s.properties, s.patternProperties
  if type(props) ~= "table" then props = nil end
  if type(pprops) ~= "table" then pprops = nil end
  for _, k in ipairs(keys) do check_property(ctx, s, v, path, k, props, pprops) end
end

local function check_ref(ctx, s, v, path)
  local ref = s["$ref"] or s["$dynamicRef"]
  if type(ref) ~= "string" then return end
  local target = resolve_ref(ctx.root, ref)
  if target == nil then
    add(ctx, path, "$ref", "cannot resolve $ref " .. show(ref) .. " (only references inside the schema are followed)")
  else
    validate(ctx, target, v, path)
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

local function check_any_of(ctx, list, v, path)
  local first
  for _, sub in ipairs(list) do
    local ok, e = try(ctx, sub, v, path)
    if ok then return end
    first = first or e
  end
  add(ctx, path, "anyOf", "must match a schema in anyOf" .. (first and (" (first failure: " .. first.message .. ")") or ""))
end

local function check_one_of(ctx, list, v, path)
  local hits = 0
  for _, sub in ipairs(list) do
    if try(ctx, sub, v, path) then hits = hits + 1 end
  end
  if hits ~= 1 then
    add(ctx, path, "oneOf", hits == 0 and "must match exactly one schema in oneOf (matches none)"
      or ("must match exactly one schema in oneOf (matches " .. hits .. ")"))
  end
end

-- allOf, anyOf, oneOf, not, if/then/else.
local function check_applicators(ctx, s, v, path)
  if type(s.allOf) == "table" then
    for _, sub in ipairs(s.allOf) do validate(ctx, sub, v, path) end
  end
  if type(s.anyOf) == "table" then check_any_of(ctx, s.anyOf, v, path) end
  if type(s.oneOf) == "table" then check_one_of(ctx, s.oneOf, v, path) end
  if s["not"] ~= nil and try(ctx, s["not"], v, path) then
    add(ctx, path, "not", "must not match the schema in not")
  end
  if s["if"] ~= nil then
    if try(ctx, s["if"], v, path) then
      if s["then"] ~= nil then validate(ctx, s["then"], v, path) end
    elseif s["else"] ~= nil then
      validate(ctx, s["else"], v, path)
    end
  end
end

validate = function(ctx, s, v, path)
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
  check_ref(ctx, s, v, path)
  if s.type ~= nil then check_type(ctx, s.type, v, path) end
  if s.enum ~= nil and type(s.enum) == "table" then check_enum(ctx, s.enum, v, path) end
  if s.const ~= nil and not equal(s.const, v) then
    add(ctx, path, "const", "must equal " .. show(s.const))
  end
  local k = kind(v)
  if k == "number" or k == "integer" then check_number(ctx, s, v, path)
  elseif k == "string" then check_string(ctx, s, v, path) end
  if k == "array" or k == "empty" then check_array(ctx, s, v, path) end
  if k == "object" or k == "empty" then check_object(ctx, s, v, path) end
  check_applicators(ctx, s, v, path)
  ctx.depth = ctx.depth - 1
end

-- ---- API -------------------------------------------------------------------------------------

--- Every error of value against schema (an empty array when it is valid). Each error is
--- {path = JSON Pointer of the value, keyword = failing keyword, message = text}.
---@param schema table|boolean
---@param value any
---@param opts table|nil formats (default true: assert known formats), max_errors (default 50)
---@return table[]
function M.errors(schema, value, opts)
  if type(schema) ~= "table" and type(schema) ~= "boolean" then
    error("mcp.schema: schema must be a table or a boolean", 2)
  end
  opts = opts or {}
  local ctx = { root = schema, errors = {}, max_errors = opts.max_errors or 50, depth = 0,
    formats = opts.formats ~= false }
  validate(ctx, schema, value, "")
  return ctx.errors
end

--- "path: message" for one error ("(root)" for the whole value).
---@param e table
---@return string
function M.describe(e)
  return (e.path == "" and "(root)" or e.path) .. ": " .. e.message
end

--- Validate value against schema. Returns true, or nil and an mcp.Error (kind "validation")
--- whose message names the first failing path and whose data.errors lists every error.
---@param schema table|boolean
---@param value any
---@param opts table|nil formats, max_errors, what (a noun for the message: "structuredContent")
---@return boolean|nil ok, mcp.Error|nil err
function M.validate(schema, value, opts)
  if type(schema) ~= "table" and type(schema) ~= "boolean" then
    error("mcp.schema.validate: schema must be a table or a boolean", 2)
  end
  local list = M.errors(schema, value, opts)
  if #list == 0 then return true end
  local msg = M.describe(list[1])
  if #list > 1 then msg = msg .. " (and " .. (#list - 1) .. " more)" end
  if opts and opts.what then msg = opts.what .. " does not match its schema: " .. msg end
  return nil, errors.new(nil, msg, { errors = list, path = list[1].path }, { kind = "validation" })
end

return M
