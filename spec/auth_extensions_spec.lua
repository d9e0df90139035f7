-- The OAuth extensions (mcp.auth.extensions): client credentials with a secret or a private key
-- JWT, workload identity (JWT bearer), enterprise-managed authorization (token exchange, then JWT
-- bearer) and DPoP on token requests, against spec/fixtures/oauth_ext_server.mjs (it records the
-- requests; the signatures are checked here with the keys the spec holds), and offline for the
-- key and token checks.
local mcp = require("mcp")
local A = require("auth_helper")
local jose = require("mcp.jose")

local auth = mcp.auth
local available = A.available
local start, records, stop = A.start_ext, A.state, A.stop

local function authorize(srv, p)
  return auth.auth(p, { server_url = srv.url })
end

-- A JWT that expires `secs` seconds from now (negative: already expired), signed by key.
local function workload_token(key, secs, aud)
  return jose.jwt({ iss = "https://idp.example", sub = "workload", aud = aud or "https://as.example" }, key,
    { now = jose.now() + secs - 300, lifetime = 300 })
end

local AS = "https://as.example"
local CTX = { issuer = AS }

describe("mcp.auth extensions offline", function()
  it("refuses a bad private key, a public one, and an alg that does not fit, without showing the key", function()
    local pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
    local p, err = auth.client_credentials_provider({ issuer = AS, client_id = "c", private_key = pem })
    assert.is_nil(p)
    assert.equals("config", err.kind)
    assert.is_nil(tostring(err):find("MIGHAgEAMBMG", 1, true))
    local key = jose.generate_key()
    assert.has_error(function() auth.client_credentials_provider({ issuer = AS, client_id = "c", private_key = key:pem() }) end)
    p, err = auth.client_credentials_provider({ issuer = AS, client_id = "c", private_key = key, alg = "RS256" })
    assert.is_nil(p)
    assert.matches("signing_algorithm RS256 does not fit the key %(ES256%)", err.message)
    assert.has_error(function() auth.client_credentials_provider({ issuer = AS, client_id = "c" }) end)
    assert.has_error(function() auth.client_credentials_provider({ issuer = AS, client_id = "c", client_secret = "s", private_key = key }) end)
    p = assert(auth.client_credentials_provider({ issuer = AS, client_id = "c", private_key = { pem = key:pem(true) } }))
    assert.equals("mcp.auth.client_credentials(c)", tostring(p))
  end)

  it("never sends an expired workload token: a function is asked again, a fixed one is refused", function()
    local key = jose.generate_key()
    local expired = workload_token(key, -60)
    local p = assert(auth.workload_identity_provider({ issuer = AS, client_id = "w", token = expired }))
    local grant, err = p:prepare_grant(nil, CTX)
    assert.is_nil(grant)
    assert.is_true(auth.is_invalid_grant(err))
    assert.matches("the workload token has expired", err.message)
    assert.is_nil(tostring(err):find(expired, 1, true))
    local calls, fresh = {}, workload_token(key, 600)
    p = assert(auth.workload_identity_provider({ issuer = AS, client_id = "w", token_fn = function(stale)
      calls[#calls + 1] = stale
      return stale and fresh or expired
    end }))
    grant = assert(p:prepare_grant("s1", CTX))
    assert.same({ false, true }, calls)
    assert.same({ grant_type = "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion = fresh, scope = "s1" }, grant)
    p = assert(auth.workload_identity_provider({ issuer = AS, client_id = "w", token_fn = function() return expired end }))
    grant, err = p:prepare_grant(nil, CTX)
    assert.is_nil(grant)
    assert.matches("expired", err.message)
    p = assert(auth.workload_identity_provider({ issuer = AS, client_id = "w", token = "not a jwt" }))
    grant, err = p:prepare_grant(nil, CTX)
    assert.is_nil(grant)
    assert.matches("not a JWT", err.message)
  end)

  it("reads the workload token file at each grant (a rotated token is used)", function()
    local key = jose.generate_key()
    local path = os.tmpname()
    local function put(t)
      local f = assert(io.open(path, "wb"))
      f:write(t .. "\n")
      f:close()
    end
    local a, b = workload_token(key, 600), workload_token(key, 900)
    put(a)
    local p = assert(auth.workload_identity_provider({ issuer = AS, client_id = "w", token_file = path, scope = "fixed" }))
    assert.equals(a, p:prepare_grant("ignored", CTX).assertion)
    assert.equals("fixed", p:prepare_grant("ignored", CTX).scope)
    put(b)
    assert.equals(b, p:prepare_grant(nil, CTX).assertion)
    os.remove(path)
    local grant, err = p:prepare_grant(nil, CTX)
    assert.is_nil(grant)
    assert.matches("cannot read the workload token file", err.message)
  end)
end)

describe("mcp.auth extensions against the fixture #auth", function()
  if not available then
    it("needs node", function() pending("node not installed") end)
    return
  end

  it("client credentials with client_secret_basic", function()
    local srv = start()
    local p = assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "svc a", client_secret = "s3cr:t", scope = "mcp:read" }))
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    local t = p:tokens()
    assert.equals("tok-1", t.access_token)
    assert.equals(srv.base, t.issuer)
    local r = records(srv).records.token[1]
    assert.equals("client_credentials", r.form.grant_type)
    assert.equals("mcp:read", r.form.scope)
    assert.equals(srv.url, r.form.resource)
    assert.is_nil(r.form.client_secret)
    assert.equals("Basic " .. require("mcp.core").base64_encode("svc%20a:s3cr%3At"), r.authorization)
    -- A refresh is a new grant.
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    assert.equals("tok-2", p:tokens().access_token)
    stop(srv)
  end)

  for _, kind in ipairs({ "EC", "RSA" }) do
    it("client credentials with private_key_jwt (" .. kind .. "): a fresh, verifiable assertion each time", function()
      local srv = start()
      local key = jose.generate_key(kind)
      local p = assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "svc", private_key = key:pem(true), kid = "k-7" }))
      assert.equals("AUTHORIZED", assert(authorize(srv, p)))
      assert.equals("AUTHORIZED", assert(authorize(srv, p)))
      local recs = records(srv).records.token
      assert.equals(2, #recs)
      local jtis = {}
      for _, r in ipairs(recs) do
        assert.equals("urn:ietf:params:oauth:client-assertion-type:jwt-bearer", r.form.client_assertion_type)
        assert.equals("svc", r.form.client_id)
        assert.is_nil(r.authorization)
        local d = assert(jose.verify(r.form.client_assertion, key))
        assert.equals(kind == "EC" and "ES256" or "RS256", d.header.alg)
        assert.equals("k-7", d.header.kid)
        assert.equals("svc", d.payload.iss)
        assert.equals("svc", d.payload.sub)
        assert.equals(srv.base, d.payload.aud)
        assert.equals(d.payload.iat + 60, d.payload.exp)
        assert.is_nil(jtis[d.payload.jti])
        jtis[d.payload.jti] = true
        assert.is_nil(jose.verify(r.form.client_assertion, jose.generate_key(kind)))
      end
      stop(srv)
    end)
  end

  it("credentials are pinned to their issuer: none is refused, another authorization server gets nothing", function()
    local srv = start()
    local key = jose.generate_key()
    -- No issuer: whichever authorization server the MCP server names would receive them.
    assert.has_error(function() auth.client_credentials_provider({ client_id = "c", client_secret = "s" }) end,
      "mcp.auth: client_credentials: credentials need an issuer (or allowed_issuers): they are sent only to that "
      .. "authorization server")
    assert.has_error(function() auth.workload_identity_provider({ client_id = "w", token = workload_token(key, 600) }) end)
    assert.has_error(function()
      auth.enterprise_provider({ client_id = "a", client_secret = "b", idp = { token_endpoint = srv.base .. "/t" },
        id_token = "t" })
    end)
    assert.has_error(function() auth.client_credentials_provider({ client_id = "c", client_secret = "s", allowed_issuers = {} }) end)
    assert.has_error(function()
      auth.provider({ redirect_url = "http://127.0.0.1:1/cb", client_information = { client_id = "c", client_secret = "s" } })
    end)
    -- Pinned elsewhere: this MCP server's authorization server is not the one they are for.
    local tok = workload_token(key, 600, srv.base)
    for _, p in ipairs({
      assert(auth.client_credentials_provider({ client_id = "c", client_secret = "s", issuer = "https://as.example" })),
      assert(auth.client_credentials_provider({ client_id = "c", private_key = key, allowed_issuers = { "https://as.example" } })),
      assert(auth.workload_identity_provider({ client_id = "w", token = tok, issuer = "https://as.example" })),
      assert(auth.enterprise_provider({ client_id = "a", client_secret = "b", issuer = "https://as.example",
        idp = { token_endpoint = srv.base .. "/idp/token" }, id_token = "t" })),
    }) do
      local res, err = authorize(srv, p)
      assert.is_nil(res)
      assert.equals("invalid_client", err.oauth_error)
    end
    local st = records(srv).records
    assert.equals(0, #st.token)
    assert.equals(0, #(st.idp or {}))
    -- Listed: used.
    local p = assert(auth.workload_identity_provider({ client_id = "w", token = tok,
      allowed_issuers = { "https://as.example", srv.base } }))
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    assert.equals(tok, records(srv).records.token[1].form.assertion)
    stop(srv)
  end)

  it("workload identity: the JWT bearer grant, and an expired token never leaves the client", function()
    local srv = start()
    local key = jose.generate_key()
    local good = workload_token(key, 600, srv.base)
    local p = assert(auth.workload_identity_provider({ issuer = srv.base, client_id = "wl", token = good }))
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    local r = records(srv).records.token[1]
    assert.equals("urn:ietf:params:oauth:grant-type:jwt-bearer", r.form.grant_type)
    assert.equals(good, r.form.assertion)
    assert.equals("wl", r.form.client_id)
    local bad = assert(auth.workload_identity_provider({ issuer = srv.base, client_id = "wl", token = workload_token(key, -5) }))
    local res, err = authorize(srv, bad)
    assert.is_nil(res)
    assert.is_true(auth.is_invalid_grant(err))
    assert.equals(1, #records(srv).records.token) -- nothing sent, and no retry
    stop(srv)
  end)

  it("enterprise-managed authorization: token exchange at the IdP, then the JWT bearer grant", function()
    local srv = start()
    local seen
    local p = assert(auth.enterprise_provider({
      issuer = srv.base, client_id = "app", client_secret = "app-secret",
      idp = { token_endpoint = srv.base .. "/idp/token", client_id = "idp-client" },
      id_token = function(ctx) seen = ctx return "the-id-token" end,
      scope = "mcp:basic",
    }))
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    assert.equals(srv.base, seen.issuer)
    local st = records(srv).records
    local x = st.idp[1].form
    assert.equals("urn:ietf:params:oauth:grant-type:token-exchange", x.grant_type)
    assert.equals("urn:ietf:params:oauth:token-type:id-jag", x.requested_token_type)
    assert.equals("the-id-token", x.subject_token)
    assert.equals("urn:ietf:params:oauth:token-type:id_token", x.subject_token_type)
    assert.equals(srv.base, x.audience)
    assert.equals(srv.url, x.resource)
    assert.equals("idp-client", x.client_id)
    local g = st.token[1]
    assert.equals("urn:ietf:params:oauth:grant-type:jwt-bearer", g.form.grant_type)
    assert.equals("jag-1", g.form.assertion)
    assert.equals("Basic " .. require("mcp.core").base64_encode("app:app-secret"), g.authorization)
    stop(srv)
  end)

  it("enterprise-managed authorization refuses an IdP answer that is not an ID-JAG", function()
    local srv = start("--idp_issued=other")
    local p = assert(auth.enterprise_provider({ issuer = srv.base, client_id = "app", client_secret = "x",
      idp = { token_endpoint = srv.base .. "/idp/token" }, id_token = "t" }))
    local res, err = authorize(srv, p)
    assert.is_nil(res)
    assert.matches("not an ID%-JAG", err.message)
    assert.equals(0, #records(srv).records.token)
    stop(srv)
    assert.has_error(function()
      auth.enterprise_provider({ issuer = srv.base, client_id = "a", client_secret = "b", idp = { token_endpoint = "http://idp.example/t" },
        id_token = "t" })
    end)
  end)

  it("DPoP on token requests: a proof per request, the nonce retry, the key saved with the tokens", function()
    local srv = start("--dpop=nonce")
    local p = assert(auth.with_dpop(assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "c", client_secret = "s" }))))
    assert.equals("AUTHORIZED", assert(authorize(srv, p)))
    local recs = records(srv).records.token
    assert.equals(2, #recs) -- refused for want of the nonce, then accepted with it
    local token_url = srv.base .. "/token"
    local first, second = jose.decode(recs[1].dpop), jose.decode(recs[2].dpop)
    assert.is_nil(first.payload.nonce)
    assert.equals("as-nonce-1", second.payload.nonce)
    for _, d in ipairs({ first, second }) do
      assert.equals("dpop+jwt", d.header.typ)
      assert.equals("POST", d.payload.htm)
      assert.equals(token_url, d.payload.htu)
      assert.is_nil(d.payload.ath)
      assert.is_truthy(jose.verify(recs[1].dpop, assert(jose.public_key_from_jwk(d.header.jwk))))
    end
    assert.are_not.equal(first.payload.jti, second.payload.jti)
    local t = p:tokens()
    assert.equals("DPoP", t.token_type)
    assert.matches("BEGIN PRIVATE KEY", t.dpop_key_pem)
    -- MCP requests: the DPoP scheme and a proof bound to the token and to that request.
    local h = p:request_headers("POST", srv.url)
    assert.equals("DPoP " .. t.access_token, h.Authorization)
    local c = jose.decode(h.DPoP).payload
    assert.equals(require("mcp.auth.dpop").ath(t.access_token), c.ath)
    assert.equals(srv.url, c.htu)
    -- The resource server's nonce: one retry with a new proof carrying it, none for the same nonce.
    local www = { ["www-authenticate"] = 'DPoP error="use_dpop_nonce"', ["dpop-nonce"] = "rs-1" }
    assert.is_true(p:resource_response(401, www, ""))
    local h2 = p:request_headers("POST", srv.url)
    local c2 = jose.decode(h2.DPoP).payload
    assert.equals("rs-1", c2.nonce)
    assert.are_not.equal(c.jti, c2.jti)
    assert.is_false(p:resource_response(401, www, ""))
    -- The same key comes back from the store.
    local again = assert(auth.with_dpop(p._inner))
    assert.equals(p.dpop:thumbprint(), again.dpop:thumbprint())
    stop(srv)
  end)

  it("DPoP: an authorization server that keeps asking for another nonce gets two requests, no more", function()
    local srv = start("--dpop=nonce-loop")
    local p = assert(auth.with_dpop(assert(auth.client_credentials_provider({ issuer = srv.base, client_id = "c", client_secret = "s" }))))
    local res, err = authorize(srv, p)
    assert.is_nil(res)
    assert.equals("use_dpop_nonce", err.oauth_error)
    assert.equals(2, #records(srv).records.token)
    stop(srv)
  end)
end)
