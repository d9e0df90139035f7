-- mcp.hub and OAuth: a restart of the hub's own (a server that went away restarted on the
-- timer, a lost session reconnected), or a first start with background_start, is work no one
-- asked for. It may refresh the token, but
-- never starts a login (a browser opening with nobody asking); when one is needed the server
-- waits in "login_required", not restarted again, and the user's restart logs in. Against
-- spec/fixtures/oauth_server.mjs (its MCP endpoint and its legacy SSE endpoint).
local mcp = require("mcp")
local auth = mcp.auth
local helper = require("helper")
local A = require("auth_helper")

local counting_provider = A.counting_provider

local function grants(srv)
  local out = {}
  for _, t in ipairs(A.state(srv).records.token) do out[#out + 1] = t.grant_type end
  return out
end

-- on_state recorder: the states of server "secure" in order.
local function recorder()
  local r = { states = {} }
  function r.on_state(name, state)
    if name == "secure" then r.states[#r.states + 1] = state end
  end
  return r
end

-- A hub over the one server entry, logging in through provider p.
local function hub_of(entry, p, rec, extra)
  local opts = { auth_provider = function() return p end, on_state = rec.on_state,
    request_timeout_ms = helper.ms(20000), restart = { base_ms = 50 } }
  for k, v in pairs(extra or {}) do opts[k] = v end
  return assert(mcp.hub({ mcpServers = { secure = entry } }, opts))
end

-- What a call to the waiting server gets: unavailable, login_required, and no login; its tools
-- have left the lists.
local function assert_call_waits(hub, p, logins)
  assert.same({}, hub:list_tools())
  local res, err = hub:call_tool("secure__whoami", {})
  assert.is_nil(res)
  assert.equal("unavailable", err.kind)
  assert.equal("login_required", err.oauth_error)
  assert.equal("secure", err.server)
  assert.truthy(helper.has(err.message, "needs a login"), err.message)
  res, err = hub:call_tool("whoami", {}, { server = "secure" })
  assert.is_nil(res)
  assert.equal("login_required", err.oauth_error)
  assert.equal(logins, p.logins)
end

describe("mcp.hub: a restart on the timer after a legacy SSE stream ended #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  it("refreshes by itself; where a login is needed it starts none, waits in login_required, and a restart logs in",
    function()
      local p, rec = counting_provider({ server_url = srv.base .. "/sse" }), recorder()
      local hub = hub_of({ type = "sse", url = srv.base .. "/sse" }, p, rec)
      assert.equal("ready", hub:state("secure"))
      assert.equal(1, p.logins)
      -- the stream ends with the access token expired: the restart refreshes it, no login
      A.control(srv, { expire_access_tokens = true, end_sse_streams = true })
      assert.is_true(helper.wait_until(function() return #rec.states >= 4 and hub:state("secure") == "ready" end,
        helper.ms(10000)), table.concat(rec.states, ","))
      assert.equal(1, p.logins)
      assert.same({ "authorization_code", "refresh_token" }, grants(srv))
      -- again with the refresh token expired too: no login, and the server waits for one
      A.control(srv, { expire_access_tokens = true, expire_refresh_tokens = true, end_sse_streams = true })
      assert.is_true(helper.wait_until(function()
        return hub:state("secure") == "login_required" or p.logins > 1
      end, helper.ms(10000)), table.concat(rec.states, ","))
      assert.equal(1, p.logins) -- (a login, the browser opening, with no one asking: the defect)
      local state, err = hub:state("secure")
      assert.equal("login_required", state)
      assert.equal("login_required", err.oauth_error)
      assert.truthy(helper.has(err.message, "server 'secure' needs a login"), err.message)
      assert.is_true(hub:wait()) -- (settled: nothing more is under way)
      -- not restarted again on the timer (base_ms 50: a try would come at once)
      local sse = #A.state(srv).records.sse
      helper.wait_until(function() return #A.state(srv).records.sse > sse end, helper.ms(1000))
      assert.equal(sse, #A.state(srv).records.sse)
      assert.equal("login_required", hub:state("secure"))
      assert_call_waits(hub, p, 1)
      -- the user's restart logs in
      hub:restart("secure")
      assert.equal("ready", hub:state("secure"))
      assert.equal(2, p.logins)
      assert.equal("scopes: (none)", assert(hub:call_tool("secure__whoami", {})).content[1].text)
      helper.drain()
      assert.same({ "connecting", "ready", "restarting", "ready", "restarting", "login_required", "connecting", "ready" },
        rec.states)
      hub:close()
    end)
end)

describe("mcp.hub: a list_changed followed #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  -- (no one asked for the new list: a server that wanted another scope for it got a login, the
  -- browser opening whenever the server said its tools changed)
  it("lists as background work: where the listing needs a login it starts none and the server waits in login_required",
    function()
      local p, rec = counting_provider({ server_url = srv.base .. "/sse" }), recorder()
      local hub = hub_of({ type = "sse", url = srv.base .. "/sse" }, p, rec)
      finally(function() hub:close() end)
      assert.equal("ready", hub:state("secure"))
      assert.equal(1, p.logins)
      assert.equal(1, #hub:list_tools())
      A.control(srv, { list_scope = "mcp:list", tools_list_changed = true })
      assert.is_true(helper.wait_until(function()
        return hub:state("secure") == "login_required" or p.logins > 1
      end, helper.ms(10000)), table.concat(rec.states, ","))
      assert.equal(1, p.logins)
      assert.equal("login_required", select(2, hub:state("secure")).oauth_error)
      assert.same({}, hub:list_tools())
      -- the user's restart logs in (with the scope)
      hub:restart("secure")
      assert.equal("ready", hub:state("secure"))
      assert.equal(2, p.logins)
      assert.equal(1, #hub:list_tools())
    end)
end)

describe("mcp.hub: a lost session reconnected #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("while no call saw it, starts no login when the token cannot be refreshed; hub:reconnect logs in", function()
    A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
    local p, rec = counting_provider(), recorder()
    local hub = hub_of({ type = "http", url = srv.url }, p, rec)
    assert.equal("ready", hub:state("secure"))
    assert.equal(1, p.logins)
    -- the server loses the session (met by the GET stream reconnecting) and, with it, every token
    A.control(srv, { lose_sessions = true, expire_on_lost = true })
    assert.is_true(helper.wait_until(function()
      return hub:state("secure") == "login_required" or p.logins > 1
    end, helper.ms(10000)), table.concat(rec.states, ","))
    assert.equal(1, p.logins)
    local _, err = hub:state("secure")
    assert.equal("login_required", err.oauth_error)
    assert_call_waits(hub, p, 1)
    -- reconnect (what :McpLogin does after its login) of a server that is not ready restarts it
    assert.is_true(hub:reconnect("secure"))
    assert.equal("ready", hub:state("secure"))
    assert.equal(2, p.logins)
    assert.equal("scopes: (none)", assert(hub:call_tool("secure__whoami", {})).content[1].text)
    hub:close()
  end)

  -- A grant without a user shows nothing to anyone: the hub's own reconnection may use it.
  it("with a client credentials provider, gets a new token by itself and is ready again", function()
    A.control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100,
      add_client = { client_id = "svc", client_secret = "s" } })
    local p = assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "svc", client_secret = "s" }))
    local rec = recorder()
    local hub = hub_of({ type = "http", url = srv.url }, p, rec)
    assert.equal("ready", hub:state("secure"))
    A.control(srv, { lose_sessions = true, expire_on_lost = true })
    assert.is_true(helper.wait_until(function()
      return #rec.states >= 4 and hub:state("secure") ~= "restarting"
    end, helper.ms(10000)), table.concat(rec.states, ","))
    assert.equal("ready", hub:state("secure"), tostring(select(2, hub:state("secure"))))
    assert.same({ "client_credentials", "client_credentials" }, grants(srv))
    assert(hub:call_tool("secure__whoami", {}))
    hub:close()
  end)

  it("a call that met the loss gets login_required and starts no login", function()
    A.control(srv, { sessions = true })
    local p, rec = counting_provider(), recorder()
    local hub = hub_of({ type = "http", url = srv.url }, p, rec)
    assert.equal(1, p.logins)
    A.control(srv, { lose_sessions = true, expire_on_lost = true })
    local res, err = hub:call_tool("secure__whoami", {})
    assert.is_nil(res)
    assert.equal("unavailable", err.kind)
    assert.equal("login_required", err.oauth_error)
    assert.equal("login_required", hub:state("secure"))
    assert.same({}, hub:list_tools())
    assert.equal(1, p.logins)
    hub:close()
  end)
end)

describe("mcp.hub: the first start #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("is the user's: it logs in", function()
    local p, rec = counting_provider(), recorder()
    local hub = hub_of({ type = "http", url = srv.url }, p, rec)
    assert.equal("ready", hub:state("secure"))
    assert.equal(1, p.logins)
    hub:close()
  end)

  -- background_start: a start no one asked for (an editor's init.lua setting up a chat plugin)
  it("with background_start, starts no login: the server waits in login_required and hub:restart logs in", function()
    local p, rec = counting_provider(), recorder()
    local hub = hub_of({ type = "http", url = srv.url }, p, rec, { background_start = true })
    assert.equal(0, p.logins) -- (a login, the browser opening, with no one asking: the defect)
    local state, err = hub:state("secure")
    assert.equal("login_required", state, tostring(err))
    assert.equal("login_required", err.oauth_error)
    assert.truthy(helper.has(err.message, "server 'secure' needs a login"), err.message)
    assert.is_true(hub:wait())
    assert_call_waits(hub, p, 0)
    -- the user's restart logs in
    hub:restart("secure")
    assert.equal("ready", hub:state("secure"))
    assert.equal(1, p.logins)
    assert.equal("scopes: (none)", assert(hub:call_tool("secure__whoami", {})).content[1].text)
    helper.drain()
    assert.same({ "connecting", "login_required", "connecting", "ready" }, rec.states)
    hub:close()
  end)

  it("with background_start, refreshes an expired token by itself: ready, no login", function()
    local p = counting_provider()
    local hub = hub_of({ type = "http", url = srv.url }, p, recorder())
    assert.equal(1, p.logins)
    hub:close()
    A.control(srv, { expire_access_tokens = true })
    hub = hub_of({ type = "http", url = srv.url }, p, recorder(), { background_start = true })
    assert.equal("ready", hub:state("secure"), tostring(select(2, hub:state("secure"))))
    assert.equal(1, p.logins)
    assert.same({ "authorization_code", "refresh_token" }, grants(srv))
    assert(hub:call_tool("secure__whoami", {}))
    hub:close()
  end)

  -- (the connect was background work, the listing after it was not: a server that takes initialize
  -- but wants a wider scope for tools/list logged in, the browser opening at an editor's startup)
  it("with background_start, a listing that needs another scope starts no login: the server waits in login_required",
    function()
      local p = counting_provider()
      local hub = hub_of({ type = "http", url = srv.url }, p, recorder())
      assert.equal(1, p.logins)
      hub:close()
      A.control(srv, { list_scope = "mcp:list" })
      hub = hub_of({ type = "http", url = srv.url }, p, recorder(), { background_start = true })
      finally(function() hub:close() end)
      assert.is_true(hub:wait())
      assert.equal(1, p.logins)
      local state, err = hub:state("secure")
      assert.equal("login_required", state, tostring(err))
      assert.equal("login_required", err.oauth_error)
      -- the user's restart logs in (with the scope)
      hub:restart("secure")
      assert.equal("ready", hub:state("secure"), tostring(select(2, hub:state("secure"))))
      assert.equal(2, p.logins)
      assert.equal(1, #hub:list_tools())
    end)

  it("background_start must be a boolean", function()
    assert.has_error(function() mcp.hub({ mcpServers = {} }, { background_start = "yes" }) end,
      "mcp.hub: option 'background_start' must be a boolean, got string")
  end)
end)
