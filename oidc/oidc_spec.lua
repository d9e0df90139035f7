-- The oidc leg (make oidc, docs/OAUTH.md "A real authorization server"): lua-mcp's interactive
-- provider against oidc-provider (an OpenID-certified authorization server from npm: dynamic
-- registration, PKCE required, resource indicators, rotating refresh tokens, JWT access tokens
-- that live OIDC_TOKEN_TTL seconds, exact redirect-URI matching) in front of an MCP server made
-- with the official TypeScript SDK that verifies those tokens (oidc/server.mjs). The browser is
-- oidc/browser.mjs, which fills in oidc-provider's development login and consent pages and then
-- visits the redirect URL on the provider's loopback listener. Skips when oidc/install.sh has not
-- run (fails instead under CI=true).
local mcp = require("mcp")
local helper = require("helper")
local auth = mcp.auth
local core = mcp.core

local ROOT = helper.root
local PREFIX = os.getenv("OIDC_PREFIX") or (ROOT .. "/.deps/oidc")
local TTL = 3 -- seconds an access token lives (oidc/server.mjs OIDC_TOKEN_TTL)
local LOG = os.tmpname() -- what oidc/browser.mjs could not do (it runs detached)

-- The browser's complaints since the last call, for a failure's message.
local function browser_log()
  local f = io.open(LOG, "rb")
  local text = f and f:read("*a") or ""
  if f then f:close() end
  io.open(LOG, "wb"):close()
  return text
end

local function installed()
  local f = io.open(PREFIX .. "/node_modules/oidc-provider/package.json", "rb")
  if f then f:close() end
  return f ~= nil and helper.have_command("node") and helper.have_command("curl")
end

local sh = helper.sh

-- Step the loop until the access tokens issued so far have expired.
local function outlive_token()
  local deadline = core.now_ms() + (TTL + 1) * 1000
  while core.now_ms() < deadline do mcp.loop.step(50) end
end

describe("oidc leg: lua-mcp against oidc-provider and a TS SDK resource server #oidc", function()
  if not installed() then
    if os.getenv("CI") == "true" then
      it("has its peers installed", function()
        error("oidc-provider is not installed in " .. PREFIX .. " (make oidc runs oidc/install.sh)")
      end)
    else
      pending("oidc-provider is not installed in " .. PREFIX .. ": run make oidc (oidc/install.sh)")
    end
    return
  end

  local srv = {}
  setup(function()
    local cmd = ("cd '%s' && OIDC_PREFIX='%s' OIDC_TOKEN_TTL=%d exec node oidc/server.mjs 2>/dev/null"):format(ROOT,
      PREFIX, TTL)
    srv.f = assert(io.popen(cmd, "r"))
    local line = srv.f:read("*l") or ""
    local doc = mcp.json.decode(line)
    assert(type(doc) == "table" and doc.mcp, "oidc/server.mjs did not start: " .. line)
    for k, v in pairs(doc) do srv[k] = v end
  end)
  teardown(function()
    if srv.control then sh(("curl -s -X POST %s/exit"):format(srv.control)) end
    if srv.f then srv.f:close() end
    helper.remove_tmpdirs()
  end)

  local function control(what)
    return mcp.json.decode(sh(("curl -s -X POST %s/%s"):format(srv.control, what)))
  end

  -- An interactive provider whose browser is oidc/browser.mjs (mode "approve" or "deny"), with
  -- the authorization URLs it was given in opened.
  local function provider(dir, opts)
    opts = opts or {}
    local opened = {}
    local p = auth.interactive_provider({
      client_name = "lua-mcp oidc leg", store = auth.file_store({ dir = dir }), print = function() end,
      authorization_timeout_ms = 30000, port = opts.port,
      open = function(u)
        opened[#opened + 1] = u
        assert(core.spawn_detached({ "node", ROOT .. "/oidc/browser.mjs", u, opts.mode or "approve", "alice", LOG }))
      end,
    })
    return p, opened
  end

  local function whoami(c)
    local res, err = c:call_tool("whoami", {})
    if not res then return nil, err end
    return mcp.json.decode(res.content[1].text)
  end

  local function record(dir)
    return auth.file_store({ dir = dir }):load(srv.mcp)
  end

  local function query(u)
    local q = {}
    for k, v in (u:match("%?(.*)$") or ""):gmatch("([^&=]+)=([^&]*)") do
      q[k] = v:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
    end
    return q
  end

  local function client_process(dir, flags)
    local cmd = ("cd '%s' && LUA_PATH='./lua/?.lua;./lua/?/init.lua;;' LUA_CPATH='%s;;' %s oidc/client.lua '%s' '%s' %s")
      :format(ROOT, package.cpath:match("^[^;]+"), helper.lua_cmd(), srv.mcp, dir, flags or "")
    return cmd
  end

  local dir = helper.tmpdir()

  it("logs in the first time: dynamic registration, PKCE (S256), the resource indicator", function()
    local p, opened = provider(dir)
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    local me = assert(whoami(c))
    c:close()
    assert.equal(1, #opened)
    local q = query(opened[1])
    assert.equal("S256", q.code_challenge_method)
    assert.truthy(q.code_challenge and #q.code_challenge >= 43)
    assert.equal(srv.mcp, q.resource)
    local rec = assert(record(dir))
    assert.equal("alice", me.sub)
    assert.truthy(me.client_id and me.client_id ~= "")
    assert.same({ "mcp:read" }, me.scopes)
    assert.truthy(rec.tokens and rec.tokens.refresh_token, "no refresh token stored")
  end)

  it("refreshes an expired token without a login, and the refresh token rotates", function()
    local p, opened = provider(dir)
    local before = assert(record(dir)).tokens.refresh_token
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    assert(whoami(c))
    outlive_token()
    local me = assert(whoami(c))
    c:close()
    assert.equal(0, #opened)
    assert.equal("alice", me.sub)
    assert.are_not.equal(before, assert(record(dir)).tokens.refresh_token)
  end)

  it("a second process on the same store starts authorized", function()
    outlive_token()
    local out = mcp.json.decode(sh(client_process(dir, "--no-login")))
    assert.is_true(out.ok, out.err)
    assert.equal(0, out.logins)
    assert.equal("alice", mcp.json.decode(out.text).sub)
  end)

  it("logs in again when the refresh token was revoked", function()
    local rec = assert(record(dir))
    local body = ("token=%s&token_type_hint=refresh_token&client_id=%s"):format(rec.tokens.refresh_token,
      rec.client_information.client_id)
    sh(("curl -s -X POST --data '%s' %s/token/revocation"):format(body, srv.issuer))
    outlive_token()
    local p, opened = provider(dir)
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    local me, err = whoami(c)
    c:close()
    assert(me, tostring(err) .. "\n" .. browser_log())
    assert.equal(1, #opened)
    assert.equal("alice", me.sub)
  end)

  it("reports consent denied as access_denied", function()
    local p, opened = provider(helper.tmpdir(), { mode = "deny" })
    local c, err = mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 })
    local me
    if c then
      me, err = whoami(c)
      c:close()
    end
    assert.is_nil(me)
    assert.equal(1, #opened)
    assert.equal("access_denied", err.oauth_error)
  end)

  it("delivers a notification and an elicitation answer after the token expired", function()
    local p = provider(dir)
    local asked = 0
    local c = assert(mcp.create_http_client(srv.mcp, {
      auth_provider = p, request_timeout_ms = 30000,
      on_elicitation_request = function()
        asked = asked + 1
        return { action = "accept", content = { name = "alice" } }
      end,
    }))
    assert(whoami(c))
    local before = #control("state").notifications
    outlive_token()
    assert.is_true(c:notify("notifications/roots/list_changed"))
    assert.is_true(helper.wait_until(function() return #control("state").notifications > before end, 20000),
      "the notification did not arrive")
    -- the server waits out the token's life before it asks: the answer goes with an expired token
    local res = assert(c:call_tool("ask", { delay_ms = (TTL + 1) * 1000 }))
    c:close()
    assert.equal(1, asked)
    local got = mcp.json.decode(res.content[1].text)
    assert.equal("accept", got.action)
    assert.equal("alice", got.content.name)
  end)

  -- Issue 25, "Two processes, one token store": both would refresh with the same rotating refresh
  -- token, the second be refused (invalid_grant; oidc-provider then revokes the grant) and fall
  -- back to a login. The file store's lock around read-refresh-write and the record read again
  -- under it make the second take the first one's new tokens from the store.
  it("two processes refreshing at once on one store both get through", function()
    -- both start with the same expired access token and the same (rotating) refresh token
    local a = assert(io.popen(client_process(dir, "--no-login --wait-ms=" .. (TTL + 1) * 1000), "r"))
    local b = assert(io.popen(client_process(dir, "--no-login --wait-ms=" .. (TTL + 1) * 1000), "r"))
    local ra, rb = mcp.json.decode(a:read("*a")), mcp.json.decode(b:read("*a"))
    a:close()
    b:close()
    assert.is_true(ra.ok, ra.err)
    assert.is_true(rb.ok, rb.err)
    assert.equal(0, ra.logins + rb.logins)
    assert.equal("alice", mcp.json.decode(ra.text).sub)
    assert.equal("alice", mcp.json.decode(rb.text).sub)
  end)

  -- The rotation starts a new oidc-provider instance (the configuration cannot change in place),
  -- which refuses the registration made with the old one (invalid_client at the token endpoint):
  -- the server's keys rotated and the client forgotten at once.
  it("goes on after the server's signing keys were rotated and it forgot the client", function()
    local fresh = helper.tmpdir()
    local p, opened = provider(fresh)
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    local before = assert(whoami(c))
    assert.is_true(control("rotate-keys").ok)
    local me, err = whoami(c)
    c:close()
    assert(me, tostring(err) .. "\n" .. browser_log())
    assert.equal("alice", me.sub)
    -- the old token is refused, the refresh too (invalid_client): registered again, logged in again
    assert.equal(2, #opened)
    assert.are_not.equal(before.client_id, me.client_id)
  end)

  -- Defect (issue 25): the client registered with the first challenge's scope; the step-up asks for
  -- a scope outside its registration and the server answers invalid_scope, with no recovery
  -- (register again, or register with the union of the scopes).
  it("steps up beyond the registered scopes on 403 insufficient_scope", function()
    local p = provider(dir)
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    local res, err = c:call_tool("admin", {})
    c:close()
    assert(res, tostring(err) .. "\n" .. browser_log())
    local got = mcp.json.decode(res.content[1].text)
    assert.truthy(table.concat(got.scopes, " "):find("mcp:admin", 1, true))
  end)

  -- Defect (issue 25, the rest of "re-login when the server matches redirect URIs exactly"): the
  -- provider listens on the stored registration's port again, but when that port is taken it
  -- listens elsewhere and logs in with the stored registration, which names the old port; it should
  -- register again.
  it("logs in again after the redirect port changed (the stored one taken)", function()
    local rec = assert(record(dir))
    local port = tonumber(rec.client_information.redirect_uris[1]:match(":(%d+)/"))
    local holder = assert(core.redirect_listener(port, function() end))
    rec.tokens = nil -- (a login is needed)
    auth.file_store({ dir = dir }):save(srv.mcp, rec)
    local p, opened = provider(dir)
    local c = assert(mcp.create_http_client(srv.mcp, { auth_provider = p, request_timeout_ms = 30000 }))
    local me, err = whoami(c)
    c:close()
    holder:close()
    assert(me, tostring(err) .. "\n" .. browser_log())
    assert.equal(1, #opened)
  end)
end)
