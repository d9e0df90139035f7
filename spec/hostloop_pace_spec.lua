-- A host loop's step starts at most one server (sched.pace_start): posix_spawn waits until the
-- kernel has run the child up to its exec, which a loaded machine stretches far past the step
-- budget, so starting N servers from tasks is spread over N steps. Blocking paths, mcp.run() and
-- an unbounded budget start them without pacing.
local mcp = require("mcp")

local function start_in_tasks(n, at, step_no)
  local ts = {}
  for i = 1, n do
    mcp.spawn(function()
      local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
      ts[i] = t
      assert(t:start())
      at[i] = step_no()
    end)
  end
  return ts
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function distinct(list)
  local seen = {}
  for _, v in pairs(list) do
    if seen[v] then return false end
    seen[v] = true
  end
  return true
end

describe("servers started from tasks in a host loop", function()
  local prev_budget, ts
  before_each(function() prev_budget = mcp.loop.set_budget(2) end)
  after_each(function()
    mcp.loop.set_budget(prev_budget)
    local sched = require("mcp.sched")
    sched.wait_until(function() return sched.live() == 0 end, 5000) -- every start done
    for _, t in pairs(ts or {}) do t:close() end
    mcp.run()
  end)

  it("are started one per mcp.loop.step(0), in as many steps as servers", function()
    local at, steps = {}, 0
    ts = start_in_tasks(4, at, function() return steps end)
    while count(at) < 4 and steps < 100 do
      steps = steps + 1
      mcp.loop.step(0)
    end
    assert.are.equal(4, count(at))
    assert.is_true(distinct(at), "one start per step")
    for i = 1, 4 do assert.is_truthy(ts[i]:pid()) end
  end)

  it("are started one per step also when several waited for the same step", function()
    local at, steps = {}, 0
    ts = start_in_tasks(6, at, function() return steps end)
    steps = 1
    mcp.loop.step(0) -- one starts, five wait for the next step: released together, one starts
    while count(at) < 6 and steps < 100 do
      steps = steps + 1
      mcp.loop.step(0)
    end
    assert.are.equal(6, count(at))
    assert.is_true(distinct(at), "one start per step")
  end)

  it("keep loop.timeout() at 0 while a start waits for the next step", function()
    local at, steps = {}, 0
    ts = start_in_tasks(2, at, function() return steps end)
    steps = 1
    mcp.loop.step(0)
    assert.are.equal(1, count(at))
    assert.are.equal(0, mcp.loop.timeout())
    steps = 2
    mcp.loop.step(0)
    assert.are.equal(2, count(at))
  end)

  it("are all started in one step with an unbounded budget (set_budget(0))", function()
    mcp.loop.set_budget(0)
    local at = {}
    ts = start_in_tasks(4, at, function() return 1 end)
    mcp.loop.step(0)
    assert.are.equal(4, count(at))
  end)
end)
