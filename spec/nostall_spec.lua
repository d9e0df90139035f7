-- Hosts never stall (issue 28): close() inside a task or a host-driven loop returns at once and
-- the loop finishes the stop in the background; the spawner's own path (posix_spawn) keeps the
-- child's setup; mcp.loop.set_budget bounds one step's work. No timing thresholds: what is
-- checked is the state right after the call (the server not yet reaped) and afterwards.
local mcp = require("mcp")
local helper = require("helper")
local sched = require("mcp.sched")

local ms = helper.ms

-- A server that outlives its stdin for a second (a shell that sleeps after the test server
-- exits on EOF): "not reaped right after close()" then cannot be a race with a fast exit.
local function lingering()
  return assert(mcp.create_stdio_client("sh", { "-c", '"$0" "$1"; sleep 1', helper.lua_cmd(), helper.test_server_path },
    { stderr = "discard", request_timeout_ms = ms(30000) }))
end

local function two_clients()
  return lingering(), lingering()
end

describe("close() in a host loop", function()
  it("inside a task returns before the servers are reaped; they are reaped afterwards", function()
    local a, b = two_clients()
    local pa, pb = a.transport:pid(), b.transport:pid()
    local reaped_right_after
    local done = false
    mcp.spawn(function()
      a:close()
      b:close()
      reaped_right_after = { a.transport:reaped(), b.transport:reaped() }
      done = true
    end)
    assert.is_true(helper.wait_until(function() return done end, ms(5000)))
    assert.are.same({ false, false }, reaped_right_after)
    assert.is_true(helper.wait_until(function()
      return a.transport:reaped() and b.transport:reaped()
    end, ms(10000)))
    assert.is_false((helper.proc_exists(pa))) -- no zombie
    assert.is_false((helper.proc_exists(pb)))
  end)

  it("with the scheduler's block replaced (a host adapter) close() outside a task returns at once", function()
    local a, b = two_clients()
    local pa, pb = a.transport:pid(), b.transport:pid()
    local blocked = 0
    local saved = sched.block
    sched.block = function(pred, wait)
      blocked = blocked + 1
      return saved(pred, wait)
    end
    local ok, err = pcall(function()
      a:close()
      b:close()
    end)
    sched.block = saved
    assert(ok, err)
    assert.are.equal(0, blocked) -- close never waited through the host's block
    assert.is_false(a.transport:reaped())
    assert.is_false(b.transport:reaped())
    assert.is_true(helper.wait_until(function()
      return a.transport:reaped() and b.transport:reaped()
    end, ms(10000)))
    assert.is_false((helper.proc_exists(pa)))
    assert.is_false((helper.proc_exists(pb)))
  end)

  it("outside a task with the default block, close() still waits until the server is reaped", function()
    local a = assert(helper.test_server())
    local pid = a.transport:pid()
    a:close()
    assert.is_true(a.transport:reaped())
    assert.is_false((helper.proc_exists(pid)))
  end)
end)

-- Without a sandbox the spawner uses posix_spawn (glibc >= 2.34; spawn_fast.c), which runs no
-- code of ours in the child: the descriptor sweep and the process group come from its file
-- actions and attributes.
describe("spawning without copying the host", function()
  local function fds_of(pid)
    local list = {}
    local p = assert(io.popen(("ls /proc/%d/fd"):format(pid)))
    for fd in p:lines() do list[#list + 1] = tonumber(fd) end
    p:close()
    table.sort(list)
    return list
  end

  local function pgrp_of(pid)
    local fh = assert(io.open(("/proc/%d/stat"):format(pid)))
    local stat = fh:read("*a")
    fh:close()
    return tonumber(stat:match("^.*%)%s+%S+%s+%d+%s+(%d+)"))
  end

  it("a server inherits no fd above 2 (not even one the host opened without FD_CLOEXEC) and leads its own group", function()
    local leak = assert(io.open(helper.test_server_path, "r")) -- fopen: no O_CLOEXEC
    local c = assert(helper.test_server())
    local pid = c.transport:pid()
    local fds, pgrp = fds_of(pid), pgrp_of(pid)
    c:close()
    leak:close()
    assert.are.same({ 0, 1, 2 }, fds)
    assert.are.equal(pid, pgrp)
  end)

  it("an environment and a working directory reach the server", function()
    local first
    local c = assert(mcp.create_stdio_client("sh", { "-c", 'printf "%s %s\\n" "$NOSTALL_MARK" "$PWD" >&2; exec "$0" "$1"',
      helper.lua_cmd(), helper.test_server_path }, {
      stderr = function(line) first = first or line end, env = { NOSTALL_MARK = "mark-42" }, cwd = "/tmp",
      request_timeout_ms = ms(30000),
    }))
    assert.is_true(helper.wait_until(function() return first ~= nil end, ms(5000)))
    c:close()
    assert.are.equal("mark-42 /tmp", first)
  end)
end)

describe("mcp.loop.set_budget", function()
  after_each(function() mcp.loop.set_budget(2) end)

  it("defaults to 2 ms, returns the previous budget and rejects what is not a number >= 0", function()
    assert.are.equal(2, mcp.loop.set_budget(5))
    assert.are.equal(5, mcp.loop.set_budget(0))
    assert.has_error(function() mcp.loop.set_budget(-1) end)
    assert.has_error(function() mcp.loop.set_budget("2") end)
    assert.has_error(function() mcp.loop.set_budget(0 / 0) end)
  end)

  -- Each task spins until the clock moved on by a millisecond, so ten of them are more work than
  -- a 2 ms budget: what is checked is that a step stops short and the next steps finish the rest.
  local function spinning_tasks(n, done)
    for _ = 1, n do
      mcp.spawn(function()
        local t0 = mcp.core.now_ms()
        while mcp.core.now_ms() < t0 + 1 do end
        done[#done + 1] = true
      end)
    end
  end

  it("bounds the tasks one step resumes; the rest run on the next steps", function()
    mcp.loop.set_budget(2)
    local done = {}
    spinning_tasks(10, done)
    mcp.loop.step(0)
    assert.is_true(#done >= 1)
    assert.is_true(#done < 10)
    assert.are.equal(0, mcp.loop.timeout()) -- the host is told to step again at once
    local steps = 1
    while #done < 10 and steps < 100 do
      mcp.loop.step(0)
      steps = steps + 1
    end
    assert.are.equal(10, #done)
  end)

  it("0 removes the bound: one step runs every ready task", function()
    mcp.loop.set_budget(0)
    local done = {}
    spinning_tasks(10, done)
    mcp.loop.step(0)
    assert.are.equal(10, #done)
  end)
end)
