-- OAuth (mcp.auth) and plain HTTP requests on the loop (mcp.http_request), against the
-- project's OAuth fixture (spec/fixtures/oauth_server.mjs: an MCP server and its authorization
-- server on one loopback port) and offline for the pure parts.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")
local A = require("auth_helper")

local auth = mcp.auth
local control, state, provider = A.control, A.state, A.provider

describe("mcp.auth helpers #auth", function()
  it("parses Bearer challenges (quoted, escaped, unquoted, other schemes)", function()
    local c = auth.parse_www_authenticate(
      'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", error_description="say \\"hi\\""')
    assert.same({
      scheme = "Bearer", error = "insufficient_scope", scope = "a b",
      resource_metadata = "https://x.example/.well-known/oauth-protected-resource/mcp", error_description = 'say "hi"',
    }, c)
    assert.same({ scheme = "Bearer", realm = "x", scope = "s" }, auth.parse_www_authenticate("bearer realm=x, scope=s"))
    assert.is_nil(auth.parse_www_authenticate('Basic realm="x"'))
    assert.is_nil(auth.parse_www_authenticate(nil))
    -- a resource_metadata that is not an absolute URL is dropped
    assert.is_nil(auth.parse_www_authenticate('Bearer resource_metadata="/relative"').resource_metadata)
  end)

  it("builds the discovery URLs in the specification's order", function()
    assert.same({
      "https://as.example/.well-known/oauth-authorization-server/tenant1",
      "https://as.example/.well-known/openid-configuration/tenant1",
      "https://as.example/tenant1/.well-known/openid-configuration",
    }, auth.authorization_server_discovery_urls("https://as.example/tenant1/"))
    assert.same({
      "https://as.example/.well-known/oauth-authorization-server",
      "https://as.example/.well-known/openid-configuration",
    }, auth.authorization_server_discovery_urls("https://as.example"))
    assert.same({
      "https://mcp.example/.well-known/oauth-protected-resource/v1/mcp",
      "https://mcp.example/.well-known/oauth-protected-resource",
    }, auth.protected_resource_discovery_urls("https://mcp.example/v1/mcp"))
  end)

  it("selects scopes: challenge, then scopes_supported, then client metadata; offline_access only when offered", function()
    assert.equal("a", auth.select_scope("a", { scopes_supported = { "x" } }, { scope = "m" }))
    assert.equal("x y", auth.select_scope(nil, { scopes_supported = { "x", "y" } }, { scope = "m" }))
    assert.equal("m", auth.select_scope(nil, {}, { scope = "m" }))
    assert.is_nil(auth.select_scope(nil, nil, {}))
    assert.equal("x offline_access", auth.select_scope(nil, { scopes_supported = { "x" } }, nil,
      { scopes_supported = { "x", "offline_access" } }))
    assert.equal("x", auth.select_scope(nil, { scopes_supported = { "x" } }, nil, { scopes_supported = { "x" } }))
    assert.equal("a b c", auth.union_scopes("a b", "b c"))
    assert.is_nil(auth.union_scopes(nil, ""))
    assert.equal("b c", auth.union_scopes(nil, "b c")) -- (a nil first one: the second one)
  end)

  it("makes PKCE S256 pairs from libcrypto", function()
    local v, c = auth.pkce()
    assert.equal(43, #v)
    assert.truthy(v:match("^[%w%-_]+$"))
    assert.equal(mcp.core.base64_encode(mcp.core.sha256(v), "url"), c)
    assert.not_equal(v, (auth.pkce()))
    assert.equal(16, #mcp.core.random_bytes(16))
  end)

  it("checks resources (RFC 8707) and infers application_type", function()
    assert.is_true(auth.resource_allowed("https://a.example/mcp", "https://a.example/mcp"))
    assert.is_true(auth.resource_allowed("https://a.example/mcp", "https://a.example"))
    assert.is_false(auth.resource_allowed("https://a.example/mcp", "https://evil.example/mcp"))
    assert.is_false(auth.resource_allowed("https://a.example/mcp", "https://a.example/other"))
    assert.is_false(auth.resource_allowed("https://a.example/mcpx", "https://a.example/mcp"))
    assert.equal("native", auth.application_type({ "http://127.0.0.1:8080/cb", "http://localhost/cb" }))
    assert.equal("web", auth.application_type({ "https://app.example/cb" }))
  end)

  it("guards metadata URLs: https only (http on loopback), no internal address named by a remote server", function()
    local url = require("mcp.auth.url")
    assert.is_true(url.check_fetchable("https://as.example/x", "https://mcp.example/mcp"))
    assert.is_true((url.check_fetchable("http://127.0.0.1:5/x", "http://localhost:4/mcp")))
    assert.is_false((url.check_fetchable("http://as.example/x", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("https://169.254.169.254/latest", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("https://10.1.2.3/x", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("https://[fe80::1]/x", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("http://127.0.0.1/x", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("https://user:pw@as.example/x", "https://mcp.example/mcp")))
    assert.is_false((url.check_fetchable("file:///etc/passwd", "https://mcp.example/mcp")))
  end)

  it("types OAuth errors (MCPClientOAuthError) and keeps raw bodies short", function()
    local e = auth.parse_error_response(400, '{"error":"invalid_grant","error_description":"expired"}')
    assert.is_true(auth.is_invalid_grant(e))
    assert.is_false(auth.is_invalid_client(e))
    assert.is_true(mcp.is_error(e))
    assert.equal(400, e.status_code)
    -- mcp.Error's shape: `code` is a JSON-RPC code or nil, the OAuth code is `oauth_error`
    assert.is_nil(e.code)
    assert.equal("invalid_grant", e.oauth_error)
    assert.is_true(e:is("invalid_grant"))
    assert.equal("MCP OAuth error (invalid_grant): expired [HTTP 400]", tostring(e))
    local s = auth.parse_error_response(502, ("<html>" .. ("x"):rep(1000)))
    assert.equal("server_error", s.oauth_error)
    assert.is_true(#s.message < 300)
    assert.is_true(auth.is_unauthorized_client(auth.new_error("unauthorized_client", "no")))
  end)
end)

describe("passwords in URLs #auth", function()
  it("never appear in an error message or an error's url (user:pass@host is redacted)", function()
    local url = "http://alice:s3cret-pw@127.0.0.1:1/mcp?x=1"
    local res, err = mcp.http_request({ url = url, timeout_ms = 2000 })
    assert.is_nil(res)
    assert.is_nil(tostring(err):find("s3cret", 1, true), tostring(err))
    assert.is_nil(err.url:find("s3cret", 1, true))
    assert.is_truthy(tostring(err):find("http://alice:***@127.0.0.1:1/mcp", 1, true), tostring(err))
    local p = mcp.auth.provider({ redirect_url = "http://127.0.0.1:1/cb" })
    res, err = mcp.auth.auth(p, { server_url = url, timeout_ms = 2000 })
    assert.is_nil(res)
    assert.is_nil(tostring(err):find("s3cret", 1, true), tostring(err))
    assert.equal("http://alice:***@h.example/a", require("mcp.fetch").redact_url("http://alice:p@ss:w@h.example/a?t=1"))
    assert.equal("see https://u:***@a.example/ and ftp://v:***@b", mcp.auth.new_error(nil,
      "see https://u:x@a.example/ and ftp://v:y@b").message)
    assert.equal("http://h.example/a@b", require("mcp.fetch").redact_url("http://h.example/a@b"))
  end)
end)

describe("mcp.auth.file_store #auth", function()
  local dir = os.tmpname()
  os.remove(dir)
  local base = dir .. "/data/lua-mcp"
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("writes one 0600 file per server in a 0700 directory, atomically, and reads it back", function()
    local store = auth.file_store({ dir = base })
    store:save("https://mcp.example/mcp", { tokens = { access_token = "secret-token" } })
    local path = store:path("https://mcp.example/mcp")
    assert.equal(tonumber("600", 8), mcp.core.file_mode(path))
    assert.equal(tonumber("700", 8), mcp.core.file_mode(base))
    assert.same({ tokens = { access_token = "secret-token" } }, store:load("https://mcp.example/mcp"))
    assert.is_nil(store:load("https://other.example/mcp"))
    -- no URL in the file name, no temporary file left behind
    assert.is_nil(path:find("mcp.example", 1, true))
    local p = io.popen("ls -A '" .. base .. "'")
    local names = p:read("*a")
    p:close()
    assert.is_nil(names:find("tmp", 1, true))
    store:delete("https://mcp.example/mcp")
    assert.is_nil(store:load("https://mcp.example/mcp"))
    assert.is_nil(tostring(store):find("secret", 1, true))
  end)

  it("defaults to $XDG_DATA_HOME/lua-mcp", function()
    local store = require("mcp.auth.store")
    local d = store.default_dir()
    local xdg = os.getenv("XDG_DATA_HOME")
    if xdg and xdg:sub(1, 1) == "/" then assert.equal(xdg .. "/lua-mcp", d) else assert.truthy(d:match("/%.local/share/lua%-mcp$")) end
  end)
end)

describe("mcp.http_request #auth", function()
  local srv = A.serve({ reset = false })
  if not srv then return end

  it("returns status, lower-cased headers and body, and never follows a redirect", function()
    local res = assert(mcp.http_request({
      url = srv.base .. "/authorize?client_id=nobody&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb",
    }))
    assert.equal(400, res.status)
    assert.equal("application/json", res.headers["content-type"])
    assert.equal("invalid_client", mcp.json.decode(res.body).error)
    res = assert(mcp.http_request({ method = "POST", url = srv.url, body = "{}", headers = { ["Content-Type"] = "application/json" } }))
    assert.equal(401, res.status)
    assert.truthy(res.headers["www-authenticate"]:find("resource_metadata=", 1, true))
  end)

  it("works inside tasks, concurrently", function()
    local got = {}
    for i = 1, 3 do
      mcp.spawn(function()
        local res = assert(mcp.http_request({ url = srv.base .. "/control/state" }))
        got[i] = res.status
      end)
    end
    mcp.run()
    assert.same({ 200, 200, 200 }, got)
  end)

  it("reports a refused connection as a transport error", function()
    local res, err = mcp.http_request({ url = "http://127.0.0.1:9/x", timeout_ms = 2000 })
    assert.is_nil(res)
    assert.equal("transport", err.kind)
  end)

  it("raises on misuse", function()
    assert.has_error(function() mcp.http_request({ url = "ftp://x" }) end)
    assert.has_error(function() mcp.http_request({ url = "http://x", headers = { ["Bad Name"] = "v" } }) end)
    assert.has_error(function() mcp.http_request({ url = "http://x", headers = { X = "a\r\nb" } }) end)
  end)
end)

describe("the OAuth flow against the fixture #auth", function()
  local srv = A.serve()
  if not srv then return end

  it("authorizes: metadata, dynamic registration, PKCE, iss, resource, tokens", function()
    local p = provider(srv)
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local t = p:tokens()
    assert.truthy(t.access_token:match("^access%-"))
    assert.truthy(t.refresh_token)
    assert.equal(srv.base, t.issuer)
    local st = state(srv)
    assert.equal(1, #st.records.register)
    assert.equal("native", st.records.register[1].application_type)
    assert.equal(1, #st.records.authorize)
    assert.equal(srv.url, st.records.authorize[1].resource)
    assert.equal("S256", st.records.authorize[1].code_challenge_method)
    assert.equal(srv.url, st.records.token[1].resource)
    -- a second call refreshes instead of authorizing again
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    st = state(srv)
    assert.equal(1, #st.records.authorize)
    assert.equal("refresh_token", st.records.token[2].grant_type)
    assert.not_equal(t.access_token, p:tokens().access_token)
  end)

  it("refuses an authorization server that does not offer PKCE S256", function()
    control(srv, { pkce_methods = mcp.null })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_metadata", err.oauth_error)
    assert.truthy(err.message:find("S256", 1, true))
    assert.equal(0, #state(srv).records.authorize)
  end)

  it("refuses metadata that names another issuer", function()
    control(srv, { issuer = "https://attacker.example" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_metadata", err.oauth_error)
    local st = state(srv)
    assert.equal(0, #st.records.register + #st.records.authorize + #st.records.token)
  end)

  it("refuses a redirect whose state is not ours, before redeeming the code", function()
    control(srv, { state = "wrong" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_state", err.oauth_error)
    assert.equal(0, #state(srv).records.token)
  end)

  it("refuses a redirect from the wrong issuer (RFC 9207), and one missing the promised iss", function()
    control(srv, { iss_param = "wrong" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_issuer", err.oauth_error)
    control(srv, { iss_param = "omit" })
    r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_issuer", err.oauth_error)
    assert.equal(0, #state(srv).records.token)
    -- not promised and absent: fine
    control(srv, { iss_supported = false })
    assert.equal("AUTHORIZED", auth.auth(provider(srv), { server_url = srv.url }))
  end)

  it("starts over after an expired refresh token (invalid_grant)", function()
    local p = provider(srv)
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local old = p:tokens().access_token
    control(srv, { expire_refresh_tokens = true })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local st = state(srv)
    assert.equal(2, #st.records.authorize)
    assert.equal(1, #st.records.register)
    assert.not_equal(old, p:tokens().access_token)
  end)

  it("registers again when the client was revoked (invalid_client)", function()
    local p = provider(srv)
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local id = p:client_information().client_id
    control(srv, { revoke_clients = true })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.not_equal(id, p:client_information().client_id)
    assert.equal(2, #state(srv).records.register)
  end)

  it("refuses protected resource metadata on another origin", function()
    local r, err = auth.auth(provider(srv), {
      server_url = srv.url, resource_metadata_url = "http://127.0.0.2:" .. srv.port .. "/.well-known/oauth-protected-resource/mcp",
    })
    assert.is_nil(r)
    assert.equal("insecure_url", err.oauth_error)
    assert.equal(0, #state(srv).records.requests - 1) -- only this spec's own control call
  end)

  it("uses pre-registered credentials with client_secret_basic, never registering", function()
    control(srv, { add_client = { client_id = "pre", client_secret = "s3cret" }, registration = false })
    local p = provider(srv, { client_information = { client_id = "pre", client_secret = "s3cret", issuer = srv.base } })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local st = state(srv)
    assert.equal(0, #st.records.register)
    assert.equal("client_secret_basic", st.records.token[1].method)
  end)

  it("hands the authorization URL to the host and finishes with the redirect it gets back", function()
    local seen
    local p = auth.provider({ redirect_url = "http://127.0.0.1:9/cb", on_authorize = function(u) seen = u end })
    assert.equal("REDIRECT", auth.auth(p, { server_url = srv.url }))
    assert.truthy(seen:find("code_challenge_method=S256", 1, true))
    local landed = assert(auth.follow_authorization(seen))
    assert.equal("AUTHORIZED", auth.finish(p, srv.url, landed))
    assert.truthy(p:tokens().access_token)
  end)

  it("finish redeems the code only at the authorization server the login began with", function()
    -- A pre-registered public client without an issuer (used with any): only the pending login
    -- knows where the code came from.
    control(srv, { add_client = { client_id = "pub" } })
    local seen
    local p = auth.provider({ redirect_url = "http://127.0.0.1:9/cb", on_authorize = function(u) seen = u end,
      client_information = { client_id = "pub" } })
    assert.equal("REDIRECT", auth.auth(p, { server_url = srv.url }))
    local landed = assert(auth.follow_authorization(seen))
    control(srv, { as_path = "/tenant2" }) -- the server now names another authorization server
    local res, err = auth.finish(p, srv.url, landed)
    assert.is_nil(res)
    assert.equal("invalid_issuer", err.oauth_error)
    assert.truthy(err.message:find("the code is not redeemed", 1, true), err.message)
    assert.equal(0, #state(srv).records.token)
  end)

  it("lets a provider run a grant without a user (prepare_grant), never registering it", function()
    control(srv, { add_client = { client_id = "machine", client_secret = "m-secret" } })
    local p = provider(srv, { client_information = { client_id = "machine", client_secret = "m-secret", issuer = srv.base } })
    local seen
    function p:prepare_grant(scope, ctx)
      seen = ctx
      return { grant_type = "client_credentials", scope = "mcp:read" }
    end
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.equal(srv.base, seen.issuer)
    assert.equal(srv.url, seen.resource)
    local st = state(srv)
    assert.equal(0, #st.records.authorize + #st.records.register)
    assert.same({ "client_credentials", "client_secret_basic", "mcp:read" },
      { st.records.token[1].grant_type, st.records.token[1].method, st.records.token[1].scope })
    -- without client information it does not register
    local q = provider(srv)
    q.prepare_grant = p.prepare_grant
    local r, err = auth.auth(q, { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_client", err.oauth_error)
  end)

  it("retries a token request once when the provider asks (token_response: a DPoP nonce)", function()
    control(srv, { token_nonce = "n-1" })
    local p = provider(srv)
    local nonce
    function p:prepare_token_request(headers) headers.DPoP = "proof" .. (nonce and (" nonce=" .. nonce) or "") end
    function p:token_response(res)
      if res.status == 400 and res.headers["dpop-nonce"] and not nonce then
        nonce = res.headers["dpop-nonce"]
        return true
      end
    end
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local st = state(srv)
    assert.same({ "proof", "proof nonce=n-1" }, { st.records.token[1].dpop, st.records.token[2].dpop })
  end)

  it("never puts a secret in an error or a provider's tostring", function()
    control(srv, { add_client = { client_id = "pre", client_secret = "s3cret-value" }, registration = false, state = "wrong" })
    local p = provider(srv, { client_information = { client_id = "pre", client_secret = "s3cret-value", issuer = srv.base } })
    local _, err = auth.auth(p, { server_url = srv.url })
    assert.is_nil(tostring(err):find("s3cret", 1, true))
    assert.is_nil(tostring(p):find("s3cret", 1, true))
  end)
end)

describe("OAuth on the HTTP transport #auth", function()
  local srv = A.serve()
  if not srv then return end

  local function client(opts) return A.http_client(srv, opts) end

  it("authorizes on the first 401 and retries: create_http_client(url, { auth_provider = p })", function()
    local p = provider(srv)
    local c = assert(client({ auth_provider = p }))
    local res = assert(c:call_tool("whoami", {}))
    assert.equal("scopes: (none)", res.content[1].text)
    c:close()
    local st = state(srv)
    assert.equal(1, #st.records.authorize)
    assert.same({ false, true }, { st.records.mcp[1].authorized, st.records.mcp[2].authorized })
  end)

  it("leaves a login out of the server/discover probe's deadline: no fallback report, one login", function()
    local logins, reports = 0, {}
    local p = auth.interactive_provider({ store = auth.memory_store(), headless = function(u)
      logins = logins + 1
      -- a login that outlasts protocol_discovery_timeout_ms (its timer fires first)
      require("mcp.sched").await(function(cb) mcp.core.timer(400, function() cb(true) end) end)
      return auth.follow_authorization(u)
    end })
    local c = assert(client({ auth_provider = p, protocol_discovery_timeout_ms = 100,
      on_error = function(e) reports[#reports + 1] = tostring(e) end }))
    c:close()
    assert.equal(1, logins)
    assert.same({}, reports)
  end)

  it("forgets a stored token that cannot go into a header (CR/LF) and authorizes again", function()
    local store = auth.memory_store()
    store:save(srv.url, { tokens = { access_token = "bad\r\nX-Injected: 1", token_type = "Bearer" } })
    local p = provider(srv, { store = store })
    local c = assert(client({ auth_provider = p }))
    assert(c:call_tool("whoami", {}))
    c:close()
    assert.is_nil(p:tokens().access_token:find("[^\33-\126]"))
    assert.is_false(state(srv).records.mcp[1].authorized)
  end)

  it("runs the flow inside a task, and shares one authorization between concurrent calls", function()
    local p = provider(srv)
    local texts = {}
    mcp.spawn(function()
      local c = assert(client({ auth_provider = p }))
      local done = 0
      control(srv, { expire_access_tokens = true })
      for i = 1, 3 do
        mcp.spawn(function()
          texts[i] = assert(c:call_tool("whoami", {})).content[1].text
          done = done + 1
        end)
      end
      while done < 3 do mcp.sleep(10) end
      c:close()
    end)
    mcp.run()
    assert.same({ "scopes: (none)", "scopes: (none)", "scopes: (none)" }, texts)
    -- one authorization at connect, one refresh for the three calls that found the token expired
    local grants = {}
    for _, t in ipairs(state(srv).records.token) do grants[#grants + 1] = t.grant_type end
    assert.same({ "authorization_code", "refresh_token" }, grants)
  end)

  it("starts with the provider's stored token, and refreshes it on a 401", function()
    local p = provider(srv)
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    control(srv, { expire_access_tokens = true })
    local c = assert(client({ auth_provider = p }))
    assert.truthy(c:list_tools())
    c:close()
    local st = state(srv)
    assert.equal(1, #st.records.authorize)
    assert.equal("refresh_token", st.records.token[#st.records.token].grant_type)
  end)

  it("steps up on 403 insufficient_scope with the union of the scopes", function()
    control(srv, { scopes_supported = { "mcp:read" }, call_scope = "mcp:write" })
    local c = assert(client({ auth_provider = provider(srv) }))
    local res = assert(c:call_tool("whoami", {}))
    assert.equal("scopes: mcp:read mcp:write", res.content[1].text)
    c:close()
    local st = state(srv)
    assert.equal(2, #st.records.authorize)
    assert.equal("mcp:read", st.records.authorize[1].scope)
    assert.equal("mcp:read mcp:write", st.records.authorize[2].scope)
  end)

  it("registers again with the union of the scopes when a step-up goes beyond the registered scope", function()
    control(srv, { scopes_supported = { "mcp:read" }, call_scope = "mcp:write" })
    local c = assert(client({ auth_provider = provider(srv) }))
    assert(c:call_tool("whoami", {}))
    c:close()
    local st = state(srv)
    assert.equal(2, #st.records.register)
    assert.falsy(st.records.register[1].scope:find("mcp:write", 1, true))
    assert.truthy(st.records.register[2].scope:find("mcp:read mcp:write", 1, true))
    -- the step-up's authorization and code go with the new registration
    assert.equal(2, #st.records.authorize)
    assert.are_not.equal(st.records.authorize[1].client_id, st.records.authorize[2].client_id)
    assert.equal(st.records.authorize[2].client_id, st.records.token[#st.records.token].client_id)
  end)

  it("steps up with the old registration when registering again fails", function()
    control(srv, { scopes_supported = { "mcp:read" }, call_scope = "mcp:write" })
    local c = assert(client({ auth_provider = provider(srv) }))
    control(srv, { registration = false }) -- (the metadata names no registration endpoint now)
    local res = assert(c:call_tool("whoami", {}))
    c:close()
    assert.equal("scopes: mcp:read mcp:write", res.content[1].text)
    local st = state(srv)
    assert.equal(1, #st.records.register)
    assert.equal(st.records.authorize[1].client_id, st.records.authorize[2].client_id)
  end)

  it("does not register a pre-registered client again on a step-up", function()
    control(srv, { scopes_supported = { "mcp:read" }, call_scope = "mcp:write" })
    local p = provider(srv)
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    local info = p:client_information()
    local pre = provider(srv, { client_information = { client_id = info.client_id, scope = "mcp:read" } })
    local c = assert(client({ auth_provider = pre }))
    assert(c:call_tool("whoami", {}))
    c:close()
    assert.equal(1, #state(srv).records.register)
  end)

  it("gives up after a bounded number of authorizations when every answer is 403", function()
    control(srv, { always_403 = true })
    local errs = {}
    -- (the server/discover probe gets the 403s: connect ends there, with no fallback to initialize)
    local c, err = client({ auth_provider = provider(srv), transport_on_error = function(e) errs[#errs + 1] = e end })
    assert.is_nil(c)
    assert.equal(403, err.status_code)
    local n = #state(srv).records.authorize
    assert.is_true(n >= 1 and n <= 3, "authorizations: " .. n)
  end)

  it("fails with an OAuth error (also given to on_error) when the flow is refused", function()
    control(srv, { issuer = "https://attacker.example" })
    local errs = {}
    local c, err = client({ auth_provider = provider(srv), transport_on_error = function(e) errs[#errs + 1] = e end })
    assert.is_nil(c)
    assert.is_true(auth.is_oauth_error(err))
    assert.equal("invalid_metadata", err.oauth_error)
    helper.wait_until(function() mcp.loop.step(0); return #errs > 0 end, 2000)
    assert.equal("invalid_metadata", errs[1].oauth_error)
  end)
end)

describe("the static oauth config on the HTTP transport #auth", function()
  local srv = A.serve()
  if not srv then return end

  -- A client registered at the fixture and a refresh token for it, got through the flow.
  local function credentials()
    control(srv, { add_client = { client_id = "static", client_secret = "static-secret" } })
    local p = provider(srv, { client_information = { client_id = "static", client_secret = "static-secret", issuer = srv.base } })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    return p:tokens()
  end

  local function client(oauth, extra) return A.http_client(srv, { oauth = oauth }, extra) end

  it("refreshes a rejected token once at token_url with the client credentials, and retries", function()
    local t = credentials()
    local cfg = { access_token = "stale", refresh_token = t.refresh_token, token_url = srv.base .. "/token",
      client_id = "static", client_secret = "static-secret" }
    local c = assert(client(cfg))
    assert.truthy(c:list_tools())
    c:close()
    local st = state(srv)
    local last = st.records.token[#st.records.token]
    assert.same({ "refresh_token", "client_secret_post", "static" }, { last.grant_type, last.method, last.client_id })
    assert.equal("stale", cfg.access_token) -- the caller's table is not modified
  end)

  it("refreshes an expired token (expires_at) before the first request, with refresh_token_fn", function()
    local t = credentials()
    local calls = 0
    local c = assert(client({
      access_token = "expired", expires_at = os.time() - 10,
      refresh_token_fn = function(cfg)
        calls = calls + 1
        assert.equal("expired", cfg.access_token)
        return t.access_token, 600
      end,
    }))
    assert.truthy(c:list_tools())
    c:close()
    assert.equal(1, calls)
    for _, m in ipairs(state(srv).records.mcp) do assert.is_true(m.authorized) end
  end)

  it("fails with an OAuth error, also given to on_error, when the refresh fails", function()
    credentials()
    local errs = {}
    local c, err = client({ access_token = "stale", refresh_token = "not-a-refresh-token", token_url = srv.base .. "/token",
      client_id = "static", client_secret = "static-secret" }, { transport_on_error = function(e) errs[#errs + 1] = e end })
    assert.is_nil(c)
    assert.is_true(auth.is_invalid_grant(err))
    helper.wait_until(function() mcp.loop.step(0); return #errs > 0 end, 2000)
    assert.is_true(auth.is_invalid_grant(errs[1]))
    assert.is_nil(tostring(err):find("not-a-refresh-token", 1, true))
  end)

  it("says so when a rejected token cannot be refreshed", function()
    local c, err = client({ access_token = "stale" })
    assert.is_nil(c)
    assert.is_true(auth.is_oauth_error(err))
    assert.truthy(err.message:find("refresh_token_fn", 1, true))
  end)
end)

describe("mcp.auth.interactive_provider #auth", function()
  local srv = A.serve()
  if not srv then return end

  -- A "browser": follows the authorization URL to the redirect, then visits the redirect URL,
  -- which is the provider's loopback listener.
  local function browser(opened)
    return function(auth_url)
      opened[#opened + 1] = auth_url
      mcp.spawn(function()
        local landed = assert(auth.follow_authorization(auth_url))
        assert(mcp.http_request({ url = landed })).status = nil
      end)
    end
  end

  it("receives the redirect on its 127.0.0.1 listener and logs in", function()
    local opened, lines = {}, {}
    local p = auth.interactive_provider({
      client_name = "interactive-spec", store = auth.memory_store(), open = browser(opened),
      print = function(l) lines[#lines + 1] = l end,
    })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.equal(1, #opened)
    local st = state(srv)
    local redirect = st.records.authorize[1].redirect_uri
    assert.truthy(redirect:match("^http://127%.0%.0%.1:%d+/callback$"))
    assert.same({ redirect }, st.records.register[1].redirect_uris)
    assert.truthy(lines[1]:find(opened[1], 1, true)) -- the URL is printed too
    -- the listener is closed after the login, and the next login listens on the same port
    local res = mcp.http_request({ url = redirect, timeout_ms = 2000 })
    assert.is_nil(res)
    assert.equal(redirect, p:redirect_url())
    p:close()
  end)

  it("listens again on the port its stored registration names (servers match redirect URIs exactly)", function()
    local probe = assert(mcp.core.redirect_listener(0, function() end))
    local port = probe:port()
    probe:close()
    local store = auth.memory_store()
    local registered = "http://127.0.0.1:" .. port .. "/callback"
    store:save(srv.url, { client_information = { client_id = "stored", redirect_uris = { registered } } })
    local p = auth.interactive_provider({ store = store, open = browser({}), print = function() end })
    p:bind_server(srv.url)
    assert.equal(registered, p:redirect_url())
    p:close()
    -- that port taken: any free one
    local holder = assert(mcp.core.redirect_listener(port, function() end))
    local q = auth.interactive_provider({ store = store, open = browser({}), print = function() end })
    q:bind_server(srv.url)
    local other = q:redirect_url()
    q:close()
    holder:close()
    assert.truthy(other:match("^http://127%.0%.0%.1:%d+/callback$"))
    assert.are_not.equal(registered, other)
  end)

  it("registers again when its stored registration's port is taken (servers match redirect URIs exactly)", function()
    local store = auth.memory_store()
    local first = auth.interactive_provider({ store = store, open = browser({}), print = function() end })
    assert.equal("AUTHORIZED", auth.auth(first, { server_url = srv.url }))
    first:close()
    local registered = state(srv).records.register[1].redirect_uris[1]
    local port = tonumber(registered:match(":(%d+)/"))
    local rec = store:load(srv.url)
    rec.tokens = nil -- (a login is needed)
    store:save(srv.url, rec)
    local holder = assert(mcp.core.redirect_listener(port, function() end))
    local p = auth.interactive_provider({ store = store, open = browser({}), print = function() end })
    local r, err = auth.auth(p, { server_url = srv.url })
    p:close()
    holder:close()
    assert.equal("AUTHORIZED", r, tostring(err))
    local st = state(srv)
    assert.equal(2, #st.records.register)
    local now = st.records.authorize[2].redirect_uri
    assert.are_not.equal(registered, now)
    assert.same({ now }, st.records.register[2].redirect_uris)
    assert.same({ now }, store:load(srv.url).client_information.redirect_uris)
  end)

  it("answers stray requests on its listener (400, 404) and keeps waiting for the redirect", function()
    local statuses = {}
    local p
    p = auth.interactive_provider({ store = auth.memory_store(), print = function() end,
      authorization_timeout_ms = 20000,
      open = function(auth_url)
        mcp.spawn(function()
          local base = p:redirect_url()
          for _, u in ipairs({ base:gsub("/callback$", "/favicon.ico"), base, base .. "?code=forged&state=wrong",
            base .. "?error=access_denied" }) do
            statuses[#statuses + 1] = assert(mcp.http_request({ url = u, timeout_ms = 5000 })).status
          end
          local landed = assert(auth.follow_authorization(auth_url))
          statuses[#statuses + 1] = assert(mcp.http_request({ url = landed, timeout_ms = 5000 })).status
        end)
      end })
    local r, err = auth.auth(p, { server_url = srv.url })
    p:close()
    assert.equal("AUTHORIZED", r, tostring(err))
    assert.same({ 404, 400, 400, 400, 200 }, statuses)
  end)

  it("ignores a redirect with another state (400) and gives up when the right one never comes", function()
    control(srv, { state = "wrong" })
    local statuses = {}
    local p = auth.interactive_provider({ store = auth.memory_store(), print = function() end,
      authorization_timeout_ms = 1500,
      open = function(auth_url)
        mcp.spawn(function()
          local landed = assert(auth.follow_authorization(auth_url))
          statuses[#statuses + 1] = assert(mcp.http_request({ url = landed, timeout_ms = 5000 })).status
        end)
      end })
    local r, err = auth.auth(p, { server_url = srv.url })
    assert.is_nil(r)
    assert.same({ 400 }, statuses)
    assert.truthy(tostring(err):find("no redirect arrived", 1, true), tostring(err))
  end)

  it("gives up when no redirect comes (authorization_timeout_ms), and says why", function()
    local opened
    local p = auth.interactive_provider({ store = auth.memory_store(), open = function(u) opened = u end,
      authorization_timeout_ms = 300, print = function() end })
    local r, err = auth.auth(p, { server_url = srv.url })
    assert.is_nil(r)
    local msg = tostring(err)
    assert.truthy(msg:find("no redirect arrived at " .. p:redirect_url(), 1, true), msg)
    assert.truthy(msg:find("within 300 ms", 1, true), msg)
    assert.truthy(msg:find(opened, 1, true), msg) -- the URL to open
    assert.truthy(msg:find("refused the redirect URI", 1, true), msg)
    -- nobody refused anything: the login timed out (was reported as access_denied)
    assert.equal(auth.AUTHORIZATION_TIMEOUT, err.oauth_error)
    -- timeout_ms is the older name; a wrong value is refused
    local q = auth.interactive_provider({ store = auth.memory_store(), open = function() end, timeout_ms = 200,
      print = function() end })
    r, err = auth.auth(q, { server_url = srv.url })
    assert.is_nil(r)
    assert.truthy(tostring(err):find("within 200 ms", 1, true), tostring(err))
    assert.has_error(function() auth.interactive_provider({ authorization_timeout_ms = 0 }) end)
  end)

  it("a login ended by provider:close() fails with login_cancelled, not as a redirect the host finishes", function()
    local p
    p = auth.interactive_provider({ store = auth.memory_store(), print = function() end,
      authorization_timeout_ms = 20000,
      open = function() mcp.spawn(function() p:close() end) end })
    local r, err = auth.auth(p, { server_url = srv.url })
    assert.is_nil(r)
    assert.equal(auth.LOGIN_CANCELLED, err and err.oauth_error, tostring(err))
    assert.truthy(tostring(err):find("cancelled", 1, true), tostring(err))
  end)

  it("lets the host show the URL (on_url) and runs headless for CI", function()
    local shown = {}
    local p = auth.interactive_provider({ store = auth.memory_store(), on_url = function(u) shown[#shown + 1] = u end,
      open = false, headless = auth.follow_authorization })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.equal(0, #shown) -- headless: no browser step at all
    assert.equal("http://127.0.0.1:8976/callback", p:redirect_url())
  end)

  it("refuses to serve two servers with one provider", function()
    local p = auth.interactive_provider({ store = auth.memory_store(), headless = auth.follow_authorization })
    assert.equal("AUTHORIZED", auth.auth(p, { server_url = srv.url }))
    assert.has_error(function() auth.auth(p, { server_url = srv.base .. "/other" }) end)
  end)
end)

describe("examples/oauth.lua #auth", function()
  local srv = A.serve({ reset = false })
  if not srv then return end

  it("logs in headlessly, keeps the tokens in a 0600 file, and starts authorized the next time", function()
    local dir = os.tmpname()
    os.remove(dir)
    local env = ("XDG_DATA_HOME='%s' LUA_PATH='%s/lua/?.lua;%s/lua/?/init.lua;;' LUA_CPATH='%s;;'")
      :format(dir, helper.root, helper.root, package.cpath:match("^[^;]+"))
    -- (under sanitizers the child keeps LD_PRELOAD: it loads the sanitized module too)
    local cmd = ("env %s %s %s/examples/oauth.lua %s --headless 2>&1")
      :format(env, helper.lua_cmd(), helper.root, srv.url)
    local function run()
      local p = io.popen(cmd)
      local out = p:read("*a")
      p:close()
      return out
    end
    local out = run()
    assert.truthy(out:find("whoami: scopes:", 1, true), out)
    local store = auth.file_store({ dir = dir .. "/lua-mcp" })
    assert.equal(tonumber("600", 8), mcp.core.file_mode(store:path(srv.url)))
    assert.truthy(store:load(srv.url).tokens.access_token)
    out = run()
    assert.truthy(out:find("whoami: scopes:", 1, true), out)
    assert.equal(1, #state(srv).records.authorize) -- the second run used the stored token
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)

describe("the static oauth config on legacy SSE #auth", function()
  local srv = H.serve("", { reset = false })
  if not srv then return end

  it("refreshes on a 401 to a POSTed message and sends it again with the new token", function()
    local calls = 0
    local c = assert(mcp.create_sse_client(srv.base .. "/sse", {
      request_timeout_ms = helper.ms(20000),
      oauth = { access_token = "first", refresh_token_fn = function() calls = calls + 1; return "second", 60 end },
    }))
    H.control(srv, { fail_next = { { status = 401, headers = { ["WWW-Authenticate"] = 'Bearer error="invalid_token"' } } } })
    local res = assert(c:call_tool("echo", { message = "hi" }))
    assert.equal("hi", res.content[1].text)
    assert.equal(1, calls)
    local auths = {}
    for _, r in ipairs(H.state(srv).requests) do
      if r.rpc_method == "tools/call" then auths[#auths + 1] = r.headers.authorization end
    end
    assert.same({ "Bearer first", "Bearer second" }, auths)
    c:close()
  end)
end)

describe("OAuth on legacy SSE: a 401 on the stream's GET #auth", function()
  local srv = A.serve({ curl = true })
  if not srv then return end

  local function client(opts) return A.sse_client(srv, opts) end

  it("runs the authorization flow with the GET's challenge and opens the stream again", function()
    local p = provider(nil, { server_url = srv.base .. "/sse" })
    local c = assert(client({ auth_provider = p }))
    local res = assert(c:call_tool("whoami", {}))
    assert.equal("scopes: (none)", res.content[1].text)
    c:close()
    local st = state(srv)
    assert.same({ false, true }, { st.records.sse[1].authorized, st.records.sse[2].authorized })
    assert.equal(2, #st.records.sse)
    assert.equal(1, #st.records.authorize)
    -- the challenge's resource_metadata was followed: the resource is the SSE endpoint's
    assert.equal(srv.base .. "/sse", st.records.authorize[1].resource)
    assert.equal("Bearer " .. p:tokens().access_token, st.records.sse[2].authorization)
    for _, m in ipairs(st.records.mcp) do assert.is_true(m.authorized) end
  end)

  it("does the same inside a task", function()
    local p = provider(nil, { server_url = srv.base .. "/sse" })
    local text
    mcp.spawn(function()
      local c = assert(client({ auth_provider = p }))
      text = assert(c:call_tool("whoami", {})).content[1].text
      c:close()
    end)
    mcp.run()
    assert.equal("scopes: (none)", text)
    local st = state(srv)
    assert.same({ false, true }, { st.records.sse[1].authorized, st.records.sse[2].authorized })
    assert.equal(1, #st.records.authorize)
  end)

  it("gives up after a bounded number of authorizations when the server keeps answering 401", function()
    local p = provider(nil, { server_url = srv.base .. "/sse" })
    p.tokens = function() return { access_token = "never-accepted", token_type = "Bearer" } end
    local c, err = client({ auth_provider = p })
    assert.is_nil(c)
    assert.equal(401, err.status_code)
    local st = state(srv)
    assert.equal(1 + require("mcp.auth.transport").MAX_REAUTHORIZE, #st.records.sse)
    assert.equal(require("mcp.auth.transport").MAX_REAUTHORIZE, #st.records.authorize)
  end)

  it("the static oauth config refreshes once on the GET's 401, then fails with the 401", function()
    local calls = 0
    local c, err = client({
      oauth = { access_token = "first", refresh_token_fn = function() calls = calls + 1; return "second", 60 end },
    })
    assert.is_nil(c)
    assert.equal(401, err.status_code)
    assert.equal(1, calls)
    local st = state(srv)
    assert.same({ "Bearer first", "Bearer second" }, { st.records.sse[1].authorization, st.records.sse[2].authorization })
  end)
end)
