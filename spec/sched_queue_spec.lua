-- mcp.sched's ready queue out of memory (core._alloc_fail_above, test builds): a wake-up whose
-- queue item cannot be made raises where it was made and leaves the queue as it was, so the
-- next run_ready resumes the other tasks and raises nothing.
local mcp = require("mcp")
local core = mcp.core
local sched = require("mcp.sched")
local unpack = table.unpack or unpack -- luacheck: ignore 143

local N = 8000 -- arguments of the wake-up: their packed copy (N x 16 bytes) is over LIMIT
local LIMIT = 64 * 1024

describe("mcp.sched's ready queue out of memory", function()
  it("a wake-up that cannot be queued leaves no hole: the next run_ready resumes the others, raises nothing", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    local wake, got = {}, {}
    for _, name in ipairs({ "a", "b" }) do
      mcp.spawn(function()
        local r = { sched.await(function(cb) wake[name] = cb end) }
        got[name] = r
      end)
    end
    sched.run_ready() -- both wait now
    assert.is_function(wake.a)
    local big = {}
    for i = 1, N do big[i] = i end
    -- the stack a wake-up with N arguments takes (a few copies of them), grown before the limit;
    -- the collector stopped so that it is not shrunk meanwhile: only the queue item fails
    local function grow(...) return select("#", ...) end
    grow(unpack(big, 1, 4 * N))
    collectgarbage("stop")
    core._alloc_fail_above(LIMIT)
    local ok, err = pcall(wake.a, unpack(big, 1, N))
    core._alloc_fail_above(nil)
    collectgarbage("restart")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("memory", 1, true), tostring(err))
    wake.b("b woken")
    local rok, rerr = pcall(sched.run_ready)
    assert.is_true(rok, tostring(rerr)) -- (it raised "attempt to index a nil value" on the hole)
    assert.same({ "b woken" }, got.b)
    assert.is_nil(got.a)
    -- the wake-up that failed was not taken as delivered: a later one resumes the task
    wake.a("a woken")
    sched.run_ready()
    assert.same({ "a woken" }, got.a)
    assert.equal(0, sched.live())
  end)
end)
