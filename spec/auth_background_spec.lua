-- OAuth in the background: what an HTTP client sends with no call waiting on it (the streamable
-- HTTP GET stream reconnecting, a notification, legacy SSE's reconnection after its stream ended)
-- may refresh an expired token, but never starts a login (a browser opening with nobody asking);
-- when a refresh cannot do, the client records that a login is needed, the GET stream waits for
-- it, and the next call logs in as usual. Against spec/fixtures/oauth_server.mjs.
local mcp = require("mcp")
local auth = mcp.auth
local helper = require("helper")
local sched = require("mcp.sched")
local A = require("auth_helper")

local counting_provider = A.counting_provider

local function count(list, pred)
  local n = 0
  for _, x in ipairs(list) do
    if pred(x) then n = n + 1 end
  end
  return n
end

local function refused(r) return r.refused == 401 end
local function accepted(r) return r.accepted == true end

-- Whether an error of the list is (or was caused by) an OAuth error with that code.
local function has_oauth_error(list, code)
  for _, e in ipairs(list) do
    for _ = 1, 8 do
      if type(e) ~= "table" then break end
      if e.oauth_error == code then return true end
      e = e.cause
    end
  end
  return false
end

-- The POSTs that reached the token endpoint (recorded on arrival, before token_delay_ms).
local function token_posts(srv)
  return count(A.state(srv).records.requests, function(r) return r.method == "POST" and r.path == "/token" end)
end

local function grants(srv)
  local out = {}
  for _, t in ipairs(A.state(srv).records.token) do out[#out + 1] = t.grant_type end
  return out
end

describe("OAuth in the background: the streamable HTTP GET stream #auth", function()
  local srv = A.serve()
  if not srv then return end

  -- A connected client whose GET stream the fixture ends after each priming event (it reconnects
  -- every 100 ms), once the stream was live with the first login's token.
  local function client(p, reports)
    A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
    local c = assert(A.http_client(srv, { auth_provider = p, max_reconnects = 1000,
      transport_on_error = function(e) reports[#reports + 1] = e end }))
    assert.is_true(helper.wait_until(function() return count(A.state(srv).records.mcp_get, accepted) >= 2 end,
      helper.ms(10000)))
    return c
  end

  it("a reconnect refused with 401 refreshes the token by itself, with no login", function()
    local p, reports = counting_provider(), {}
    local c = client(p, reports)
    A.control(srv, { expire_access_tokens = true })
    assert.is_true(helper.wait_until(function()
      local gets = A.state(srv).records.mcp_get
      return count(gets, refused) >= 1 and accepted(gets[#gets])
    end, helper.ms(10000)))
    assert.equal(1, p.logins)
    assert.same({ "authorization_code", "refresh_token" }, grants(srv))
    c:close()
  end)

  it("a reconnect whose refresh fails starts no login: it waits, and the next call logs in and brings it back",
    function()
      local p, reports = counting_provider(), {}
      local c = client(p, reports)
      A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true })
      -- the reconnect's 401, the refresh refused: a login is needed, and none was started
      assert.is_true(helper.wait_until(function()
        return has_oauth_error(reports, "login_required") or p.logins > 1
      end, helper.ms(10000)), "no login_required was reported")
      assert.equal(1, p.logins) -- (a login, the browser opening, with no one calling: the defect)
      assert.is_true(has_oauth_error(reports, "login_required"))
      assert.same({ "authorization_code", "refresh_token" }, grants(srv))
      -- the stream waits for the login: no more GETs into 401 (one every 100 ms before), no more
      -- token requests
      helper.wait_until(function() return count(A.state(srv).records.mcp_get, refused) >= 2 end, helper.ms(1500))
      assert.equal(1, count(A.state(srv).records.mcp_get, refused))
      assert.same({ "authorization_code", "refresh_token" }, grants(srv))
      -- the next call logs in, as usual, and the GET stream is open again with the new token
      local res = assert(c:call_tool("whoami", {}))
      assert.equal("scopes: (none)", res.content[1].text)
      assert.equal(2, p.logins)
      local token = p:tokens().access_token
      assert.is_true(helper.wait_until(function()
        local gets = A.state(srv).records.mcp_get
        return accepted(gets[#gets]) and gets[#gets].authorization == "Bearer " .. token
      end, helper.ms(10000)), "the GET stream did not come back")
      c:close()
    end)

  it("a call made while the reconnect's refresh is under way waits for it, then logs in", function()
    local p, reports = counting_provider(), {}
    local c = client(p, reports)
    A.control(srv, { token_delay_ms = 1000, expire_access_tokens = true, expire_refresh_tokens = true })
    -- the reconnect's refresh has reached the token endpoint, which answers 1 s later
    assert.is_true(helper.wait_until(function() return token_posts(srv) >= 2 end, helper.ms(10000)))
    local res = assert(c:call_tool("whoami", {}))
    assert.equal("scopes: (none)", res.content[1].text)
    assert.equal(2, p.logins)
    assert.same({ "authorization_code", "refresh_token", "authorization_code" }, grants(srv))
    local token = p:tokens().access_token
    assert.is_true(helper.wait_until(function()
      local gets = A.state(srv).records.mcp_get
      return accepted(gets[#gets]) and gets[#gets].authorization == "Bearer " .. token
    end, helper.ms(10000)), "the GET stream did not come back")
    c:close()
  end)

  -- A grant without a user shows nothing to anyone: the background may get a new token with it.
  it("a client credentials provider gets a new token for the reconnect by itself", function()
    A.control(srv, { add_client = { client_id = "svc", client_secret = "s" } })
    local p = assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "svc", client_secret = "s" }))
    local c = client(p, {})
    A.control(srv, { expire_access_tokens = true })
    assert.is_true(helper.wait_until(function()
      local gets = A.state(srv).records.mcp_get
      return count(gets, refused) >= 1 and accepted(gets[#gets])
    end, helper.ms(10000)), "the GET stream did not come back")
    assert.same({ "client_credentials", "client_credentials" }, grants(srv))
    c:close()
  end)

  it("a notification refused with 401 whose refresh fails starts no login; the next call logs in", function()
    local p, reports = counting_provider(), {}
    A.control(srv, { sessions = true })
    local c = assert(A.http_client(srv, { auth_provider = p,
      transport_on_error = function(e) reports[#reports + 1] = e end }))
    A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true })
    assert.is_true(c:notify("notifications/roots/list_changed"))
    assert.is_true(helper.wait_until(function()
      return has_oauth_error(reports, "login_required") or p.logins > 1
    end, helper.ms(10000)), "no login_required was reported")
    assert.equal(1, p.logins)
    assert.is_true(has_oauth_error(reports, "login_required"))
    assert(c:call_tool("whoami", {}))
    assert.equal(2, p.logins)
    c:close()
  end)
end)

describe("OAuth in the background: the static oauth config #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("a reconnect whose refresh fails refreshes once and waits; the next call's refresh brings the GET stream back",
    function()
      A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
      local first = counting_provider()
      assert.equal("AUTHORIZED", auth.auth(first, { server_url = srv.url }))
      local refreshes, can, reports, token = 0, false, {}, nil
      local c = assert(A.http_client(srv, { max_reconnects = 1000,
        transport_on_error = function(e) reports[#reports + 1] = e end,
        oauth = { access_token = first:tokens().access_token, refresh_token_fn = function()
          refreshes = refreshes + 1
          if not can then return nil, "refused by the host" end
          -- the host's own code gets a new token (here a login of its own provider)
          local p = counting_provider()
          assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
          token = p:tokens().access_token
          return token, 60
        end } }))
      assert.is_true(helper.wait_until(function() return count(A.state(srv).records.mcp_get, accepted) >= 2 end,
        helper.ms(10000)))
      A.control(srv, { expire_access_tokens = true })
      assert.is_true(helper.wait_until(function()
        return has_oauth_error(reports, "login_required") or refreshes > 1
      end, helper.ms(10000)), "no login_required was reported")
      -- the stream waits: no more GETs into 401 (one every 100 ms before), no more refreshes
      helper.wait_until(function() return count(A.state(srv).records.mcp_get, refused) >= 2 end, helper.ms(1500))
      assert.equal(1, refreshes) -- (one per reconnect, up to max_reconnects: the defect)
      assert.equal(1, count(A.state(srv).records.mcp_get, refused))
      assert.equal(1, count(reports, function(e) return has_oauth_error({ e }, "login_required") end))
      -- the next call refreshes (the host's code can now), and the GET stream goes on with the new token
      can = true
      local res = assert(c:call_tool("whoami", {}))
      assert.equal("scopes: (none)", res.content[1].text)
      assert.equal(2, refreshes)
      assert.is_true(helper.wait_until(function()
        local gets = A.state(srv).records.mcp_get
        return accepted(gets[#gets]) and gets[#gets].authorization == "Bearer " .. token
      end, helper.ms(10000)), "the GET stream did not come back")
      c:close()
    end)
end)

describe("OAuth in the background: a new session after the server lost one #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("made by the client on its own, it starts no login when the token cannot be refreshed; the next call does",
    function()
      A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
      local p, reports, renewed = counting_provider(), {}, 0
      local c = assert(A.http_client(srv, { auth_provider = p, max_reconnects = 1000,
        on_error = function(e) reports[#reports + 1] = e end,
        on_reconnect = function() renewed = renewed + 1 end }))
      assert.is_true(helper.wait_until(function() return count(A.state(srv).records.mcp_get, accepted) >= 1 end,
        helper.ms(10000)))
      -- the server loses the session (met by the GET stream reconnecting) and, with it, every token
      A.control(srv, { lose_sessions = true, expire_on_lost = true })
      assert.is_true(helper.wait_until(function()
        return has_oauth_error(reports, "login_required") or p.logins > 1
      end, helper.ms(10000)), "no login_required was reported")
      assert.equal(1, p.logins)
      assert.is_true(has_oauth_error(reports, "login_required"))
      -- the next call logs in and makes the new session
      local res = assert(c:call_tool("whoami", {}))
      assert.equal("scopes: (none)", res.content[1].text)
      assert.equal(2, p.logins)
      assert.equal(1, renewed)
      local posts = A.state(srv).records.mcp
      assert.is_true(posts[#posts].accepted)
      c:close()
    end)

  it("a call made while that renewal refreshes waits for it, then logs in and makes the session", function()
    A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
    local p, renewed = counting_provider(), 0
    local c = assert(A.http_client(srv, { auth_provider = p, max_reconnects = 1000,
      on_reconnect = function() renewed = renewed + 1 end }))
    assert.is_true(helper.wait_until(function() return count(A.state(srv).records.mcp_get, accepted) >= 1 end,
      helper.ms(10000)))
    A.control(srv, { token_delay_ms = 1000, lose_sessions = true, expire_on_lost = true })
    -- the renewal's refresh has reached the token endpoint, which answers 1 s later
    assert.is_true(helper.wait_until(function() return token_posts(srv) >= 2 end, helper.ms(10000)))
    local res = assert(c:call_tool("whoami", {}))
    assert.equal("scopes: (none)", res.content[1].text)
    assert.equal(2, p.logins)
    assert.equal(1, renewed)
    c:close()
  end)
end)

describe("OAuth in the background: the client's own work is marked per exchange #auth", function()
  local srv = A.serve()
  if not srv then return end

  -- fn() inside the client's own work (Client:_in_background, as a renewal or the hub's restart
  -- runs) in a task of its own, held open until the returned finish() is called.
  local function own_work(c, fn)
    local release, done
    mcp.spawn(function()
      c:_in_background(function()
        sched.await(function(cb) release = cb end)
        if fn then fn() end
      end)
      done = true
    end)
    assert.is_true(helper.wait_until(function() return release ~= nil end, helper.ms(5000)))
    return function()
      release()
      assert.is_true(helper.wait_until(function() return done end, helper.ms(20000)))
    end
  end

  it("a user's call made while the client's own work is under way logs in", function()
    A.control(srv, { sessions = true })
    local p, reports = counting_provider(), {}
    local c = assert(A.http_client(srv, { auth_provider = p, on_error = function(e) reports[#reports + 1] = e end }))
    assert.equal(1, p.logins)
    local finish = own_work(c)
    A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true })
    -- (a time window since the own work began took this call for the background's: login_required)
    local res, err = c:call_tool("whoami", {})
    assert.is_nil(err, tostring(err and err.message))
    assert.equal("scopes: (none)", res.content[1].text)
    assert.equal(2, p.logins)
    assert.is_false(has_oauth_error(reports, "login_required"))
    finish()
    c:close()
  end)

  it("a request of the client's own never logs in, also after other own work that began first has ended", function()
    A.control(srv, { sessions = true })
    local p = counting_provider()
    local c = assert(A.http_client(srv, { auth_provider = p }))
    local first = own_work(c)
    local res, err
    local second = own_work(c, function() res, err = c:call_tool("whoami", {}) end)
    A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true })
    first() -- (it closed the one window both shared)
    second()
    assert.is_nil(res)
    assert.is_true(has_oauth_error({ err }, "login_required"), tostring(err and err.message))
    assert.equal(1, p.logins)
    -- the user's next call logs in
    assert(c:call_tool("whoami", {}))
    assert.equal(2, p.logins)
    c:close()
  end)
end)

describe("OAuth in the background: legacy SSE's reconnection #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("the reconnection after the stream ended refreshes, or else starts no login and stops; the next call logs in",
    function()
      local p, reports = counting_provider({ server_url = srv.base .. "/sse" }), {}
      local reconnected = 0
      local c = assert(A.sse_client(srv, { auth_provider = p,
        on_error = function(e) reports[#reports + 1] = e end,
        on_reconnect = function() reconnected = reconnected + 1 end }))
      assert.equal(1, p.logins)
      -- the stream ends with the token expired: the reconnection refreshes it by itself
      A.control(srv, { expire_access_tokens = true, end_sse_streams = true })
      assert.is_true(helper.wait_until(function() return reconnected == 1 end, helper.ms(10000)))
      assert.equal(1, p.logins)
      -- again with the refresh token expired too: no login, and the tries stop
      local sse_before = #A.state(srv).records.sse
      A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true, end_sse_streams = true })
      assert.is_true(helper.wait_until(function()
        return has_oauth_error(reports, "login_required") or p.logins > 1
      end, helper.ms(10000)), "no login_required was reported")
      assert.equal(1, p.logins) -- (a login, the browser opening, with no one calling: the defect)
      assert.is_true(has_oauth_error(reports, "login_required"))
      assert.equal(1, reconnected)
      assert.equal(sse_before + 1, #A.state(srv).records.sse) -- the one try, refused
      -- the next call logs in and connects again
      local res = assert(c:call_tool("whoami", {}))
      assert.equal("scopes: (none)", res.content[1].text)
      assert.equal(2, p.logins)
      c:close()
    end)
end)

describe("OAuth in the background: the flow's interactive = false #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("refreshes, but where a login would be needed fails with login_required and shows nothing", function()
    local p = counting_provider()
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.equal(1, p.logins)
    A.control(srv, { expire_access_tokens = true })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url, interactive = false }))
    A.control(srv, { expire_refresh_tokens = true })
    local res, err = auth.auth(p, { server_url = srv.url, interactive = false })
    assert.equal(1, p.logins)
    assert.is_nil(res)
    assert.equal("login_required", err and err.oauth_error, tostring(err))
    -- nor does a provider with no client yet register one
    local fresh = counting_provider()
    local registered = #A.state(srv).records.register
    res, err = auth.auth(fresh, { server_url = srv.url, interactive = false })
    assert.is_nil(res)
    assert.equal("login_required", err and err.oauth_error, tostring(err))
    assert.equal(registered, #A.state(srv).records.register)
    assert.equal(0, fresh.logins)
  end)
end)
