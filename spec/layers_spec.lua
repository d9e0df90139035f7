-- The layers of lua/mcp/ and the direction of their dependencies (docs/ARCHITECTURE.md, "Layers"):
-- core <- auth, core <- agent, {core, auth, agent} <- hub and config, everything <- Neovim. A file
-- requires, at load, only modules of its own layer or of a layer it may use; a require of another
-- layer inside a function (a lazy load, run only when that feature is used) must be one that
-- ARCHITECTURE.md lists under "Lazy loads across layers". And a stdio client that calls a tool
-- loads no module outside the core.
local helper = require("helper")

local ROOT = helper.root

-- Layer of a module, by its name (mcp.x.y); nil for a name that is no module of lua/mcp/.
local LAYER_PATTERNS = {
  { "^mcp%.auth$", "auth" }, { "^mcp%.auth%.", "auth" }, { "^mcp%.fetch$", "auth" }, { "^mcp%.jose$", "auth" },
  { "^mcp%.tools$", "agent" }, { "^mcp%.tools%.", "agent" }, { "^mcp%.schema$", "agent" },
  { "^mcp%.schema%.", "agent" }, { "^mcp%.elicitation$", "agent" }, { "^mcp%.elicitation%.", "agent" },
  { "^mcp%.skills$", "agent" }, { "^mcp%.skills%.", "agent" }, { "^mcp%.handlers%.", "agent" },
  { "^mcp%.content$", "agent" },
  { "^mcp%.hub$", "hub" }, { "^mcp%.config$", "hub" }, { "^mcp%.config%.", "hub" },
  { "^mcp%.nvim$", "nvim" }, { "^mcp%.nvim%.", "nvim" }, { "^mcp%.health$", "nvim" },
  { "^mcp$", "core" }, { "^mcp%.", "core" },
}
-- Which layers each layer may require.
local MAY_USE = {
  core = { core = true },
  auth = { core = true, auth = true },
  agent = { core = true, agent = true },
  hub = { core = true, auth = true, agent = true, hub = true },
  nvim = { core = true, auth = true, agent = true, hub = true, nvim = true },
}

local function layer_of(module)
  for _, p in ipairs(LAYER_PATTERNS) do
    if module:match(p[1]) then return p[2] end
  end
  return nil
end

local read = helper.read_file

local function module_of(path)
  return (path:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))
end

local function lua_files()
  local out = {}
  local p = io.popen("cd '" .. ROOT .. "' && find lua/mcp -name '*.lua' | sort")
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- The documented lazy loads: allowed[file][module] = true, from ARCHITECTURE.md's bullets
-- "- `lua/mcp/x.lua` -> `mcp.a`, `mcp.b`" under "Lazy loads across layers".
local function documented_lazy_loads()
  local doc = read(ROOT .. "/docs/ARCHITECTURE.md")
  local section = doc:match("\nLazy loads across layers[^\n]*\n(.-)\n\n")
  assert(section, "docs/ARCHITECTURE.md has no \"Lazy loads across layers\" list")
  local allowed = {}
  for line in section:gmatch("[^\n]+") do
    local file, mods = line:match("^%- `(lua/mcp/[^`]+)` %-> (.*)$")
    if file then
      allowed[file] = allowed[file] or {}
      -- the modules before the parenthesis that says what loads them
      for m in mods:gsub("%s*%(.*$", ""):gmatch("`(mcp[%w_%.]*)`") do allowed[file][m] = true end
    end
  end
  return allowed
end

-- Every require("mcp...") of a file: {module, line, lazy}; lazy when the line is indented (inside
-- a function: the codebase indents every body).
local function requires_of(path)
  local out, n = {}, 0
  for line in (read(ROOT .. "/" .. path) .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if not line:match("^%s*%-%-") then
      for m in line:gmatch("require%s*%(?%s*[\"'](mcp[%w_%.]*)[\"']") do
        out[#out + 1] = { module = m, line = n, lazy = line:match("^%s") ~= nil }
      end
    end
  end
  return out
end

describe("layers of lua/mcp/", function()
  it("puts every file in a layer", function()
    for _, f in ipairs(lua_files()) do
      assert(layer_of(module_of(f)), f .. " is in no layer: add it to LAYER_PATTERNS and docs/ARCHITECTURE.md")
    end
  end)

  it("requires only what a layer may use, and across layers only the documented lazy loads", function()
    local allowed = documented_lazy_loads()
    local used = {}
    local bad = {}
    for _, f in ipairs(lua_files()) do
      local from = layer_of(module_of(f))
      for _, r in ipairs(requires_of(f)) do
        local to = layer_of(r.module)
        if to and not MAY_USE[from][to] then
          if not r.lazy then
            bad[#bad + 1] = ("%s:%d (%s) requires %s (%s) at load"):format(f, r.line, from, r.module, to)
          elseif not (allowed[f] and allowed[f][r.module]) then
            bad[#bad + 1] = ("%s:%d (%s) loads %s (%s) lazily, and docs/ARCHITECTURE.md does not list it")
              :format(f, r.line, from, r.module, to)
          else
            used[f .. " " .. r.module] = true
          end
        end
      end
    end
    for f, mods in pairs(allowed) do
      for m in pairs(mods) do
        if not used[f .. " " .. m] then
          bad[#bad + 1] = ("docs/ARCHITECTURE.md lists a lazy load of %s by %s that is not there (or needs no listing)")
            :format(m, f)
        end
      end
    end
    table.sort(bad)
    assert(#bad == 0, "dependencies against the layers' direction:\n  " .. table.concat(bad, "\n  "))
  end)

  it("a stdio client that calls a tool loads only the core", function()
    local script = [[
      local mcp = require("mcp")
      local c = assert(mcp.create_stdio_client(arg[1], { arg[2] }, { stderr = "discard" }))
      assert(c:call_tool("echo", { message = "hi" }))
      c:close()
      for k in pairs(package.loaded) do
        if k == "mcp" or k:match("^mcp%.") then print(k) end
      end
    ]]
    local path = os.tmpname()
    helper.write_file(path, script)
    local cmd = ("cd '%s' && env -u LUA_INIT LUA_PATH='./lua/?.lua;./lua/?/init.lua' LUA_CPATH='%s' %s %s %s %s 2>&1; echo \"rc=$?\"")
      :format(ROOT, package.cpath, helper.lua_cmd(), path, helper.lua_cmd(), helper.test_server_path)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    os.remove(path)
    assert(out:match("rc=0\n?$"), out)
    local outside = {}
    for m in out:gmatch("(mcp[%w_%.]*)\n") do
      if layer_of(m) ~= "core" then outside[#outside + 1] = m .. " (" .. tostring(layer_of(m)) .. ")" end
    end
    assert.are.same({}, outside)
    assert.truthy(out:find("mcp.transport.stdio\n", 1, true))
  end)
end)
