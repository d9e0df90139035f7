-- OAuth (mcp.auth) and plain HTTP requests on the loop (mcp.http_request), against the
-- project's OAuth fixture (spec/fixtures/oauth_server.mjs: an MCP server and its authorization
-- server on one loopback port) and offline for the pure parts.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local auth = mcp.auth
local available = H.have_node()

local function start(flags)
  local prefix = helper.sanitizer() and "env -u LD_PRELOAD " or ""
  local cmd = ("%snode %s/spec/fixtures/oauth_server.mjs --stdin=ignore --exit-with-parent --quiet %s 2>/dev/null")
    :format(prefix, helper.root, flags or "")
  local f = assert(io.popen(cmd, "r"))
  local line = f:read("*l") or ""
  local port = tonumber(line:match('"port"%s*:%s*(%d+)'))
  assert(port, "oauth_server.mjs did not start: " .. line)
  local srv = { f = f, port = port, base = "http://127.0.0.1:" .. port }
  srv.url = srv.base .. "/mcp"
  return srv
end

local function stop(srv)
  local res = mcp.http_request({ url = srv.base .. "/control/state" })
  local st = res and mcp.json.decode(res.body)
  if st and st.pid then helper.kill(st.pid, "TERM") end
  srv.f:close()
end

local function control(srv, t)
  local res = assert(mcp.http_request({ url = srv.base .. "/control", json = t }))
  assert.equal(200, res.status, res.body)
end

local function state(srv)
  local res = assert(mcp.http_request({ url = srv.base .. "/control/state" }))
  return assert(mcp.json.decode(res.body))
end

local function provider(srv, extra)
  local o = { redirect_url = "http://127.0.0.1:9/callback", client_name = "auth-spec", server_url = srv and srv.url }
  for k, v in pairs(extra or {}) do o[k] = v end
  return auth.headless_provider(o)
end

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
    assert.equal("MCP OAuth error (invalid_grant): expired [HTTP 400]", tostring(e))
    local s = auth.parse_error_response(502, ("<html>" .. ("x"):rep(1000)))
    assert.equal("server_error", s.code)
    assert.is_true(#s.message < 300)
    assert.is_true(auth.is_unauthorized_client(auth.new_error("unauthorized_client", "no")))
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
  if not available then
    pending("node is needed to run the OAuth fixture")
    return
  end
  local srv
  setup(function() srv = start() end)
  teardown(function() stop(srv) end)

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
  if not available then
    pending("node is needed to run the OAuth fixture")
    return
  end
  local srv
  setup(function() srv = start() end)
  teardown(function() stop(srv) end)
  before_each(function() control(srv, { reset = true }) end)

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
    assert.equal("invalid_metadata", err.code)
    assert.truthy(err.message:find("S256", 1, true))
    assert.equal(0, #state(srv).records.authorize)
  end)

  it("refuses metadata that names another issuer", function()
    control(srv, { issuer = "https://attacker.example" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_metadata", err.code)
    local st = state(srv)
    assert.equal(0, #st.records.register + #st.records.authorize + #st.records.token)
  end)

  it("refuses a redirect whose state is not ours, before redeeming the code", function()
    control(srv, { state = "wrong" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_state", err.code)
    assert.equal(0, #state(srv).records.token)
  end)

  it("refuses a redirect from the wrong issuer (RFC 9207), and one missing the promised iss", function()
    control(srv, { iss_param = "wrong" })
    local r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_issuer", err.code)
    control(srv, { iss_param = "omit" })
    r, err = auth.auth(provider(srv), { server_url = srv.url })
    assert.is_nil(r)
    assert.equal("invalid_issuer", err.code)
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
    assert.equal("insecure_url", err.code)
    assert.equal(0, #state(srv).records.requests - 1) -- only this spec's own control call
  end)

  it("uses pre-registered credentials with client_secret_basic, never registering", function()
    control(srv, { add_client = { client_id = "pre", client_secret = "s3cret" }, registration = false })
    local p = provider(srv, { client_information = { client_id = "pre", client_secret = "s3cret" } })
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

  it("never puts a secret in an error or a provider's tostring", function()
    control(srv, { add_client = { client_id = "pre", client_secret = "s3cret-value" }, registration = false, state = "wrong" })
    local p = provider(srv, { client_information = { client_id = "pre", client_secret = "s3cret-value" } })
    local _, err = auth.auth(p, { server_url = srv.url })
    assert.is_nil(tostring(err):find("s3cret", 1, true))
    assert.is_nil(tostring(p):find("s3cret", 1, true))
  end)
end)
