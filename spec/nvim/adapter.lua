-- Headless Neovim spec of lua/mcp/nvim.lua (the host adapter), run by `make test-nvim`:
--   nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=<repo>' -c 'luafile spec/nvim/adapter.lua' -c 'cquit 2'
-- It loads the LuaJIT-built module from the runtimepath (lua/mcp/core.so, placed by `make nvim`),
-- connects to examples/servers/example_server.lua over stdio, and calls tools from the main
-- thread, from tasks and from plain coroutines while a vim.uv timer keeps ticking: each slow call
-- only completes if Neovim's loop kept running (the elicitation answer waits on a Neovim timer).
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local uv = vim.uv or vim.loop
local slow = T.slow()

local server_lua = os.getenv("MCP_TEST_LUA")
if server_lua == nil or server_lua == "" then server_lua = "lua5.4" end
local server_path = root .. "/examples/servers/example_server.lua"

-- A Neovim-loop timer that counts its ticks (a luv callback, as a plugin's would be).
local ticks = 0
local ticker = uv.new_timer()
ticker:start(10, 10, function() ticks = ticks + 1 end)

local function now() return uv.hrtime() / 1e6 end

local mcp, nvim_adapter, client
local errors_seen = {}
local elicit_delay_ms = 400

-- The elicitation handler answers after a Neovim timer: the call it belongs to can only finish
-- if the loop ran meanwhile. It records whether it ran outside a fast callback.
local handler_calls = {}
local function delayed_accept(delay)
  return function(req)
    local info = { fast = vim.in_fast_event(), message = req.message }
    handler_calls[#handler_calls + 1] = info
    -- Neovim API use is allowed here (we are in a vim.schedule callback, not a luv callback).
    info.buf_ok = pcall(vim.api.nvim_buf_set_lines, 0, 0, -1, false, { "elicitation: " .. tostring(req.message) })
    require("mcp.sched").await(function(cb) vim.defer_fn(function() cb() end, delay or elicit_delay_ms) end)
    return mcp.elicitation.accept({ answer = "from nvim" })
  end
end

T.test("the LuaJIT module loads from the runtimepath (lua/mcp/core.so)", function()
  T.truthy(rawget(_G, "jit"), "Neovim runs LuaJIT")
  local found = vim.api.nvim_get_runtime_file("lua/mcp/core.so", false)
  T.truthy(#found > 0, "lua/mcp/core.so on the runtimepath (make nvim)")
  T.eq(nil, package.cpath:find("build/5%.4"), "package.cpath never names build/5.4")
  mcp = require("mcp")
  T.truthy(package.loaded["mcp.core"], "mcp.core loaded")
  nvim_adapter = require("mcp.nvim")
  T.eq("luajit", nvim_adapter.abi())
  T.eq(nil, nvim_adapter.find_core(), "find_core adds nothing once mcp.core is loaded")
end)

T.test("setup_nvim starts the adapter (idempotent) and vim.NIL encodes as null", function()
  T.eq(mcp, mcp.setup_nvim({ on_error = function(msg) errors_seen[#errors_seen + 1] = tostring(msg) end }))
  T.truthy(nvim_adapter.is_active())
  T.eq(mcp, mcp.setup_nvim({ on_error = function(msg) errors_seen[#errors_seen + 1] = tostring(msg) end }))
  T.eq('{"a":null}', mcp.json.encode({ a = vim.NIL }))
  T.eq('[1,null]', mcp.json.encode({ 1, vim.NIL }))
  local v = mcp.json.decode('{"x":null}')
  T.eq(mcp.null, v.x, "decoded null is mcp.null")
  -- Neovim's own converters need vim.NIL (0.7's vim.json.encode writes `{"x":}` for mcp.null)
  local vv = nvim_adapter.to_vim(mcp.json.decode('{"x":null,"y":[null,1],"z":{},"w":[]}'))
  T.eq(vim.NIL, vv.x)
  T.eq(vim.NIL, vv.y[1])
  T.eq(1, vv.y[2])
  T.eq(4, vim.fn.type(vv.z), "an empty object is a Vim dict")
  T.eq(3, vim.fn.type(vv.w), "an empty array is a Vim list")
  T.eq(7, vim.fn.type(vv.x), "null is v:null")
  T.eq(mcp.json.decode(vim.fn.json_encode(vv)).y[2], 1, "vim.fn.json_encode takes the copy")
  if vim.json then T.eq('{"x":null}', vim.json.encode({ x = vv.x }), "vim.json.encode of vim.NIL") end
end)

T.test("connect from the main thread while the timer ticks", function()
  local t0 = ticks
  local err
  client, err = mcp.create_stdio_client(server_lua, { server_path }, {
    stderr = "discard",
    request_timeout_ms = 30000 * slow,
    on_elicitation_request = delayed_accept(),
  })
  T.truthy(client, "connected: " .. tostring(err))
  T.eq("lua-example-server", client:server_info().name)
  T.truthy(ticks >= t0, "ticks")
end)

T.test("main thread: list_all_tools and call_tool", function()
  local names = {}
  for _, tool in ipairs(assert(client:list_all_tools())) do names[tool.name] = true end
  for _, n in ipairs({ "echo", "add", "slow_count", "ask_user" }) do T.truthy(names[n], "tool " .. n) end
  local r = assert(client:call_tool("add", { a = 2, b = 40 }))
  T.eq(42, r.structuredContent.sum)
end)

T.test("main thread: mcp.sleep keeps the loop running", function()
  local t0, c0 = now(), ticks
  mcp.sleep(300)
  T.truthy(now() - t0 >= 290, "slept ~300 ms")
  T.truthy(ticks - c0 >= 5, "timer ticked during the sleep (" .. (ticks - c0) .. " ticks)")
end)

-- A fake secret-tool over <dir>/items that takes 300 ms once <dir>/slow exists; <dir>/log has a
-- line a run. search lists a matching item (a lookup that says nothing is "not stored" only when
-- search lists none).
local function fake_secret_tool()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/items", "p")
  local tool = dir .. "/secret-tool"
  local f = assert(io.open(tool, "w"))
  f:write(([[#!/bin/sh
d='%s'
echo "$1" >> "$d/log"
if [ -f "$d/slow" ]; then sleep 0.3; fi
case "$1" in
lookup) [ -f "$d/items/$5" ] || exit 1; cat "$d/items/$5" ;;
search) [ -f "$d/items/$5" ] && echo "[/1]" ;;
store) cat > "$d/items/$6" ;;
esac
exit 0
]]):format(dir))
  f:close()
  vim.fn.setfperm(tool, "rwx------")
  return dir, tool
end

T.test("the keyring store: a load from the main thread and a save from a task keep Neovim's loop running", function()
  local dir, tool = fake_secret_tool()
  local s = assert(mcp.auth.keyring_store({ tool = tool }))
  io.open(dir .. "/slow", "w"):close()
  local url = "https://mcp.example/"
  local c0 = ticks
  T.eq(nil, s:load(url))
  T.truthy(ticks - c0 >= 5, "timer ticked while secret-tool ran (" .. (ticks - c0) .. " ticks)")
  local done = false
  mcp.spawn(function()
    s:save(url, { tokens = { access_token = "at" } })
    done = true
  end)
  T.eq(false, done, "spawn returns before the save waits")
  c0 = ticks
  T.wait_for(function() return done end, 10000 * slow, "the save")
  T.truthy(ticks - c0 >= 5, "timer ticked while secret-tool ran (" .. (ticks - c0) .. " ticks)")
  T.eq("at", s:load(url).tokens.access_token)
  -- the probe, the lookup and the search (nothing there), the store; the load after the save is
  -- answered from memory
  local n = #vim.fn.readfile(dir .. "/log")
  T.eq(4, n)
  vim.fn.delete(dir, "rf")
end)

T.test("the keyring store: a save from a vim.schedule callback during a load's vim.wait fails at once", function()
  local dir, tool = fake_secret_tool()
  local s = assert(mcp.auth.keyring_store({ tool = tool }))
  io.open(dir .. "/slow", "w"):close()
  local sched = require("mcp.sched")
  local real = sched.block
  -- the adapter's wait, bounded: a wait that never ends fails the test instead of hanging Neovim
  sched.block = function(pred, ms)
    real(pred, ms or 20000 * slow)
    if not pred() then error("the wait gave up: it waits for itself", 0) end
  end
  local nested
  vim.schedule(function() nested = { pcall(s.save, s, "https://mcp.example/", { tokens = { access_token = "x" } }) } end)
  local ok, rec = pcall(s.load, s, "https://mcp.example/")
  sched.block = real
  T.eq(true, ok, tostring(rec))
  T.eq(nil, rec)
  T.truthy(nested, "the callback ran during the load's wait")
  T.eq(true, nested[1], tostring(nested[2]))
  T.eq(nil, nested[2])
  T.eq("busy", nested[3] and nested[3].kind)
  T.truthy(s:save("https://mcp.example/", { tokens = { access_token = "after" } }))
  T.eq("after", s:load("https://mcp.example/").tokens.access_token)
  vim.fn.delete(dir, "rf")
end)

T.test("main thread: a slow call (elicitation answered from a Neovim timer) does not block the loop", function()
  local scheduled_ran = false
  vim.schedule(function() scheduled_ran = true end)
  local c0, t0, h0 = ticks, now(), #handler_calls
  local r, err = client:call_tool("ask_user", { question = "main?" })
  local elapsed, during = now() - t0, ticks - c0
  T.truthy(r, tostring(err))
  T.truthy(r.content[1].text:find("action: accept", 1, true), r.content[1].text)
  T.truthy(r.content[1].text:find("from nvim", 1, true), r.content[1].text)
  T.truthy(elapsed >= elicit_delay_ms - 10, "the call took the handler's delay")
  T.truthy(during >= 10, "timer ticked during the call (" .. during .. " ticks in " .. math.floor(elapsed) .. " ms)")
  T.truthy(scheduled_ran, "a vim.schedule callback ran during the call")
  T.eq(h0 + 1, #handler_calls)
  T.eq(false, handler_calls[#handler_calls].fast, "the handler ran outside a fast callback")
  T.truthy(handler_calls[#handler_calls].buf_ok, "the handler could use the Neovim API")
end)

T.test("main thread: progress notifications reach on_progress outside fast callbacks", function()
  local seen, fast = {}, false
  local r = assert(client:call_tool("slow_count", { n = 50 }, {
    on_progress = function(p)
      seen[#seen + 1] = p.progress
      fast = fast or vim.in_fast_event()
    end,
  }))
  T.eq("Counted to 50", r.content[1].text)
  T.eq(50, #seen, "every progress notification ran before the result")
  T.eq(50, seen[50])
  T.eq(false, fast)
end)

T.test("main thread: a request timeout fires from the adapter's timer", function()
  local t0 = now()
  local r, err = client:call_tool("ask_user", { question = "too slow" }, { timeout_ms = 300 })
  T.eq(nil, r)
  T.eq("timeout", err and err.kind, tostring(err))
  local elapsed = now() - t0
  T.truthy(elapsed >= 290 and elapsed < 300 + 3000 * slow, "timed out after ~300 ms (" .. math.floor(elapsed) .. ")")
  -- let the late elicitation answer go out before the next test
  mcp.sleep(elicit_delay_ms + 100)
end)

T.test("task: calls suspend the task; the caller and the loop go on", function()
  local c0 = ticks
  local tools, answer, fast
  local task_done = false
  mcp.spawn(function()
    tools = client:list_tools()
    local r = client:call_tool("ask_user", { question = "task?" })
    answer = r and r.content[1].text
    fast = vim.in_fast_event()
    task_done = true
  end)
  T.eq(false, task_done, "spawn returns before the task waits")
  T.wait_for(function() return task_done end, 10000 * slow, "the task")
  T.truthy(#tools >= 4)
  T.truthy(answer and answer:find("from nvim", 1, true), tostring(answer))
  T.eq(false, fast, "the task ran in the main loop, not in a fast callback")
  T.truthy(ticks - c0 >= 10, "timer ticked while the task waited (" .. (ticks - c0) .. ")")
end)

T.test("tasks: 50 calls in flight at once", function()
  local got, n = {}, 50
  for i = 1, n do
    mcp.spawn(function()
      local r = client:call_tool("echo", { message = "m" .. i })
      got[i] = r and r.content[1].text
    end)
  end
  T.wait_for(function() return #got == n end, 10000 * slow, "50 answers")
  for i = 1, n do T.eq("m" .. i, got[i]) end
end)

T.test("plain coroutine (default coroutines = \"wait\"): the call waits with vim.wait inside it", function()
  local c0 = ticks
  local text
  coroutine.wrap(function()
    local r = client:call_tool("ask_user", { question = "coroutine wait?" })
    text = r and r.content[1].text
  end)()
  T.truthy(text and text:find("from nvim", 1, true), "answered before the coroutine returned: " .. tostring(text))
  T.truthy(ticks - c0 >= 10, "timer ticked during the call")
end)

T.test("plain coroutine with coroutines = \"yield\": the call suspends the coroutine", function()
  nvim_adapter.setup({ coroutines = "yield", on_error = function(msg) errors_seen[#errors_seen + 1] = tostring(msg) end })
  local c0 = ticks
  local text, after_slept
  local co = coroutine.create(function()
    local r = client:call_tool("ask_user", { question = "coroutine yield?" })
    text = r and r.content[1].text
    mcp.sleep(50) -- wait_until/sleep suspend too
    after_slept = true
  end)
  local ok, e = coroutine.resume(co)
  T.truthy(ok, tostring(e))
  T.eq("suspended", coroutine.status(co), "the coroutine yielded to its resumer")
  T.eq(nil, text)
  T.wait_for(function() return after_slept end, 10000 * slow, "the coroutine to be resumed")
  T.truthy(text and text:find("from nvim", 1, true), tostring(text))
  T.eq("dead", coroutine.status(co))
  T.truthy(ticks - c0 >= 10)
  nvim_adapter.setup({ coroutines = "wait", on_error = function(msg) errors_seen[#errors_seen + 1] = tostring(msg) end })
end)

T.test("a failing task is reported through on_error (vim.notify by default)", function()
  local n0 = #errors_seen
  mcp.spawn(function() error("boom in a task") end)
  T.wait_for(function() return #errors_seen > n0 end, 5000 * slow, "on_error")
  T.truthy(errors_seen[n0 + 1]:find("boom in a task", 1, true), errors_seen[n0 + 1])
end)

-- (issue 28: close() no longer waits in Neovim's frame; the adapter's steps reap the server)
T.test("close from the main thread returns at once and the loop reaps the server", function()
  T.truthy(client:close())
  T.eq(false, client:is_connected())
  T.wait_for(function() return mcp.core.children() == 0 end, 5000 * slow, "no server process left")
end)

T.test("stop restores the plain blocking wait; setup again drives the loop again", function()
  local sched = require("mcp.sched")
  nvim_adapter.stop()
  T.eq(false, nvim_adapter.is_active())
  T.eq(sched.loop_block, sched.block)
  T.eq(false, (pcall(mcp.json.encode, { a = vim.NIL })), "vim.NIL is no longer an alias of null")
  mcp.setup_nvim()
  T.truthy(nvim_adapter.is_active())
  T.truthy(sched.block ~= sched.loop_block)
  local c = assert(mcp.create_stdio_client(server_lua, { server_path }, { stderr = "discard" }))
  local done
  mcp.spawn(function() done = c:call_tool("echo", { message = "again" }) end)
  T.wait_for(function() return done ~= nil end, 10000 * slow, "the call after a new setup")
  T.eq("again", done.content[1].text)
  c:close()
end)

ticker:stop()
ticker:close()
T.finish()
