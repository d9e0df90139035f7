-- scripts/apidoc.lua (make docs / make check-docs): docs/API.md's reference blocks are what the
-- annotations give, and the generator refuses what would let the reference drift.
local helper = require("helper")

local read = helper.read_file

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Run the generator on a file under the suite's interpreter and module; returns ok, output.
-- `first` is a directory searched before ./lua (a module with an annotation taken out).
local function apidoc(path, check, first)
  local lpath = (first and (first .. "/?.lua;" .. first .. "/?/init.lua;") or "") .. "./lua/?.lua;./lua/?/init.lua"
  -- the exit status as text: popen's close() gives none on Lua 5.1 and LuaJIT
  local cmd = ("cd %s && env -u LUA_INIT LUA_PATH=%s LUA_CPATH=%s %s scripts/apidoc.lua %s %s 2>&1; echo \"rc=$?\""):format(
    sh_quote(helper.root), sh_quote(lpath), sh_quote(package.cpath),
    helper.lua_cmd(), sh_quote(path), check and "--check" or "")
  local p = io.popen(cmd)
  local out = p:read("*a")
  p:close()
  local rc = out:match("rc=(%d+)\n?$")
  return rc == "0", out
end

local function temp_copy(text)
  local path = os.tmpname()
  helper.write_file(path, text)
  return path
end

describe("scripts/apidoc.lua", function()
  local api = read(helper.root .. "/docs/API.md")

  it("finds docs/API.md current (make check-docs)", function()
    local ok, out = apidoc("docs/API.md", true)
    assert(ok, "docs/API.md is stale or an annotation is missing; run `make docs`:\n" .. out)
  end)

  it("rewrites a block whose text differs from the annotations, and --check fails on it", function()
    local stale = api:gsub("(<!%-%- api: err %-%->\n)[^\n]*\n", "%1- `err:is(x)` hand-edited\n", 1)
    assert.are_not.equal(api, stale)
    local path = temp_copy(stale)
    local ok, out = apidoc(path, true)
    assert.is_false(ok)
    assert.truthy(out:find("is stale", 1, true))
    ok, out = apidoc(path, false)
    assert(ok, out)
    assert.equal(api, read(path))
    os.remove(path)
  end)

  it("fails on a block naming a group with no public function, and on a group with no block", function()
    local path = temp_copy((api:gsub("<!%-%- api: mcp%.roots %-%->", "<!-- api: mcp.no_such_module -->", 1)))
    local ok, out = apidoc(path, false)
    os.remove(path)
    assert.is_false(ok)
    assert.truthy(out:find("a block names mcp.no_such_module", 1, true), out)
    assert.truthy(out:find("mcp.roots has public functions (mcp.roots.check", 1, true), out)
  end)

  it("fails on a public function without its annotation, naming the file and line", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. sh_quote(dir .. "/mcp/tools")))
    local src = read(helper.root .. "/lua/mcp/tools/drift.lua")
    -- fingerprint_tools (mcp.fingerprint_tools) loses its `---` lines
    local bare = src:gsub("%-%-%- Fingerprint tools:[^\n]*\n[^\n]*\n%-%-%-@param tools table\n%-%-%-@return[^\n]*\n", "", 1)
    assert.are_not.equal(src, bare)
    helper.write_file(dir .. "/mcp/tools/drift.lua", bare)
    local ok, out = apidoc("docs/API.md", true, dir)
    os.execute("rm -rf " .. sh_quote(dir))
    assert.is_false(ok)
    assert.truthy(out:find("mcp.fingerprint_tools: no annotation above " .. dir .. "/mcp/tools/drift.lua:", 1, true), out)
  end)

  it("fails on a class block naming no annotated class", function()
    local path = temp_copy((api:gsub("<!%-%- api: class mcp%.Error %-%->", "<!-- api: class mcp.NoSuchClass -->", 1)))
    local ok, out = apidoc(path, false)
    os.remove(path)
    assert.is_false(ok)
    assert.truthy(out:find("no `---@class mcp.NoSuchClass`", 1, true), out)
  end)
end)
