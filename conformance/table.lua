--- Prints the conformance results of `make conformance` as one Markdown table: a row per scenario,
--- a column per leg, and the totals. The verdicts that fail the build are the runner's own (its
--- --expected-failures evaluation); this only reads what the runs left behind.
---
---   lua5.4 conformance/table.lua <name>=<results dir>=<baseline.yml> ...
---
--- A results dir holds, per scenario, <scenario>-<ISO timestamp>/checks.json (auth scenarios under
--- auth/) and the client's stderr.txt, and the runner's output in <results dir>.log.
---
--- Cells:
---   pass     no check failed or warned, one succeeded at least, and the client finished its steps
---   xfail    failed, and listed in the leg's baseline (expected: work not asked for yet)
---   FAIL     failed, and not in the baseline: a regression
---   STALE    listed in the baseline but passing: the runner fails the leg; remove the entry
---   vacuous  nothing failed, but no check succeeded or the client program itself failed (it
---            prints "] done" last only when every step worked), so the pass shows nothing
---   -        the scenario is not part of that leg
local json = require("mcp.json")

local legs = {}
for _, a in ipairs(arg) do
  local name, dir, baseline = a:match("^([^=]+)=([^=]+)=([^=]+)$")
  if not name then
    io.stderr:write("usage: table.lua <name>=<results dir>=<baseline.yml> ...\n")
    os.exit(2)
  end
  legs[#legs + 1] = { name = name, dir = dir, baseline = baseline }
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function lines(cmd)
  local out, p = {}, assert(io.popen(cmd))
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- The suite's baseline format, as far as we write it: `client:` then `  - name` or
-- `  - scenario:check-id` items; comments and other sections are skipped.
local function read_baseline(path)
  local whole, checks, section = {}, {}, nil
  for l in (read(path) or ""):gmatch("[^\n]*") do
    local key = l:match("^(%w+):")
    if key then section = key end
    local item = l:match("^%s+%-%s+([^#%s]+)")
    if item and section == "client" then
      local scenario, check = item:match("^([^:]+):(.+)$")
      if scenario then
        checks[scenario] = checks[scenario] or {}
        checks[scenario][check] = true
      else
        whole[item] = true
      end
    end
  end
  return whole, checks
end

local SEVERITY = { FAILURE = 3, WARNING = 2, SUCCESS = 1, INFO = 0, SKIPPED = 0 }

-- Scenario order: the suite's own (the runner's summary in its log), leg after leg.
local order, seen = {}, {}
local function note(name)
  if not seen[name] then
    seen[name] = true
    order[#order + 1] = name
  end
end

for _, leg in ipairs(legs) do
  leg.results = {}
  leg.whole, leg.checks = read_baseline(leg.baseline)
  for l in (read(leg.dir .. ".log") or ""):gmatch("[^\n]*") do
    local s = l:match("^\226\156[\147\151] (%S+): %d+ passed")  -- "✓ name: N passed" / "✗ ..."
    if s then note(s) end
  end
  local files = lines("cd " .. shell_quote(leg.dir) .. " 2>/dev/null && find . -name checks.json | sort")
  for _, f in ipairs(files) do
    local rel = f:gsub("^%./", ""):gsub("/checks%.json$", "")
    local scenario = rel:gsub("%-%d%d%d%d%-%d%d%-%d%dT[%d%-]+Z$", "")
    local checks = json.decode(read(leg.dir .. "/" .. f) or "[]") or {}
    local stderr = read(leg.dir .. "/" .. rel .. "/stderr.txt") or ""
    -- Repeated check ids collapse to their most severe status, as the runner does.
    local worst = {}
    for _, c in ipairs(checks) do
      local id, st = c.id, c.status
      if worst[id] == nil or (SEVERITY[st] or 0) > (SEVERITY[worst[id]] or 0) then worst[id] = st end
    end
    local r = { ok = 0, failed = 0, failing = {}, client_done = stderr:find("%] done\n") ~= nil }
    for id, st in pairs(worst) do
      if st == "SUCCESS" then
        r.ok = r.ok + 1
      elseif st == "FAILURE" or st == "WARNING" then
        r.failed = r.failed + 1
        r.failing[#r.failing + 1] = id
      end
    end
    leg.results[scenario] = r
    note(scenario)
  end
end

local function cell(leg, scenario)
  local r = leg.results[scenario]
  if not r then return "-" end
  local whole, per = leg.whole[scenario], leg.checks[scenario]
  if r.failed > 0 then
    if whole then return "xfail" end
    if per then
      for _, id in ipairs(r.failing) do
        if not per[id] then return "FAIL" end
      end
      return "xfail"
    end
    return "FAIL"
  end
  if whole or per then return "STALE" end
  if r.ok == 0 or not r.client_done then return "vacuous" end
  return "pass"
end

local KINDS = { "pass", "xfail", "FAIL", "STALE", "vacuous" }
local header = { "scenario" }
local rule = { "---" }
local totals = {}
for i, leg in ipairs(legs) do
  header[#header + 1] = leg.name
  rule[#rule + 1] = "---"
  totals[i] = { pass = 0, xfail = 0, FAIL = 0, STALE = 0, vacuous = 0, ok = 0, failed = 0 }
end

local out = {}
out[#out + 1] = "| " .. table.concat(header, " | ") .. " |"
out[#out + 1] = "|" .. table.concat(rule, "|") .. "|"
for _, scenario in ipairs(order) do
  local row = { scenario }
  for i, leg in ipairs(legs) do
    local c = cell(leg, scenario)
    row[#row + 1] = c
    local t, r = totals[i], leg.results[scenario]
    if t[c] then t[c] = t[c] + 1 end
    if r then t.ok, t.failed = t.ok + r.ok, t.failed + r.failed end
  end
  out[#out + 1] = "| " .. table.concat(row, " | ") .. " |"
end
local row = { "**total**" }
for i in ipairs(legs) do
  local t, parts = totals[i], {}
  for _, k in ipairs(KINDS) do
    if t[k] > 0 or k == "pass" or k == "FAIL" then parts[#parts + 1] = t[k] .. " " .. k end
  end
  row[#row + 1] = table.concat(parts, ", ")
end
out[#out + 1] = "| " .. table.concat(row, " | ") .. " |"
row = { "checks (succeeded / failed)" }
for i in ipairs(legs) do
  row[#row + 1] = totals[i].ok .. " / " .. totals[i].failed
end
out[#out + 1] = "| " .. table.concat(row, " | ") .. " |"
print(table.concat(out, "\n"))
