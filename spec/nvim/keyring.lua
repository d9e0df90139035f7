-- Headless Neovim spec of the keyring store's nested operations under the adapter (mcp.nvim), run
-- by `make test-nvim`. Under the default coroutines = "wait", a plain coroutine (a plugin's, not an
-- mcp task) waits with vim.wait, nested in any vim.wait under way, as the main thread does: an
-- operation it starts during another one's wait (or the main thread's during its wait) is nested,
-- and fails at once with kind "busy" instead of waiting for itself. Under coroutines = "yield"
-- such a coroutine is suspended instead, and is a waiter of its own. A fake secret-tool takes
-- 300 ms a run; the adapter's wait is bounded here, so a wait that never ends fails the test
-- instead of hanging Neovim.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local slow = T.slow()

local mcp = require("mcp")
local sched = require("mcp.sched")
mcp.setup_nvim()

local URL = "https://mcp.example/"

-- A fake secret-tool over <dir>/items, 300 ms a run; <dir>/log has a line a run.
local function fake_secret_tool()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/items", "p")
  local tool = dir .. "/secret-tool"
  local f = assert(io.open(tool, "w"))
  f:write(([[#!/bin/sh
d='%s'
echo "$1" >> "$d/log"
sleep 0.3
case "$1" in
lookup) [ -f "$d/items/$5" ] || exit 1; cat "$d/items/$5" ;;
search) [ -f "$d/items/$5" ] && echo "[/1]" ;;
store) cat > "$d/items/$6" ;;
esac
exit 0
]]):format(dir))
  f:close()
  vim.fn.setfperm(tool, "rwx------")
  return dir, assert(mcp.auth.keyring_store({ tool = tool }))
end

local function runs(dir, verb)
  local n = 0
  for _, line in ipairs(vim.fn.readfile(dir .. "/log")) do
    if line == verb then n = n + 1 end
  end
  return n
end

-- The adapter's wait, bounded for the duration of fn.
local function bounded(fn)
  local real = sched.block
  sched.block = function(pred, ms)
    real(pred, ms or 5000 * slow)
    if not pred() then error("the wait gave up after 5 s: it waits for itself", 0) end
  end
  local ok, err = pcall(fn)
  sched.block = real
  if not ok then error(err, 0) end
end

local function is_busy(got, what)
  T.truthy(got, what .. " ran")
  T.eq(true, got[1], what .. " raised: " .. tostring(got[2]))
  T.eq(nil, got[2], what .. "'s first result")
  T.eq("busy", got[3] and got[3].kind, what .. "'s error kind (" .. tostring(got[3]) .. ")")
end

T.test("coroutines = \"wait\": a save in a plain coroutine during the main thread's load fails at once (busy)", function()
  local dir, s = fake_secret_tool()
  local nested, ok, rec
  bounded(function()
    vim.schedule(function()
      local co = coroutine.create(function() return s:save(URL, { tokens = { access_token = "nested" } }) end)
      nested = { coroutine.resume(co) }
    end)
    ok, rec = pcall(s.load, s, URL)
  end)
  T.eq(true, ok, tostring(rec))
  T.eq(nil, rec, "the load's own answer: nothing stored")
  is_busy(nested, "the nested save")
  T.eq(0, runs(dir, "store"))
  -- the store is not left busy
  T.truthy(s:save(URL, { tokens = { access_token = "after" } }))
  T.eq("after", s:load(URL).tokens.access_token)
  vim.fn.delete(dir, "rf")
end)

T.test("coroutines = \"wait\": a save on the main thread during a plain coroutine's load fails at once (busy)", function()
  local dir, s = fake_secret_tool()
  local nested, outer
  bounded(function()
    vim.schedule(function() nested = { pcall(s.save, s, URL, { tokens = { access_token = "nested" } }) } end)
    local co = coroutine.create(function() return s:load(URL) end)
    outer = { coroutine.resume(co) }
    T.eq("dead", coroutine.status(co), "the coroutine's load waited in vim.wait (not suspended)")
  end)
  T.eq(true, outer[1], tostring(outer[2]))
  T.eq(nil, outer[2], "the load's own answer: nothing stored")
  is_busy(nested, "the nested save")
  T.eq(0, runs(dir, "store"))
  vim.fn.delete(dir, "rf")
end)

T.test("coroutines = \"wait\": a load in one plain coroutine during another's save fails at once (busy)", function()
  local dir, s = fake_secret_tool()
  local nested, outer
  bounded(function()
    vim.schedule(function()
      local co2 = coroutine.create(function() return s:load(URL) end)
      nested = { coroutine.resume(co2) }
    end)
    local co = coroutine.create(function() return s:save(URL, { tokens = { access_token = "outer" } }) end)
    outer = { coroutine.resume(co) }
  end)
  T.eq(true, outer[1], tostring(outer[2]))
  T.eq(true, outer[2], "the outer save")
  is_busy(nested, "the nested load")
  T.eq(1, runs(dir, "lookup"), "the store's probe only")
  T.eq("outer", s:load(URL).tokens.access_token)
  vim.fn.delete(dir, "rf")
end)

T.test("coroutines = \"yield\": a plain coroutine's load is suspended, and a main-thread save waits its turn", function()
  local dir, s = fake_secret_tool()
  mcp.setup_nvim({ coroutines = "yield" })
  local loaded, saved
  local ok, err = pcall(bounded, function()
    local co = coroutine.create(function() loaded = { s:load(URL) } end)
    assert(coroutine.resume(co))
    T.eq("suspended", coroutine.status(co), "the coroutine's load yielded")
    saved = { s:save(URL, { tokens = { access_token = "main" } }) }
    T.wait_for(function() return loaded ~= nil end, 20000 * slow, "the coroutine's load")
  end)
  mcp.setup_nvim({ coroutines = "wait" })
  T.eq(true, ok, tostring(err))
  T.eq(true, saved[1], tostring(saved[2]))
  T.eq(nil, loaded[1], "the load ran first: nothing stored then")
  T.eq(nil, loaded[2], "and no error")
  T.eq(1, runs(dir, "store"))
  T.eq("main", s:load(URL).tokens.access_token)
  vim.fn.delete(dir, "rf")
end)

T.finish()
