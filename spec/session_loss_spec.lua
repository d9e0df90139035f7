-- A single HTTP client whose server restarted (issue 26): the server refuses the old session
-- (server-everything, like every TypeScript SDK server, with 400 "No valid session ID provided"),
-- and the client makes a new one by itself and sends the refused call again.
local mcp = require("mcp")
local errors = require("mcp.errors")
local sched = require("mcp.sched")
local helper = require("helper")
local H = require("http_helper")

-- A legacy SSE client of server-everything ev whose on_reconnect reasons go to reasons; extra:
-- more client options.
local function sse_client(ev, reasons, extra)
  local o = { request_timeout_ms = helper.ms(20000),
    on_reconnect = function(_, reason) reasons[#reasons + 1] = reason end }
  for k, v in pairs(extra or {}) do o[k] = v end
  return assert(mcp.create_sse_client(ev.base .. "/sse", o))
end

-- A transport_factory for a legacy SSE client's new connections whose transports fail to start:
-- the first `down` as when the server is still down (kind "transport"), the next with a denied
-- login (kind "oauth"), which ends the background tries. Also a function that says how many it made.
local function failing_factory(down)
  local made = 0
  local function factory()
    made = made + 1
    local err = made <= down and errors.new(nil, "connection refused", nil, { kind = "transport" })
      or errors.new(nil, "the login was denied", nil, { kind = "oauth" })
    return {
      capabilities = { session_id = true }, -- as the SSE transport: a stream it can lose
      start = function() return nil, err end,
      send = function() return true end,
      close = function() end,
      session_id = function() return nil end,
    }
  end
  return factory, function() return made end
end

-- Stop ev and wait until c's SSE stream has ended.
local function stop_under(ev, c)
  H.stop_everything(ev)
  helper.wait_dead(ev.pid, helper.ms(5000))
  helper.wait_until(function() return not c.session:is_open() end, helper.ms(5000))
end

describe("a lost HTTP session #http", function()
  it("comes back by itself when server-everything restarts on its port", function()
    local ev = H.start_everything("streamableHttp")
    if not ev then pending("server-everything unavailable"); return end
    local events = {}
    local c = assert(mcp.create_http_client(ev.base .. "/mcp", {
      request_timeout_ms = helper.ms(20000),
      on_session_expired = function(id) events[#events + 1] = "expired" end,
      on_reconnect = function(_, reason) events[#events + 1] = "reconnect " .. reason end,
    }))
    local sid = c.transport:session_id()
    assert(c:subscribe_resource("demo://resource/static/document/architecture.md"))
    assert(c:call_tool("echo", { message = "before" }))
    H.stop_everything(ev)
    helper.wait_dead(ev.pid, helper.ms(5000))
    local ev2 = H.start_everything_on(ev.port, "streamableHttp")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local res, err = c:call_tool("echo", { message = "after" })
    local sid2 = c.transport:session_id()
    helper.wait_until(function() return #events >= 2 end, helper.ms(5000))
    local caps = c:server_capabilities()
    c:close()
    H.stop_everything(ev2)
    assert.is_nil(err)
    assert.truthy(helper.has(res.content[1].text, "after"))
    assert.is_string(sid2)
    assert.not_equal(sid, sid2)
    assert.same({ "expired", "reconnect session_expired" }, events)
    assert.truthy(caps.tools)
  end)

  -- A client that only listens makes no call that would meet the refusal: its GET stream,
  -- reconnecting to the restarted server, does; the new session comes at once, with the GET stream
  -- and the subscription (server-everything sends resources/updated only to subscribed sessions,
  -- and only on the GET stream).
  it("comes back by itself for a client that only listens, with its GET stream and subscriptions", function()
    local ev = H.start_everything("streamableHttp")
    if not ev then pending("server-everything unavailable"); return end
    local events, updates = {}, {}
    local c = assert(mcp.create_http_client(ev.base .. "/mcp", {
      request_timeout_ms = helper.ms(20000),
      on_session_expired = function() events[#events + 1] = "expired" end,
      on_reconnect = function(_, reason) events[#events + 1] = "reconnect " .. reason end,
    }))
    c:on_notification("notifications/resources/updated", function(p) updates[#updates + 1] = p.uri end)
    local uri = "demo://resource/static/document/architecture.md"
    assert(c:subscribe_resource(uri))
    local init = c:initialize_result()
    helper.wait_until(function() return false end, helper.ms(500)) -- the loop runs: the GET stream opens
    H.stop_everything(ev)
    helper.wait_dead(ev.pid, helper.ms(5000))
    local ev2 = H.start_everything_on(ev.port, "streamableHttp")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local back = helper.wait_until(function() return #events >= 2 end, helper.ms(20000))
    local sid2 = c.transport:session_id()
    local renewed_init = c:initialize_result()
    local toggled = back and c:call_tool("toggle-subscriber-updates", {})
    local got = back and helper.wait_until(function() return #updates > 0 end, helper.ms(10000))
    c:close()
    H.stop_everything(ev2)
    assert.same({ "expired", "reconnect session_expired" }, events)
    assert.is_string(sid2)
    assert.not_equal(init, renewed_init) -- the new server's InitializeResult
    assert.truthy(toggled)
    assert.truthy(got, "no resources/updated on the new session's GET stream")
    assert.equal(uri, updates[1])
  end)

  it("over legacy SSE, connects again by itself when server-everything restarts", function()
    local ev = H.start_everything("sse")
    if not ev then pending("server-everything unavailable"); return end
    local reasons = {}
    local c = sse_client(ev, reasons)
    assert(c:call_tool("echo", { message = "before" }))
    stop_under(ev, c)
    local ev2 = H.start_everything_on(ev.port, "sse")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local res, err = c:call_tool("echo", { message = "after" })
    helper.wait_until(function() return #reasons > 0 end, helper.ms(5000))
    c:close()
    H.stop_everything(ev2)
    assert.is_nil(err)
    assert.truthy(helper.has(res.content[1].text, "after"))
    assert.same({ "stream_closed" }, reasons)
  end)

  -- A client that only listens makes no call that would connect again: the client does, in the
  -- background (1 s after the stream ended, then 1.5 times longer each try while the server is
  -- down), with its subscription (server-everything sends resources/updated only to subscribed
  -- sessions).
  it("over legacy SSE, comes back by itself for a client that only listens, with its subscriptions", function()
    local ev = H.start_everything("sse")
    if not ev then pending("server-everything unavailable"); return end
    local reasons, updates = {}, {}
    local c = sse_client(ev, reasons)
    c:on_notification("notifications/resources/updated", function(p) updates[#updates + 1] = p.uri end)
    local uri = "demo://resource/static/document/architecture.md"
    assert(c:subscribe_resource(uri))
    local init = c:initialize_result()
    stop_under(ev, c)
    helper.wait_until(function() return false end, helper.ms(1500)) -- a try or two while it is down
    local ev2 = H.start_everything_on(ev.port, "sse")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local back = helper.wait_until(function() return #reasons > 0 end, helper.ms(20000))
    local renewed_init = c:initialize_result()
    local toggled = back and c:call_tool("toggle-subscriber-updates", {})
    local got = toggled and helper.wait_until(function() return #updates > 0 end, helper.ms(10000))
    c:close()
    H.stop_everything(ev2)
    assert.truthy(back, "no new connection without a call")
    assert.same({ "stream_closed" }, reasons)
    assert.not_equal(init, renewed_init) -- the new server's InitializeResult
    assert.truthy(got, "no resources/updated: the subscription was not made again")
    assert.equal(uri, updates[1])
  end)

  it("over legacy SSE, the background tries stop at a try whose login failed; mcp.run() does not wait for them",
    function()
      local ev = H.start_everything("sse")
      if not ev then pending("server-everything unavailable"); return end
      local reports = {}
      -- each new connection needs a login, which the user denies
      local factory, made = failing_factory(0)
      local c = sse_client(ev, {}, { on_error = function(e) reports[#reports + 1] = e end, transport_factory = factory })
      stop_under(ev, c)
      mcp.run() -- returns at once: no task runs, the tries wait on a timer
      assert.truthy(helper.wait_until(function() return made() >= 1 end, helper.ms(5000)))
      -- (the try's failure is reported after its transport was made: under valgrind, steps later)
      local function denied()
        return #reports > 0 and helper.has(tostring(reports[#reports].message), "the login was denied")
      end
      assert.truthy(helper.wait_until(denied, helper.ms(5000)),
        tostring(reports[#reports] and reports[#reports].message))
      helper.wait_until(function() return made() >= 2 end, 3000) -- a next try would come 1.5 s after it
      assert.equal(1, made())
      assert.truthy(denied())
      c:close()
    end)

  -- The first max_reconnects tries (here one) wait on a timer that keeps the loop alive, as the
  -- GET stream's reconnects do; the later ones on a weak timer, which does not count as something
  -- in flight: mcp.run() with a task that waits for nothing raises after the first try, not for
  -- ever, and a blocking wait for nothing then raises at once, not after the later tries (here
  -- two: the server still down, then a denied login that ends them; without that end they would
  -- never raise). mcp.run() with work to do, and a host that steps the loop, still make them.
  it("over legacy SSE, the background tries past max_reconnects keep neither mcp.run() nor a blocking wait from seeing nothing in flight",
    function()
      local ev = H.start_everything("sse")
      if not ev then pending("server-everything unavailable"); return end
      -- what earlier specs left in the loop (a timer, a connection) could end the waits below
      if not helper.wait_until(function() return not mcp.core.alive() end, helper.ms(5000)) then
        H.stop_everything(ev)
        pending("the loop has work left by earlier specs")
        return
      end
      local reports = {}
      local factory, made = failing_factory(2)
      local c = sse_client(ev, {}, { on_error = function(e) reports[#reports + 1] = e end, transport_factory = factory,
        max_reconnects = 1 })
      stop_under(ev, c)
      local wake
      mcp.spawn(function() sched.await(function(cb) wake = cb end) end) -- waits for nothing in flight
      local run_ok, run_err = pcall(mcp.run)
      local made_in_run = made()
      local block_ok, block_err = pcall(sched.await, function() end)
      local made_in_block = made()
      wake()
      helper.drain()
      -- mcp.run() with work (a task that sleeps until the second try, bounded): the try is made
      local deadline = mcp.core.now_ms() + helper.ms(5000)
      mcp.spawn(function()
        while made() < 2 and mcp.core.now_ms() < deadline do mcp.sleep(20) end
      end)
      mcp.run()
      local made_with_work = made()
      -- a host loop stepping: the next try (2.25 s later), whose denied login ends them
      local function denied() return #reports > 0 and helper.has(tostring(reports[#reports].message), "the login was denied") end
      local third = helper.wait_until(function() return made() >= 3 end, helper.ms(8000))
      -- (the try's failure is reported after its transport was made: under valgrind, steps later)
      helper.wait_until(denied, helper.ms(5000))
      c:close()
      assert.is_false(run_ok)
      assert.truthy(helper.has(tostring(run_err), "1 task(s) wait for something that is not in flight"), tostring(run_err))
      assert.equal(1, made_in_run)
      assert.is_false(block_ok)
      assert.truthy(helper.has(tostring(block_err), "nothing is in flight"), tostring(block_err))
      assert.equal(1, made_in_block)
      assert.equal(2, made_with_work)
      assert.truthy(third, "no third try while a host loop stepped")
      assert.truthy(denied(), tostring(reports[#reports] and reports[#reports].message))
    end)

  it("over legacy SSE, a closed client makes no new connection in the background", function()
    local ev = H.start_everything("sse")
    if not ev then pending("server-everything unavailable"); return end
    local reasons = {}
    local c = sse_client(ev, reasons)
    stop_under(ev, c)
    c:close()
    local ev2 = H.start_everything_on(ev.port, "sse")
    assert.truthy(ev2, "server-everything did not come back on its port")
    helper.wait_until(function() return #reasons > 0 end, helper.ms(3000))
    H.stop_everything(ev2)
    assert.same({}, reasons)
    assert.equal("closed", select(2, c:ping()).kind)
  end)

  -- A call made while the server is still down fails (its new connection failed); the client is
  -- not closed for good: the next call, once the server is back, connects again, subscriptions too.
  it("over legacy SSE, a new connection that failed is tried again by the next call", function()
    local ev = H.start_everything("sse")
    if not ev then pending("server-everything unavailable"); return end
    local reasons, updates = {}, {}
    local c = sse_client(ev, reasons)
    c:on_notification("notifications/resources/updated", function(p) updates[#updates + 1] = p.uri end)
    local uri = "demo://resource/static/document/architecture.md"
    assert(c:subscribe_resource(uri))
    stop_under(ev, c)
    local down_res, down_err = c:call_tool("echo", { message = "while down" })
    local ev2 = H.start_everything_on(ev.port, "sse")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local res, err = c:call_tool("echo", { message = "after" })
    local toggled = res and c:call_tool("toggle-subscriber-updates", {})
    local got = toggled and helper.wait_until(function() return #updates > 0 end, helper.ms(10000))
    c:close()
    local closed_res, closed_err = c:call_tool("echo", { message = "closed" })
    H.stop_everything(ev2)
    assert.is_nil(down_res)
    assert.truthy(helper.has(down_err.message, "a new connection failed"), down_err.message)
    assert.is_nil(err)
    assert.truthy(helper.has(res.content[1].text, "after"))
    assert.same({ "stream_closed" }, reasons)
    assert.truthy(got, "the subscription was not made again")
    assert.equal(uri, updates[1])
    assert.is_nil(closed_res) -- closed by its user: no new connection
    assert.equal("closed", closed_err.kind)
  end)

  it("stays lost with auto_reinitialize = false", function()
    local ev = H.start_everything("streamableHttp")
    if not ev then pending("server-everything unavailable"); return end
    local c = assert(mcp.create_http_client(ev.base .. "/mcp", { auto_reinitialize = false,
      request_timeout_ms = helper.ms(20000) }))
    H.stop_everything(ev)
    helper.wait_dead(ev.pid, helper.ms(5000))
    local ev2 = H.start_everything_on(ev.port, "streamableHttp")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local res, err = c:call_tool("echo", { message = "after" })
    c:close()
    H.stop_everything(ev2)
    assert.is_nil(res)
    assert.equal(400, err.status_code)
    assert.truthy(err.message:find("session expired", 1, true))
  end)
end)
