--- Turns the drivers' "BENCH key=value ..." lines into one markdown table (both clients and the
--- ratio per row), prints it and writes it with the machine and versions (bench/README.md).
---
---   lua5.4 bench/report.lua RAW OUT      (machine and versions come from BENCH_* variables)
local raw_path, out_path = arg[1], arg[2]
assert(raw_path and out_path, "usage: report.lua RAW OUT")

local CLIENTS = { "lua5.4", "luajit", "ts-sdk" }
local LUAS = { "lua5.4", "luajit" }
local CLIENT_TITLE = { ["lua5.4"] = "lua-mcp, Lua 5.4", luajit = "lua-mcp, LuaJIT", ["ts-sdk"] = "TS SDK (Node)" }

-- samples[key][metric] = { values over repeats }; key = client|transport|row|phase
local samples = {}
local seen_rows = {}
local scale_n, flood_n
-- The HTTP floor (bench/floor_http.c) runs just before each lua-mcp client's sequential HTTP row:
-- pairs[client][repeat] = { floor = {rate, cpu}, lua = {rate, cpu} }.
local pairs_http = {}
local function pair_slot(client, rep)
  pairs_http[client] = pairs_http[client] or {}
  pairs_http[client][rep] = pairs_http[client][rep] or {}
  return pairs_http[client][rep]
end
for line in io.lines(raw_path) do
  local r = {}
  for k, v in line:gmatch("(%S+)=(%S+)") do r[k] = tonumber(v) or v end
  if line:match("^BENCH ") and r.row == "seq" and r.transport == "http" and r.client ~= "ts-sdk" then
    local who = r.client == "floor" and r.pair or r.client
    pair_slot(who, r["repeat"] or 1)[r.client == "floor" and "floor" or "lua"] =
      { r.ops / (r.wall_ms / 1000), r.cpu_s / r.ops }
  end
  if line:match("^BENCH ") and r.client ~= "floor" then
    local key = table.concat({ r.client, r.transport, r.row, r.phase or "" }, "|")
    local s = samples[key]
    if not s then
      s = {}
      samples[key] = s
    end
    local function add(m, v)
      s[m] = s[m] or {}
      table.insert(s[m], v)
    end
    add("wall_per_op_ms", r.wall_ms / r.ops)
    add("ops_per_s", r.ops / (r.wall_ms / 1000))
    add("cpu_per_op_s", r.cpu_s / r.ops)
    add("wall_ms", r.wall_ms)
    add("cpu_s", r.cpu_s)
    add("hwm_kb", r.hwm_kb)
    for _, m in ipairs({ "rss_connected_kb", "fds_connected", "nofile_soft", "fds_after", "failed", "unfinished" }) do
      if type(r[m]) == "number" then add(m, r[m]) end
    end
    seen_rows[r.row .. "|" .. r.transport] = true
    if r.row == "scale" then scale_n = r.ops end
    if r.row == "flood" then flood_n = r.ops end
  end
end

local function median(t)
  if not t or #t == 0 then return nil end
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  local n = #c
  if n % 2 == 1 then return c[(n + 1) / 2] end
  return (c[n / 2] + c[n / 2 + 1]) / 2
end

local function get(client, transport, row, phase, metric)
  local s = samples[table.concat({ client, transport, row, phase or "" }, "|")]
  return s and median(s[metric])
end

local function fmt(v)
  if v == nil then return "-" end
  local a = math.abs(v)
  local s
  if a >= 1000 then
    s = ("%.0f"):format(v):reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  elseif a >= 100 then s = ("%.0f"):format(v)
  elseif a >= 10 then s = ("%.1f"):format(v)
  elseif a >= 1 then s = ("%.2f"):format(v)
  else s = ("%.3f"):format(v) end
  return s
end

-- Counts (fds, limits, failures) print as integers with thousands separators.
local COUNTS = { fds_connected = true, nofile_soft = true, fds_after = true, failed = true, unfinished = true }
local function fmt_metric(metric, v)
  if v ~= nil and COUNTS[metric] then
    return (("%d"):format(math.floor(v + 0.5)):reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
  end
  return fmt(v)
end

local function ratio(lua, ts, higher_better)
  if lua == nil or ts == nil or lua == 0 or ts == 0 then return "-" end
  local x = higher_better and lua / ts or ts / lua
  return (x >= 10 and "%.0fx" or "%.1fx"):format(x)
end

-- Rows of the table: row id, transport, phase, label, then the metrics shown.
local ROWS = {
  { "connect", "connect (spawn + discovery probe + handshake)", nil },
  { "connect_nodisc", "connect, protocol_version_discovery = false", nil },
  { "seq", "sequential tools/call", nil },
  { "inflight", "64 tools/call in flight", nil },
  { "big1m", "tools/call, 1 MiB text result", nil },
  { "big10m", "tools/call, 10 MiB text result", nil },
  { "list1000", "tools/list, 1,000 tools", nil },
}
local HTTP_CONNECT_LABEL = "connect (discovery probe + handshake)"

-- metric specs: label, metric name, scale, higher_better
local function metrics_for(row)
  if row == "seq" or row == "inflight" then
    return {
      { "calls/s", "ops_per_s", 1, true },
      { "CPU µs/call", "cpu_per_op_s", 1e6, false },
      { "peak RSS MiB", "hwm_kb", 1 / 1024, false },
    }
  end
  local unit = (row == "connect" or row == "connect_nodisc") and "connect" or (row == "list1000" and "list" or "call")
  return {
    { "ms/" .. unit, "wall_per_op_ms", 1, false },
    { "CPU ms/" .. unit, "cpu_per_op_s", 1e3, false },
    { "peak RSS MiB", "hwm_kb", 1 / 1024, false },
  }
end

local lines = {}
local function out(s) lines[#lines + 1] = s end

out("| row | transport | metric | " .. table.concat({ CLIENT_TITLE["lua5.4"], CLIENT_TITLE.luajit, CLIENT_TITLE["ts-sdk"] }, " | ")
  .. " | lua-mcp advantage (5.4 / JIT) |")
out("|---|---|---|---:|---:|---:|---:|")
for _, transport in ipairs({ "stdio", "http" }) do
  for _, spec in ipairs(ROWS) do
    local row, label = spec[1], spec[2]
    if seen_rows[row .. "|" .. transport] then
      if row == "connect" and transport == "http" then label = HTTP_CONNECT_LABEL end
      for i, m in ipairs(metrics_for(row)) do
        local vals = {}
        for j, c in ipairs(CLIENTS) do
          local v = get(c, transport, row, nil, m[2])
          vals[j] = v and v * m[3]
        end
        out(("| %s | %s | %s | %s | %s | %s | %s / %s |"):format(i == 1 and label or "", i == 1 and transport or "",
          m[1], fmt(vals[1]), fmt(vals[2]), fmt(vals[3]), ratio(vals[1], vals[3], m[4]), ratio(vals[2], vals[3], m[4])))
      end
    end
  end
end
if seen_rows["scale|stdio"] then
  local n = scale_n
  local scale_metrics = {
    { "connect all, ms", "connect_all", "wall_ms", 1 },
    { "connect all, CPU ms", "connect_all", "cpu_s", 1e3 },
    { "one call to each, ms", "round", "wall_ms", 1 },
    { "one call to each, CPU ms", "round", "cpu_s", 1e3 },
    { "RSS while connected, MiB", "round", "rss_connected_kb", 1 / 1024 },
    { "open fds while connected", "round", "fds_connected", 1 },
    { "soft fd limit at the end (started at " .. (os.getenv("BENCH_SCALE_NOFILE") or "?") .. ")", "round",
      "nofile_soft", 1, "none" },
  }
  for i, m in ipairs(scale_metrics) do
    local vals = {}
    for j, c in ipairs(CLIENTS) do
      local v = get(c, "stdio", "scale", m[2], m[3])
      vals[j] = v and v * m[4]
    end
    out(("| %s | %s | %s | %s | %s | %s | %s / %s |"):format(i == 1 and ("scale: " .. fmt_metric("failed", n) .. " stdio servers, one process") or "",
      i == 1 and "stdio" or "", m[1], fmt_metric(m[3], vals[1]), fmt_metric(m[3], vals[2]), fmt_metric(m[3], vals[3]),
      m[5] == "none" and "-" or ratio(vals[1], vals[3], false), m[5] == "none" and "-" or ratio(vals[2], vals[3], false)))
  end
end
if seen_rows["flood|http"] then
  -- A client that did not drain by its deadline (the TS driver stops after 120 s) gets bounds:
  -- "> elapsed" for the drain, "< N/elapsed" for calls/s, no CPU per call, no ratio.
  local flood_metrics = {
    { "drain all, ms", "wall_ms", 1, false, ">" },
    { "calls/s", "ops_per_s", 1, true, "<" },
    { "CPU µs/call", "cpu_per_op_s", 1e6, false, "-" },
    { "peak RSS MiB", "hwm_kb", 1 / 1024, false },
    { "open fds after the drain", "fds_after", 1, false },
    { "calls failed", "failed", 1, "none" },
    { "calls unanswered at the deadline", "unfinished", 1, "none" },
  }
  local cut = {}
  for j, c in ipairs(CLIENTS) do cut[j] = (get(c, "http", "flood", nil, "unfinished") or 0) > 0 end
  for i, m in ipairs(flood_metrics) do
    local vals, cells = {}, {}
    for j, c in ipairs(CLIENTS) do
      local v = get(c, "http", "flood", nil, m[2])
      if v == nil and m[2] == "unfinished" and get(c, "http", "flood", nil, "wall_ms") then v = 0 end
      vals[j] = v and v * m[3]
      cells[j] = fmt_metric(m[2], vals[j])
      if cut[j] and m[5] then
        cells[j] = m[5] == "-" and "-" or (m[5] .. " " .. cells[j])
        vals[j] = nil
      end
    end
    local r1 = m[4] == "none" and "-" or ratio(vals[1], vals[3], m[4])
    local r2 = m[4] == "none" and "-" or ratio(vals[2], vals[3], m[4])
    out(("| %s | %s | %s | %s | %s | %s | %s / %s |"):format(
      i == 1 and (fmt_metric("failed", flood_n) .. " tools/call in flight on one client, drained") or "", i == 1 and "http" or "",
      m[1], cells[1], cells[2], cells[3], r1, r2))
  end
end

-- ---- the bar ----------------------------------------------------------------------------------
local bar = {}
local function bar_line(s) bar[#bar + 1] = s end
local function verdict(ok) return ok and "met" or "**missed**" end
local ts_seq = get("ts-sdk", "stdio", "seq", nil, "ops_per_s")
local ts_cpu = get("ts-sdk", "stdio", "seq", nil, "cpu_per_op_s")
local ts_rss = get("ts-sdk", "stdio", "seq", nil, "hwm_kb")
for _, c in ipairs(LUAS) do
  local seq = get(c, "stdio", "seq", nil, "ops_per_s")
  local cpu = get(c, "stdio", "seq", nil, "cpu_per_op_s")
  local rss = get(c, "stdio", "seq", nil, "hwm_kb")
  local big = get(c, "stdio", "big10m", nil, "wall_per_op_ms")
  local bigh = get(c, "http", "big10m", nil, "wall_per_op_ms")
  if seq and ts_seq then
    bar_line(("- %s: sequential stdio calls/s %s vs %s = %.1fx (bar >= 5x): %s"):format(CLIENT_TITLE[c], fmt(seq),
      fmt(ts_seq), seq / ts_seq, verdict(seq / ts_seq >= 5)))
  end
  if cpu and ts_cpu then
    bar_line(("- %s: client CPU per sequential stdio call %s µs vs %s µs = 1/%.1f (bar <= 1/10): %s"):format(
      CLIENT_TITLE[c], fmt(cpu * 1e6), fmt(ts_cpu * 1e6), ts_cpu / cpu, verdict(ts_cpu / cpu >= 10)))
  end
  if rss and ts_rss then
    bar_line(("- %s: peak RSS (sequential stdio row) %s MiB vs %s MiB = 1/%.1f (bar <= 1/20): %s"):format(
      CLIENT_TITLE[c], fmt(rss / 1024), fmt(ts_rss / 1024), ts_rss / rss, verdict(ts_rss / rss >= 20)))
  end
  if big then
    bar_line(("- %s: 10 MiB result received and decoded in %s ms over stdio%s (bar < 100 ms): %s"):format(
      CLIENT_TITLE[c], fmt(big), bigh and (", " .. fmt(bigh) .. " ms over HTTP") or "", verdict(big < 100)))
  end
end

-- lua-mcp's sequential HTTP calls against the floor run just before each of them (run.sh).
local floor_rates, floor_cpus = {}, {}
for _, c in ipairs(LUAS) do
  local rates, cpus = {}, {}
  for _, p in pairs(pairs_http[c] or {}) do
    if p.floor then
      floor_rates[#floor_rates + 1], floor_cpus[#floor_cpus + 1] = p.floor[1], p.floor[2]
    end
    if p.floor and p.lua then
      rates[#rates + 1], cpus[#cpus + 1] = p.lua[1] / p.floor[1], p.lua[2] / p.floor[2]
    end
  end
  if #rates > 0 then
    local rr, cr = median(rates), median(cpus)
    bar_line(("- %s: sequential HTTP calls/s %.0f%% of the floor's (bench/floor_http.c, run just before it; "
      .. "median of %d pairs), CPU per call %.2fx the floor's (bar >= 90%%): %s"):format(CLIENT_TITLE[c], rr * 100,
      #rates, cr, verdict(rr >= 0.9)))
  end
end
local floor_http_text = #floor_rates > 0
    and ("floor (HTTP): %s calls/s, %s µs CPU/call, median of %d runs (libcurl multi, one reused easy handle, "
      .. "kept-alive connection, no JSON)"):format(fmt(median(floor_rates)), fmt(median(floor_cpus) * 1e6), #floor_rates)
  or "-"

local table_text = table.concat(lines, "\n")
local bar_text = table.concat(bar, "\n")
print(table_text)
print()
print(bar_text)
if #floor_rates > 0 then print(floor_http_text) end

local env = function(k) return os.getenv(k) or "?" end
local doc = {
  "# Benchmark results: lua-mcp vs the TypeScript SDK client",
  "",
  "Generated by `make bench` (bench/run.sh, bench/report.lua); how it is measured: bench/README.md.",
  "Each value is the median of " .. env("BENCH_REPEAT") .. " run(s); every row is a fresh client process",
  "against the same tiny C server (bench/tiny_server.c), over stdio and streamable HTTP on loopback.",
  "CPU is the client process's own user+sys time (not the server's); peak RSS is the client's",
  "VmHWM at the end of the row. \"lua-mcp advantage\" is how many times better lua-mcp is",
  "(TS ÷ lua-mcp for times, CPU and memory; lua-mcp ÷ TS for calls/s).",
  "",
  "| | |",
  "|---|---|",
  "| mode | " .. env("BENCH_MODE") .. " |",
  "| CPU | " .. env("BENCH_CPU") .. ", " .. env("BENCH_CORES") .. " cores, " .. env("BENCH_MEM") .. " |",
  "| OS | " .. env("BENCH_OS") .. " |",
  "| load average at start | " .. env("BENCH_LOAD") .. " |",
  "| lua-mcp | commit " .. env("BENCH_COMMIT") .. ", libcurl " .. env("BENCH_CURL") .. " |",
  "| Lua | " .. env("BENCH_LUA") .. ", " .. env("BENCH_LUAJIT") .. " |",
  "| TS SDK | @modelcontextprotocol/sdk " .. env("BENCH_SDK") .. " on Node " .. env("BENCH_NODE") .. " |",
  "| operations per row (measured+warm-up) | " .. env("BENCH_COUNTS") .. " |",
  "| floor of a sequential stdio call here (bench/floor.c) | " .. env("BENCH_FLOOR") .. " |",
  "| floor of a sequential HTTP call here (bench/floor_http.c) | " .. floor_http_text .. " |",
  "",
  table_text,
  "",
  "## Against the bar",
  "",
  bar_text,
  "",
}
local extra = os.getenv("BENCH_NOTES_FILE")
if extra then
  local f = io.open(extra, "r")
  if f then
    doc[#doc + 1] = f:read("*a")
    f:close()
  end
end
local f = assert(io.open(out_path, "w"))
f:write(table.concat(doc, "\n"))
f:close()
