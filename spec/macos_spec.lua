-- macOS is read, not run (no toolchain for it in Debian: docs/BUILDING.md "macOS"): what can be
-- checked here is what the Makefile would run there. The library names are in lazylib_spec.lua.
local helper = require("helper")

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- The command that links mcp/core.so, as `make -n` prints it for that uname.
local function link_line(uname)
  local dir = os.tmpname()
  os.remove(dir)
  local f = assert(io.popen(("cd %s && make -n -B UNAME_S=%s LUA=5.4 BUILDDIR=%s build 2>&1"):format(
    shq(helper.root), uname, shq(dir))))
  local out = f:read("*a")
  f:close()
  for line in out:gmatch("[^\n]+") do
    if line:find("-o " .. dir .. "/mcp/core.so", 1, true) then return line end
  end
  error("no link line in:\n" .. out)
end

describe("the macOS build (Makefile, read not run)", function()
  it("links a bundle whose Lua API symbols the interpreter provides (-bundle -undefined dynamic_lookup)", function()
    local line = link_line("Darwin")
    assert.truthy(line:find("-bundle -undefined dynamic_lookup", 1, true), line)
    assert.falsy(line:find("-shared", 1, true), line)
  end)

  it("links a shared object elsewhere", function()
    local line = link_line("Linux")
    assert.truthy(line:find("-shared", 1, true), line)
    assert.falsy(line:find("-bundle", 1, true), line)
  end)
end)
