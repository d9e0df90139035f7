-- A server started from a task starts on a helper thread (issue 28, src/transports/spawn_job.c):
-- the host's step does not sleep until the child reaches exec; the task waits for it, and
-- start() still returns true once the program runs or nil with the reason it did not. A close or
-- the Lua state's end while a start is in flight leaves no child behind.
local helper = require("helper")
local mcp = require("mcp")
local sched = require("mcp.sched")

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local STRACE = helper.strace()

-- Run spec/fixtures/spawn_slow_exec.lua with every child's execve held back for a second.
local function slow_exec_run()
  local cmd = ("cd %s && LUA_PATH=%s LUA_CPATH=%s %s -f -o /dev/null -e trace=execve -e %s %s %s 2>&1; echo \"rc=$?\""):format(
    shq(helper.root), shq(package.path .. ";;"), shq(package.cpath .. ";;"), STRACE,
    "inject=execve:delay_enter=1000000:when=1+", helper.lua_cmd(), "spec/fixtures/spawn_slow_exec.lua")
  local f = assert(io.popen("sh -c " .. shq(cmd), "r"))
  local out = f:read("*a")
  f:close()
  local r = { out = out }
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do r[k] = v end
  return r
end

local it_traced = STRACE ~= nil and it or pending

describe("a server started from a task", function()
  it_traced("does not hold the host's step until the child reaches exec; close and the state's end during the start leave no child", function()
    local r = slow_exec_run()
    assert.are.equal("0", r.rc, r.out)
    -- the step began the start and returned; the task went on only once the program ran
    assert.are.equal("true", r.open_after_step, r.out)
    assert.are.equal("false", r.returned_after_step, r.out)
    assert.are.equal("true", r.started, r.out)
    assert.are.equal("true", r.has_pid, r.out)
    -- closed while starting: the start says so, and the child is reaped once it ran
    assert.are.equal("true", r.open2, r.out)
    assert.are.equal("nil", r.start2, r.out)
    assert.are.equal("the transport was closed while the server was starting", r.why2, r.out)
    assert.are.equal("true", r.reaped2, r.out)
    assert.are.equal("0", r.children, r.out)
    assert.are.equal("true", r.open3, r.out)
  end)

  describe("whose exec fails", function()
    local bad
    before_each(function() bad = helper.unrunnable_program() end)
    after_each(helper.remove_tmpdirs)

    it("fails start() with exec's error, the transport closed with it, and leaves no child", function()
      local before = mcp.core.children()
      local t = mcp.stdio_transport({ command = bad, stderr = "discard" })
      local res
      mcp.spawn(function() res = { t:start() } end)
      assert.is_true(sched.wait_until(function() return res ~= nil end, 10000))
      assert.is_nil(res[1])
      assert.are.equal(("cannot start '%s': Exec format error"):format(bad), res[2])
      assert.is_false(t:is_open())
      assert.are.equal(("did not start (cannot start '%s': Exec format error)"):format(bad), t.handle:exit_text())
      t:close()
      assert.are.equal(before, mcp.core.children())
    end)
  end)

  it("gives its pid at once while the start is in flight (waiting for the rest of it)", function()
    local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
    local res
    mcp.spawn(function() res = { t:start() } end)
    mcp.loop.step(0)
    assert.is_true(t:is_open())
    local pid = t:pid()
    assert.is_true(type(pid) == "number" and pid > 0)
    assert.is_true(sched.wait_until(function() return res ~= nil end, 10000))
    assert.is_true(res[1])
    t:close()
    assert.is_true(t.handle:reaped())
  end)
end)
