-- mcp.loop.tune_for_frames: the two process-wide settings that keep a frame-bound PUC Lua host's
-- longest step near the budget when large results are dropped and swept (docs/GAMELOOPS.md,
-- bench/results.md "Stop 27"). The library sets neither by itself: both are the host's.
local core = require("mcp.core")

local M = {}

local LUAJIT = type(rawget(_G, "jit")) == "table"

-- Lua 5.4's incremental step sweeps ~(2^stepsize / 16) * stepmul objects at once: 2^13 (the
-- default) ~50,000, 2^10 ~6,000. LuaJIT and 5.1-5.3 already take steps of a few KB of work.
local function tune_collector(step_size)
  if LUAJIT or _VERSION ~= "Lua 5.4" then
    return "unchanged: " .. (LUAJIT and "LuaJIT" or _VERSION) .. " collects in small steps"
  end
  local was = collectgarbage("incremental", 0, 0, step_size)
  return ("incremental, step 2^%d bytes (was %s)"):format(step_size, tostring(was))
end

-- LuaJIT's heap has its own allocator: glibc's fastbins hold only the C core's and other
-- libraries' chunks there, so it is left alone unless asked.
local function tune_malloc(want)
  if want == nil and LUAJIT then return "unchanged: LuaJIT's heap has its own allocator" end
  local ok, why = core.malloc_no_fastbins()
  if ok then return "glibc malloc without fastbins" end
  return "unchanged: " .. why
end

--- Apply the frame-friendly settings; returns what was done for each.
---@param opts {collector: boolean|nil, malloc: boolean|nil, step_size: integer|nil}|nil
---@return {collector: string, malloc: string}
function M.apply(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("mcp.loop.tune_for_frames: opts must be a table or nil", 3)
  end
  opts = opts or {}
  local step = opts.step_size or 10
  if type(step) ~= "number" or step ~= math.floor(step) or step < 6 or step > 20 then
    error("mcp.loop.tune_for_frames: step_size must be an integer from 6 to 20", 3)
  end
  for _, k in ipairs({ "collector", "malloc" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
      error("mcp.loop.tune_for_frames: " .. k .. " must be a boolean or nil", 3)
    end
  end
  return {
    collector = opts.collector == false and "unchanged: not asked" or tune_collector(step),
    malloc = opts.malloc == false and "unchanged: not asked" or tune_malloc(opts.malloc),
  }
end

return M
