-- A host loop's step starts at most one server (sched.pace_start): what a start costs the host's
-- thread (pipes, the sandbox's ruleset, the helper thread that waits for the child's exec) adds up
-- past the step budget with many, so starting N servers from tasks is spread over N steps.
-- Blocking paths, mcp.run() and an unbounded budget start them without pacing, also the ones
-- already waiting for a step. A start from a task runs on a helper thread and the task waits for
-- it, so the step a start began in is told by the transport being open (is_open) after it, not
-- by the task going on.
local mcp = require("mcp")
local sched = require("mcp.sched")
local helper = require("helper")

-- A task that starts a `cat` server into ts[key]; mark() records the step its start began in.
local function start_in_task(ts, key)
  mcp.spawn(function()
    local t = mcp.stdio_transport({ command = "cat", stderr = "discard" })
    ts[key] = t
    assert(t:start())
  end)
end

local function start_in_tasks(n)
  local ts = {}
  for i = 1, n do start_in_task(ts, i) end
  return ts
end

-- at[key] = step for every transport of ts whose start has begun and was not marked yet.
local function mark(ts, at, step)
  for key, t in pairs(ts) do
    if at[key] == nil and t:is_open() then at[key] = step end
  end
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

-- A budget that no start spends: in a step, a second start waits for the next step because of the
-- pacing alone, never because the first one spent the budget (which a loaded machine may do).
local WIDE_BUDGET = 60000

describe("servers started from tasks in a host loop", function()
  local prev_budget, ts
  before_each(function() prev_budget = mcp.loop.set_budget(2) end)
  after_each(function()
    mcp.loop.set_budget(prev_budget)
    -- bounded, not mcp.run(): a start that never comes must fail the test, not hang the suite
    local drained = sched.wait_until(function() return sched.live() == 0 and not sched.has_ready() end, 10000)
    for _, t in pairs(ts or {}) do t:close() end
    ts = nil
    assert(drained, "tasks still wait to start their server")
  end)

  it("are started one per mcp.loop.step(0), in as many steps as servers", function()
    local at, steps = {}, 0
    ts = start_in_tasks(4)
    while count(at) < 4 and steps < 100 do
      steps = steps + 1
      mcp.loop.step(0)
      mark(ts, at, steps)
    end
    assert.are.equal(4, count(at))
    assert.is_true(distinct(at), "one start per step")
    for i = 1, 4 do assert.is_truthy(ts[i]:pid()) end
  end)

  it("are started one per step also when several waited for the same step", function()
    local at, steps = {}, 1
    ts = start_in_tasks(6)
    mcp.loop.step(0) -- one starts, five wait for the next step: released together, one starts
    mark(ts, at, steps)
    while count(at) < 6 and steps < 100 do
      steps = steps + 1
      mcp.loop.step(0)
      mark(ts, at, steps)
    end
    assert.are.equal(6, count(at))
    assert.is_true(distinct(at), "one start per step")
  end)

  it("keep loop.timeout() at 0 while a start waits for the next step", function()
    local at = {}
    ts = start_in_tasks(2)
    mcp.loop.step(0)
    mark(ts, at, 1)
    assert.are.equal(1, count(at))
    assert.are.equal(0, mcp.loop.timeout())
    mcp.loop.step(0)
    mark(ts, at, 2)
    assert.are.equal(2, count(at))
  end)

  it("are all started in one step with an unbounded budget (set_budget(0))", function()
    mcp.loop.set_budget(0)
    local at = {}
    ts = start_in_tasks(4)
    mcp.loop.step(0)
    mark(ts, at, 1)
    assert.are.equal(4, count(at))
  end)

  it("are started in the order they waited: a start that waits is not overtaken by later ones", function()
    mcp.loop.set_budget(WIDE_BUDGET)
    local at = {}
    ts = {}
    start_in_task(ts, "first")
    start_in_task(ts, "waits")
    mcp.loop.step(0)
    mark(ts, at, 1)
    assert.are.same({ first = 1 }, at)
    -- a host that queues a new start before every step: the one that waited goes first, then
    -- each in turn (before, every new one went first and the waiting one never started)
    for s = 2, 4 do
      start_in_task(ts, "new" .. s)
      mcp.loop.step(0)
      mark(ts, at, s)
    end
    assert.are.same({ first = 1, waits = 2, new2 = 3, new3 = 4 }, at)
    mcp.loop.step(0)
    mark(ts, at, 5)
    assert.are.equal(5, at.new4)
  end)
end)

describe("servers waiting for the next step of a host loop", function()
  local prev_budget, ts, at
  before_each(function()
    prev_budget = mcp.loop.set_budget(WIDE_BUDGET)
    at = {}
    ts = start_in_tasks(3)
    mcp.loop.step(0) -- one starts here, the others wait for the next step...
    mark(ts, at, true)
    assert.are.equal(1, count(at))
    assert.is_true(sched.has_ready())
  end)
  after_each(function()
    mcp.loop.set_budget(prev_budget)
    local drained = sched.wait_until(function() return sched.live() == 0 and not sched.has_ready() end, 10000)
    for _, t in pairs(ts) do t:close() end
    assert(drained, "tasks still wait to start their server")
  end)

  -- (before, a run outside a budgeted step resumed them only to put them back in line, forever:
  -- the wait below spun until its deadline, an unbounded one and mcp.run() never returned)
  it("are started by a blocking wait outside any task", function()
    assert.is_true(sched.wait_until(function()
      mark(ts, at, true)
      return count(at) == 3
    end, 10000))
  end)

  it("are started by a step with an unbounded budget", function()
    mcp.loop.set_budget(0)
    mcp.loop.step(0)
    mark(ts, at, true)
    assert.are.equal(3, count(at))
  end)

  it("are started by a blocking wait inside the step that paced them", function()
    -- a coroutine of the host's own inside a task waits as code outside any task does: inside
    -- the budgeted step, for the servers that wait for the next step
    local seen
    mcp.spawn(function()
      local co = coroutine.create(function()
        return sched.wait_until(function()
          mark(ts, at, true)
          return count(at) == 5
        end, 10000)
      end)
      local _, ok = coroutine.resume(co)
      seen = ok
    end)
    start_in_task(ts, 4)
    start_in_task(ts, 5)
    mcp.loop.step(0)
    assert.is_true(seen)
  end)
end)

describe("mcp.run() after a budgeted step left servers waiting to start", function()
  it("starts them and returns", function()
    local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
    local chunk = ("package.path = %q; package.cpath = %q"):format(package.path, package.cpath)
    -- timeout(1) in the child: a run that never returns fails here instead of hanging the suite
    local cmd = ("cd %s && timeout -s KILL %d %s -e %s spec/fixtures/pace_run.lua 2>&1; echo \"rc=$?\""):format(
      sh_quote(helper.root), 30 * helper.slow(), helper.lua_cmd(), sh_quote(chunk))
    local f = assert(io.popen(cmd, "r"))
    local out = f:read("*a")
    f:close()
    assert.are.equal("step 1\nrun 3 3\ndone\nrc=0\n", out)
  end)
end)
