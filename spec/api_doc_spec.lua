-- docs/API.md is the one complete reference of the public API. This spec walks what
-- require("mcp") returns and fails on a public name that API.md does not mention, or on a name
-- API.md mentions that no longer exists. How names are matched:
--   * every field of `mcp` (mcp.create_client, mcp.REDIRECT_FOLLOW, ...) must appear as `mcp.<name>`;
--   * every field of a sub-module table (mcp.tools, mcp.auth, mcp.loop, ...) as `mcp.<module>.<name>`,
--     where `mcp.json.encode/decode` names both, and `mcp.errors.*` names every field of mcp.errors;
--   * every method of mcp.Client as `client:<method>`, and of mcp.Error as `err:<method>`.
-- A module documented through its fields (`mcp.loop.step`) counts as named (`mcp.loop`). Type names
-- (a LuaCATS `---@class mcp.Skill`, a C userdata metatable `"mcp.pkey"`) may appear in API.md too.
-- Names starting with `_` are private; mcp.core (the C module under the Lua layer) is documented
-- as a whole, not field by field; value tables (lists, code tables) need only their own name.
local helper = require("helper")
local mcp = require("mcp")
-- Fields that load on first use (lua/mcp/init.lua) are public too: load them all before the walk.
for k in pairs(getmetatable(mcp).lazy) do
  local _ = mcp[k]
end

local API_MD = "docs/API.md"

-- Tables whose fields are data, not API (their own name must still be documented).
local VALUE_TABLES = {
  LOGGING_LEVELS = true, MODERN_PROTOCOL_ERROR_CODES = true, STATEFUL_PROTOCOL_VERSIONS = true,
  SUPPORTED_PROTOCOL_VERSIONS = true, core = true,
}
-- Classes: their methods are documented as `<prefix>:<method>`.
local CLASSES = { Client = "client", Error = "err" }

local read = helper.read_file

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do
    if type(k) == "string" then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function is_private(k) return k:sub(1, 1) == "_" end

--- Every public name, as API.md must spell it.
local function public_names()
  local names = {}
  for _, k in ipairs(sorted_keys(mcp)) do
    if not is_private(k) then
      local v = mcp[k]
      names[#names + 1] = "mcp." .. k
      if CLASSES[k] then
        for _, m in ipairs(sorted_keys(v)) do
          if not is_private(m) and type(v[m]) == "function" then names[#names + 1] = CLASSES[k] .. ":" .. m end
        end
      elseif type(v) == "table" and not VALUE_TABLES[k] then
        for _, kk in ipairs(sorted_keys(v)) do
          if not is_private(kk) then names[#names + 1] = "mcp." .. k .. "." .. kk end
        end
      end
    end
  end
  return names
end

--- The names API.md mentions: the set of spelled names, and the wildcard modules (`mcp.x.*`).
local function documented_names(doc)
  local names, wild, order = {}, {}, {}
  local function add(n)
    if not names[n] then
      names[n] = true
      order[#order + 1] = n
    end
  end
  local pos = 1
  while true do
    local s, e = doc:find("mcp%.[%a_][%w_%.]*", pos)
    if not s then break end
    local before = s > 1 and doc:sub(s - 1, s - 1) or ""
    local name = doc:sub(s, e)
    pos = e + 1
    if not before:match("[%w_%-/]") then
      if name:sub(-1) == "." then
        name = name:sub(1, -2)
        if doc:sub(e + 1, e + 1) == "*" then wild[name] = true end
      end
      add(name)
      -- `mcp.json.encode/decode`: the siblings after each slash
      local parent = name:match("^(.*)%.[%w_]+$")
      local p = e + 1
      while parent do
        local ss, ee, sib = doc:find("^/([%a_][%w_]*)", p)
        if not ss then break end
        add(parent .. "." .. sib)
        p = ee + 1
      end
    end
  end
  for prefix, class in pairs(CLASSES) do
    for m in doc:gmatch("%f[%w_]" .. class .. ":([%a_][%w_]*)") do add(class .. ":" .. m) end
    names[prefix] = nil
  end
  return names, wild, order
end

--- Type names: LuaCATS classes under lua/ (lua/mcp/types.lua among them), userdata metatable names in src/.
local function type_names()
  local names = {}
  local files = io.popen("find lua src -name '*.lua' -o -name '*.c' -o -name '*.h'")
  for path in files:lines() do
    local text = read(path)
    for n in text:gmatch("%-%-%-@class%s+(mcp%.[%w_%.]+)") do names[n] = true end
    for n in text:gmatch("#define%s+[%w_]+_MT%s+\"(mcp%.[%w_%.]+)\"") do names[n] = true end
  end
  files:close()
  return names
end

--- The file of a Lua module of this tree, or nil (package.searchpath is not in Lua 5.1).
local function module_file(mod)
  local base = "lua/" .. mod:gsub("%.", "/")
  for _, path in ipairs({ base .. ".lua", base .. "/init.lua" }) do
    local f = io.open(path, "rb")
    if f then
      f:close()
      return path
    end
  end
  return nil
end

--- Does a documented name exist? A field path of `mcp`, a method of a class, or a Lua module
--- of this tree (require("mcp.nvim"), require("mcp.auth.dpop")) and a path inside it.
local function exists(name)
  for prefix, class in pairs(CLASSES) do
    local m = name:match("^" .. class .. ":(.+)$")
    if m then return type(mcp[prefix][m]) == "function" end
  end
  local parts = {}
  for p in name:gmatch("[^%.]+") do parts[#parts + 1] = p end
  local v = mcp
  for i = 2, #parts do
    if type(v) ~= "table" or v[parts[i]] == nil then
      -- not a field: a module file of lua/mcp/ (loaded only where it can be, e.g. not mcp.nvim)
      for j = #parts, 2, -1 do
        local mod = table.concat(parts, ".", 1, j)
        if module_file(mod) then
          local ok, m = pcall(require, mod)
          if not ok then return true end
          v = m
          for k = j + 1, #parts do
            if type(v) ~= "table" or v[parts[k]] == nil then return false end
            v = v[parts[k]]
          end
          return true
        end
      end
      return false
    end
    v = v[parts[i]]
  end
  return true
end

describe("docs/API.md", function()
  local doc = read(API_MD)
  local documented, wild, order = documented_names(doc)
  local types = type_names()
  local function named(n)
    if documented[n] then return true end
    local module = n:match("^(mcp%.[%w_]+)%.")
    if module and wild[module] then return true end
    for d in pairs(documented) do
      if d:sub(1, #n + 1) == n .. "." then return true end
    end
    return false
  end

  it("names every public name of require(\"mcp\")", function()
    local missing = {}
    for _, n in ipairs(public_names()) do
      if not named(n) then missing[#missing + 1] = n end
    end
    assert(#missing == 0, ("%s does not name %d public name(s). Add each where its module is documented "
      .. "(spelled exactly so: `mcp.x` for a field of mcp, `mcp.module.x` for a field of a sub-module, "
      .. "`client:x` for a client method), with its arguments, results and errors:\n  %s")
      :format(API_MD, #missing, table.concat(missing, "\n  ")))
  end)

  it("names nothing that no longer exists", function()
    local stale = {}
    for _, n in ipairs(order) do
      if documented[n] and not types[n] and not exists(n) then stale[#stale + 1] = n end
    end
    assert(#stale == 0, ("%s names %d thing(s) that require(\"mcp\") does not have (no such field, method "
      .. "or module under lua/mcp/). Rename or remove them in %s:\n  %s")
      :format(API_MD, #stale, API_MD, table.concat(stale, "\n  ")))
  end)
end)
