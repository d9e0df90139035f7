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
