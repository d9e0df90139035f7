-- Streamable HTTP and legacy SSE transports against the project's fault-injecting HTTP server
-- (spec/fixtures/http_server.mjs, loopback only).
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local available = H.have_node() and H.have_curl()

-- The server refuses c's session (404) to a notification: the transport drops it with no call
-- there to renew it. Then a call goes; it must find a new session made first.
local function call_after_dropped_session(srv, c)
  H.control(srv, { expire_session = 404 })
  assert(c:notify("notifications/roots/list_changed"))
  helper.wait_until(function() return c.transport:session_id() == nil end, helper.ms(5000))
  assert.is_nil(c.transport:session_id())
  local r, err = c:call_tool("echo", { message = "after" })
  assert(r, tostring(err))
  assert.equal("after", r.content[1].text)
  assert.is_string(c.transport:session_id())
end

-- How many notifications/initialized the server has received (its records are reset per test).
local function initialized_seen(srv)
  local n = 0
  for _, q in ipairs(H.state(srv).requests) do
    if q.rpc_method == "notifications/initialized" then n = n + 1 end
  end
  return n
end

local function new_client(srv, opts)
  local o = { request_timeout_ms = helper.ms(20000), client_name = "http-spec" }
  for k, v in pairs(opts or {}) do o[k] = v end
  return mcp.create_http_client(srv.url, o)
end

describe("streamable HTTP #http", function()
  local srv = H.serve("--page-size=3")
  if not srv then return end

  -- A host that connects and then exits (or sends nothing) still told the server it is ready.
  it("a blocking create_http_client returns once notifications/initialized reached the server", function()
    local c = assert(new_client(srv))
    assert.equal(1, initialized_seen(srv)) -- (no loop step ran since the return)
    c:close()
  end)

  it("connects, keeps the session id off initialize and sends it (and the protocol version) after", function()
    H.control(srv, { reject_session_header_on_initialize = true })
    local seen = {}
    local c = assert(new_client(srv, {
      headers = { ["X-Custom"] = "yes" },
      on_session_id_change = function(id) seen[#seen + 1] = id end,
    }))
    local sid = c.transport:session_id()
    assert.is_string(sid)
    local r = assert(c:call_tool("last_headers", {}))
    local h = r.structuredContent.headers
    assert.equal(sid, h["mcp-session-id"])
    assert.equal("2025-11-25", h["mcp-protocol-version"])
    assert.equal("yes", h["x-custom"])
    assert.truthy(h["accept"]:find("application/json", 1, true))
    assert.truthy(h["accept"]:find("text/event-stream", 1, true))
    assert.truthy(h["user-agent"]:find("lua-mcp", 1, true))
    c:close()
    assert.same({ sid }, seen)
  end)

  -- The line written when a transport callback raises may quote what the server chose (here its
  -- session id, in the callback's error): it reaches the terminal escaped.
  it("a transport callback that raised is reported on stderr escaped", function()
    local written, real = {}, io.stderr
    io.stderr = { write = function(_, ...) -- luacheck: ignore 122 (the report goes to io.stderr; catch it)
      for _, s in ipairs({ ... }) do written[#written + 1] = s end
    end }
    local ok, err = pcall(function()
      local c = assert(new_client(srv, {
        on_session_id_change = function(id) error("session " .. tostring(id) .. " \27]0;x\7 \226\128\174txt", 0) end,
      }))
      assert(c:ping())
      c:close()
    end)
    io.stderr = real -- luacheck: ignore 122
    assert(ok, err)
    local out = table.concat(written)
    assert.truthy(out:find("mcp: transport callback failed: session ", 1, true), out)
    assert.truthy(out:find("\\x1b]0;x\\x07 \\u202etxt", 1, true), out)
    assert.is_nil(out:find("[%z\1-\8\11-\31\127]"), out)
    assert.is_nil(out:find("\226\128\174", 1, true), out)
  end)

  it("sends a static OAuth access token as a bearer token", function()
    local c = assert(new_client(srv, { oauth = { access_token = "tok-123" } }))
    local h = assert(c:call_tool("last_headers", {})).structuredContent.headers
    assert.equal("Bearer tok-123", h["authorization"])
    c:close()
  end)

  it("does every client method in json and in sse mode", function()
    for _, mode in ipairs({ "json", "sse" }) do
      H.control(srv, { reset = true, mode = mode, page_size = 3 })
      local c = assert(new_client(srv))
      assert.equal("lua-mcp-test-server", c:server_info().name)
      local tools = assert(c:list_all_tools())
      assert.is_true(#tools > 3)
      local page = assert(c:list_tools_with_cursor())
      assert.equal(3, #page.tools)
      assert.is_string(page.nextCursor)
      assert.equal("hi " .. mode, assert(c:call_tool("echo", { message = "hi " .. mode })).content[1].text)
      assert.is_true(#assert(c:list_all_resources()) > 3)
      assert.is_true(#assert(c:list_all_resource_templates()) > 0)
      assert.is_true(#assert(c:list_all_prompts()) > 3)
      local res = assert(c:read_resource("test://r/1"))
      assert.equal("test://r/1", res.contents[1].uri)
      assert.is_table(assert(c:get_prompt("greet", { name = "Ada" })).messages)
      assert.is_table(assert(c:complete({ ref = { type = "ref/prompt", name = "greet" }, argument = { name = "name", value = "A" } })).completion.values)
      assert.is_table(assert(c:ping()))
      assert.is_table(assert(c:set_logging_level("debug")))
      assert.is_table(assert(c:subscribe_resource("test://r/1")))
      local steps = {}
      local p = assert(c:call_tool("progress", { steps = 3 }, { on_progress = function(x) steps[#steps + 1] = x.progress end }))
      assert.is_table(p.content)
      -- On an event stream progress comes before the result; in json mode it travels on the GET
      -- stream, with no ordering against the response, so only sse mode can promise all three.
      if mode == "sse" then assert.same({ 1, 2, 3 }, steps) end
      local e = select(2, c:call_tool("error", {}))
      assert.equal("rpc", e.kind)
      assert.equal(-32603, e.code)
      c:close()
    end
  end)

  it("answers server requests (elicitation, ping) sent on the POST's event stream", function()
    H.control(srv, { mode = "sse" })
    local c = assert(new_client(srv, {
      on_elicitation_request = function(req) return { action = "accept", content = { name = "Ada", age = 36 } } end,
    }))
    local r = assert(c:call_tool("elicit", {}))
    assert.equal("accept", r.structuredContent.result.action)
    assert.equal("Ada", r.structuredContent.result.content.name)
    local p = assert(c:call_tool("ping_client", {}))
    assert.is_table(p.structuredContent.result)
    c:close()
  end)

  it("sends DELETE with the session id on close, and not when terminate_session_on_close is false", function()
    local c = assert(new_client(srv))
    local sid = c.transport:session_id()
    c:close()
    local deleted = H.state(srv).deleted_sessions
    assert.equal(sid, deleted[#deleted].id)
    local c2 = assert(new_client(srv, { terminate_session_on_close = false }))
    local sid2 = c2.transport:session_id()
    c2:close()
    for _, d in ipairs(H.state(srv).deleted_sessions) do assert.not_equal(sid2, d.id) end
  end)

  it("resumes a POST stream cut after its priming event, waiting the server's retry delay", function()
    H.control(srv, { cut_post_stream_after_priming = 1, retry_ms = 400 })
    local c = assert(new_client(srv))
    local r = assert(c:call_tool("echo", { message = "resumed" }))
    assert.equal("resumed", r.content[1].text)
    local cut = H.state(srv).cuts[1]
    assert.equal("after_priming", cut.kind)
    assert.equal(cut.event_id, cut.reconnect_last_event_id)
    assert.is_true(cut.reconnect_ms >= 400, "reconnected after " .. tostring(cut.reconnect_ms) .. " ms")
    c:close()
  end)

  it("resumes a stream cut in the middle of an event", function()
    H.control(srv, { mode = "sse", cut_mid_event = 1, cut_mid_event_stream = "post", retry_ms = 50 })
    local c = assert(new_client(srv))
    local r = assert(c:call_tool("big", { bytes = 100000 }))
    assert.equal(100000, #r.content[1].text)
    local st = H.state(srv)
    assert.equal("mid_event", st.cuts[1].kind)
    local resumed = false
    for _, g in ipairs(st.get_connects) do resumed = resumed or g.outcome == "resumed_post_stream" end
    assert.is_true(resumed)
    c:close()
  end)

  it("reports a 404 on a session as expired, with the callback (auto_reinitialize = false)", function()
    local expired
    local c = assert(new_client(srv, { on_session_expired = function(id) expired = id end, auto_reinitialize = false }))
    local sid = c.transport:session_id()
    H.control(srv, { expire_session = true })
    local res, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(404, err.status_code)
    assert.truthy(err.message:find("session expired", 1, true))
    mcp.loop.step(0)
    assert.equal(sid, expired)
    assert.is_nil(c.transport:session_id())
    c:close()
  end)

  for _, status in ipairs({ 404, 400 }) do
    it("makes a new session when the server lost the old one (HTTP " .. status .. ") and sends the call again",
      function()
        local events = {}
        local c = assert(new_client(srv, {
          on_session_expired = function(id) events[#events + 1] = "expired " .. id end,
          on_reconnect = function(client, reason) events[#events + 1] = "reconnect " .. reason end,
        }))
        local sid = c.transport:session_id()
        assert(c:subscribe_resource("test://static/1"))
        assert.equal("lua-mcp-test-server", c:server_info().name)
        H.control(srv, { expire_session = status, name = "renewed" }) -- the next initialize's serverInfo
        local r = assert(c:call_tool("echo", { message = "after" }))
        assert.equal("after", r.content[1].text)
        local sid2 = c.transport:session_id()
        assert.is_string(sid2)
        assert.not_equal(sid, sid2)
        helper.wait_until(function() return #events >= 2 end, helper.ms(5000))
        assert.same({ "expired " .. sid, "reconnect session_expired" }, events)
        -- the new session was initialized, subscribed again, and got the call
        local seen = {}
        for _, q in ipairs(H.state(srv).requests) do
          if q.session_id == sid2 and type(q.rpc_method) == "string" then seen[#seen + 1] = q.rpc_method end
        end
        assert.same({ "notifications/initialized", "resources/subscribe", "tools/call" },
          (function()
            local out = {}
            for _, m in ipairs(seen) do if m ~= "ping" then out[#out + 1] = m end end
            return out
          end)())
        assert.equal("renewed", c:server_info().name) -- the new InitializeResult replaced the old one
        assert.truthy(c:server_capabilities().tools)
        c:close()
      end)
  end

  -- Seen under valgrind: the transport had already dropped the refused session (another request
  -- met the 404) when a call started, before the renewal had begun; the call went out with no
  -- session id and the server answered 400 "Mcp-Session-Id header is required".
  it("a call started after the transport dropped the lost session, before its renewal, waits for a new one", function()
    local reconnects = 0
    local c = assert(new_client(srv, { on_reconnect = function() reconnects = reconnects + 1 end }))
    call_after_dropped_session(srv, c)
    assert.equal(1, reconnects)
    c:close()
  end)

  -- 2025-11-25 -32042: the call is sent again once the user finished the URL flow; a session the
  -- server lost meanwhile is made again first, as for any call.
  it("the re-send after -32042 (URL elicitation) renews a session lost during the flow", function()
    local c
    c = assert(new_client(srv, { elicitation_url = true, on_elicitation_request = function()
      -- the flow finishes (its completion on the GET stream); meanwhile the server lost the session
      H.control(srv, { send_notification = { method = "notifications/elicitation/complete",
        params = { elicitationId = "s1" }, session = c.transport:session_id() }, expire_session = 404 })
      return mcp.elicitation.accept()
    end }))
    local sid = c.transport:session_id()
    local function session(id)
      for _, s in ipairs(H.state(srv).sessions) do if s.id == id then return s end end
    end
    assert.truthy(helper.wait_until(function() return (session(sid) or {}).get_stream_open end, helper.ms(5000)))
    H.control(srv, { fail_next = { { status = 200, jsonrpc_error = { code = -32042, message = "sign in first",
      data = { elicitations = { { mode = "url", message = "Sign in", url = "https://auth.example.com/s1",
        elicitationId = "s1" } } } } } } })
    local r, err = c:call_tool("echo", { message = "after the flow" })
    assert(r, tostring(err))
    assert.equal("after the flow", r.content[1].text)
    assert.not_equal(sid, c.transport:session_id())
    c:close()
  end)

  -- A client that only listens (subscriptions, list_changed) makes no call that would meet the
  -- refusal: the GET stream, live on the lost session, is what finds it.
  it("makes a new session by itself when the GET stream finds the session lost and no call is made", function()
    local events, updates = {}, {}
    local c = assert(new_client(srv, {
      on_session_expired = function(id) events[#events + 1] = "expired " .. id end,
      on_reconnect = function(_, reason) events[#events + 1] = "reconnect " .. reason end,
    }))
    c:on_notification("notifications/resources/updated", function(p) updates[#updates + 1] = p.uri end)
    local sid = c.transport:session_id()
    assert(c:subscribe_resource("test://static/1"))
    local function session(id)
      for _, s in ipairs(H.state(srv).sessions) do if s.id == id then return s end end
    end
    assert.truthy(helper.wait_until(function() return (session(sid) or {}).get_stream_open end, helper.ms(5000)))
    H.control(srv, { reset = true, name = "restarted" }) -- the server forgets every session, ends its streams
    assert.truthy(helper.wait_until(function() return #events >= 2 end, helper.ms(10000)), table.concat(events, ", "))
    assert.same({ "expired " .. sid, "reconnect session_expired" }, events)
    local sid2 = c.transport:session_id()
    assert.is_string(sid2)
    assert.not_equal(sid, sid2)
    assert.equal("restarted", c:server_info().name) -- the new InitializeResult
    assert.truthy(helper.wait_until(function() return (session(sid2) or {}).get_stream_open end, helper.ms(5000)))
    assert.same({ "test://static/1" }, session(sid2).subscriptions)
    H.control(srv, { send_notification = { method = "notifications/resources/updated", params = { uri = "test://static/1" } } })
    assert.truthy(helper.wait_until(function() return #updates > 0 end, helper.ms(5000)))
    assert.same({ "test://static/1" }, updates)
    c:close()
  end)

  it("takes a 404 to the first GET of a session as a server with no GET route: the session stays", function()
    local reconnects, expired = 0, 0
    H.control(srv, { get_stream = "404" })
    local c = assert(new_client(srv, {
      on_session_expired = function() expired = expired + 1 end,
      on_reconnect = function() reconnects = reconnects + 1 end,
    }))
    local sid = assert(c.transport:session_id())
    local gets = function()
      local n = 0
      for _, g in ipairs(H.state(srv).get_connects) do if g.outcome == 404 then n = n + 1 end end
      return n
    end
    assert.truthy(helper.wait_until(function() return gets() > 0 end, helper.ms(5000)))
    -- no GET again, no new session: calls go out at once on the session the server made
    helper.wait_until(function() return gets() > 1 or expired > 0 end, helper.ms(500))
    for i = 1, 3 do assert.equal("x" .. i, assert(c:call_tool("echo", { message = "x" .. i })).content[1].text) end
    assert.equal(1, gets())
    assert.equal(sid, c.transport:session_id())
    assert.equal(0, expired)
    assert.equal(0, reconnects)
    local inits = 0
    for _, q in ipairs(H.state(srv).requests) do if q.rpc_method == "initialize" then inits = inits + 1 end end
    assert.equal(1, inits)
    c:close()
  end)

  it("a 404 to the GET stream of a session on which it had been live still means the session is lost", function()
    local expired = 0
    local c = assert(new_client(srv, { on_session_expired = function() expired = expired + 1 end }))
    local old = assert(c.transport:session_id())
    assert.truthy(helper.wait_until(function()
      for _, s in ipairs(H.state(srv).sessions) do if s.id == old and s.get_stream_open then return true end end
    end, helper.ms(5000)))
    -- the server restarts without a GET route: the reconnecting GET's 404 is the session lost (made
    -- again at once), the new session's first GET 404 is no GET route (the session stays)
    H.control(srv, { reset = true, get_stream = "404" })
    assert.truthy(helper.wait_until(function() return expired > 0 end, helper.ms(10000)))
    assert.equal("y", assert(c:call_tool("echo", { message = "y" })).content[1].text)
    local new = c.transport:session_id()
    assert.is_string(new)
    assert.are_not.equal(old, new)
    helper.wait_until(function() return expired > 1 end, helper.ms(300))
    assert.equal(1, expired)
    assert.equal(new, c.transport:session_id())
    c:close()
  end)

  it("makes one new session for every call in flight that found the old one lost", function()
    local reconnects = 0
    local c = assert(new_client(srv, { on_reconnect = function() reconnects = reconnects + 1 end }))
    H.control(srv, { expire_session = 400 })
    local results, done = {}, 0
    for i = 1, 5 do
      mcp.spawn(function()
        results[i] = c:call_tool("echo", { message = "m" .. i })
        done = done + 1
      end)
    end
    helper.wait_until(function() return done == 5 end, helper.ms(20000))
    for i = 1, 5 do assert.equal("m" .. i, results[i].content[1].text) end
    helper.wait_until(function() return reconnects > 0 end, helper.ms(5000))
    mcp.loop.step(0)
    assert.equal(1, reconnects)
    local inits = 0
    for _, q in ipairs(H.state(srv).requests) do if q.rpc_method == "initialize" then inits = inits + 1 end end
    assert.equal(2, inits)
    c:close()
  end)

  it("when the new session cannot be made (the server is still down), the next call tries again", function()
    local c = assert(new_client(srv))
    H.control(srv, { expire_session = 404, fault_methods = { "initialize" }, fail_next = { 503 } })
    local res, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(404, err.status_code)
    assert.is_nil(c.transport:session_id())
    local r = assert(c:call_tool("echo", { message = "later" }))
    assert.equal("later", r.content[1].text)
    assert.is_string(c.transport:session_id())
    c:close()
  end)

  it("checks auto_reinitialize and on_reconnect", function()
    assert.has_error(function() mcp.create_http_client(srv.url, { auto_reinitialize = 1 }) end)
    assert.has_error(function() mcp.create_http_client(srv.url, { on_reconnect = true }) end)
    assert.has_error(function() mcp.create_http_client(srv.url, { on_session_lost = true }) end)
  end)

  it("with auto_reinitialize = false, on_session_lost(client) tells of a session lost that no call saw", function()
    local lost, expired = {}, 0
    local c = assert(new_client(srv, { auto_reinitialize = false,
      on_session_expired = function() expired = expired + 1 end,
      on_session_lost = function(client) lost[#lost + 1] = client end }))
    local sid = assert(c.transport:session_id())
    assert.truthy(helper.wait_until(function()
      for _, s in ipairs(H.state(srv).sessions) do if s.id == sid and s.get_stream_open then return true end end
    end, helper.ms(5000)))
    H.control(srv, { reset = true }) -- the GET stream ended; its reconnection gets 404
    assert.truthy(helper.wait_until(function() return #lost > 0 end, helper.ms(10000)))
    assert.equal(c, lost[1])
    assert.equal(1, expired)
    assert.is_nil(c.transport:session_id()) -- not made again by itself
    assert(c:reconnect())
    assert.equal("x", assert(c:call_tool("echo", { message = "x" })).content[1].text)
    assert.equal(1, #lost)
    c:close()
  end)

  it("retries a 500 with max_retries, and reports it without", function()
    local c = assert(new_client(srv, { max_retries = 1 }))
    H.control(srv, { fail_next = { 500 } })
    local r = assert(c:call_tool("echo", { message = "again" }))
    assert.equal("again", r.content[1].text)
    c:close()
    local c2 = assert(new_client(srv))
    H.control(srv, { fail_next = { 500 } })
    local res, err = c2:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(500, err.status_code)
    assert.equal("transport", err.kind)
    -- A JSON-RPC error body on a 4xx is the server's error, with the status kept.
    H.control(srv, { fail_next = { { status = 400, jsonrpc_error = { code = -32602, message = "bad args" } } } })
    res, err = c2:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(-32602, err.code)
    assert.equal(400, err.status_code)
    assert.equal("bad args", err.message)
    c2:close()
  end)

  it("refuses a redirect by default and follows it when asked", function()
    local c = assert(new_client(srv))
    H.control(srv, { redirect = "/mcp2" })
    local res, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(307, err.status_code)
    assert.truthy(err.message:find("REDIRECT_FOLLOW", 1, true))
    c:close()
    local f = assert(new_client(srv, { redirect = mcp.REDIRECT_FOLLOW }))
    assert.equal("followed", assert(f:call_tool("echo", { message = "followed" })).content[1].text)
    f:close()
  end)

  it("times out on a slow server and still works when patient", function()
    local c = assert(new_client(srv))
    H.control(srv, { slow_ms = 1500 })
    local res, err = c:call_tool("echo", { message = "x" }, { timeout_ms = 300 })
    assert.is_nil(res)
    assert.equal("timeout", err.kind)
    assert.equal("ok", assert(c:call_tool("echo", { message = "ok" }, { timeout_ms = helper.ms(10000) })).content[1].text)
    c:close()
  end)

  it("receives a 50 MB event", function()
    H.control(srv, { mode = "sse" })
    local c = assert(new_client(srv, { request_timeout_ms = helper.ms(60000) }))
    local r = assert(c:call_tool("big", { bytes = 50 * 1000 * 1000 }))
    assert.equal(50 * 1000 * 1000, #r.content[1].text)
    c:close()
  end)

  it("reconnects the GET stream that the server closes, resuming with Last-Event-ID", function()
    H.control(srv, { get_stream = "close_every_ms:300", retry_ms = 50 })
    local got = {}
    local c = assert(new_client(srv))
    c:on_notification("notifications/message", function(p) got[#got + 1] = p.data end)
    mcp.sleep(1200)
    H.control(srv, { send_notification = { method = "notifications/message", params = { level = "info", data = "late" } } })
    helper.wait_until(function() return #got > 0 end, helper.ms(5000))
    assert.same({ "late" }, got)
    local connects, resumed = 0, 0
    for _, g in ipairs(H.state(srv).get_connects) do
      connects = connects + 1
      if g.last_event_id ~= nil and g.last_event_id ~= mcp.null then resumed = resumed + 1 end
    end
    assert.is_true(connects >= 3, "GET connects: " .. connects)
    assert.is_true(resumed >= 1)
    c:close()
  end)

  -- An event id names an event of one session: a new session the server gives the client without
  -- refusing the old one first (initialize again on the same transport) must not be asked for the
  -- old session's events by the GET stream's reconnection.
  it("reconnects the GET stream on a session adopted without an expiry with no Last-Event-ID of the old one",
    function()
      H.control(srv, { get_stream = "close_every_ms:100", retry_ms = 10 })
      local c = assert(new_client(srv, { max_reconnects = 1000 }))
      local function gets() return H.state(srv).get_connects end
      assert.is_true(helper.wait_until(function()
        local g = gets()
        return #g >= 2 and type(g[#g].last_event_id) == "string"
      end, helper.ms(20000)), "the GET stream did not reconnect with a Last-Event-ID")
      local old = gets()[#gets()].session_id
      assert(c:request("initialize", { protocolVersion = c:protocol_version(), capabilities = {},
        clientInfo = { name = "again", version = "1" } }))
      local first
      assert.is_true(helper.wait_until(function()
        for _, g in ipairs(gets()) do
          if g.session_id ~= old and g.session_id ~= mcp.null then
            first = g
            return true
          end
        end
        return false
      end, helper.ms(20000)), "no GET on the new session")
      c:close()
      assert.equal(mcp.null, first.last_event_id) -- (the old session's event id: the defect)
    end)

  it("takes a 405 on the GET stream silently", function()
    H.control(srv, { get_stream = "405" })
    local errs = {}
    local c = assert(new_client(srv, { on_error = function(e) errs[#errs + 1] = tostring(e) end }))
    assert.equal("ok", assert(c:call_tool("echo", { message = "ok" })).content[1].text)
    mcp.loop.step(50)
    assert.same({}, errs)
    c:close()
  end)

  it("fails a connection to a closed port with a transport error", function()
    local c, err = mcp.create_http_client("http://127.0.0.1:1/mcp", { connect_timeout_ms = 2000 })
    assert.is_nil(c)
    assert.equal("transport", err.kind)
  end)

  it("rejects bad configuration as misuse", function()
    assert.has_error(function() mcp.http_transport({ url = "ftp://x" }) end)
    assert.has_error(function() mcp.http_transport({ url = "http://x", redirect = "maybe" }) end)
    assert.has_error(function() mcp.http_transport({ url = "http://x", headers = { ["Bad Name"] = "v" } }) end)
    assert.has_error(function() mcp.http_transport({ url = "http://x", curl_options = { nonsense = 1 } }) end)
  end)
end)

describe("kept-alive HTTP connections #http", function()
  local srv = H.serve("")
  if not srv then return end

  local function accepted() return H.state(srv).connections_accepted end -- (its own request counts)

  it("are reused call after call, and one the server closes while idle is replaced on the next call", function()
    H.control(srv, { get_stream = "405" }) -- no standalone GET stream: every connection below is a POST's
    local c = assert(new_client(srv))
    assert.equal("a", assert(c:call_tool("echo", { message = "a" })).content[1].text)
    local before = accepted()
    for i = 1, 20 do
      assert.equal("m" .. i, assert(c:call_tool("echo", { message = "m" .. i })).content[1].text)
    end
    local after = accepted()
    assert.equal(before + 1, after) -- the state request's own connection only: 20 calls, no new one
    -- the server closes the idle connections (as its keep-alive timeout would) while the client
    -- waits; the client's loop sees them close, then the next call opens a fresh one
    H.control(srv, { close_idle_connections = true })
    mcp.sleep(50)
    assert.equal("b", assert(c:call_tool("echo", { message = "b" })).content[1].text)
    assert.equal("c", assert(c:call_tool("echo", { message = "c" })).content[1].text)
    assert.equal(after + 3, accepted()) -- the control request, one new connection for b and c, this request
    c:close()
  end)
end)

describe("legacy HTTP+SSE #http", function()
  local srv = H.serve("")
  if not srv then return end

  it("connects through the endpoint event and does requests, notifications and server requests", function()
    local c = assert(mcp.create_sse_client(srv.base .. "/sse", {
      request_timeout_ms = helper.ms(20000),
      on_elicitation_request = function() return { action = "decline" } end,
    }))
    assert.equal("hello", assert(c:call_tool("echo", { message = "hello" })).content[1].text)
    assert.is_true(#assert(c:list_all_tools()) > 0)
    local r = assert(c:call_tool("elicit", {}))
    assert.equal("decline", r.structuredContent.result.action)
    c:close()
  end)

  it("is created inside a task (start waits for the endpoint event; also on PUC Lua 5.1)", function()
    local text, failure
    mcp.spawn(function()
      local c, err = mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000) })
      if not c then failure = tostring(err) return end
      text = assert(c:call_tool("echo", { message = "in a task" })).content[1].text
      c:close()
    end)
    mcp.run()
    assert.is_nil(failure)
    assert.equal("in a task", text)
  end)

  it("connects again by itself when the SSE stream ends (the server forgot the session), and sends the call",
    function()
      local events = {}
      local c = assert(mcp.create_sse_client(srv.base .. "/sse", {
        request_timeout_ms = helper.ms(20000),
        on_reconnect = function(_, reason) events[#events + 1] = reason end,
      }))
      assert(c:subscribe_resource("test://static/1"))
      assert.equal("a", assert(c:call_tool("echo", { message = "a" })).content[1].text)
      H.control(srv, { reset = true }) -- every session forgotten, its stream ended
      helper.wait_until(function() return not c.session:is_open() end, helper.ms(5000))
      assert.equal("b", assert(c:call_tool("echo", { message = "b" })).content[1].text)
      helper.wait_until(function() return #events > 0 end, helper.ms(5000))
      assert.same({ "stream_closed" }, events)
      local subscribed = 0
      for _, q in ipairs(H.state(srv).requests) do
        if q.rpc_method == "resources/subscribe" then subscribed = subscribed + 1 end
      end
      assert.equal(1, subscribed) -- (the records were reset: this is the new connection's)
      c:close()
      -- auto_reinitialize = false: the call fails
      local c2 = assert(mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000),
        auto_reinitialize = false }))
      H.control(srv, { reset = true })
      helper.wait_until(function() return not c2.session:is_open() end, helper.ms(5000))
      local res, err = c2:call_tool("echo", { message = "c" })
      assert.is_nil(res)
      assert.equal("closed", err.kind)
      c2:close()
    end)

  it("a blocking create_sse_client returns once notifications/initialized reached the server", function()
    local c = assert(mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000) }))
    assert.equal(1, initialized_seen(srv))
    c:close()
  end)

  it("refuses an endpoint on another origin", function()
    H.control(srv, { legacy_endpoint = "http://localhost:" .. srv.port .. "/messages?sessionId={sessionId}" })
    local c, err = mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(5000) })
    assert.is_nil(c)
    assert.truthy(err.message:find("origin", 1, true))
  end)
end)

describe("one Lua state driving many clients #http", function()
  if not available then
    pending("node and curl are needed to run the HTTP test server")
    return
  end

  it("runs 100 HTTP clients and 100 stdio clients concurrently", function()
    local n = helper.sanitizer() and 10 or 100
    local srv = H.start("")
    local ok, failures = 0, {}
    for i = 1, n do
      mcp.spawn(function()
        local c, err = new_client(srv)
        if not c then failures[#failures + 1] = tostring(err) return end
        local r, e = c:call_tool("echo", { message = "h" .. i })
        if r and r.content[1].text == "h" .. i then ok = ok + 1 else failures[#failures + 1] = tostring(e) end
        c:close()
      end)
      mcp.spawn(function()
        local c, err = helper.test_server()
        if not c then failures[#failures + 1] = tostring(err) return end
        local r, e = c:call_tool("echo", { message = "s" .. i })
        if r and r.content[1].text == "s" .. i then ok = ok + 1 else failures[#failures + 1] = tostring(e) end
        c:close()
      end)
    end
    mcp.run()
    H.stop(srv)
    assert.same({}, failures)
    assert.equal(2 * n, ok)
  end)
end)

describe("server-everything over HTTP #http #everything", function()
  for _, mode in ipairs({ "streamableHttp", "sse" }) do
    it("works in " .. mode .. " mode", function()
      local srv = H.start_everything(mode)
      if not srv then
        pending("server-everything is not installed (make deps installs it when node is present)")
        return
      end
      local url = srv.base .. (mode == "sse" and "/sse" or "/mcp")
      local create = mode == "sse" and mcp.create_sse_client or mcp.create_http_client
      local c = assert(create(url, { request_timeout_ms = helper.ms(20000) }))
      assert.equal("mcp-servers/everything", c:server_info().name)
      local names = {}
      for _, t in ipairs(assert(c:list_all_tools())) do names[t.name] = true end
      assert.is_true(names.echo and names["get-sum"])
      assert.equal("Echo: hi", assert(c:call_tool("echo", { message = "hi" })).content[1].text)
      assert.truthy(assert(c:call_tool("get-sum", { a = 2, b = 3 })).content[1].text:find("5", 1, true))
      local resources = assert(c:list_all_resources())
      assert.is_true(#resources > 0)
      assert.is_table(assert(c:read_resource(resources[1].uri)).contents)
      assert.is_table(assert(c:list_resource_templates()).resourceTemplates)
      local prompts = assert(c:list_all_prompts())
      assert.is_true(#prompts > 0)
      assert.is_table(assert(c:get_prompt("simple-prompt")).messages)
      assert.is_table(assert(c:ping()))
      assert.is_table(assert(c:set_logging_level("info")))
      local steps = 0
      assert(c:call_tool("trigger-long-running-operation", { duration = 1, steps = 2 },
        { on_progress = function() steps = steps + 1 end }))
      assert.equal(2, steps)
      c:close()
      H.stop_everything(srv)
    end)
  end
end)

describe("HTTP clients going away at awkward moments #http", function()
  local srv = H.serve("", { reset = false })
  if not srv then return end

  it("fails a call in flight when another task closes the client", function()
    local c = assert(new_client(srv))
    local res, err
    mcp.spawn(function() res, err = c:call_tool("hang", {}) end)
    mcp.spawn(function()
      mcp.sleep(100)
      c:close()
    end)
    mcp.run()
    assert.is_nil(res)
    assert.equal("closed", err.kind)
  end)

  it("survives a client collected with a request in flight", function()
    local done = false
    do
      local c = assert(new_client(srv))
      local session = c.session
      -- A raw request whose callback keeps nothing alive but a flag.
      session:request("tools/call", { name = "hang", arguments = mcp.object() }, 60000, function() done = true end)
    end
    collectgarbage()
    collectgarbage()
    for _ = 1, 5 do mcp.loop.step(20) end
    assert.is_true(mcp.core.now_ms() > 0)
    assert.is_false(done) -- nothing came back, and nothing crashed
  end)

  it("fails pending calls promptly when the server process dies", function()
    local dying = H.start("")
    local c = assert(new_client(dying, { request_timeout_ms = helper.ms(60000) }))
    local res, err
    local t0 = mcp.core.now_ms()
    mcp.spawn(function() res, err = c:call_tool("hang", {}) end)
    mcp.spawn(function()
      mcp.sleep(100)
      helper.kill(dying.pid, "KILL")
    end)
    mcp.run()
    assert.is_nil(res)
    assert.equal("transport", err.kind)
    assert.is_true(mcp.core.now_ms() - t0 < helper.ms(10000))
    c:close()
    if dying.f then dying.f:close() end
  end)
end)

describe("resuming a streamable HTTP session #http", function()
  if not available then
    pending("node and curl are needed to run the HTTP test server")
    return
  end

  it("reattaches with initial_session_id and the saved initialize_result, without initialize", function()
    local srv = H.start("")
    local a = assert(new_client(srv, { terminate_session_on_close = false }))
    local sid, saved = a.transport:session_id(), a:initialize_result()
    a:close()
    H.control(srv, { clear_records = true })
    local b = assert(new_client(srv, { initial_session_id = sid, initialize_result = saved }))
    assert.equal(sid, b.transport:session_id())
    assert.equal(saved.serverInfo.name, b:server_info().name)
    local h = assert(b:call_tool("last_headers", {})).structuredContent.headers
    assert.equal(sid, h["mcp-session-id"])
    for _, r in ipairs(H.state(srv).requests) do assert.not_equal("initialize", r.rpc_method) end
    b:close()
    local deleted = H.state(srv).deleted_sessions
    assert.equal(sid, deleted[#deleted].id)
    H.stop(srv)
  end)

  it("a reattached session the transport dropped before any call is made again by the next call", function()
    local srv = H.start("")
    local a = assert(new_client(srv, { terminate_session_on_close = false }))
    local sid, saved = a.transport:session_id(), a:initialize_result()
    a:close()
    local reconnects = 0
    local b = assert(new_client(srv, { initial_session_id = sid, initialize_result = saved,
      on_reconnect = function() reconnects = reconnects + 1 end }))
    finally(function()
      b:close()
      H.stop(srv)
    end)
    call_after_dropped_session(srv, b) -- before any request of b's
    assert.not_equal(sid, b.transport:session_id())
    assert.equal(1, reconnects)
  end)

  it("rejects an initialize_result without a supported protocol version as a config error", function()
    local c, err = mcp.create_http_client("http://127.0.0.1:1/mcp", { initialize_result = { protocolVersion = "1999" } })
    assert.is_nil(c)
    assert.equal("config", err.kind)
  end)
end)
