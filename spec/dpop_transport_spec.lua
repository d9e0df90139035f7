-- DPoP (RFC 9449) on the MCP requests of the HTTP transport: a with_dpop provider as the
-- transport's auth_provider gives every MCP POST a fresh proof (the transport's request_headers
-- seam), and the MCP server's use_dpop_nonce challenge is answered once per call (reauthorize),
-- against spec/fixtures/oauth_server.mjs (it records each request's Authorization and DPoP
-- headers; the proofs are checked here with the key in their header).
local mcp = require("mcp")
local A = require("auth_helper")
local jose = require("mcp.jose")
local dpop = require("mcp.auth.dpop")

local auth = mcp.auth
local control, state = A.control, A.state

local function dpop_provider(srv)
  return assert(auth.with_dpop(A.provider(srv, { client_name = "dpop-spec" })))
end

-- The claims of a proof, after checking it as a resource server does (signature by the key in
-- its header, typ, htm, htu, ath). method: default POST; url: default the MCP endpoint.
local function check_proof(proof, srv, token, method, url)
  assert.is_string(proof)
  local d = assert(jose.decode(proof))
  assert.equals("dpop+jwt", d.header.typ)
  assert.is_truthy(jose.verify(proof, assert(jose.public_key_from_jwk(d.header.jwk))))
  assert.equals(method or "POST", d.payload.htm)
  assert.equals(url or srv.url, d.payload.htu)
  assert.equals(dpop.ath(token), d.payload.ath)
  assert.is_number(d.payload.iat)
  assert.is_string(d.payload.jti)
  return d.payload
end

local function client(srv, p)
  return assert(A.http_client(srv, { client_name = "dpop-spec", auth_provider = p }))
end

describe("DPoP on MCP requests #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("gives every MCP POST (requests and notifications) its own proof bound to the token", function()
    local p = dpop_provider(srv)
    local c = client(srv, p)
    assert(c:list_tools())
    assert(c:call_tool("whoami", {}))
    assert(c:ping())
    c:close()
    local token = p:tokens().access_token
    assert.equals("DPoP", p:tokens().token_type)
    local st = state(srv)
    -- the first request has no token yet (401, then the flow); every one after it is DPoP
    assert.is_false(st.records.mcp[1].authorized)
    local seen, methods = {}, {}
    for i = 2, #st.records.mcp do
      local r = st.records.mcp[i]
      methods[#methods + 1] = r.method
      assert.is_true(r.authorized)
      assert.equals("DPoP " .. token, r.authorization)
      local claims = check_proof(r.dpop, srv, token)
      assert.is_nil(seen[claims.jti], "a jti used twice")
      seen[claims.jti] = true
    end
    assert.same({ "server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call", "ping" },
      methods)
  end)

  it("answers the MCP server's use_dpop_nonce with one retry carrying its DPoP-Nonce", function()
    local p = dpop_provider(srv)
    control(srv, { rs_dpop_nonce = "rs-nonce-1" })
    local c = client(srv, p)
    assert(c:list_tools())
    c:close()
    local token = p:tokens().access_token
    local recs = state(srv).records.mcp
    -- the probe: 401 (no token, the flow runs), 401 use_dpop_nonce, then accepted with the nonce
    local methods = {}
    for _, r in ipairs(recs) do methods[#methods + 1] = r.method end
    assert.same({ "server/discover", "server/discover", "server/discover", "initialize", "notifications/initialized",
      "tools/list" }, methods)
    local first = check_proof(recs[2].dpop, srv, token)
    assert.is_nil(first.nonce)
    local second = check_proof(recs[3].dpop, srv, token)
    assert.equals("rs-nonce-1", second.nonce)
    assert.are_not.equal(first.jti, second.jti)
    -- the nonce is remembered for the origin: later requests carry it at once
    for i = 4, #recs do assert.equals("rs-nonce-1", check_proof(recs[i].dpop, srv, token).nonce) end
  end)

  it("does not follow a server that asks for a new nonce every time: one retry per call, then the 401", function()
    local p = dpop_provider(srv)
    assert(auth.auth(p, { server_url = srv.url }))
    control(srv, { rs_dpop_nonce = "loop" })
    local c, err = A.http_client(srv, { client_name = "dpop-spec", auth_provider = p })
    if c then
      local _
      _, err = c:list_tools()
      c:close()
    end
    assert.is_table(err)
    assert.equals(401, err.status_code)
    local recs = state(srv).records.mcp
    -- the probe and its one retry (no flow: a nonce challenge is not a bad token), and the
    -- client gives up without falling back to initialize after an authorization failure
    assert.equals(2, #recs)
    assert.is_nil(jose.decode(recs[1].dpop).payload.nonce)
    assert.equals("rs-loop-1", check_proof(recs[2].dpop, srv, p:tokens().access_token).nonce)
  end)
end)

-- The GET that opens the server's event stream (and every reopening of it) and the DELETE that
-- ends the session are requests to the resource server too: each carries `Authorization: DPoP`
-- and a proof of its own (htm, htu, ath, a new jti), which the fixture checks as a resource server
-- does (records.mcp_get / mcp_delete: accepted, or dpop_error / nonce_refused).
describe("DPoP on the GET stream and the session DELETE #auth", function()
  local srv = A.serve()
  if not srv then return end
  local helper = require("helper")

  -- The fixture's state once pred(state) holds (bounded; the state as it is then otherwise).
  local function state_when(pred)
    local st
    helper.wait_until(function()
      st = state(srv)
      return pred(st)
    end, helper.ms(15000))
    return st
  end

  local function connected(flags)
    local t = { sessions = true }
    for k, v in pairs(flags or {}) do t[k] = v end
    control(srv, t)
    local p = dpop_provider(srv)
    local c = client(srv, p)
    assert(c:list_tools())
    assert.equals("DPoP", p:tokens().token_type)
    return c, p
  end

  it("opens the GET stream with a valid proof for GET and the endpoint", function()
    local c, p = connected()
    local st = state_when(function(s) return #s.records.mcp_get >= 1 end)
    c:close()
    local token = p:tokens().access_token
    local g = st.records.mcp_get[1]
    assert.is_table(g, "no GET stream was opened")
    assert.is_nil(g.dpop_error)
    assert.is_true(g.accepted)
    assert.equals("session-1", g.session)
    assert.equals("DPoP " .. token, g.authorization)
    check_proof(g.dpop, srv, token, "GET")
  end)

  it("reopens the stream with a fresh proof (a new jti) and the Last-Event-ID", function()
    local c, p = connected({ get_stream_close = true })
    local st = state_when(function(s) return #s.records.mcp_get >= 2 end)
    c:close()
    local token = p:tokens().access_token
    local gets = st.records.mcp_get
    assert.is_true(#gets >= 2, "the stream was not reopened")
    local jtis = {}
    for i = 1, 2 do
      assert.is_nil(gets[i].dpop_error)
      assert.is_true(gets[i].accepted)
      jtis[i] = check_proof(gets[i].dpop, srv, token, "GET").jti
    end
    assert.is_nil(gets[1].last_event_id)
    assert.equals("get-1", gets[2].last_event_id)
    assert.are_not.equal(jtis[1], jtis[2])
  end)

  -- DPoP signs each request with the provider's token (request_headers): after a login made
  -- elsewhere (here the flow run on the provider itself, as another client sharing its store
  -- would), a call goes through with no 401, so no flow runs in the transport; the GET stream
  -- held for want of that login must go again all the same.
  it("sends the GET stream held for a login again once a call signed with a token got elsewhere is answered",
    function()
      local reports = {}
      control(srv, { sessions = true, get_stream_close = true, get_retry_ms = 100 })
      local p = dpop_provider(srv)
      local c = assert(A.http_client(srv, { client_name = "dpop-spec", auth_provider = p, max_reconnects = 1000,
        transport_on_error = function(e) reports[#reports + 1] = e end }))
      assert(c:list_tools())
      state_when(function(s) return #s.records.mcp_get >= 2 end)
      control(srv, { expire_access_tokens = true, expire_refresh_tokens = true })
      assert.is_true(helper.wait_until(function() return helper.login_required_reported(reports) end,
        helper.ms(15000)), "no login_required was reported")
      local held = #state(srv).records.mcp_get
      assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
      local token = p:tokens().access_token
      assert(c:call_tool("whoami", {}))
      local st = state_when(function(s)
        local g = s.records.mcp_get[#s.records.mcp_get]
        return #s.records.mcp_get > held and g.accepted == true
      end)
      c:close()
      local g = st.records.mcp_get[#st.records.mcp_get]
      assert.is_true(#st.records.mcp_get > held, "the GET stream stayed held")
      assert.is_true(g.accepted)
      assert.equals("DPoP " .. token, g.authorization)
    end)

  it("answers a use_dpop_nonce on the GET with one prompt retry carrying the nonce", function()
    local c, p = connected({ method_nonces = { GET = "get-nonce-1" } })
    local st = state_when(function(s)
      local g = s.records.mcp_get
      return #g >= 2 or (g[1] ~= nil and g[1].accepted)
    end)
    c:close()
    local token = p:tokens().access_token
    local gets = st.records.mcp_get
    assert.is_true(gets[1].nonce_refused)
    assert.is_nil(check_proof(gets[1].dpop, srv, token, "GET").nonce)
    assert.is_table(gets[2], "the GET was not sent again")
    assert.is_true(gets[2].accepted)
    local second = check_proof(gets[2].dpop, srv, token, "GET")
    assert.equals("get-nonce-1", second.nonce)
  end)

  it("sends the session DELETE on close with a valid proof for DELETE", function()
    local c, p = connected()
    c:close()
    local token = p:tokens().access_token
    local st = state(srv)
    local d = st.records.mcp_delete[1]
    assert.is_table(d, "no DELETE was sent")
    assert.equals(1, #st.records.mcp_delete)
    assert.is_nil(d.dpop_error)
    assert.is_true(d.accepted)
    assert.equals("session-1", d.session)
    assert.equals("DPoP " .. token, d.authorization)
    check_proof(d.dpop, srv, token, "DELETE")
  end)

  it("answers a use_dpop_nonce on the DELETE with one retry carrying the nonce", function()
    local c, p = connected({ method_nonces = { DELETE = "delete-nonce-1" } })
    c:close()
    local token = p:tokens().access_token
    local dels = state(srv).records.mcp_delete
    assert.equals(2, #dels)
    assert.is_true(dels[1].nonce_refused)
    assert.is_true(dels[2].accepted)
    local first = check_proof(dels[1].dpop, srv, token, "DELETE")
    local second = check_proof(dels[2].dpop, srv, token, "DELETE")
    assert.equals("delete-nonce-1", second.nonce)
    assert.are_not.equal(first.jti, second.jti)
  end)

  it("reports request headers that fail for the GET, sends it without them, and goes on", function()
    control(srv, { sessions = true })
    local p = dpop_provider(srv)
    local orig = p.request_headers
    p.request_headers = function(self, method, url)
      if method == "GET" then error("no headers for GET", 0) end
      return orig(self, method, url)
    end
    local errs = {}
    local c = assert(A.http_client(srv, { client_name = "dpop-spec", auth_provider = p,
      transport_on_error = function(e) errs[#errs + 1] = e end }))
    assert(c:list_tools())
    local st = state_when(function(s) return #s.records.mcp_get >= 1 end)
    assert.is_true(helper.wait_until(function() return #errs > 0 end, helper.ms(5000)))
    assert(c:ping()) -- the POSTs keep their proofs
    c:close()
    assert.matches("the request headers for GET failed: no headers for GET", errs[1].message, 1, true)
    local g = st.records.mcp_get[1]
    assert.is_nil(g.accepted)
    assert.is_nil(g.dpop) -- sent with the transport's own headers only
    -- (its refusal is authorized again, which may have made a new token since)
    assert.matches("^Bearer access%-", g.authorization)
  end)

  it("survives a request hook that closes the transport: that GET is not sent, the DELETE still is, once", function()
    control(srv, { sessions = true })
    local p = A.provider(srv)
    assert(auth.auth(p, { server_url = srv.url }))
    local t = mcp.http_transport({ url = srv.url, bearer_token = p:tokens().access_token })
    local asked = {}
    t:set_request_hooks(function(method, url)
      asked[#asked + 1] = method .. " " .. url
      if method == "GET" then t:close(0) end
      return { ["X-Hook"] = "1" }
    end)
    local c = assert(mcp.create_client({ client_name = "dpop-spec", request_timeout_ms = helper.ms(20000) }, t))
    local _, err = c:list_tools() -- the transport closed under the client: whatever this gives
    c:close()
    assert.is_false(t:is_open())
    assert.is_false(t:busy())
    local st = state(srv)
    assert.equals(0, #st.records.mcp_get)
    assert.equals(1, #st.records.mcp_delete)
    assert.is_true(st.records.mcp_delete[1].accepted)
    -- (the close inside the hook does not wait: with busted's reloaded modules it once did, in an
    -- earlier instance's close wrapper, and that DELETE then went without asking)
    local posts, others = 0, {}
    for _, a in ipairs(asked) do
      if a == "POST " .. srv.url then posts = posts + 1 else others[#others + 1] = a end
    end
    assert.is_true(posts >= 2) -- the POSTs ask too (initialize, notifications/initialized)
    assert.same({ "GET " .. srv.url, "DELETE " .. srv.url }, others)
    assert.is_not_nil(err)
  end)

  it("gives legacy SSE POSTs proofs for the endpoint the server named, not the /sse URL", function()
    local sse_url = srv.base .. "/sse"
    local p = assert(auth.with_dpop(A.provider(srv, { client_name = "dpop-spec", server_url = sse_url })))
    assert(auth.auth(p, { server_url = sse_url }))
    local c = assert(mcp.create_sse_client(sse_url, { auth_provider = p, client_name = "dpop-spec" }))
    assert(c:call_tool("whoami", {}))
    c:close()
    local token = p:tokens().access_token
    local posts = 0
    for _, r in ipairs(state(srv).records.mcp) do
      assert.is_nil(r.dpop_error)
      assert.is_true(r.authorized)
      check_proof(r.dpop, srv, token, "POST", srv.base .. "/messages") -- (htu: no query)
      posts = posts + 1
    end
    assert.is_true(posts >= 3, "initialize, notifications/initialized and tools/call were all recorded")
  end)

  it("gives the legacy SSE stream's GET a valid proof for GET and the /sse URL", function()
    local sse_url = srv.base .. "/sse"
    local p = assert(auth.with_dpop(A.provider(srv, { client_name = "dpop-spec", server_url = sse_url })))
    assert(auth.auth(p, { server_url = sse_url }))
    local t = mcp.sse_transport({ url = sse_url, auth_provider = p })
    local ok, err = t:start()
    t:close()
    assert.is_true(ok, tostring(err))
    local token = p:tokens().access_token
    local g = state(srv).records.sse[1]
    assert.is_table(g)
    assert.is_nil(g.dpop_error)
    assert.is_true(g.accepted)
    assert.equals("DPoP " .. token, g.authorization)
    check_proof(g.dpop, srv, token, "GET", sse_url)
  end)
end)
