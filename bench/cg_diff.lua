--- Per-operation instruction counts from two callgrind runs of the same driver that differ only
--- in the number of operations: (B - A) / (nB - nA) per function, so start-up, module loading
--- and warm-up cancel out. Reads `callgrind_annotate` output.
---
---   lua5.4 bench/cg_diff.lua A.out B.out OPS [inclusive] [TOP]
local a_path, b_path, ops, mode, top = arg[1], arg[2], tonumber(arg[3]), arg[4], tonumber(arg[5] or "") or 30
assert(a_path and b_path and ops, "usage: cg_diff.lua A.out B.out OPS [inclusive|exclusive] [TOP]")
local inclusive = mode == "inclusive"

local function load(path)
  local cmd = ("callgrind_annotate --threshold=100 --inclusive=%s '%s' 2>/dev/null"):format(inclusive and "yes" or "no", path)
  local t = {}
  for line in io.popen(cmd):lines() do
    local n, name = line:match("^%s*([%d,]+) %(%s*[%d.]+%%%)%s+(.-)%s*$")
    if n then
      n = tonumber((n:gsub(",", "")))
      name = name:gsub("'%d+", "")                -- recursion levels: one function
      name = name:gsub("^%?%?%?:", ""):gsub("^[^%s]*/", "") -- drop source paths, keep file:function [object]
      name = name:gsub("%[.*/([^/%]]+)%]$", "[%1]")
      if inclusive then t[name] = math.max(t[name] or 0, n) else t[name] = (t[name] or 0) + n end
    end
  end
  return t
end

local A, B = load(a_path), load(b_path)
local total = ((B["PROGRAM TOTALS"] or 0) - (A["PROGRAM TOTALS"] or 0)) / ops
local rows = {}
for name, v in pairs(B) do
  if name ~= "PROGRAM TOTALS" then rows[#rows + 1] = { name, (v - (A[name] or 0)) / ops } end
end
table.sort(rows, function(x, y) return x[2] > y[2] end)
print(("%s instructions per operation: %.0f (%s, %d operations apart)"):format(inclusive and "inclusive" or "exclusive",
  total, b_path:match("[^/]+$"), ops))
for i = 1, math.min(top, #rows) do
  if rows[i][2] >= 1 then print(("%10.0f %5.1f%%  %s"):format(rows[i][2], 100 * rows[i][2] / total, rows[i][1])) end
end
