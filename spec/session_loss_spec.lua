-- A single HTTP client whose server restarted (issue 26): the server refuses the old session
-- (server-everything, like every TypeScript SDK server, with 400 "No valid session ID provided"),
-- and the client makes a new one by itself and sends the refused call again.
local mcp = require("mcp")
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
      local made, reports = 0, {}
      local c = sse_client(ev, {}, {
        on_error = function(e) reports[#reports + 1] = e end,
        -- each new connection needs a login, which the user denies
        transport_factory = function()
          made = made + 1
          return {
            capabilities = { session_id = true }, -- as the SSE transport: a stream it can lose
            start = function() return nil, require("mcp.errors").new(nil, "the login was denied", nil, { kind = "oauth" }) end,
            send = function() return true end,
            close = function() end,
            session_id = function() return nil end,
          }
        end,
      })
      stop_under(ev, c)
      mcp.run() -- returns at once: no task runs, the tries wait on a timer
      assert.truthy(helper.wait_until(function() return made >= 1 end, helper.ms(5000)))
      helper.wait_until(function() return made >= 2 end, helper.ms(3000)) -- a next try would come 1.5 s later
      assert.equal(1, made)
      assert.truthy(#reports >= 1)
      assert.truthy(helper.has(tostring(reports[#reports].message), "the login was denied"))
      c:close()
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
