-- busted helper script (`.busted`: helper = "spec/guard.lua"), loaded once before any spec file.
-- Two guards against cleanups that silently do not happen:
--
-- 1. One finally() per test. busted keeps only the last function given to finally() in a test (a
--    second call replaces the first), so what the first would have closed stays open. Here a
--    second call still registers its function, the cleanups all run (the last registered first),
--    and the test fails with an error naming the line of the second call. Chaining alone would
--    hide the mistake: the same spec run without this helper (busted by hand with another
--    config, a copy of the spec elsewhere) would leak again. Failing alone would leak in the
--    failing test. So both: nothing leaks, and nothing passes.
-- 2. No server process left behind by a spec file. mcp.core.children() (the loop's unreaped
--    children) is read when a file starts; when it ends, after a full garbage collection (a client
--    nobody references is closed by its __gc), the loop is stepped until the count is back, up to
--    LINGER_MS (a closed server needs a moment to exit and be reaped); a file still above its
--    starting count fails with an error on the file. A file that means to keep a server for
--    later closes it in a teardown.
local busted = require("busted")

local guard = {}

-- How long a file's closed servers may take to exit (stdin closed: a well-behaved server exits at
-- once; the stop sequence escalates to SIGTERM after 2 s and SIGKILL after 2 s more).
local LINGER_MS = tonumber(os.getenv("MCP_TEST_LINGER_MS") or "") or 5000
do
  local s = os.getenv("MCP_TEST_SANITIZER")
  if s ~= nil and s ~= "" then LINGER_MS = LINGER_MS * 10 end
end

--- The finally() that replaces busted's for one test: orig is busted's (it keeps one function).
---@param orig fun(fn: function)
---@return fun(fn: function)
function guard.chained_finally(orig)
  local fns = {}
  local function run_all()
    local first_err
    for i = #fns, 1, -1 do
      local ok, err = pcall(fns[i])
      if not ok and first_err == nil then first_err = err end
    end
    if first_err ~= nil then error(first_err, 0) end
  end
  return function(fn)
    fns[#fns + 1] = fn
    if #fns == 1 then
      orig(run_all)
      return
    end
    error(("finally() called %d times in one test: busted keeps only the last one (all ran here);"
      .. " use one finally() or helper.track"):format(#fns), 2)
  end
end

busted.subscribe({ "test", "start" }, function(element)
  local env = element.env
  if env ~= nil and env.finally ~= nil then env.finally = guard.chained_finally(env.finally) end
  return nil, true
end)

-- mcp.core when it loads (it may not be built when busted runs by hand); false when it cannot.
local core
local function get_core()
  if core == nil then
    local ok, m = pcall(require, "mcp.core")
    core = ok and type(m) == "table" and m.children ~= nil and m or false
  end
  return core
end

--- Collect garbage, then step the loop until children() <= before or ms elapse. The count left.
---@param c table mcp.core
---@param before integer
---@param ms number
---@return integer
function guard.settle(c, before, ms)
  collectgarbage("collect")
  -- a second cycle only when something is left (a finalizer may have freed the last reference to
  -- another client): a full collection of busted's heap costs ~10-30 ms a file
  if c.children() > before then collectgarbage("collect") end
  local deadline = c.now_ms() + ms
  while c.children() > before and c.now_ms() < deadline do
    c.step(20)
  end
  return c.children()
end

local at_start = setmetatable({}, { __mode = "k" })
local started_ms = setmetatable({}, { __mode = "k" })

-- MCP_SPEC_TIMES=path: each file's wall time appended there as "<ms> <file>" (make memcheck
-- records them; scripts/shards.sh deals files to shards by them: make memcheck-weights).
local TIMES = os.getenv("MCP_SPEC_TIMES")
if TIMES == "" then TIMES = nil end

local function record_time(file, c)
  local t0 = started_ms[file]
  started_ms[file] = nil
  -- (a spec's own busted run of a fixture inherits the variable: only spec files are weighed)
  if TIMES == nil or t0 == nil or not c or not tostring(file.name):find("_spec%.lua$") then return end
  local fh = io.open(TIMES, "a")
  if fh == nil then return end
  fh:write(("%d %s\n"):format(c.now_ms() - t0, file.name))
  fh:close()
end

busted.subscribe({ "file", "start" }, function(file)
  local c = get_core()
  if c then
    at_start[file] = c.children()
    started_ms[file] = c.now_ms()
  end
  return nil, true
end)

busted.subscribe({ "file", "end" }, function(file)
  local before = at_start[file]
  at_start[file] = nil
  local c = get_core()
  record_time(file, c)
  if before == nil or not c then return nil, true end
  local left = guard.settle(c, before, LINGER_MS)
  if left > before then
    error(("%s left %d server process(es) running (mcp.core.children(): %d at its start, %d at its"
      .. " end): close every client it starts, in a finally() or a teardown"):format(
      file.name, left - before, before, left), 0)
  end
  return nil, true
end)

package.loaded["guard"] = guard
return guard
