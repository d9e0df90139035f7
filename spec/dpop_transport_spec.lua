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
-- its header, typ, htm, htu, ath).
local function check_proof(proof, srv, token)
  assert.is_string(proof)
  local d = assert(jose.decode(proof))
  assert.equals("dpop+jwt", d.header.typ)
  assert.is_truthy(jose.verify(proof, assert(jose.public_key_from_jwk(d.header.jwk))))
  assert.equals("POST", d.payload.htm)
  assert.equals(srv.url, d.payload.htu)
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
