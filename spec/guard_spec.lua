-- spec/guard.lua (busted's helper script, named in .busted): a second finally() in one test fails
-- the test with every cleanup run, and a spec file that leaves a server process running fails.
-- The fixtures in spec/fixtures/guard/ run in a child busted from the repository root, so that
-- .busted loads the guard as it does for the suite.
local helper = require("helper")
local guard = require("guard")

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs the fixture in a child busted; its output and whether it exited 0.
local function child_busted(fixture, env)
  local busted_bin = helper.in_path("busted") or "/usr/bin/busted"
  local cmd = ("cd %s && env %s %s %s --lpath=%s --cpath=%s -o plainTerminal %s 2>&1; echo \"rc=$?\""):format(
    sh_quote(helper.root), env or "", helper.lua_cmd(), busted_bin, sh_quote(package.path),
    sh_quote(package.cpath), sh_quote("spec/fixtures/guard/" .. fixture))
  -- (not helper.sh: under a sanitizer it runs `env -u LD_PRELOAD <cmd>`, and `cd` is no program;
  -- the child loads this run's module, which under ASan needs the preloaded runtime)
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("*a")
  f:close()
  return out, out:match("rc=0%s*$") ~= nil
end

describe("guard.chained_finally", function()
  it("gives busted one function that runs every cleanup, the last registered first", function()
    local given = {}
    local fin = guard.chained_finally(function(fn) given[#given + 1] = fn end)
    local ran = {}
    fin(function() ran[#ran + 1] = 1 end)
    local ok, err = pcall(fin, function() ran[#ran + 1] = 2 end)
    assert.is_false(ok)
    assert.matches("finally%(%) called 2 times in one test", err)
    assert.are.equal(1, #given)
    given[1]()
    assert.are.same({ 2, 1 }, ran)
  end)

  it("runs the other cleanups when one raises, then raises its error", function()
    local given
    local fin = guard.chained_finally(function(fn) given = fn end)
    local ran = {}
    fin(function() ran[#ran + 1] = 1 end)
    pcall(fin, function() error("cleanup two failed", 0) end)
    local ok, err = pcall(given)
    assert.is_false(ok)
    assert.are.equal("cleanup two failed", err)
    assert.are.same({ 1 }, ran)
  end)
end)

describe("the guard in a busted run", function()
  it("fails a test that calls finally() twice, names the line, and runs both cleanups", function()
    local out, ok = child_busted("two_finally.lua")
    assert.is_false(ok, out)
    assert.matches("two_finally%.lua:6: finally%(%) called 2 times in one test", out)
    local two = out:find("cleanup two ran", 1, true)
    local one = out:find("cleanup one ran", 1, true)
    assert.is_truthy(two and one and two < one, out)
    assert.is_truthy(helper.has(out, "cleanup three ran"), out)
    assert.is_truthy(helper.has(out, "1 success / 0 failures / 1 error"), out)
  end)

  it("fails a spec file that leaves a server process running, and passes it once it closes it", function()
    local out, ok = child_busted("leak.lua", "MCP_TEST_LINGER_MS=" .. helper.ms(300))
    assert.is_false(ok, out)
    assert.is_truthy(helper.has(out, "leak.lua left 1 server process(es) running"), out)
    assert.is_truthy(helper.has(out, "1 success / 0 failures / 1 error"), out)

    out, ok = child_busted("leak.lua", "GUARD_FIXTURE_CLOSE=1")
    assert.is_true(ok, out)
    assert.is_truthy(helper.has(out, "1 success / 0 failures / 0 errors"), out)
  end)
end)
