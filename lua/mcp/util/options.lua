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

-- How far a typo may be from a known key and still be named: at most 2 edits in 5 characters of
-- the longer of the two ("workdir" -> "working_dir": 4 edits in 11), at least one edit. Further
-- than that a hint misleads ("timeout" is not a typo of "name": 5 edits in 7).
local function near_enough(d, a, b)
  return d <= 1 or d * 5 <= math.max(#a, #b) * 2
end

-- Rank of a known key k for a typed key: 0 when one is a prefix of the other ("timeout" and
-- "timeout_ms"), 1 when one contains the other ("timeout" in "request_timeout_ms"), 2 otherwise.
-- Keys shorter than 3 characters match only by distance.
local function rank(lk, kk)
  if #lk < 3 or #kk < 3 then return 2 end
  if kk:sub(1, #lk) == lk or lk:sub(1, #kk) == kk then return 0 end
  if kk:find(lk, 1, true) or lk:find(kk, 1, true) then return 1 end
  return 2
end

--- The known keys nearest to key, compared case-insensitively, best first; empty when none is
--- near. Known keys that key is a prefix of (or the reverse) come first, then those that contain
--- key (or the reverse): every key of the best such rank is returned (at most 3), so `timeout`
--- among `connect_timeout_ms` and `request_timeout_ms` names both. Without such a key, the one
--- key at the smallest edit distance within a cut-off (2 edits in 5 characters of the longer). Ties go to
--- the smaller distance, then the alphabetically first.
---@param key string
---@param known table<string, any> set of known keys
---@return string[]
function M.suggestions(key, known)
  local lk = key:lower()
  local cands = {}
  for k in pairs(known) do
    if type(k) == "string" then
      local kk = k:lower()
      local r, d = rank(lk, kk), distance(lk, kk)
      if r < 2 or near_enough(d, lk, kk) then cands[#cands + 1] = { k = k, r = r, d = d } end
    end
  end
  table.sort(cands, function(x, y)
    if x.r ~= y.r then return x.r < y.r end
    if x.d ~= y.d then return x.d < y.d end
    return x.k < y.k
  end)
  local out = {}
  for _, c in ipairs(cands) do
    if c.r ~= cands[1].r or #out == 3 or (c.r == 2 and #out == 1) then break end
    out[#out + 1] = c.k
  end
  return out
end

--- The known key nearest to key (the first of M.suggestions), or nil when none is near.
---@param key string
---@param known table<string, any> set of known keys
---@return string|nil
function M.nearest(key, known)
  return M.suggestions(key, known)[1]
end

-- " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", "" when there is no suggestion.
local function hint(list)
  if #list == 0 then return "" end
  local quoted = {}
  for i, k in ipairs(list) do quoted[i] = "'" .. k .. "'" end
  local last = table.remove(quoted)
  local head = table.concat(quoted, ", ")
  return " (did you mean " .. (head ~= "" and (head .. " or ") or "") .. last .. "?)"
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
      local list = type(k) == "string" and M.suggestions(k, known) or {}
      error(("%s: unknown option '%s'%s"):format(what, tostring(k), hint(list)), (level or 2) + 1)
    end
  end
end

return M
