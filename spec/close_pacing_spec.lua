-- Closing a server's stdin wakes it, and its exit often runs on the host's CPU at once (about a
-- millisecond of the step's wall time each): a loop round (one host step) closes one server's
-- stdin, the others wait for the next rounds with the loop's timeout at 0; the loop's shutdown
-- closes what is left before it reaps the children (src/close_later.h).
local mcp = require("mcp")
local sched = require("mcp.sched")
local core = require("mcp.core")
local helper = require("helper")

teardown(helper.remove_tmpdirs)

local function cats(n)
  local ts = {}
  for i = 1, n do
    ts[i] = mcp.stdio_transport({ command = "cat", stderr = "discard" })
    assert(ts[i]:start())
  end
  return ts
end

local function all_reaped(ts)
  return sched.wait_until(function()
    for _, t in ipairs(ts) do
      if not t:reaped() then return false end
    end
    return true
  end, 10000 * helper.slow())
end

describe("servers closed from a task in a host loop", function()
  local prev_budget
  -- a budget no close spends: the pacing alone holds the other closes back
  before_each(function() prev_budget = mcp.loop.set_budget(60000) end)
  after_each(function() mcp.loop.set_budget(prev_budget) end)

  it("get their stdin closed one per budgeted step, and exit on its EOF", function()
    local ts = cats(3)
    mcp.spawn(function()
      for _, t in ipairs(ts) do t:close() end
    end)
    mcp.loop.step(0) -- the task closes all three (each returns at once); the dispatch closes one
    assert.are.equal(2, core._close_later_pending())
    mcp.loop.step(0)
    assert.are.equal(1, core._close_later_pending())
    mcp.loop.step(0)
    assert.are.equal(0, core._close_later_pending())
    assert.is_true(all_reaped(ts))
    for _, t in ipairs(ts) do
      -- on its stdin's EOF, not killed after the grace period
      assert.are.equal("exited with status 0", t:exit_text())
    end
  end)

  it("keep the loop's timeout at 0 until the last is closed, also without a budget", function()
    mcp.loop.set_budget(0)
    local ts = cats(3)
    mcp.spawn(function()
      for _, t in ipairs(ts) do t:close() end
    end)
    sched.run_ready() -- the task alone, no loop step
    assert.are.equal(3, core._close_later_pending())
    -- a host that sleeps for mcp.loop.timeout() steps again at once
    local rounds = 0
    while core._close_later_pending() > 0 and rounds < 10 do
      assert.are.equal(0, mcp.loop.timeout())
      mcp.loop.step(0)
      rounds = rounds + 1
    end
    assert.are.equal(3, rounds)
    assert.is_true(all_reaped(ts))
  end)
end)

describe("a client closed outside a task", function()
  it("has its server's stdin closed and the server reaped when close() returns", function()
    local c = assert(helper.example_server())
    local t = c.transport
    assert.is_true(c:close())
    assert.are.equal(0, core._close_later_pending())
    assert.is_true(t:reaped())
    assert.are.equal("exited with status 0", t:exit_text())
  end)
end)

describe("a host that exits with a server's stdin still waiting for a step", function()
  -- PUC Lua 5.1's os.exit cannot close the state: the kernel closes the pipe at exit, after
  -- which the server writes the marker on its own time (nothing to wait for)
  local closes_state = _VERSION ~= "Lua 5.1" or type(jit) == "table"
  local it_closing = closes_state and it or pending

  it_closing("closes it before reaping the server: the server exits on EOF", function()
    local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
    local dir = helper.tmpdir()
    local mark = dir .. "/eof"
    local chunk = ("package.path = %q; package.cpath = %q"):format(package.path, package.cpath)
    local cmd = ("cd %s && timeout -s KILL %d %s -e %s spec/fixtures/close_exit.lua %s 2>&1; echo \"rc=$?\""):format(
      sh_quote(helper.root), 30 * helper.slow(), helper.lua_cmd(), sh_quote(chunk), sh_quote(mark))
    local f = assert(io.popen(cmd, "r"))
    local out = f:read("*a")
    f:close()
    assert.are.equal("pending 1\nrc=0\n", out)
    local m = io.open(mark, "r")
    assert.is_not_nil(m, "the server was stopped before its stdin reached EOF")
    assert.are.equal("eof\n", m:read("*a"))
    m:close()
  end)
end)
