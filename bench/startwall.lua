-- Servers starting, wall time (issue 28, Stop 26): the step that begins a start made in a task
-- (plain, sandboxed), a blocking start() (plain, sandboxed), and R rounds of 4 clients of
-- bench/hostloop_server.lua connecting in tasks while the host steps, with the heap resident.
-- Wall time and the host thread's CPU time; the rounds' steps split into those that began a start
-- and the others. Not a test (`make bench-startwall [HEAP=2048] [ROUNDS=8]`).
--   lua5.4 bench/startwall.lua [heap MB] [rounds]
local mcp = require("mcp")
local sched = require("mcp.sched")
local bc = require("benchclock")
local starts = require("bench.starts")

local LUA = arg[-1] or "lua5.4"
local mb, R = tonumber(arg[1] or "2048"), tonumber(arg[2] or "8")
local SANDBOX = { read = { "/usr", "/lib", "/lib64", "/etc" }, write = {} }
local heap = {} -- luacheck: ignore 241 (held resident, never read)
for i = 1, mb do heap[i] = string.rep(string.char(i % 256), 1024 * 1024) end
collectgarbage()

local function q(t, p)
  table.sort(t)
  return t[math.max(1, math.ceil(#t * p))] * 1000
end

local function summary(w, c)
  return ("wall p50 %6.2f p90 %6.2f max %6.2f | cpu p50 %5.2f max %5.2f ms"):format(q(w, 0.5), q(w, 0.9),
    q(w, 1), q(c, 0.5), q(c, 1))
end

local function blocking_starts(cfg, n) return summary(starts.blocking(cfg, n)) end
local function task_starts(cfg, n) return summary(starts.from_task(cfg, n)) end

print(("heap %d MB, %s, budget %s ms"):format(mb, _VERSION, mcp.loop.set_budget(2)))
print("start from a task (its step)  " .. task_starts({ command = "true", stderr = "discard" }, 40))
print("sandboxed, from a task        " .. task_starts({ command = "true", stderr = "discard", sandbox = SANDBOX }, 40))
print("blocking start()              " .. blocking_starts({ command = "true", stderr = "discard" }, 40))
print("blocking sandboxed start()    " .. blocking_starts({ command = "true", stderr = "discard", sandbox = SANDBOX }, 40))

-- which steps began a start: sched.pace_start runs right before each
local pace, began = sched.pace_start, false
sched.pace_start = function(...)
  pace(...)
  began = true
end
local with, without, maxes, cmaxes = {}, {}, {}, {}
for r = 1, R do
  local cs = {}
  for _ = 1, 4 do
    mcp.spawn(function()
      local c = assert(mcp.create_stdio_client(LUA, { "bench/hostloop_server.lua", "10" }, { stderr = "discard" }))
      cs[#cs + 1] = c
    end)
  end
  local mw, mc = 0, 0
  while #cs < 4 do
    local t0, c0 = bc.wall(), bc.thread_cpu_ns()
    mcp.loop.step(0)
    local w, c = bc.wall() - t0, bc.thread_cpu_ns() - c0
    if began then with[#with + 1] = w else without[#without + 1] = w end
    began = false
    mw, mc = math.max(mw, w), math.max(mc, c)
    local t1 = bc.wall() -- the rest of the frame
    while bc.wall() - t1 < 0.0005 do end
  end
  maxes[r], cmaxes[r] = mw, mc
  for _, c in ipairs(cs) do c:close() end
end
sched.pace_start = pace
local s = {}
for r = 1, R do s[#s + 1] = ("%.2f/%.2f"):format(maxes[r] * 1000, cmaxes[r] * 1000) end
print("4 servers starting, each round's longest step wall/cpu ms: " .. table.concat(s, " "))
print(("  steps that began a start: %d, wall p50 %.2f max %.2f ms | the others: %d, wall p50 %.2f p99 %.2f max %.2f ms"):format(
  #with, q(with, 0.5), q(with, 1), #without, q(without, 0.5), q(without, 0.99), q(without, 1)))
