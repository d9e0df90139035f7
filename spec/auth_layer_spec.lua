-- Authorization is a layer of the HTTP transport (lua/mcp/auth/transport.lua over the C request
-- hooks): every exchange the transport makes, not only the POST of a request, carries the auth
-- layer's credentials, and a refusal of any of them is authorized again and the message sent
-- again there, once delivered. Against the fault server (spec/fixtures/http_server.mjs), which
-- records every HTTP request with its headers and status.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local UNAUTHORIZED = { status = 401, headers = { ["WWW-Authenticate"] = 'Bearer error="invalid_token"' } }

-- The records of POSTs carrying rpc_method (or, with kind, of that rpc_kind).
local function posts(srv, pred)
  local out = {}
  for _, r in ipairs(H.state(srv).requests) do
    if r.http_method == "POST" and r.path == "/mcp" and pred(r) then out[#out + 1] = r end
  end
  return out
end

local function of_method(m) return function(r) return r.rpc_method == m end end
local function answers(r) return r.rpc_kind == "response" end

-- The static oauth config: a 401 refreshes once (refresh_token_fn) and the exchange goes again.
local function static_client(srv, extra)
  local calls = { n = 0 }
  local opts = {
    request_timeout_ms = helper.ms(20000),
    oauth = { access_token = "first", refresh_token_fn = function() calls.n = calls.n + 1; return "second", 60 end },
  }
  for k, v in pairs(extra or {}) do opts[k] = v end
  return assert(mcp.create_http_client(srv.url, opts)), calls
end

describe("the auth layer of the HTTP transport: what is not a request #auth", function()
  local srv = H.serve("")
  if not srv then return end

  it("a request refused with 401 is sent again with its id, and answered once", function()
    local c, calls = static_client(srv)
    H.control(srv, { fail_next = { UNAUTHORIZED } })
    local res = assert(c:call_tool("echo", { message = "hi" }))
    local recs = posts(srv, of_method("tools/call"))
    c:close()
    assert.equal("hi", res.content[1].text)
    assert.equal(1, calls.n)
    assert.equal(2, #recs)
    assert.same({ 401, 200 }, { recs[1].status, recs[2].status })
    assert.equal(mcp.json.encode(recs[1].rpc_id), mcp.json.encode(recs[2].rpc_id))
  end)

  it("a notification refused with 401 is authorized again and delivered once", function()
    local c, calls = static_client(srv)
    H.control(srv, { fault_methods = { "notifications/roots/list_changed" }, fail_next = { UNAUTHORIZED } })
    assert.is_true(c:notify("notifications/roots/list_changed"))
    local recs
    assert.is_true(helper.wait_until(function()
      recs = posts(srv, of_method("notifications/roots/list_changed"))
      return #recs >= 2
    end, helper.ms(10000)), "the notification was not sent again")
    assert(c:ping()) -- (anything still on its way has arrived)
    recs = posts(srv, of_method("notifications/roots/list_changed"))
    c:close()
    assert.equal(1, calls.n)
    assert.equal(2, #recs)
    assert.same({ 401, 202 }, { recs[1].status, recs[2].status })
    assert.same({ "Bearer first", "Bearer second" }, { recs[1].headers.authorization, recs[2].headers.authorization })
  end)

  it("an answer to an elicitation request refused with 401 is authorized again and delivered once", function()
    local c, calls = static_client(srv, {
      on_elicitation_request = function() return { action = "accept", content = { name = "x" } } end,
    })
    H.control(srv, { fault_methods = { "(response)" }, fail_next = { UNAUTHORIZED } })
    local res = assert(c:call_tool("elicit", { message = "name?" }))
    local recs = posts(srv, answers)
    c:close()
    assert.equal(1, calls.n)
    assert.equal(2, #recs)
    assert.same({ 401, 202 }, { recs[1].status, recs[2].status })
    assert.same({ "Bearer first", "Bearer second" }, { recs[1].headers.authorization, recs[2].headers.authorization })
    assert.truthy(mcp.json.encode(res):find("accept", 1, true)) -- the server got the answer
  end)

  it("a static token refused with 401 and no way to refresh: the error keeps status 401 and WWW-Authenticate", function()
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000),
      oauth = { access_token = "static" } }))
    H.control(srv, { fail_next = { UNAUTHORIZED } })
    local res, err = c:call_tool("echo", { message = "hi" })
    c:close()
    assert.is_nil(res)
    assert.equal("oauth", err.kind)
    assert.equal("invalid_grant", err.oauth_error)
    assert.equal(401, err.status_code)
    assert.equal('Bearer error="invalid_token"', err.www_authenticate)
  end)

  it("a 6000-byte static token is sent whole; one with CR/LF fails the connect with nil, err", function()
    local long = ("t"):rep(6000)
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000),
      oauth = { access_token = long } }))
    assert(c:call_tool("echo", { message = "hi" }))
    c:close()
    local recs = posts(srv, of_method("tools/call"))
    assert.equal("Bearer " .. long, recs[#recs].headers.authorization)
    local c2, err = mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000),
      oauth = { access_token = "tok\r\nX-Injected: 1" } })
    assert.is_nil(c2)
    assert.truthy(tostring(err):find("not visible ASCII", 1, true), tostring(err))
    assert.has_error(function() mcp.http_transport({ url = srv.url, bearer_token = "a\nb" }) end)
  end)
end)

describe("the auth layer of the HTTP transport: what the core sends on its own #auth", function()
  local srv = H.serve("")
  if not srv then return end

  -- A DPoP-like provider: per-exchange headers (the token's Authorization and a fresh proof), and
  -- a nonce challenge it settles itself (a new token here, so that what is sent again shows it).
  local function provider()
    local p = { token = "tok-1", proofs = 0 }
    function p.tokens() return { access_token = p.token, token_type = "DPoP" } end
    function p.request_headers(_, method, url)
      p.proofs = p.proofs + 1
      return { Authorization = "DPoP " .. p.token, DPoP = method .. " " .. url .. " #" .. p.proofs }
    end
    function p.resource_response(_, status, headers)
      if status == 401 and headers["dpop-nonce"] then
        p.token = "tok-2"
        return true
      end
      return false
    end
    return p
  end
  local NONCE = { status = 401, headers = { ["WWW-Authenticate"] = 'DPoP error="use_dpop_nonce"', ["DPoP-Nonce"] = "n-1" } }

  it("a ping's answer and a timed-out call's notifications/cancelled carry a request's credentials, also sent again", function()
    local p = provider()
    local c = assert(mcp.create_http_client(srv.url, { auth_provider = p, request_timeout_ms = helper.ms(20000) }))
    H.control(srv, { fault_methods = { "(response)", "notifications/cancelled" }, fail_next = { NONCE } })
    assert(c:call_tool("ping_client", {}))
    p.token = "tok-1"
    H.control(srv, { fail_next = { NONCE } })
    local _, err = c:call_tool("sleep", { ms = 3000 }, { timeout_ms = 100 })
    assert.equal("timeout", err.kind)
    local cancels
    assert.is_true(helper.wait_until(function()
      cancels = posts(srv, of_method("notifications/cancelled"))
      return #cancels >= 2
    end, helper.ms(10000)), "the cancellation was not sent again")
    assert(c:list_tools())
    local pongs = posts(srv, answers)
    cancels = posts(srv, of_method("notifications/cancelled"))
    local lists = posts(srv, of_method("tools/list"))
    c:close()
    local request = lists[#lists].headers
    assert.equal("DPoP tok-2", request.authorization)
    for _, recs in ipairs({ pongs, cancels }) do
      assert.equal(2, #recs)
      assert.same({ 401, 202 }, { recs[1].status, recs[2].status })
      assert.same({ "DPoP tok-1", request.authorization }, { recs[1].headers.authorization, recs[2].headers.authorization })
      assert.matches("^POST " .. srv.url:gsub("%p", "%%%0") .. " #%d+$", recs[2].headers.dpop)
      assert.are_not.equal(recs[1].headers.dpop, recs[2].headers.dpop) -- a fresh proof each time
    end
  end)

  it("a same-origin redirect hop carries the layer's headers for its own URL; a refusal there is authorized again there", function()
    local p = provider()
    local c = assert(mcp.create_http_client(srv.url, { auth_provider = p, redirect = mcp.REDIRECT_FOLLOW,
      request_timeout_ms = helper.ms(20000) }))
    H.control(srv, { redirect = "/mcp2", fail_next = { NONCE } })
    local res = assert(c:call_tool("echo", { message = "hop" }))
    local first, hops = {}, {}
    for _, r in ipairs(H.state(srv).requests) do
      if r.http_method == "POST" and r.path == "/mcp" and r.status == 307 then first[#first + 1] = r end
      if r.http_method == "POST" and r.path == "/mcp2" and r.rpc_method == "tools/call" then hops[#hops + 1] = r end
    end
    c:close()
    assert.equal("hop", res.content[1].text)
    local base = srv.url:gsub("/mcp$", ""):gsub("%p", "%%%0")
    assert.is_true(#first >= 1)
    assert.matches("^POST " .. base .. "/mcp #%d+$", first[#first].headers.dpop)
    assert.equal(2, #hops)
    assert.same({ 401, 200 }, { hops[1].status, hops[2].status })
    assert.same({ "DPoP tok-1", "DPoP tok-2" }, { hops[1].headers.authorization, hops[2].headers.authorization })
    for _, r in ipairs(hops) do assert.matches("^POST " .. base .. "/mcp2 #%d+$", r.headers.dpop) end
    assert.are_not.equal(hops[1].headers.dpop, hops[2].headers.dpop)
  end)
end)
describe("the transports' modules #auth", function()
  it("modify no C method table when required", function()
    local core = require("mcp.core")
    local function snapshot()
      local out = {}
      for _, t in ipairs({ core.http_transport({ url = "http://127.0.0.1:9/mcp" }),
          core.sse_transport({ url = "http://127.0.0.1:9/sse" }), mcp.stdio_transport({ command = "true" }).handle }) do
        local methods = getmetatable(t).__index
        local names = {}
        for k, v in pairs(methods) do names[#names + 1] = tostring(k) .. "=" .. tostring(v) end
        table.sort(names)
        out[#out + 1] = table.concat(names, ",")
        t:close()
      end
      return out
    end
    local before = snapshot()
    -- (busted loaded the modules before this: what is there now must be the C module's own)
    for _, t in ipairs({ core.http_transport({ url = "http://127.0.0.1:9/mcp" }),
        mcp.stdio_transport({ command = "true" }).handle }) do
      for k, v in pairs(getmetatable(t).__index) do
        assert.is_true(type(v) == "function" and debug.getinfo(v, "S").what == "C",
          "not a C function in the C method table: " .. tostring(k))
      end
      t:close()
    end
    for _, m in ipairs({ "mcp.transport.http", "mcp.auth.transport", "mcp.transport.stdio", "mcp" }) do
      package.loaded[m] = nil
    end
    require("mcp")
    local t = require("mcp").http_transport({ url = "http://127.0.0.1:9/mcp", auth_provider = { tokens = function() end } })
    t:close(0)
    require("mcp").sse_transport({ url = "http://127.0.0.1:9/sse" }):close(0)
    assert.same(before, snapshot())
  end)
end)

describe("the auth layer of the HTTP transport: a denied login #auth", function()
  local srv = H.serve("")
  if not srv then return end

  -- A provider whose login (the flow: its check_store step) the user denies once armed; deny()
  -- runs inside the login, while it is under way.
  local function denying_provider(deny)
    local p = { logins = 0 }
    function p.tokens() return { access_token = "tok" } end
    function p.check_store()
      if not p.armed then return true end
      p.logins = p.logins + 1
      if deny then deny(p.logins) end
      return nil, mcp.auth.new_error(mcp.auth.ACCESS_DENIED, "the user denied the login")
    end
    return p
  end

  it("a 401 of the same burst arriving after the denial fails with it, no second login; a later call logs in", function()
    local c, b_res, b_err, b_sent
    local p = denying_provider(function(n)
      if n > 1 then return end
      -- during the login: call B goes out; the server answers it (401) only after the denial
      H.control(srv, { slow_ms = helper.ms(1500) })
      mcp.spawn(function() b_res, b_err = c:call_tool("echo", { message = "b" }) end)
      require("mcp.sched").await(function(cb) b_sent = cb end)
    end)
    c = assert(mcp.create_http_client(srv.url, { auth_provider = p, request_timeout_ms = helper.ms(20000),
      on_message = function(dir, m)
        if dir == "send" and m.method == "tools/call" and m.params.arguments.message == "b" and b_sent then
          local wake = b_sent
          b_sent = nil
          mcp.spawn(wake)
        end
      end }))
    p.armed = true
    H.control(srv, { fail_next = { UNAUTHORIZED, UNAUTHORIZED } })
    local a_res, a_err = c:call_tool("echo", { message = "a" })
    assert.is_nil(a_res)
    assert.equal(mcp.auth.ACCESS_DENIED, a_err and a_err.oauth_error, tostring(a_err))
    assert.is_true(helper.wait_until(function() return b_res ~= nil or b_err ~= nil end, helper.ms(20000)))
    assert.is_nil(b_res)
    assert.equal(mcp.auth.ACCESS_DENIED, b_err and b_err.oauth_error, tostring(b_err))
    assert.equal(1, p.logins) -- B's 401 came after the login ended: it did not start another
    local b_posts = posts(srv, function(r) return r.rpc_method == "tools/call" end)
    assert.equal(401, b_posts[#b_posts].status)
    -- the user's next call (sent after the denial) may log in again
    H.control(srv, { slow_ms = 0, fail_next = { UNAUTHORIZED } })
    local _, c_err = c:call_tool("echo", { message = "c" })
    assert.equal(mcp.auth.ACCESS_DENIED, c_err and c_err.oauth_error, tostring(c_err))
    assert.equal(2, p.logins)
    c:close()
  end)

  -- A client whose provider the user denies once armed, and the transport errors it reported.
  local function denied_client(extra)
    local p, reports = denying_provider(), {}
    local opts = { auth_provider = p, request_timeout_ms = helper.ms(20000),
      transport_on_error = function(e) reports[#reports + 1] = tostring(e and e.message or e) end }
    for k, v in pairs(extra or {}) do opts[k] = v end
    local c = assert(mcp.create_http_client(srv.url, opts))
    p.armed = true
    H.control(srv, { fail_next = { UNAUTHORIZED } })
    local _, err = c:call_tool("echo", { message = "a" })
    assert.equal(mcp.auth.ACCESS_DENIED, err and err.oauth_error, tostring(err))
    assert.equal(1, p.logins)
    return c, p, reports
  end

  local function reported(reports, text)
    return helper.wait_until(function()
      for _, r in ipairs(reports) do
        if r:find(text, 1, true) then return true end
      end
      return false
    end, helper.ms(20000))
  end

  local function refused_gets()
    local refused = 0
    for _, g in ipairs(H.state(srv).get_connects) do
      if g.outcome == 401 then refused = refused + 1 end
    end
    return refused
  end

  -- After the user denied a login, what no caller waits on (the GET stream reconnecting, a
  -- notification) must not open a login by itself; the user's next call may. The GET stream waits
  -- for that login (held: no reconnects into 401 meanwhile).
  it("after a denied login, a GET stream reconnect refused with 401 starts no login and waits; the next call does",
    function()
      -- (the server ends each GET stream soon, so that the client reconnects; max_reconnects keeps
      -- those empty streams from slowing the reconnects down)
      H.control(srv, { get_stream = "close_every_ms:100", retry_ms = 10 })
      local c, p = denied_client({ max_reconnects = 1000 })
      H.control(srv, { fault_methods = { "(get)" }, fail_next = { UNAUTHORIZED } })
      assert.is_true(helper.wait_until(function() return refused_gets() >= 1 end, helper.ms(20000)))
      local connects = #H.state(srv).get_connects
      H.control(srv, { fault_methods = { "tools/call" }, fail_next = { UNAUTHORIZED } })
      local _, err = c:call_tool("echo", { message = "b" })
      assert.equal(mcp.auth.ACCESS_DENIED, err and err.oauth_error, tostring(err))
      assert.equal(2, p.logins) -- the reconnect's 401 did not open a login; a call may
      -- the stream waits for a login that works (it reconnected every 100 ms before; its return
      -- after one is in auth_background_spec.lua, against the OAuth fixture)
      helper.wait_until(function() return #H.state(srv).get_connects > connects end, helper.ms(1500))
      assert.equal(connects, #H.state(srv).get_connects)
      c:close()
    end)

  it("after a denied login, a notification refused with 401 starts no login", function()
    local c, p, reports = denied_client()
    H.control(srv, { fault_methods = { "notifications/roots/list_changed" }, fail_next = { UNAUTHORIZED } })
    assert.is_true(c:notify("notifications/roots/list_changed"))
    assert.is_true(reported(reports, "401"), table.concat(reports, "\n"))
    assert.equal(1, p.logins)
    assert.equal(401, posts(srv, of_method("notifications/roots/list_changed"))[1].status)
    c:close()
  end)
end)

describe("the auth layer of the HTTP transport: a GET held for want of a login #auth", function()
  local srv = H.serve("")
  if not srv then return end

  -- The background's refresh failed, but the token still works: a call goes through with no 401
  -- (so no flow runs), and the GET stream must not stay held for the transport's life. A JSON-RPC
  -- error is an answer too: the server took the token (before, only a result counted).
  for _, case in ipairs({ { "a result", "echo" }, { "a JSON-RPC error", "no_such_tool" } }) do
  it("goes again once a call's request was answered with the token: " .. case[1], function()
    H.control(srv, { get_stream = "close_every_ms:100", retry_ms = 10 })
    local reports = {}
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000), max_reconnects = 1000,
      transport_on_error = function(e) reports[#reports + 1] = e end,
      oauth = { access_token = "first", refresh_token_fn = function() return nil, "refused by the host" end } }))
    local function gets() return H.state(srv).get_connects end
    assert.is_true(helper.wait_until(function() return #gets() >= 2 end, helper.ms(20000)))
    H.control(srv, { fault_methods = { "(get)" }, fail_next = { UNAUTHORIZED } })
    assert.is_true(helper.wait_until(function() return helper.login_required_reported(reports) end,
      helper.ms(20000)), "no login_required was reported")
    local n = #gets()
    assert.equal(401, gets()[n].outcome)
    -- the call goes through with the same token, no 401: the held GET goes again with it
    local res, cerr = c:call_tool(case[2], { message = "a" })
    if case[2] == "echo" then
      assert(res, tostring(cerr))
    else
      assert.is_nil(res)
      assert.equal(-32602, cerr.code, tostring(cerr))
    end
    assert.is_true(helper.wait_until(function() return #gets() > n end, helper.ms(20000)), "the GET stayed held")
    local again = gets()[n + 1]
    c:close()
    assert.are_not.equal(401, again.outcome)
  end)
  end
end)

describe("the auth layer of the HTTP transport: a GET held across a new session #auth", function()
  local srv = H.serve("")
  if not srv then return end

  -- An event id names an event of one session: the GET stream held for want of a token (the
  -- static config's refresh failed in the background) and sent again once a call's request was
  -- answered (the token still works), on a session made meanwhile, must not ask that session for
  -- the old one's events.
  it("is sent again without the old session's Last-Event-ID", function()
    H.control(srv, { get_stream = "close_every_ms:100", retry_ms = 10 })
    local reports = {}
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000), max_reconnects = 1000,
      transport_on_error = function(e) reports[#reports + 1] = e end,
      oauth = { access_token = "first", refresh_token_fn = function() return nil, "refused by the host" end } }))
    local function gets() return H.state(srv).get_connects end
    assert.is_true(helper.wait_until(function()
      local g = gets()
      return #g >= 2 and type(g[#g].last_event_id) == "string"
    end, helper.ms(20000)), "the GET stream did not reconnect with a Last-Event-ID")
    -- a reconnect refused: the refresh fails, and the GET stream waits (held) for a call's
    H.control(srv, { fault_methods = { "(get)" }, fail_next = { UNAUTHORIZED } })
    assert.is_true(helper.wait_until(function() return helper.login_required_reported(reports) end,
      helper.ms(20000)), "no login_required was reported")
    local n = #gets()
    local held = gets()[n]
    assert.equal(401, held.outcome)
    assert.equal("string", type(held.last_event_id))
    -- the server loses the session: the next call makes a new one, and its answers (the token
    -- works) send the held GET again, on the new session
    H.control(srv, { fault_methods = { "tools/call" }, expire_session = true })
    assert(c:call_tool("echo", { message = "a" }))
    local calls = posts(srv, of_method("tools/call"))
    local session = calls[#calls].headers["mcp-session-id"]
    assert.equal("string", type(session))
    assert.are_not.equal(held.session_id, session)
    assert.is_true(helper.wait_until(function() return #gets() > n end, helper.ms(20000)), "the GET was not sent again")
    local again = gets()[n + 1]
    c:close()
    assert.equal(session, again.session_id)
    assert.equal(mcp.json.null, again.last_event_id) -- (the old session's event id: the defect)
  end)
end)
