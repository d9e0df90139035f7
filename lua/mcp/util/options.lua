--- Option tables (client config, transport config, per-call options): an unknown key is misuse
--- and raises, naming the key and the nearest known one, so `request_timeout = 5` does not run
--- silently with the default.
local M = {}

-- Edit distance (insertions, deletions, substitutions; a swap of neighbours counts 1).
local function distance(a, b)
  local la, lb = #a, #b
  if la == 0 then return lb end
  if lb == 0 then return la end
  local prev2, prev, cur = {}, {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur = { [0] = i }
    local ca = a:byte(i)
    for j = 1, lb do
      local cb = b:byte(j)
      local cost = ca == cb and 0 or 1
      local d = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if i > 1 and j > 1 and ca == b:byte(j - 1) and a:byte(i - 1) == cb then
        d = math.min(d, prev2[j - 2] + 1)
      end
      cur[j] = d
    end
    prev2, prev = prev, cur
  end
  return cur[lb]
end
M.distance = distance

--- The known key nearest to key (ties: the alphabetically first), compared case-insensitively;
--- a known key that starts with key or that key starts with wins over the edit distance.
---@param key string
---@param known table<string, any> set of known keys
---@return string|nil
function M.nearest(key, known)
  local lk = key:lower()
  local best, best_d
  for k in pairs(known) do
    if type(k) == "string" then
      local kk = k:lower()
      local d = distance(lk, kk)
      if kk:sub(1, #lk) == lk or lk:sub(1, #kk) == kk then d = math.min(d, 1) end
      if best_d == nil or d < best_d or (d == best_d and k < best) then best, best_d = k, d end
    end
  end
  return best
end

--- Raise when t has a key that known lacks. level is error()'s level as seen from the function
--- that calls check (1: that function, 2: its caller, ...).
---@param t table
---@param known table<string, any> set of known keys
---@param what string e.g. "mcp.new_client: config"
---@param level integer|nil default 2
function M.check(t, known, what, level)
  for k in pairs(t) do
    if known[k] == nil then
      local near = type(k) == "string" and M.nearest(k, known) or nil
      error(("%s: unknown option '%s'%s"):format(what, tostring(k),
        near and (" (did you mean '" .. near .. "'?)") or ""), (level or 2) + 1)
    end
  end
end

return M
