--- lua-mcp benchmark driver: one row of the benchmark per process (bench/README.md).
---
---   lua5.4|luajit bench/lua_driver.lua ROW TRANSPORT TARGET [N] [WARMUP]
---
--- ROW: connect | connect_nodisc | seq | pair | inflight | big1m | big10m | list1000 | scale | flood
--- (pair: seq and the floor's call in alternating batches in this process; bench/floor_ratio.sh)
--- TRANSPORT: stdio (TARGET = the server's executable) | http (TARGET = the server's URL)
--- N: operations measured (connects, calls, lists; scale: servers; flood: calls made at once);
--- WARMUP: unmeasured ones first.
---
--- Prints one line "BENCH key=value ..." with the wall time and this process's own CPU time
--- (user+sys of this process only, not of the server), and VmHWM (peak RSS) from
--- /proc/self/status at the end. Clocks: bench/benchclock.c (CLOCK_MONOTONIC, and
--- getrusage(RUSAGE_SELF) as Node's process.cpuUsage() uses) when built, else the core's
--- millisecond clock and os.clock() (glibc: CLOCK_PROCESS_CPUTIME_ID, also user+sys).
local mcp = require("mcp")
local core = require("mcp.core")
local has_bc, bc = pcall(require, "benchclock")

local row, transport, target = arg[1], arg[2], arg[3]
local N = tonumber(arg[4] or "") or 1000
local WARMUP = tonumber(arg[5] or "") or 0
assert(row and (transport == "stdio" or transport == "http") and target,
  "usage: lua_driver.lua ROW stdio|http TARGET [N] [WARMUP]")

local client_name = (jit and jit.version) and "luajit" or ("lua" .. _VERSION:match("%d+%.%d+"))
local INFLIGHT = 64
local SIZES = { big1m = 1048576, big10m = 10485760 }

local now_ms = has_bc and function() return bc.wall() * 1000 end or core.now_ms
local cpu_s = has_bc and bc.cpu or os.clock

--- Open fds of this process now (the entries of /proc/PID/fd; the pipe to `ls` is one of them).
local function fd_count()
  local f = io.open("/proc/self/stat", "r")
  if not f then return 0 end
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  local p = io.popen("ls /proc/" .. pid .. "/fd 2>/dev/null")
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

--- The soft limit on open files now ("Max open files" of /proc/self/limits).
local function nofile_soft()
  local f = io.open("/proc/self/limits", "r")
  if not f then return "?" end
  local text = f:read("*a")
  f:close()
  return text:match("Max open files%s+(%S+)") or "?"
end

local function proc_status(key)
  local f = io.open("/proc/self/status", "r")
  if not f then return 0 end
  local text = f:read("*a")
  f:close()
  return tonumber(text:match(key .. ":%s*(%d+)")) or 0
end

-- connect_nodisc: the same handshake without the server/discover probe that connect sends first
-- (tiny_server answers it -32601, as a legacy server does).
local discovery = row ~= "connect_nodisc"

local function connect()
  local c, err
  if transport == "stdio" then
    c, err = mcp.create_stdio_client(target, {}, { stderr = "inherit", protocol_version_discovery = discovery })
  else
    c, err = mcp.create_http_client(target, { protocol_version_discovery = discovery })
  end
  if not c then error("connect failed: " .. tostring(err), 0) end
  return c
end

local function call(c, name)
  local res, err = c:call_tool(name, { message = "hello" })
  if not res then error("tools/call " .. name .. " failed: " .. tostring(err), 0) end
  return res
end

--- Times fn() (wall ms, own CPU seconds).
local function timed(fn)
  local w0, c0 = now_ms(), cpu_s()
  fn()
  return now_ms() - w0, cpu_s() - c0
end

local out = {}
local function emit(ops, wall_ms, cpu, extra)
  local parts = {
    "BENCH", "client=" .. client_name, "transport=" .. transport, "row=" .. row,
    "ops=" .. ops, ("wall_ms=%.3f"):format(wall_ms), ("cpu_s=%.6f"):format(cpu),
  }
  for k, v in pairs(extra or {}) do parts[#parts + 1] = k .. "=" .. tostring(v) end
  parts[#parts + 1] = "clock=" .. (has_bc and "benchclock" or "os.clock")
  out[#out + 1] = parts
end

if row == "connect" or row == "connect_nodisc" then
  -- spawn (stdio) + [server/discover] + initialize + notifications/initialized; close is not timed.
  for _ = 1, WARMUP do connect():close() end
  local wall, cpu = 0, 0
  for _ = 1, N do
    local c
    local w, p = timed(function() c = connect() end)
    wall, cpu = wall + w, cpu + p
    c:close()
  end
  emit(N, wall, cpu)
elseif row == "seq" then
  local c = connect()
  for _ = 1, WARMUP do call(c, "echo") end
  local w, p = timed(function()
    for _ = 1, N do call(c, "echo") end
  end)
  emit(N, w, p)
  c:close()
elseif row == "pair" then
  -- The sequential row and bench/floor.c's call (bench/benchfloor.c, against a server of its own)
  -- in alternating batches of PAIR_BATCH calls in this one process, the order swapped every
  -- batch: both sides meet the same machine state. CPU from CLOCK_PROCESS_CPUTIME_ID (the floor
  -- batches allocate nothing, so the collector runs only in lua-mcp's).
  -- Over HTTP the floor is bench/floor_http.c's call (bench/benchfloor_http.c) to the same server.
  assert(has_bc, "pair: needs bench/benchclock.c built")
  local f = transport == "stdio" and require("benchfloor").spawn(target) or require("benchfloor_http").open(target)
  local c = connect()
  for _ = 1, WARMUP do call(c, "echo") end
  f:calls(WARMUP > 0 and WARMUP or 1)
  local batch = tonumber(os.getenv("PAIR_BATCH") or "") or 500
  local fw, fc, lw, lc, done, b = 0, 0, 0, 0, 0, 0
  local function floor_batch(k)
    local w0, c0 = bc.wall(), bc.cpu_ns()
    f:calls(k)
    fw, fc = fw + bc.wall() - w0, fc + bc.cpu_ns() - c0
  end
  local function mcp_batch(k)
    local w0, c0 = bc.wall(), bc.cpu_ns()
    for _ = 1, k do call(c, "echo") end
    lw, lc = lw + bc.wall() - w0, lc + bc.cpu_ns() - c0
  end
  while done < N do
    local k = math.min(batch, N - done)
    b = b + 1
    if b % 2 == 1 then floor_batch(k); mcp_batch(k) else mcp_batch(k); floor_batch(k) end
    done = done + k
  end
  emit(N, lw * 1000, lc, { floor_wall_ms = ("%.3f"):format(fw * 1000), floor_cpu_s = ("%.6f"):format(fc),
    batches = b })
  c:close()
  f:close()
elseif row == "inflight" then
  -- 64 tasks on one connection, each making N/64 calls one after the other.
  local c = connect()
  local function round(total)
    local per = math.floor(total / INFLIGHT)
    for _ = 1, INFLIGHT do
      mcp.spawn(function()
        for _ = 1, per do call(c, "echo") end
      end)
    end
    mcp.run()
    return per * INFLIGHT
  end
  if WARMUP > 0 then round(WARMUP) end
  local done
  local w, p = timed(function() done = round(N) end)
  emit(done, w, p, { concurrency = INFLIGHT })
  c:close()
elseif row == "big1m" or row == "big10m" then
  local c = connect()
  local want = SIZES[row]
  local function check(res)
    local text = res.content[1].text
    if #text ~= want then error(("%s: got %d bytes of text, want %d"):format(row, #text, want), 0) end
  end
  for _ = 1, WARMUP do check(call(c, row)) end
  local w, p = timed(function()
    for _ = 1, N do check(call(c, row)) end
  end)
  emit(N, w, p, { bytes = want })
  c:close()
elseif row == "list1000" then
  local c = connect()
  local function list()
    local tools, err = c:list_tools()
    if not tools then error("tools/list failed: " .. tostring(err), 0) end
    if #tools ~= 1000 then error("tools/list: got " .. #tools .. " tools", 0) end
  end
  for _ = 1, WARMUP do list() end
  local w, p = timed(function()
    for _ = 1, N do list() end
  end)
  emit(N, w, p)
  c:close()
elseif row == "scale" then
  -- One process, N servers connected at once (tasks connect concurrently), then one round of
  -- one call to each server (concurrently).
  local clients = {}
  local w1, p1 = timed(function()
    for i = 1, N do
      mcp.spawn(function() clients[i] = connect() end)
    end
    mcp.run()
  end)
  local live = 0
  for i = 1, N do if clients[i] then live = live + 1 end end
  if live ~= N then error("scale: only " .. live .. " of " .. N .. " connected", 0) end
  local w2, p2 = timed(function()
    for i = 1, N do
      mcp.spawn(function() call(clients[i], "echo") end)
    end
    mcp.run()
  end)
  emit(N, w1, p1, { phase = "connect_all" })
  emit(N, w2, p2, { phase = "round" })
  local rss_all, fds_all, soft = proc_status("VmRSS"), fd_count(), nofile_soft()
  for i = 1, N do clients[i]:close() end
  for _, parts in ipairs(out) do
    parts[#parts + 1] = "rss_connected_kb=" .. rss_all
    parts[#parts + 1] = "fds_connected=" .. fds_all
    parts[#parts + 1] = "nofile_soft=" .. soft
  end
elseif row == "flood" then
  -- N calls made at once on one connection (N tasks, one call each), then drained: lua-mcp
  -- queues HTTP requests behind its connection bound (max_connections, 64). Wall and CPU from
  -- the first call made to the last answer; fds_after: this process's open fds right after.
  local c = connect()
  local failed, first_err = 0, nil
  local function round(total)
    for _ = 1, total do
      mcp.spawn(function()
        local res, err = c:call_tool("echo", { message = "hello" })
        if not res then
          failed = failed + 1
          first_err = first_err or tostring(err)
        end
      end)
    end
    mcp.run()
  end
  if WARMUP > 0 then round(WARMUP) end
  failed = 0
  local w, p = timed(function() round(N) end)
  if failed > 0 then io.stderr:write("flood: ", failed, " of ", N, " calls failed, first: ", first_err, "\n") end
  emit(N, w, p, { failed = failed, fds_after = fd_count() })
  c:close()
else
  error("unknown row " .. tostring(row), 0)
end

local hwm = proc_status("VmHWM")
for _, parts in ipairs(out) do
  parts[#parts + 1] = "hwm_kb=" .. hwm
  print(table.concat(parts, " "))
end
