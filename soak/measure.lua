-- The soak suite's judge (soak/README.md): a long run is sampled at checkpoints, the first
-- WARMUP samples are its warm-up, and every later sample of each metric must stay within the
-- metric's allowance above the last warm-up sample (a plateau), or the run grows without bound.
local core = require("mcp.core")
local bounds = require("hostile.bounds")

local M = {}

--- SOAK_SCALE (default 1): every count is multiplied by it (soak/README.md gives the counts of
--- the fault run of issue 26 at SOAK_SCALE=10).
M.SCALE = tonumber(os.getenv("SOAK_SCALE") or "") or 1

--- n at scale 1, times SOAK_SCALE (at least 1).
function M.n(n)
  return math.max(1, math.floor(n * M.SCALE))
end

-- Allowances above the plateau's start (soak/README.md says why these numbers).
M.ALLOW = {
  rss_kb = 16 * 1024,
  heap_kb = 4 * 1024,
  lua_kb = 2 * 1024,
  fds = 0,
}

--- One sample: RSS, C heap, Lua heap (after a full collection) and open descriptors.
function M.sample()
  for _ = 1, 2 do collectgarbage("collect") end
  local heap = core._heap_bytes and core._heap_bytes()
  return {
    rss_kb = bounds.rss_kb(),
    heap_kb = heap and math.floor(heap / 1024) or nil,
    lua_kb = math.floor(collectgarbage("count")),
    fds = bounds.fd_count(),
  }
end

local function fmt(s)
  return ("rss %7d KiB  heap %7s KiB  lua %6d KiB  fds %4d"):format(s.rss_kb, tostring(s.heap_kb or "-"), s.lua_kb,
    s.fds)
end

--- Run step(i) for i = 1..n, sampling `checkpoints` times (after each n/checkpoints steps);
--- the first `warmup` samples are the warm-up. Prints the samples; returns ok, a message naming
--- the metrics that grew past their allowance. allow: overrides of M.ALLOW.
function M.plateau(name, n, step, opts)
  opts = opts or {}
  local checkpoints, warmup = opts.checkpoints or 10, opts.warmup or 3
  local allow = {}
  for k, v in pairs(M.ALLOW) do allow[k] = v end
  for k, v in pairs(opts.allow or {}) do allow[k] = v end
  local samples = {}
  local every = math.max(1, math.floor(n / checkpoints))
  io.stderr:write(("\n[soak] %s: %d steps\n"):format(name, n))
  for i = 1, n do
    step(i)
    if i % every == 0 or i == n then
      local s = M.sample()
      samples[#samples + 1] = s
      io.stderr:write(("[soak]   %7d  %s\n"):format(i, fmt(s)))
    end
  end
  local base = samples[math.min(warmup, #samples)]
  local bad = {}
  for j = warmup + 1, #samples do
    for k, a in pairs(allow) do
      local v, b = samples[j][k], base[k]
      if v ~= nil and b ~= nil and v - b > a then
        bad[#bad + 1] = ("%s grew by %d after warm-up (sample %d; allowed %d)"):format(k, v - b, j, a)
      end
    end
  end
  return #bad == 0, name .. ": " .. table.concat(bad, "; ")
end

return M
