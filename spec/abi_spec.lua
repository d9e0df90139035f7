-- A C module built for another Lua is refused by name (lua/mcp/util/abi.lua, issue 30): the build
-- writes mcp/core.abi beside core.so, and require("mcp") reads it before the module is loaded;
-- without the tag, the linker's "undefined symbol: lua_..." is turned into the same message.
-- "Another ABI" here is this run's own build (build/<abi>/) required from an interpreter of
-- another Lua version, in a subprocess.
local abi = require("mcp.util.abi")
local helper = require("helper")

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function have(cmd)
  local f = io.popen("command -v " .. cmd .. " 2>/dev/null")
  local out = f:read("*a")
  f:close()
  return out ~= ""
end

-- This run's module and its tag.
local SO = abi.module_path()
local BUILT = SO and abi.tag_of(SO)
local LUA_PATH = helper.root .. "/lua/?.lua;" .. helper.root .. "/lua/?/init.lua"

-- An installed interpreter that cannot load BUILT.
local WRONG
for _, c in ipairs({ { "lua5.1", "5.1" }, { "lua5.3", "5.3" }, { "lua5.4", "5.4" }, { "luajit", "luajit" },
  { "lua5.2", "5.2" } }) do
  if not WRONG and BUILT and not abi.compatible(BUILT, c[2]) and not abi.compatible(c[2], BUILT) and have(c[1]) then
    WRONG = c
  end
end

-- Run code under interp with the given module directory first on LUA_CPATH; output and exit code.
local function run(interp, cdir, code, script)
  -- under ASan the child keeps LD_PRELOAD: it loads this run's sanitized module
  local cmd = ("LUA_PATH=%s LUA_CPATH=%s %s %s 2>&1; echo \"__EXIT:$?\""):format(
    shq(LUA_PATH .. ";;"), shq(cdir .. "/?.so"), interp, script or ("-e " .. shq(code)))
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("*a")
  f:close()
  return out:gsub("__EXIT:%d+%s*$", ""), tonumber(out:match("__EXIT:(%d+)%s*$"))
end

local function copy(from, to)
  local fi = assert(io.open(from, "rb"))
  local fo = assert(io.open(to, "wb"))
  fo:write(fi:read("*a"))
  fi:close()
  fo:close()
end

describe("mcp.util.abi", function()
  it("knows which builds load into which interpreter", function()
    assert.is_true(abi.compatible("5.4", "5.4"))
    assert.is_true(abi.compatible("5.1", "luajit")) -- LuaJIT has the 5.1 API
    assert.is_false(abi.compatible("luajit", "5.1")) -- LuaJIT's headers add 5.2 names (luaL_setfuncs)
    assert.is_false(abi.compatible("5.1", "5.4"))
    assert.is_false(abi.compatible("5.3", "5.4"))
  end)

  it("names the running interpreter", function()
    local want = rawget(_G, "jit") and "luajit" or _VERSION:match("%d+%.%d+")
    assert.are.equal(want, abi.running())
  end)

  it("finds the tag this build wrote beside core.so", function()
    assert.is_string(SO)
    assert.is_truthy(({ ["5.1"] = 1, luajit = 1, ["5.2"] = 1, ["5.3"] = 1, ["5.4"] = 1 })[BUILT], tostring(BUILT))
    assert.is_true(abi.compatible(BUILT, abi.running()))
  end)

  it("words the refusal with both versions and what to run", function()
    local m = abi.message("/x/mcp/core.so", "5.1")
    assert.is_truthy(m:find("mcp.core (/x/mcp/core.so) was built for Lua 5.1, and this is ", 1, true), m)
    assert.is_truthy(m:find("Run it with lua5.1 or luajit", 1, true), m)
    assert.is_truthy(m:find("luarocks --lua-version", 1, true), m)
  end)
end)

describe("a module of another Lua", function()
  local tmp
  before_each(function()
    tmp = os.tmpname()
    os.remove(tmp)
    assert.is_true(os.execute("mkdir -p " .. shq(tmp .. "/mcp")) ~= false)
  end)
  after_each(function()
    os.execute("rm -rf " .. shq(tmp))
  end)

  it("is refused by name from its tag, before the linker sees it", function()
    if not WRONG then pending("no installed interpreter of another ABI than " .. tostring(BUILT)) return end
    local out, code = run(WRONG[1], SO:gsub("/mcp/core%.so$", ""), 'require("mcp")')
    assert.are_not.equal(0, code)
    local label = BUILT == "luajit" and "LuaJIT" or ("Lua " .. BUILT)
    assert.is_truthy(out:find("was built for " .. label .. ", and this is ", 1, true), out)
    assert.is_nil(out:find("undefined symbol", 1, true), out)
  end)

  it("without a tag, has the linker's undefined symbol translated into the same message", function()
    if not WRONG then pending("no installed interpreter of another ABI than " .. tostring(BUILT)) return end
    copy(SO, tmp .. "/mcp/core.so") -- no core.abi beside it
    local out, code = run(WRONG[1], tmp, 'require("mcp")')
    assert.are_not.equal(0, code)
    assert.is_truthy(out:find("lua-mcp: the C module mcp.core (" .. tmp .. "/mcp/core.so) was built for another Lua",
      1, true), out)
    assert.is_truthy(out:find("the loader said: undefined symbol: lua", 1, true), out)
  end)

  it("is refused by bin/mcp-lua with the message naming the Lua to run it with", function()
    if not WRONG then pending("no installed interpreter of another ABI than " .. tostring(BUILT)) return end
    local out, code = run(WRONG[1], SO:gsub("/mcp/core%.so$", ""), nil, helper.root .. "/bin/mcp-lua --help")
    assert.are.equal(4, code)
    assert.is_truthy(out:find("mcp-lua: cannot load lua-mcp: lua-mcp: the C module mcp.core", 1, true), out)
    assert.is_truthy(out:find("Run it with lua", 1, true), out)
  end)

  it("with a tag naming this Lua loads as before", function()
    copy(SO, tmp .. "/mcp/core.so")
    local fh = assert(io.open(tmp .. "/mcp/core.abi", "wb"))
    fh:write(BUILT, "\n")
    fh:close()
    local out, code = run(helper.lua_cmd(), tmp, 'local m = require("mcp") io.write(type(m.create_stdio_client))')
    assert.are.equal(0, code, out)
    assert.are.equal("function", out)
  end)
end)

describe("bin/mcp-lua run from a checkout with nothing on the paths", function()
  local CLEAN = "env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4"
    .. " -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4 -u LUA_INIT"

  local function exists(p)
    local fh = io.open(p, "rb")
    if fh then fh:close() end
    return fh ~= nil
  end

  local function cli(interp, args)
    local f = assert(io.popen(("%s %s %s %s 2>&1; echo \"__EXIT:$?\""):format(CLEAN, interp,
      shq(helper.root .. "/bin/mcp-lua"), args)))
    local out = f:read("*a")
    f:close()
    return out:gsub("__EXIT:%d+%s*$", ""), tonumber(out:match("__EXIT:(%d+)%s*$"))
  end

  it("uses the checkout's lua/ and its build for this interpreter", function()
    local running = abi.running()
    if not exists(helper.root .. "/build/" .. running .. "/mcp/core.so") then
      pending("no build/" .. running .. " in this checkout")
      return
    end
    local out, code = cli(helper.lua_cmd(), "--version")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("mcp-lua (lua-mcp ", 1, true), out)
  end)

  -- A checkout of its own (bin/ copied, lua/ linked, build/ empty), so that no suite building
  -- another Lua at the same time (CI runs several at once) changes what this one finds.
  it("names the Lua to use when the checkout has no build for this one", function()
    local fh = assert(io.popen("mktemp -d"))
    local tmp = fh:read("*l")
    fh:close()
    -- a build for another Lua only (an empty file: the CLI only looks for it)
    local other = abi.running() == "5.4" and "5.3" or "5.4"
    local setup = ("mkdir -p %s/bin %s/build/%s/mcp && : > %s/build/%s/mcp/core.so && cp %s %s/bin/ && ln -s %s %s/lua")
      :format(shq(tmp), shq(tmp), other, shq(tmp), other, shq(helper.root .. "/bin/mcp-lua"), shq(tmp),
        shq(helper.root .. "/lua"), shq(tmp))
    local ok = os.execute(setup)
    assert.is_true(ok == true or ok == 0, setup)
    local f = assert(io.popen(("%s %s %s --version 2>&1; echo \"__EXIT:$?\""):format(CLEAN, helper.lua_cmd(),
      shq(tmp .. "/bin/mcp-lua"))))
    local out = f:read("*a")
    f:close()
    os.execute("rm -rf " .. shq(tmp))
    local code = tonumber(out:match("__EXIT:(%d+)%s*$"))
    assert.are.equal(4, code, out)
    assert.is_truthy(out:find("mcp-lua: this checkout has no build of lua-mcp for ", 1, true), out)
    assert.is_truthy(out:find("it has " .. other .. "; run it with lua" .. other, 1, true), out)
    assert.is_truthy(out:find("build it for this Lua with `make LUA=", 1, true), out)
  end)
end)
