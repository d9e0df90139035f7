-- sched.block: the replaceable blocking wait used outside tasks (hosts such as Neovim swap it),
-- and mcp.nvim's parts that work without Neovim.
local helper = require("helper")
local mcp = require("mcp")
local sched = require("mcp.sched")
local unpack = table.unpack or unpack

describe("sched.block", function()
  after_each(function() sched.block = sched.loop_block end)

  it("defaults to loop_block, which steps the core", function()
    assert.are.equal(sched.loop_block, sched.block)
    local fired = false
    mcp.core.timer(20, function() fired = true end)
    sched.block(function() return fired end)
    assert.is_true(fired)
  end)

  it("is what a blocking call outside a task waits with (await: no ms; wait_until: ms)", function()
    local client = assert(helper.example_server())
    local calls = {}
    sched.block = function(pred, ms)
      calls[#calls + 1] = { ms = ms }
      return sched.loop_block(pred, ms)
    end
    local r = assert(client:call_tool("add", { a = 1, b = 2 }))
    assert.are.equal(3, r.structuredContent.sum)
    assert.is_true(#calls >= 1)
    assert.is_nil(calls[1].ms)
    local n = #calls
    assert.is_true(sched.wait_until(function() return false end, 30) == false)
    assert.are.equal(30, calls[n + 1].ms)
    sched.block = sched.loop_block
    client:close()
  end)

  it("is not used inside a task (the task suspends)", function()
    local client = assert(helper.example_server())
    local used = false
    local result
    mcp.spawn(function()
      sched.block = function(pred, ms)
        used = true
        return sched.loop_block(pred, ms)
      end
      result = client:call_tool("echo", { message = "in a task" })
      sched.block = sched.loop_block
    end)
    mcp.run()
    assert.is_false(used)
    assert.are.equal("in a task", result.content[1].text)
    client:close()
  end)

  it("loop_block with ms gives up after ms", function()
    local t0 = mcp.core.now_ms()
    sched.loop_block(function() return false end, 50)
    local dt = mcp.core.now_ms() - t0
    assert.is_true(dt >= 49 and dt < helper.ms(5000), "waited " .. dt .. " ms")
  end)

  it("loop_block without ms raises when nothing in flight can answer", function()
    if mcp.core.alive() then return end -- fds or timers left by other specs could answer
    local ok, err = pcall(sched.await, function() end)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("deadlock", 1, true))
  end)
end)

-- core.timer(ms, fn, true): a timer that does not keep the loop alive (the legacy SSE client's
-- background tries wait on one once their first max_reconnects have failed).
describe("a weak timer", function()
  it("is not waited for by mcp.run() or a blocking wait, which raise as with nothing in flight", function()
    -- what earlier specs left in the loop (a timer, a connection) could end the waits below
    if not helper.wait_until(function() return not mcp.core.alive() end, helper.ms(5000)) then
      pending("the loop has work left by earlier specs")
      return
    end
    local fired = 0
    local t = mcp.core.timer(0, function() fired = fired + 1 end, true)
    local alive = mcp.core.alive()
    local wake
    mcp.spawn(function() sched.await(function(cb) wake = cb end) end) -- waits for nothing in flight
    local run_ok, run_err = pcall(mcp.run)
    local block_ok, block_err = pcall(sched.await, function() end)
    local fired_before = fired
    wake()
    helper.drain() -- a host's step: the due timer fires
    assert.is_false(alive)
    assert.is_false(run_ok)
    assert.truthy(helper.has(tostring(run_err), "1 task(s) wait for something that is not in flight"), tostring(run_err))
    assert.is_false(block_ok)
    assert.truthy(helper.has(tostring(block_err), "deadlock"), tostring(block_err))
    assert.are.equal(0, fired_before)
    assert.are.equal(1, fired)
    assert.is_false(t:active())
  end)

  it("fires while mcp.run() has work", function()
    local fired = false
    mcp.core.timer(10, function() fired = true end, true)
    local seen
    mcp.spawn(function()
      local deadline = mcp.core.now_ms() + helper.ms(5000)
      while not fired and mcp.core.now_ms() < deadline do mcp.sleep(20) end
      seen = fired
    end)
    mcp.run()
    assert.is_true(seen)
  end)
end)

-- What brings back a stream that can deliver a notification keeps the loop alive, as the stream
-- does (an open GET stream, an open listen: a task waiting for a notification waits for something
-- in flight): the streamable HTTP GET stream's reconnect timer, the 2026-07-28 listen's re-open
-- timer and the legacy SSE client's first tries to connect again are not weak. Weak, mcp.run()
-- would raise "wait for something that is not in flight" between a stream's end and its return,
-- for a task waiting for a server's notification.
describe("the timers that bring a stream back", function()
  local H = require("http_helper")

  it("streamable HTTP: mcp.run() waits through the GET stream's reconnect for a notification sent meanwhile",
    function()
      if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
      local srv = H.start("")
      local c
      finally(function()
        if c then c:close() end
        H.stop(srv)
      end)
      -- every GET stream ends after 100 ms, and the client reconnects 1 s later
      H.control(srv, { get_stream = "close_every_ms:100", retry_ms = 1000 })
      c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000) }))
      assert.is_true(helper.wait_until(function() return #H.state(srv).cuts >= 1 end, helper.ms(5000)))
      local got
      mcp.spawn(function()
        local wake
        c:on_notification("notifications/message", function(p) if wake then wake(p) end end)
        -- the server sends it on the GET stream, which is down: it comes when the stream is back
        assert(c:call_tool("notify", {}))
        got = sched.await(function(cb) wake = cb end)
      end)
      mcp.run()
      assert.equal("hello", got and got.data)
      local cut = H.state(srv).cuts[1]
      assert.equal("number", type(cut.reconnect_ms))
    end)

  it("2026-07-28: mcp.run() waits through the listen's re-open for its acknowledgment", function()
    if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
    local srv = H.start_modern()
    local c
    finally(function()
      if c then c:close() end
      H.stop(srv)
    end)
    c = assert(mcp.create_http_client(srv.url, {}))
    c:on_tools_list_changed(function() end)
    assert.is_true(helper.wait_until(function() return c.era.listen.current and c.era.listen.current.acknowledged ~= nil end,
      helper.ms(3000)))
    local first = c.era.listen.current
    assert.are.equal(1, H.get_json(srv, "/cut-listens").cut)
    local acknowledged
    mcp.spawn(function()
      local wake
      c:on_notification("notifications/subscriptions/acknowledged", function() if wake then wake(true) end end)
      acknowledged = sched.await(function(cb) wake = cb end) -- the new listen's (200 ms after the cut)
    end)
    mcp.run()
    assert.is_true(acknowledged)
    assert.are_not.equal(first, c.era.listen.current)
  end)

  -- Legacy SSE: after its stream ended, the client's first background tries to connect again
  -- (max_reconnects of them, as the GET stream's reconnects) keep the loop alive; the later ones
  -- are weak (lua/mcp/era/legacy.lua, renew_in_background).
  local function sse_client(srv, extra)
    local o = { request_timeout_ms = helper.ms(20000) }
    for k, v in pairs(extra or {}) do o[k] = v end
    return assert(mcp.create_sse_client(srv.base .. "/sse", o))
  end

  -- A task that waits for the client's next notifications/message; returns a function that says
  -- what it got (nil while waiting) and one that ends the wait.
  local function await_message(c)
    local got, wake = nil, nil
    mcp.spawn(function()
      c:on_notification("notifications/message", function(p) if wake then wake(p) end end)
      got = sched.await(function(cb) wake = cb end) or false
      wake = nil
    end)
    return function() return got end, function()
      local w = wake
      wake = nil
      if w then w(false) end
    end
  end

  it("legacy SSE: mcp.run() waits through the background try for a notification sent on the new stream",
    function()
      if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
      local srv = H.start("")
      local c, stop_waiting
      finally(function()
        if stop_waiting then stop_waiting() end
        if c then c:close() end
        H.stop(srv)
      end)
      local reasons = {}
      c = sse_client(srv, { on_reconnect = function(_, reason)
        reasons[#reasons + 1] = reason
        -- the server sends it on the new connection's stream, the only one open
        H.control(srv, { send_notification = { method = "notifications/message",
          params = { level = "info", data = "hello" } } })
      end })
      H.control(srv, { close_idle_connections = true }) -- the SSE stream ends; the server stays up
      assert.is_true(helper.wait_until(function() return not c.session:is_open() end, helper.ms(5000)))
      local back_before_run = #reasons
      local got
      got, stop_waiting = await_message(c)
      mcp.run()
      assert.equal(0, back_before_run) -- (the try came under mcp.run())
      assert.same({ "stream_closed" }, reasons)
      assert.equal("hello", got() and got().data)
    end)

  it("legacy SSE: with the server down for good, mcp.run() raises after max_reconnects tries; later ones go on",
    function()
      if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
      local srv, stopped = H.start(""), false
      local c, stop_waiting
      finally(function()
        if stop_waiting then stop_waiting() end
        if c then c:close() end
        if not stopped then H.stop(srv) end
      end)
      local url, made, failed = srv.base .. "/sse", 0, 0
      c = sse_client(srv, { max_reconnects = 2, -- (default 5: 1 s + 1.5 s + ... = 13 s of tries)
        on_error = function(e) if helper.has(tostring(e.message), "a new connection failed") then failed = failed + 1 end end,
        transport_factory = function()
          made = made + 1 -- a try
          return mcp.sse_transport({ url = url })
        end })
      H.stop(srv)
      stopped = true
      assert.is_true(helper.wait_until(function() return not c.session:is_open() end, helper.ms(5000)))
      stop_waiting = select(2, await_message(c))
      local run_ok, run_err = pcall(mcp.run)
      local made_in_run = made
      stop_waiting()
      -- a host stepping the loop: the next try, on a weak timer (1 s x 1.5 x 1.5 later)
      local third = helper.wait_until(function() return made >= 3 end, helper.ms(10000))
      helper.wait_until(function() return failed >= 3 end, helper.ms(5000)) -- (closed, not during a try)
      c:close()
      assert.is_false(run_ok)
      assert.truthy(helper.has(tostring(run_err), "1 task(s) wait for something that is not in flight"), tostring(run_err))
      assert.equal(2, made_in_run)
      assert.truthy(third, "no third try while a host stepped the loop")
    end)

  it("legacy SSE: the tries that keep the loop alive are the transport's max_reconnects, default 5", function()
    local http = require("mcp.transport.http")
    local url = "http://127.0.0.1:1/sse" -- (never started)
    assert.equal(5, http.max_reconnects(mcp.sse_transport({ url = url })))
    assert.equal(3, http.max_reconnects(mcp.sse_transport({ url = url, max_reconnects = 3 })))
    assert.equal(5, http.max_reconnects({ start = function() end })) -- another transport
  end)

  it("legacy SSE: the default max_reconnects is the C transport's, and Lua's count is what the transport keeps to", function()
    local http = require("mcp.transport.http")
    local url = "http://127.0.0.1:1/sse" -- (never started)
    -- one owner: the core says the default, the Lua layer reads it
    assert.equal(5, mcp.core.http_default_max_reconnects)
    assert.equal(mcp.core.http_default_max_reconnects, http.DEFAULT_MAX_RECONNECTS)
    -- what the C transport keeps to, as the Lua layer counts it
    for _, n in ipairs({ 1, 3, 1000000 }) do
      for _, make in ipairs({ mcp.sse_transport, mcp.http_transport }) do
        local t = make({ url = url, max_reconnects = n })
        assert.equal(n, t.handle:max_reconnects())
        assert.equal(n, http.max_reconnects(t))
      end
    end
    -- a value the transport cannot keep to raises (before, it kept to 5 without a word: "3" too)
    for _, n in ipairs({ false, 0, -2, 2.5, 0.5, "3", true, 1e6 + 1, 0 / 0, math.huge }) do
      for _, make in ipairs({ mcp.sse_transport, mcp.http_transport }) do
        local ok, err = pcall(make, { url = url, max_reconnects = n })
        assert.is_false(ok, tostring(n))
        assert.truthy(helper.has(tostring(err), "max_reconnects must be an integer from 1 to 1000000"), tostring(err))
      end
    end
  end)

  it("HTTP and SSE transports: a timeout or max_message_size the transport cannot keep to raises", function()
    local url = "http://127.0.0.1:1/mcp" -- (never started)
    for _, make in ipairs({ mcp.sse_transport, mcp.http_transport }) do
      for _, f in ipairs({ "timeout_ms", "connect_timeout_ms", "idle_timeout_ms" }) do
        assert.truthy(make({ url = url, [f] = 0 }))
        assert.truthy(make({ url = url, [f] = 2147483647 }))
        for _, v in ipairs({ -1, 2147483648, 1e300, math.huge, 0 / 0, "100", true }) do
          local ok, err = pcall(make, { url = url, [f] = v })
          assert.is_false(ok, f .. " " .. tostring(v))
          assert.truthy(helper.has(tostring(err), f .. " must be a number of milliseconds from 0 to 2147483647"),
            tostring(err))
        end
      end
      assert.truthy(make({ url = url, max_message_size = 1 }))
      for _, v in ipairs({ 0, -1, 1e18, math.huge, 0 / 0, "4096" }) do
        local ok, err = pcall(make, { url = url, max_message_size = v })
        assert.is_false(ok, tostring(v))
        assert.truthy(helper.has(tostring(err), "max_message_size must be a positive number of bytes"), tostring(err))
      end
    end
    -- the client's options pass them on as they are
    local ok, err = pcall(mcp.create_http_client, url, { max_reconnects = 0 })
    assert.is_false(ok)
    assert.truthy(helper.has(tostring(err), "max_reconnects must be an integer from 1 to 1000000"), tostring(err))
  end)

  -- (a wait for a try that would not be made: mcp.run() with a task, or a blocking wait, would
  -- wait until it was due)
  it("legacy SSE: close() ends the wait for the next background try", function()
    if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
    -- what earlier specs left in the loop (a timer, a connection) would keep it alive below
    if not helper.wait_until(function() return not mcp.core.alive() end, helper.ms(5000)) then
      pending("the loop has work left by earlier specs")
      return
    end
    local srv = H.start("")
    local c = sse_client(srv)
    H.stop(srv)
    assert.is_true(helper.wait_until(function() return not c.session:is_open() end, helper.ms(5000)))
    local alive_before = mcp.core.alive()
    c:close()
    local alive_after = mcp.core.alive()
    assert.is_true(alive_before) -- (the wait for the first try)
    assert.is_false(alive_after)
  end)
end)

describe("sched.await_call", function()
  after_each(function() sched.block = sched.loop_block end)

  -- start(cb, ...) for the specs: answers after ms with the values given (ms nil: at once)
  local function later(cb, ms, ...)
    local n, v = select("#", ...), { ... }
    if ms == nil then return cb(unpack(v, 1, n)) end
    mcp.core.timer(ms, function() cb(unpack(v, 1, n)) end)
  end

  it("passes its arguments to start and returns cb's first 9 values, also when cb runs at once", function()
    local got = { select("#", sched.await_call(later, 5, "a", nil, 3)), sched.await_call(later, 5, "a", nil, 3) }
    assert.are.same({ 9, "a", nil, 3 }, got)
    local r = { sched.await_call(later, nil, 1, 2, 3, 4, 5, 6, 7, 8, 9) }
    assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8 }, r)
    assert.is_nil((sched.await_call(later, nil)))
  end)

  it("takes only cb's first call, and a reused completion starts clean", function()
    local keep
    local a, b = sched.await_call(function(cb)
      keep = cb
      cb("first", 1)
      cb("second", 2)
    end)
    assert.are.equal("first", a)
    assert.are.equal(1, b)
    -- the next wait may get the same completion back: its old values are gone
    local c, d = sched.await_call(later, 5, "third")
    assert.are.equal("third", c)
    assert.is_nil(d)
    assert.is_function(keep)
  end)

  it("waits with sched.block (pred, no ms), and a wait nested inside another gets its own completion", function()
    local calls, inner = {}, nil
    sched.block = function(pred, ms)
      calls[#calls + 1] = { ms = ms }
      if #calls == 1 then inner = { sched.await_call(later, 5, "inner") } end
      return sched.loop_block(pred, ms)
    end
    local outer = { sched.await_call(later, 20, "outer") }
    assert.are.equal("outer", outer[1])
    assert.are.equal("inner", inner[1])
    assert.is_nil(calls[1].ms)
    assert.is_true(#calls >= 2)
  end)

  it("suspends a task and resumes it with cb's arguments", function()
    -- start gets its nine extra arguments (nil past the ones given); cb's are what the task sees
    local function later2(cb, ms, a, b, ...)
      assert.are.equal(6, select("#", ...))
      mcp.core.timer(ms, function() cb(a, b) end)
    end
    local got
    mcp.spawn(function() got = { n = select("#", sched.await_call(later2, 5, "x", "y")), sched.await_call(later2, 5, "x", "y") } end)
    mcp.run()
    assert.are.same({ n = 2, "x", "y" }, got)
  end)
end)

describe("mcp.nvim outside Neovim", function()
  it("loads, names only Neovim's ABIs, and refuses to set up", function()
    local nvim = require("mcp.nvim")
    local abi = nvim.abi()
    if rawget(_G, "jit") then
      assert.are.equal("luajit", abi)
    elseif _VERSION == "Lua 5.1" then
      assert.are.equal("5.1", abi)
    else
      assert.is_nil(abi, "never a build directory for " .. _VERSION)
    end
    assert.is_nil(nvim.find_core(), "mcp.core is already loaded")
    assert.is_false(nvim.is_active())
    local ok, err = pcall(nvim.setup)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("not running inside Neovim", 1, true))
    assert.is_false((pcall(mcp.setup_nvim)))
  end)
end)

describe("sched.pcall (a pcall a task can yield through, also on PUC Lua 5.1)", function()
  it("passes yields of the task through and returns fn's results", function()
    local got, order = nil, {}
    mcp.spawn(function()
      got = { sched.pcall(function(a, b)
        order[#order + 1] = "before"
        mcp.sleep(5) -- suspends the task (a yield inside the pcall)
        order[#order + 1] = "after"
        return a + b, nil, "x"
      end, 1, 2) }
    end)
    mcp.spawn(function() order[#order + 1] = "other" end)
    mcp.run()
    assert.same({ true, 3, nil, "x" }, { got[1], got[2], got[3], got[4] })
    assert.same({ "before", "other", "after" }, order)
  end)

  it("catches an error raised after a yield, keeping the error value", function()
    local ok, err
    local e = setmetatable({}, { __tostring = function() return "boom" end })
    mcp.spawn(function()
      ok, err = sched.pcall(function()
        mcp.sleep(1)
        error(e)
      end)
    end)
    mcp.run()
    assert.is_false(ok)
    assert.equal(e, err)
  end)

  it("nests, and sched.current() inside it is the task", function()
    local task, inner, ok1, ok2, v
    mcp.spawn(function()
      task = sched.current()
      ok1, ok2, v = sched.pcall(function()
        return sched.pcall(function()
          inner = sched.current()
          mcp.sleep(1)
          return "deep"
        end)
      end)
    end)
    mcp.run()
    assert.is_not_nil(task)
    assert.equal(task, inner)
    assert.same({ true, true, "deep" }, { ok1, ok2, v })
  end)

  it("is pcall outside a task", function()
    assert.same({ true, 7 }, { sched.pcall(function(x) return x end, 7) })
    local ok, err = sched.pcall(error, "plain", 0)
    assert.is_false(ok)
    assert.equal("plain", err)
  end)
end)
