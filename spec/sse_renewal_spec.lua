-- Legacy SSE's new connection after its stream ended (lua/mcp/era/legacy.lua, renew_connection):
-- a call made while it is under way waits for it and is sent on the new connection, as the era
-- says ("Calls that start meanwhile wait for it"), also once the reconnection's connect has begun
-- (it gives the client a new era object, which knew nothing of the renewal: the call went out on
-- the transport not started yet and failed with "Not connected"). Against
-- spec/fixtures/oauth_server.mjs, whose token endpoint answers late (token_delay_ms), so that the
-- renewal (its start refreshes an expired token) lasts a second.
local mcp = require("mcp")
local auth = mcp.auth
local helper = require("helper")
local A = require("auth_helper")

local function token_posts(srv)
  local n = 0
  for _, r in ipairs(A.state(srv).records.requests) do
    if r.method == "POST" and r.path == "/token" then n = n + 1 end
  end
  return n
end

describe("legacy SSE: a call during the background reconnection #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("waits for it and goes out on the new connection", function()
    local p = auth.interactive_provider({ store = auth.memory_store(), server_url = srv.base .. "/sse",
      headless = function(u) return auth.follow_authorization(u) end })
    local reconnected = 0
    local c = assert(A.sse_client(srv, { auth_provider = p,
      on_reconnect = function() reconnected = reconnected + 1 end }))
    local posts = token_posts(srv)
    -- the stream ends with the token expired: the background try's connect refreshes it, 1 s at
    -- the token endpoint
    A.control(srv, { expire_access_tokens = true, token_delay_ms = 1000, end_sse_streams = true })
    assert.is_true(helper.wait_until(function() return token_posts(srv) > posts end, helper.ms(10000)))
    local res, err = c:call_tool("whoami", {})
    assert.is_nil(err, tostring(err))
    assert.truthy(res.content[1].text:find("^scopes: "), res.content[1].text)
    assert.equal(1, reconnected)
    c:close()
  end)
end)

-- The background try's reconnection is the client's own work, through its ping; a call that waited
-- for it and goes out while that ping is still out is the user's all the same (the client's own
-- work is marked per exchange, not by a time window from the try's start to its end): a 403
-- insufficient_scope on it steps up with a login, as any call's does.
describe("legacy SSE: a call held behind the background reconnection #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("is the user's: its step-up logs in", function()
    local p = A.counting_provider({ server_url = srv.base .. "/sse" })
    local reconnected = 0
    local c = assert(A.sse_client(srv, { auth_provider = p,
      on_reconnect = function() reconnected = reconnected + 1 end }))
    assert.equal(1, p.logins)
    local posts = token_posts(srv)
    -- the stream ends with the token expired: the try's connect refreshes it, 1 s at the token
    -- endpoint, and its ping is answered 2 s late; tools/call needs a scope the token has not
    A.control(srv, { call_scope = "mcp:tools", expire_access_tokens = true, token_delay_ms = 1000,
      ping_delay_ms = 2000, end_sse_streams = true })
    assert.is_true(helper.wait_until(function() return token_posts(srv) > posts end, helper.ms(10000)))
    local res, err = c:call_tool("whoami", {})
    assert.is_nil(err, tostring(err and err.message))
    assert.truthy(res.content[1].text:find("mcp:tools", 1, true), res.content[1].text)
    assert.equal(2, p.logins) -- (login_required, with no login: the defect)
    assert.equal(1, reconnected)
    c:close()
  end)
end)

-- close() while a background try (renew_connection) is under way ends the tries: before, the
-- try's reconnect had closed the client itself, so its era could not tell the user's close from
-- that one; the try, failing, marked the closed client lost again, and the tries went on (and a
-- later one could connect the closed client again). The SSE transport closed while it waited for
-- its endpoint event also kept that wait's timer (the connect timeout, 20 s here) alive.
describe("legacy SSE: close() during a background try", function()
  local H = require("http_helper")
  local core = require("mcp.core")
  local errors = require("mcp.errors")
  local sched = require("mcp.sched")

  -- No task left, and nothing keeps the loop alive.
  local function settled()
    return sched.live() == 0 and not core.alive()
  end

  -- the GETs of /sse the fixture server srv saw
  local function sse_gets(srv)
    local n = 0
    for _, g in ipairs(H.state(srv).get_connects) do
      if g.path == "/sse" then n = n + 1 end
    end
    return n
  end

  it("stops the try's connect at once, and no try follows: nothing reconnects, nothing keeps the loop alive",
    function()
      if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
      local srv = H.start("")
      local c
      finally(function()
        if c then c:close() end
        H.stop(srv)
      end)
      local url, made = srv.base .. "/sse", 0
      c = assert(mcp.create_sse_client(url, { request_timeout_ms = helper.ms(20000),
        transport_factory = function()
          made = made + 1 -- a try
          return mcp.sse_transport({ url = url })
        end }))
      assert.equal(1, sse_gets(srv))
      H.control(srv, { slow_ms = 600000 }) -- the next GETs of /sse get their endpoint event late
      H.control(srv, { close_idle_connections = true }) -- the SSE stream ends; the server stays up
      -- the first try's GET reached the server: its connect waits for the endpoint event
      assert.is_true(helper.wait_until(function() return sse_gets(srv) >= 2 end, helper.ms(10000)))
      assert.equal(1, made)
      c:close()
      H.control(srv, { slow_ms = 0 }) -- a try from now on would connect
      -- the try ends: its endpoint wait ended with its transport (before, 20 s later); and no next
      -- try waits on a timer
      assert.is_true(helper.wait_until(settled, helper.ms(5000)), "a try or its wait goes on after close()")
      assert.equal(1, made)
      assert.equal(2, sse_gets(srv))
      local res, err = c:ping() -- a call fails as closed; it makes no new connection
      assert.is_nil(res)
      assert.equal("closed", err.kind)
      assert.equal(1, made)
      assert.is_false(c:is_connected())
    end)

  it("a try whose connect fails after close() is the last: no later try, its failure not reported", function()
    if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
    local srv = H.start("")
    local c
    finally(function()
      if c then c:close() end
      H.stop(srv)
    end)
    -- the tries' transports: the first one's start waits until it is closed, then fails (as the
    -- SSE transport's does); a later one's start waits for good
    local made, reports, starting = 0, {}, nil
    local function factory()
      made = made + 1
      local n, wake = made, nil
      return {
        capabilities = { session_id = true }, -- as the SSE transport: a stream it can lose
        start = function()
          if n == 1 then starting = true end
          return sched.await(function(cb) wake = cb end)
        end,
        send = function() return true end,
        close = function()
          if n == 1 and wake then wake(nil, errors.new(nil, "closed while starting", nil, { kind = "transport" })) end
        end,
        session_id = function() return nil end,
      }
    end
    c = assert(mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000),
      transport_factory = factory, on_error = function(e) reports[#reports + 1] = e end }))
    H.control(srv, { close_idle_connections = true }) -- the SSE stream ends; the server stays up
    assert.is_true(helper.wait_until(function() return starting end, helper.ms(10000)))
    local reported = #reports
    c:close()
    -- the try ends (its start fails); before, the next try waited on a timer that kept the loop
    -- alive, then started
    assert.is_true(helper.wait_until(settled, helper.ms(5000)), "a try or its wait goes on after close()")
    assert.equal(1, made)
    assert.equal(reported, #reports, reported < #reports and tostring(reports[#reports].message) or nil)
    local res, perr = c:ping()
    assert.is_nil(res)
    assert.equal("closed", perr.kind)
    assert.equal(1, made)
  end)

  it("after a try whose initialize failed, ends the wait for the next try at once", function()
    if not H.have_node() or not H.have_curl() then pending("needs node and curl"); return end
    local srv = H.start("")
    local c
    finally(function()
      if c then c:close() end
      H.stop(srv)
    end)
    local url, made, failed, seen = srv.base .. "/sse", 0, 0, {}
    c = assert(mcp.create_sse_client(url, { request_timeout_ms = helper.ms(20000),
      on_error = function(e)
        seen[#seen + 1] = tostring(e.message)
        if helper.has(tostring(e.message), "a new connection failed") then failed = failed + 1 end
      end,
      transport_factory = function()
        made = made + 1 -- a try
        return mcp.sse_transport({ url = url })
      end }))
    -- the try's stream opens; its initialize gets a 500 (the connect fails after it began)
    H.control(srv, { fault_methods = { "initialize" }, fail_next = { 500 } })
    H.control(srv, { close_idle_connections = true }) -- the SSE stream ends; the server stays up
    assert.is_true(helper.wait_until(function() return failed >= 1 end, helper.ms(10000)),
      "tries " .. made .. ", reported: " .. table.concat(seen, " | "))
    assert.equal(1, made)
    c:close()
    helper.drain()
    -- (before, the wait for the next try kept the loop alive until it fired: the failed connect had
    -- closed the client itself, and close() found nothing more to close)
    assert.is_false(core.alive())
    assert.is_true(helper.wait_until(settled, helper.ms(5000)))
    assert.equal(1, made)
  end)
end)
