-- Runs the official JSON Schema Test Suite's draft2020-12 cases against mcp.schema and prints
-- every case that fails, the pass rate per file and in all, and the cases listed in the expected
-- failures file that now pass. Exit 1 when a case fails that is not listed there.
--
--   lua scripts/schema_suite.lua TESTS_DIR [EXPECTED_FILE [REMOTES_DIR]]
--
-- TESTS_DIR: the suite's tests/draft2020-12 directory (scripts/schema-suite.sh finds it in
-- Debian's libtest-json-schema-acceptance-perl, which ships the suite as its share dir; nothing of
-- it is committed). EXPECTED_FILE: one case per line, "file.json: group / test", "#" comments.
-- REMOTES_DIR: the suite's remotes/, handed to mcp.schema as opts.schemas under the URIs the cases
-- name (http://localhost:1234/<path>): the schemas a host gives by URI, never fetched.
-- The optional/ cases are not run (formats as assertions, bignums, ECMAScript regex details).
local json = require("mcp.json")
local schema = require("mcp.schema")

local dir, expected_file, remotes_dir = arg[1], arg[2], arg[3]
if dir == nil then
  io.stderr:write("usage: lua scripts/schema_suite.lua TESTS_DIR [EXPECTED_FILE]\n")
  os.exit(2)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local expected = {}
if expected_file then
  for line in read(expected_file):gmatch("[^\n]+") do
    if not line:match("^%s*#") and line:match("%S") then expected[line] = true end
  end
end

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local files = {}
local p = assert(io.popen("ls " .. shq(dir) .. " 2>/dev/null"))
for name in p:lines() do
  if name:match("%.json$") then files[#files + 1] = name end
end
p:close()

local remotes
if remotes_dir then
  remotes = {}
  local f = assert(io.popen("cd " .. shq(remotes_dir) .. " && find . -name '*.json' | sort"))
  for rel in f:lines() do
    remotes["http://localhost:1234/" .. rel:gsub("^%./", "")] = json.decode(read(remotes_dir .. "/" .. rel))
  end
  f:close()
end
table.sort(files)
if #files == 0 then
  io.stderr:write("no .json files in " .. dir .. "\n")
  os.exit(2)
end

-- One case: "pass", or "fail" and why.
local function run_case(s, data, want_valid)
  local ok, errs, unchecked = pcall(schema.errors, s, data, { schemas = remotes })
  if not ok then return "fail", "raised: " .. tostring(errs) end
  if #unchecked > 0 and #errs == 0 then return "fail", "unchecked: " .. unchecked[1].message end
  local valid = #errs == 0
  if valid == want_valid then return "pass" end
  return "fail", want_valid and ("rejected: " .. schema.describe(errs[1])) or "accepted"
end

local passed, failed, new_failures, now_pass = 0, 0, {}, {}
for _, name in ipairs(files) do
  local groups = json.decode(read(dir .. "/" .. name))
  local fp, ff = 0, 0
  for _, g in ipairs(groups) do
    for _, t in ipairs(g.tests) do
      local id = name .. ": " .. g.description .. " / " .. t.description
      local res, why = run_case(g.schema, t.data, t.valid)
      if res == "pass" then
        fp = fp + 1
        if expected[id] then now_pass[#now_pass + 1] = id end
      else
        ff = ff + 1
        print(("FAIL %s (%s)%s"):format(id, why, expected[id] and "" or "  [not expected]"))
        if not expected[id] then new_failures[#new_failures + 1] = id end
      end
    end
  end
  print(("%-32s %4d / %4d"):format(name, fp, fp + ff))
  passed, failed = passed + fp, failed + ff
end

for _, id in ipairs(now_pass) do print("NOW PASSES (drop it from the expected list): " .. id) end
print(("draft2020-12: %d of %d cases pass (%.1f%%)"):format(passed, passed + failed, 100 * passed / (passed + failed)))
print(("%d passed, %d failed"):format(passed, failed))
if #new_failures > 0 then
  print(#new_failures .. " failing case(s) not in the expected list")
  os.exit(1)
end
