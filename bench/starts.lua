-- Server starts timed one at a time, for bench/hostloop.lua and bench/startwall.lua: each returns
-- the wall times and CPU times (s) of n starts of a stdio transport of cfg (blocking: this
-- process's; from a task: the host thread's, the helper thread that waits for exec aside).
local mcp = require("mcp")
local bc = require("benchclock")

local M = {}

--- start() outside a task: the calling thread waits for the child's exec.
function M.blocking(cfg, n)
  local w, c = {}, {}
  for i = 1, n do
    local tr = mcp.stdio_transport(cfg)
    local t0, c0 = bc.wall(), bc.cpu_ns()
    assert(tr:start())
    w[i], c[i] = bc.wall() - t0, bc.cpu_ns() - c0
    tr:close()
  end
  return w, c
end

--- start() in a task: the step that begins it (the exec is waited for on a helper thread).
function M.from_task(cfg, n)
  local w, c = {}, {}
  for i = 1, n do
    local tr, done = mcp.stdio_transport(cfg), false
    mcp.spawn(function()
      assert(tr:start())
      done = true
    end)
    local t0, c0 = bc.wall(), bc.thread_cpu_ns()
    mcp.loop.step(0)
    w[i], c[i] = bc.wall() - t0, bc.thread_cpu_ns() - c0
    while not done do mcp.loop.step(0.01) end
    tr:close()
  end
  return w, c
end

return M
