-- Fill the generated reference blocks of docs/API.md from the LuaCATS annotations (make docs).
--
--   lua5.4 scripts/apidoc.lua docs/API.md           rewrite the blocks in place (make docs)
--   lua5.4 scripts/apidoc.lua docs/API.md --check   exit 1 when a block is stale (make check-docs)
--
-- Run with ./lua on package.path and the built mcp/core.so on package.cpath (the Makefile does):
-- the public names are found as spec/api_doc_spec.lua finds them, by walking require("mcp").
--
-- docs/API.md is hand-written prose with generated blocks in it. A block is
--
--   <!-- api: GROUP -->
--   ... (generated: never edit between the two lines) ...
--   <!-- end api -->
--
-- where GROUP is `mcp` (the functions of require("mcp") itself), `mcp.<module>` (the functions
-- of a sub-module field such as mcp.auth, or of a module required by its path such as
-- mcp.jose), `client` (mcp.Client's methods), `err` (mcp.Error's
-- methods), or `class <name>` (the `---@field`s of a LuaCATS `---@class <name>`). A function
-- block lists every public function of its group, each from the `---` lines above its
-- definition: the description lines, `---@param` (one for each parameter) and `---@return`.
-- Functions defined under a computed name (generated methods) or in C are described where
-- lua/mcp/types.lua declares them. The run fails, naming what to fix, when a public function has
-- no annotation or lacks a `---@param`, when a group with public functions has no block, and
-- when a block names a group or class with nothing in it.
local path, mode = arg[1], arg[2]
if not path then
  io.stderr:write("usage: apidoc.lua docs/API.md [--check]\n")
  os.exit(2)
end

local TYPES_FILE = "lua/mcp/types.lua"
-- As spec/api_doc_spec.lua: tables of data, not API, and the classes whose methods are listed.
local VALUE_TABLES = {
  LOGGING_LEVELS = true, MODERN_PROTOCOL_ERROR_CODES = true, STATEFUL_PROTOCOL_VERSIONS = true,
  SUPPORTED_PROTOCOL_VERSIONS = true, core = true,
}
local CLASSES = { Client = "client", Error = "err" }
local TYPES_CLASS = { client = "Client" } -- group -> the table name types.lua declares methods on

local problems = {}
local function problem(msg) problems[#problems + 1] = msg end

local function read(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local line_cache = {}
local function lines_of(p)
  if not line_cache[p] then
    local t = {}
    for l in ((read(p) or "") .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
    line_cache[p] = t
  end
  return line_cache[p]
end

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

-- ---- the public functions -------------------------------------------------------------------

local mcp = require("mcp")
for k in pairs(getmetatable(mcp).lazy) do
  local _ = mcp[k]
end
local core = require("mcp.core")

-- groups[name] = { {name = display prefix .. key, key = key, fn = f, method = bool}, ... }
local function public_groups()
  local groups = {}
  local function add(group, display, key, fn, method)
    groups[group] = groups[group] or {}
    table.insert(groups[group], { display = display, key = key, fn = fn, method = method })
  end
  for _, k in ipairs(sorted_keys(mcp)) do
    local v = mcp[k]
    if type(v) == "function" then
      add("mcp", "mcp." .. k, k, v, false)
    elseif type(v) == "table" and CLASSES[k] then
      for _, m in ipairs(sorted_keys(v)) do
        if type(v[m]) == "function" then add(CLASSES[k], CLASSES[k] .. ":" .. m, m, v[m], true) end
      end
    elseif type(v) == "table" and not VALUE_TABLES[k] then
      for _, kk in ipairs(sorted_keys(v)) do
        if type(v[kk]) == "function" then add("mcp." .. k, "mcp." .. k .. "." .. kk, kk, v[kk], false) end
      end
    end
  end
  return groups
end

-- ---- annotations ----------------------------------------------------------------------------

-- The `---` block right above line n of a file, as its lines.
local function doc_block(lines, n)
  local block = {}
  local j = n - 1
  while j > 0 and lines[j]:match("^%s*%-%-%-") do
    table.insert(block, 1, (lines[j]:gsub("^%s*%-%-%-%s?", "")))
    j = j - 1
  end
  return block
end

-- The parameters of a definition line `function a.b(x, y)`, `x = function(self, y)`.
local function params_of(def)
  local list = def:match("function[%w_%.:%s]*%(([^)]*)%)")
  if not list then return nil end
  local out = {}
  for p in list:gmatch("[%w_%.]+") do out[#out + 1] = p end
  return out, def:match("function%s+[%w_%.]+:") ~= nil
end

-- A definition under a name the source spells (not computed, not anonymous in a call).
local function is_named_definition(def)
  return def:match("^%s*function%s+[%w_%.:]+%s*%(") or def:match("^%s*local%s+function%s+[%w_]+%s*%(")
    or def:match("^%s*[%w_%.]+%s*=%s*function%s*%(")
end

-- Where types.lua declares `function <tbl><sep><key>(`: its line number.
local function types_declaration(tbl, sep, key)
  local lines = lines_of(TYPES_FILE)
  local want = "function " .. tbl .. sep .. key .. "("
  for i, l in ipairs(lines) do
    if l:sub(1, #want) == want then return i end
  end
  return nil
end

local function core_key(fn)
  for k, v in pairs(core) do
    if v == fn then return k end
  end
  return nil
end

-- The annotation of one public function: {file, line, desc = {...}, params = {...}, returns =
-- {...}, args = {names}} or nil and why.
local function annotation_of(group, entry)
  local info = debug.getinfo(entry.fn, "S")
  local file, line
  if info.what == "C" then
    local k = core_key(entry.fn)
    line = k and types_declaration("core", ".", k)
    if not line then return nil, "a C function with no declaration in " .. TYPES_FILE end
    file = TYPES_FILE
  else
    file, line = info.source:gsub("^@", ""):gsub("^%./", ""), info.linedefined
    if not is_named_definition(lines_of(file)[line] or "") then
      local decl = TYPES_CLASS[group] and types_declaration(TYPES_CLASS[group], ":", entry.key)
      if not decl then
        return nil, ("defined under a computed name at %s:%d, and %s does not declare it"):format(file, line, TYPES_FILE)
      end
      file, line = TYPES_FILE, decl
    end
  end
  local lines = lines_of(file)
  local a = { file = file, line = line, desc = {}, params = {}, returns = {} }
  local args, colon = params_of(lines[line])
  a.args = {}
  for i, p in ipairs(args or {}) do
    -- a method defined as `function M.f(self, x)` or `f = function(client, x)`: the receiver is not shown
    local receiver = i == 1 and entry.method and not colon
    if not receiver and p ~= "..." then a.args[#a.args + 1] = p end
  end
  -- a plain line after a `---@param` or `---@return` goes on with its text
  local last_param, last_return
  for _, d in ipairs(doc_block(lines, line)) do
    local tag, rest = d:match("^@(%w+)%s*(.*)$")
    if tag == "param" then
      local name, text = rest:match("^([%w_%.]+%??)%s*(.*)$")
      if name then
        last_param, last_return = name:gsub("%?$", ""), nil
        a.params[last_param] = text
      end
    elseif tag == "return" then
      a.returns[#a.returns + 1] = rest
      last_param, last_return = nil, #a.returns
    elseif tag then
      last_param, last_return = nil, nil
    elseif last_param then
      a.params[last_param] = a.params[last_param] .. " " .. d:gsub("^%s+", "")
    elseif last_return then
      a.returns[last_return] = a.returns[last_return] .. " " .. d:gsub("^%s+", "")
    else
      a.desc[#a.desc + 1] = d
    end
  end
  if #a.desc == 0 and next(a.params) == nil and #a.returns == 0 then
    return nil, ("no annotation above %s:%d (a `---` description, `---@param`, `---@return`)"):format(file, line)
  end
  for _, p in ipairs(a.args) do
    if not a.params[p] then return nil, ("%s:%d has no `---@param %s`"):format(file, line, p) end
  end
  return a
end

-- ---- rendering ------------------------------------------------------------------------------

-- `---@param` text: its type (up to the first space outside brackets) and its description.
local function split_type(text)
  local depth, i, fun_result = 0, 1, false
  while i <= #text do
    local c = text:sub(i, i)
    if c == "(" or c == "{" or c == "<" or c == "[" then
      depth = depth + 1
    elseif c == ")" or c == "}" or c == ">" or c == "]" then
      depth = depth - 1
      if depth == 0 and c == ")" and text:sub(i + 1, i + 1) == ":" then fun_result = true end
    elseif c == "," and depth <= 0 and not fun_result then
      break
    elseif c:match("%s") and depth <= 0 then
      -- `fun(x): r` and `fun(): a, b` go on after the colon and the commas
      local prev = text:sub(i - 1, i - 1)
      if prev ~= ":" and not (fun_result and prev == ",") then break end
    end
    i = i + 1
  end
  return text:sub(1, i - 1), (text:sub(i):gsub("^%s*@?%s*", ""))
end

local function sentence(lines)
  local s = table.concat(lines, " "):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  return s
end

-- A `---@return` line: each comma-separated value's type in backquotes, its name and text after.
local function render_return(text)
  local parts, rest = {}, text
  while rest ~= "" do
    local ty, after = split_type(rest)
    local name, more = after, ""
    local depth = 0
    for i = 1, #after do
      local c = after:sub(i, i)
      if c == "(" or c == "{" or c == "[" then
        depth = depth + 1
      elseif c == ")" or c == "}" or c == "]" then
        depth = depth - 1
      elseif c == "," and depth == 0 then
        name, more = after:sub(1, i - 1), after:sub(i + 1):gsub("^%s+", "")
        break
      end
    end
    parts[#parts + 1] = "`" .. ty .. "`" .. (name ~= "" and (" " .. name) or "")
    rest = more
  end
  return table.concat(parts, ", ")
end

local function render_function(entry, a)
  local out = {}
  local head = "- `" .. entry.display .. "(" .. table.concat(a.args, ", ") .. ")`"
  if #a.returns > 0 then
    local rs = {}
    for i, r in ipairs(a.returns) do rs[i] = render_return(r) end
    head = head .. " -> " .. table.concat(rs, "; ")
  end
  out[#out + 1] = head
  local desc = sentence(a.desc)
  if desc ~= "" then out[#out + 1] = "  " .. desc end
  local ps = {}
  for _, p in ipairs(a.args) do
    local ty, text = split_type(a.params[p])
    ps[#ps + 1] = "`" .. p .. "` (`" .. ty .. "`" .. (text ~= "" and (": " .. text) or "") .. ")"
  end
  if #ps > 0 then out[#out + 1] = "  Parameters: " .. table.concat(ps, "; ") .. "." end
  return out
end

-- The `---@class name` blocks of lua/: their description and fields.
local function find_class(name)
  for p in io.popen("find lua -name '*.lua' | sort"):lines() do
    local lines = lines_of(p)
    for i, l in ipairs(lines) do
      local cname, cdesc = l:match("^%-%-%-@class%s+([%w_%.]+)%s*(.*)$")
      if cname == name then
        local fields = {}
        local j = i + 1
        while lines[j] and lines[j]:match("^%-%-%-") do
          local f, text = lines[j]:match("^%-%-%-@field%s+([%w_]+%??)%s+(.*)$")
          if f then fields[#fields + 1] = { name = f:gsub("%?$", ""), text = text } end
          j = j + 1
        end
        if #fields > 0 then return { file = p, desc = cdesc, fields = fields } end
      end
    end
  end
  return nil
end

local function render_class(name)
  local c = find_class(name)
  if not c then
    problem(("a block names class %s, but no `---@class %s` with `---@field`s is under lua/"):format(name, name))
    return {}
  end
  local out = {}
  if c.desc ~= "" then out[#out + 1] = "`" .. name .. "`: " .. c.desc .. " (" .. c.file .. ")" end
  for _, f in ipairs(c.fields) do
    local ty, text = split_type(f.text)
    out[#out + 1] = "- `" .. f.name .. "` (`" .. ty .. "`)" .. (text ~= "" and (": " .. text) or "")
  end
  return out
end

-- A module of lua/mcp/ that require("mcp") does not reach (mcp.jose, mcp.auth.dpop): its functions
-- as a group, or nil.
local function module_group(name)
  local base = "lua/" .. name:gsub("%.", "/")
  if not (name:match("^mcp%.[%w_%.]+$") and (read(base .. ".lua") or read(base .. "/init.lua"))) then return nil end
  local ok, m = pcall(require, name)
  if not ok or type(m) ~= "table" then return nil end
  local entries = {}
  for _, k in ipairs(sorted_keys(m)) do
    if type(m[k]) == "function" then
      entries[#entries + 1] = { display = name .. "." .. k, key = k, fn = m[k], method = false }
    end
  end
  return #entries > 0 and entries or nil
end

local function render_group(groups, group)
  local entries = groups[group] or module_group(group)
  if not entries then
    problem(("a block names %s, which has no public function (a field of require(\"mcp\"), a function of "
      .. "a sub-module, a method of mcp.Client or mcp.Error)"):format(group))
    return {}
  end
  local out = {}
  for _, e in ipairs(entries) do
    local a, why = annotation_of(group, e)
    if a then
      for _, l in ipairs(render_function(e, a)) do out[#out + 1] = l end
    else
      problem(e.display .. ": " .. why)
    end
  end
  return out
end

-- ---- the file -------------------------------------------------------------------------------

local text = assert(read(path), "cannot read " .. path)
local groups = public_groups()
local out, seen = {}, {}
local inside
for line in (text:gsub("\n$", "") .. "\n"):gmatch("([^\n]*)\n") do
  local key = line:match("^<!%-%- api: (.-) %-%->$")
  if inside then
    if line == "<!-- end api -->" then
      out[#out + 1] = line
      inside = nil
    end
  elseif key then
    out[#out + 1] = line
    local cname = key:match("^class%s+(.+)$")
    local body = cname and render_class(cname) or render_group(groups, key)
    if not cname then
      if seen[key] then problem("two blocks for " .. key) end
      seen[key] = true
    end
    for _, l in ipairs(body) do out[#out + 1] = l end
    inside = key
  else
    out[#out + 1] = line
  end
end
if inside then problem("the block of " .. inside .. " has no `<!-- end api -->`") end
for _, g in ipairs(sorted_keys(groups)) do
  if not seen[g] then
    local names = {}
    for _, e in ipairs(groups[g]) do names[#names + 1] = e.display end
    problem(("%s has public functions (%s) but %s has no block for them: add the lines `<!-- api: %s -->` and "
      .. "`<!-- end api -->` where it is documented, then run `make docs`"):format(g, table.concat(names, ", "), path, g))
  end
end

if #problems > 0 then
  io.stderr:write(("apidoc: %d problem(s) in %s or the annotations under lua/:\n  %s\n")
    :format(#problems, path, table.concat(problems, "\n  ")))
  os.exit(1)
end

local new = table.concat(out, "\n") .. "\n"
if mode == "--check" then
  if new ~= text then
    io.stderr:write("apidoc: " .. path .. " is stale: its generated blocks differ from the annotations; "
      .. "run `make docs` and commit it\n")
    os.exit(1)
  end
  print("check-docs: ok")
elseif new ~= text then
  local f = assert(io.open(path, "wb"))
  f:write(new)
  f:close()
  print("docs: updated " .. path)
else
  print("docs: " .. path .. " up to date")
end
