-- Host-loop benchmark (issue 28): the distribution of mcp.loop.step(0) times in a frame loop
-- while servers start with a large heap, while a 4 MB result of 40,000 small objects and a 10 MB
-- text result arrive, and while 8 clients close; and the cost of starting a server against the
-- heap size. Not a test: it prints numbers (`make bench-hostloop`, or run it from the top
-- directory with LUA_CPATH naming build/5.4 and bench/benchclock.so's directory).
--   lua5.4 bench/hostloop.lua [heap MB list, default "0,512,1024"; issue 28's: 100,1024,2048,4096]
-- HOSTLOOP_ROWS (environment) picks rows by a word of their name ("spawn", "start", "objects",
-- "text", "close"; several separated by commas; default all), HOSTLOOP_REPEAT runs the result rows
-- that many times (default 1).
local mcp = require("mcp")
local bc = require("benchclock")
local starts = require("bench.starts")

local LUA = arg[-1] or "lua5.4"
local SERVER = "bench/hostloop_server.lua"
local heaps = {}
for mb in (arg[1] or "0,512,1024"):gmatch("%d+") do heaps[#heaps + 1] = tonumber(mb) end
local rows = os.getenv("HOSTLOOP_ROWS")
local function wanted(word) return rows == nil or rows == "" or ("," .. rows .. ","):find("," .. word .. ",", 1, true) ~= nil end
local repeats = tonumber(os.getenv("HOSTLOOP_REPEAT") or "") or 1

local function stats(samples)
  table.sort(samples)
  local n = #samples
  local function q(p) return samples[math.max(1, math.ceil(n * p))] * 1000 end
  return ("steps %6d  p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms"):format(n, q(0.5), q(0.99), samples[n] * 1000)
end

-- The CPU time of the steps on the host's thread (the core's helper threads, which wait for a
-- start's exec beside the step, are not the frame's), which preemption does not stretch.
local function cpu_stats(samples)
  if not samples.cpu then return "" end
  table.sort(samples.cpu)
  local c, n = samples.cpu, #samples.cpu
  return ("  | cpu p50 %7.3f p99 %7.3f max %7.3f ms"):format(c[math.max(1, math.ceil(n * 0.5))] * 1000,
    c[math.max(1, math.ceil(n * 0.99))] * 1000, c[n] * 1000)
end

-- Step the loop as a host frame loop would until done() holds, and 3 frames more (work left for
-- later steps, such as freeing a large message's input, counts too); returns the step times (s),
-- and their CPU times in .cpu.
local function frames(done)
  local samples = { cpu = {} }
  local tail = 3
  while tail > 0 do
    if done() then tail = tail - 1 end
    local t0, c0 = bc.wall(), bc.thread_cpu_ns()
    mcp.loop.step(0)
    samples[#samples + 1] = bc.wall() - t0
    samples.cpu[#samples] = bc.thread_cpu_ns() - c0
    -- the rest of the frame (the game's own work) is not measured: a short wait here
    local t1 = bc.wall()
    while bc.wall() - t1 < 0.0005 do end
  end
  return samples
end

local function client_in_task(out, n)
  mcp.spawn(function()
    local c = assert(mcp.create_stdio_client(LUA, { SERVER, tostring(n or 10) }, { stderr = "discard" }))
    out[#out + 1] = c
  end)
end

local function row(name, samples) print(("%-52s %s%s"):format(name, stats(samples), cpu_stats(samples))) end

-- The collector's mode: HOSTLOOP_GC=incremental|generational. Unset, it is the interpreter's:
-- lua5.4 (lua.c) starts in generational mode, whose major collections collect the whole heap in
-- one go; a host embedding 5.4 (luaL_newstate) and LuaJIT collect incrementally.
-- HOSTLOOP_GC_STEPSIZE=N (incremental only): the collector's step size, 2^N bytes (Lua 5.4's
-- default 13: a step sweeps ~50,000 objects; 10: ~6,000), as a game host sets it with
-- collectgarbage("incremental", 0, 0, N); with GLIBC_TUNABLES=glibc.malloc.mxfast=0 these are the
-- host settings docs/GAMELOOPS.md gives for results of many objects.
-- HOSTLOOP_TUNE=1: mcp.loop.tune_for_frames() first (both settings at run time, the library's call).
local function set_up_collector()
  local tuned = os.getenv("HOSTLOOP_TUNE") == "1" and mcp.loop.tune_for_frames() or nil
  local gcmode = os.getenv("HOSTLOOP_GC")
  if gcmode == "" then gcmode = nil end
  local stepsize = tonumber(os.getenv("HOSTLOOP_GC_STEPSIZE") or "")
  if gcmode then collectgarbage(gcmode) end
  if stepsize and gcmode == "incremental" then collectgarbage("incremental", 0, 0, stepsize) end
  return ("collector %s%s%s%s"):format(
    gcmode or (tuned and "as tune_for_frames left it") or "as the interpreter starts (lua5.4: generational)",
    stepsize and (", step size 2^" .. stepsize) or "",
    os.getenv("GLIBC_TUNABLES") and (", GLIBC_TUNABLES=" .. os.getenv("GLIBC_TUNABLES")) or "",
    tuned and (", tune_for_frames: " .. tuned.collector .. "; " .. tuned.malloc) or "")
end
print(("budget %s ms (default), %s, %s"):format(mcp.loop.set_budget(2), _VERSION, set_up_collector()))
for _, mb in ipairs((wanted("spawn") or wanted("start")) and heaps or {}) do
  -- resident (written by rep), in 1 MB strings: one string of 4 GB would need its size again in
  -- rep's buffer while it is built
  local heap = {} -- luacheck: ignore 241 (held resident, never read)
  for i = 1, mb do heap[i] = string.rep(string.char(i % 256), 1024 * 1024) end
  collectgarbage() -- a steady state: the cycle that built the heap is not paid by the frames
  if wanted("spawn") then
    -- spawn cost: transport start alone, 20 times; then the same from a task, as in a host loop:
    -- the step that begins the start (the child's exec is waited for on a helper thread)
    local w, c = starts.blocking({ command = "true" }, 20)
    w.cpu = c
    row(("spawn cost, heap %d MB"):format(mb), w)
    w, c = starts.from_task({ command = "true" }, 20)
    w.cpu = c
    row(("start from a task (its step), heap %d MB"):format(mb), w)
  end
  -- 4 servers starting (in tasks) while the host steps
  local cs = {}
  if wanted("start") then
    for _ = 1, 4 do client_in_task(cs) end
    row(("frames while 4 servers start, heap %d MB"):format(mb), frames(function() return #cs == 4 end))
  end
  for _, c in ipairs(cs) do c:close() end
  heap = nil -- luacheck: ignore (released before the next size)
  collectgarbage()
end

-- a 4 MB result of 40,000 small objects, and a 10 MB text result
local cs = {}
client_in_task(cs, 40000)
frames(function() return #cs == 1 end)
for _ = 1, repeats do
  local got
  if wanted("objects") then
    mcp.spawn(function()
      local r = assert(cs[1]:call_tool("items", {}))
      got = #r.structuredContent.items
    end)
    row("frames while a 4 MB result (40,000 objects) arrives", frames(function() return got ~= nil end))
    assert(got == 40000)
  end
  got = nil
  if wanted("text") then
    mcp.spawn(function()
      local r = assert(cs[1]:call_tool("text", {}))
      got = #r.content[1].text
    end)
    row("frames while a 10 MB text result arrives", frames(function() return got ~= nil end))
    assert(got >= 10 * 1000 * 1000)
  end
end
cs[1]:close()

-- 8 clients closing (from a task)
if wanted("close") then
  cs = {}
  for _ = 1, 8 do client_in_task(cs) end
  frames(function() return #cs == 8 end)
  mcp.spawn(function() for _, c in ipairs(cs) do c:close() end end)
  local first = true
  row("frames while 8 clients close", frames(function()
    if first then first = false return false end
    for _, c in ipairs(cs) do if not c.transport:reaped() then return false end end
    return true
  end))
end
