-- The comparison of the differential interop suite (interop/run.lua, docs/INTEROP.md), apart from
-- the servers so a spec can drive it (spec/interop_compare_spec.lua): the normalisation rules, the
-- canonical diff, and the checks that keep a pass from being vacuous (each call's expected outcome,
-- the era each server is documented to negotiate, the on_error reports each is known to cause).
local canonical = require("mcp.util.canonical")
local json = require("mcp.json")

local M = {}

local function split(path)
  local parts = {}
  for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
  return parts
end

local function key_of(t, k)
  if json.is_array(t) then return tonumber(k) and tonumber(k) + 1 or nil end -- paths count from 0
  return k
end

-- Apply one rule to a document; returns how many values it touched.
local function apply(node, parts, i, action)
  if type(node) ~= "table" then return 0 end
  local p, n = parts[i], 0
  local keys = {}
  if p == "*" then
    for k in pairs(node) do keys[#keys + 1] = k end
  else
    keys[1] = key_of(node, p)
  end
  for _, k in ipairs(keys) do
    if node[k] ~= nil then
      if i == #parts then
        n = n + 1
        if action == "drop" then node[k] = nil else node[k] = "<masked>" end
      else
        n = n + apply(node[k], parts, i + 1, action)
      end
    end
  end
  return n
end

--- Whether a rule is well formed: a path, a known action and a reason. Returns the problem or nil.
---@param r table
---@return string|nil
function M.bad_rule(r)
  if type(r.path) ~= "string" or r.path == "" then return "a rule without a path" end
  if r.action ~= "drop" and r.action ~= "mask" then return r.path .. ": action must be drop or mask" end
  if type(r.why) ~= "string" or r.why == "" then return r.path .. ": a rule without its reason (why)" end
  return nil
end

--- Apply the rules to a document (in place). Returns {[rule] = how many values it touched}.
---@param doc table
---@param rules table[]
---@return table
function M.normalise(doc, rules)
  local used = {}
  for _, r in ipairs(rules) do used[r] = apply(doc, split(r.path), 1, r.action) end
  return used
end

--- The value at a dotted path (indices from 0), or nil.
---@param doc any
---@param path string
---@return any
function M.get(doc, path)
  local node = doc
  for _, p in ipairs(split(path)) do
    if type(node) ~= "table" then return nil end
    node = node[key_of(node, p)]
  end
  return node
end

local function path_join(path, k)
  if type(k) == "number" then k = k - 1 end
  return path == "" and tostring(k) or (path .. "." .. tostring(k))
end

-- array indices in numeric order, object keys in string order
local function key_less(x, y)
  if type(x) == "number" and type(y) == "number" then return x < y end
  return tostring(x) < tostring(y)
end

local function diff(a, b, path, out, limit)
  if #out >= limit then return end
  if type(a) == "table" and type(b) == "table" and json.is_array(a) == json.is_array(b) then
    local keys, seen = {}, {}
    for k in pairs(a) do keys[#keys + 1], seen[k] = k, true end
    for k in pairs(b) do if not seen[k] then keys[#keys + 1] = k end end
    table.sort(keys, key_less)
    for _, k in ipairs(keys) do diff(a[k], b[k], path_join(path, k), out, limit) end
    return
  end
  local ea = a == nil and "(absent)" or canonical.encode(a)
  local eb = b == nil and "(absent)" or canonical.encode(b)
  if ea ~= eb then
    out[#out + 1] = ("  %s\n    lua-mcp: %s\n    TS SDK:  %s"):format(path, ea:sub(1, 300), eb:sub(1, 300))
  end
end

--- Whether two documents are the same canonical JSON, and the paths where they differ (at most limit).
---@param a table lua-mcp's document
---@param b table the TS SDK's document
---@param limit integer|nil
---@return boolean same, string[] diffs
function M.compare(a, b, limit)
  local same = canonical.encode(a) == canonical.encode(b)
  local out = {}
  if not same then diff(a, b, "", out, limit or 20) end
  return same, out
end

--- Each call's outcome against what the server's list expects: a call marked fails = true must
--- fail (a JSON-RPC error or a result with isError), every other call must succeed. Two clients
--- that agree on an error where a result was meant agree on nothing: that is a problem too.
---@param who string "lua-mcp" or "TS SDK"
---@param doc table the document (its calls)
---@param calls table[] the server's calls
---@return string[] problems
function M.outcomes(who, doc, calls)
  local problems = {}
  for i, c in ipairs(calls) do
    local r = type(doc.calls) == "table" and doc.calls[i] or nil
    local failed = r == nil or r.error ~= nil or (type(r.result) == "table" and r.result.isError == true)
    if failed ~= (c.fails == true) then
      local what = c.name or c.uri or "?"
      local got = r == nil and "no outcome" or canonical.encode(r.error or r.result):sub(1, 200)
      problems[#problems + 1] = ("%s: call %d (%s %s) %s: %s"):format(who, i - 1, c.method, what,
        c.fails and "was meant to fail and succeeded" or "was meant to succeed and failed", got)
    end
  end
  return problems
end

--- lua-mcp's on_error reports against the ones a server is known to cause ({match, why}): every
--- report matches one (a plain substring), and every known one happened.
---@param reports string[]
---@param known table[]
---@return string[] problems
function M.reports(reports, known)
  local problems, hit = {}, {}
  for _, m in ipairs(reports) do
    local matched = false
    for _, k in ipairs(known) do
      if m:find(k.match, 1, true) then matched, hit[k] = true, true end
    end
    if not matched then problems[#problems + 1] = "an on_error report no entry of reports explains: " .. m end
  end
  for _, k in ipairs(known) do
    if not hit[k] then problems[#problems + 1] = "the expected on_error report did not happen: " .. k.match end
  end
  return problems
end

return M
