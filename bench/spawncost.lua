-- Spawn cost against the host's heap (issue 28): how long starting a stdio server takes in a host
-- with 0.1, 1 and 2 GB resident, for a plain server, a sandboxed one (Landlock entered in the
-- child) and run_program. Each start is clone(CLONE_VM | CLONE_VFORK): the cost should not grow
-- with the heap, where fork() copied the host's page tables (68-191 ms at 2 GB). Not a test: it
-- prints numbers (`make bench-spawncost [SPAWN_HEAPS=100,1024,2048]`).
--   lua5.4 bench/spawncost.lua [heap MB list]
local mcp = require("mcp")
local bc = require("benchclock")

local N = 40
local heaps = {}
for mb in (arg[1] or "100,1024,2048"):gmatch("%d+") do heaps[#heaps + 1] = tonumber(mb) end

local SANDBOX = { read = { "/usr", "/lib", "/lib64", "/etc" }, write = {} }

-- Wall time, and this process's CPU time (which a loaded machine's preemption does not stretch;
-- fork's page-table copy is the parent's, a clone's child runs on its own account).
local function stats(t)
  local n, c = #t, t.cpu
  table.sort(t)
  table.sort(c)
  local function q(l, p) return l[math.max(1, math.ceil(n * p))] * 1000 end
  return ("p50 %7.3f ms  p90 %7.3f ms  max %7.3f ms | cpu p50 %7.3f ms  max %7.3f ms"):format(q(t, 0.5),
    q(t, 0.9), t[n] * 1000, q(c, 0.5), c[n] * 1000)
end

-- f() timed, into t (wall) and t.cpu.
local function timed(t, f)
  local t0, c0 = bc.wall(), bc.cpu_ns()
  f()
  t[#t + 1] = bc.wall() - t0
  t.cpu[#t] = bc.cpu_ns() - c0
end

-- The time of start() alone, N times.
local function starts(cfg)
  local t = { cpu = {} }
  for _ = 1, N do
    local tr = mcp.stdio_transport(cfg)
    timed(t, function() assert(tr:start()) end)
    tr:close()
  end
  return t
end

local function run_programs()
  local t = { cpu = {} }
  for _ = 1, N do timed(t, function() assert(mcp.core.run_program({ "true" })) end) end
  return t
end

local function row(name, mb, t) print(("%-22s heap %5d MB  %s"):format(name, mb, stats(t))) end

print(("%d starts per row, %s, Landlock ABI %d"):format(N, _VERSION, mcp.core.sandbox_abi()))
for _, mb in ipairs(heaps) do
  -- resident: written by rep, in pieces (one Lua string stops short of 2 GB)
  local heap, left = {}, mb
  while left > 0 do
    heap[#heap + 1] = string.rep("x", math.min(left, 256) * 1024 * 1024)
    left = left - 256
  end
  row("plain start", mb, starts({ command = "true", stderr = "discard" }))
  if mcp.core.sandbox_abi() > 0 then
    row("sandboxed start", mb, starts({ command = "true", stderr = "discard", sandbox = SANDBOX }))
  end
  row("run_program", mb, run_programs())
  heap = nil -- luacheck: ignore (released before the next size)
  collectgarbage()
end
