-- The SSRF guard with http_proxy / https_proxy set (docs/SECURITY.md "Proxies"): the guard checks
-- the address libcurl connects to, which is the proxy's when one is used. A guarded request (the
-- OAuth flow's metadata, registration and token requests) therefore goes direct and the guard
-- checks its target; other requests keep the environment's proxy. Each case runs in a child
-- process (libcurl reads the proxy variables from the environment) against
-- spec/fixtures/proxy_probe.mjs, which listens on every interface and answers "via-proxy" to a
-- request in proxy form and "direct" to one in origin form. The cases with a proxy or target
-- that is not on loopback need an address of this host that is not loopback (hostname -I).
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- An IPv4 address of this host that is not loopback, or nil.
local function outside_address()
  local f = io.popen("hostname -I 2>/dev/null")
  local out = f and f:read("*a") or ""
  if f then f:close() end
  for a in out:gmatch("%S+") do
    if a:match("^%d+%.%d+%.%d+%.%d+$") and not a:match("^127%.") then return a end
  end
  return nil
end

-- mcp.http_request in a child process with env (shell assignments) and the proxy variables of
-- this one removed: "ok BODY" or "err MESSAGE".
local function request(env, opts)
  local parts = {}
  for k, v in pairs(opts) do parts[#parts + 1] = ("%s = %q"):format(k, v) end
  local code = "local mcp = require('mcp') local r, e = mcp.http_request({ timeout_ms = 10000, "
    .. table.concat(parts, ", ") .. " }) io.write(r and ('ok ' .. r.body) or ('err ' .. tostring(e)))"
  local clear = "env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY "
    .. "-u no_proxy -u NO_PROXY -u MCP_OAUTH_PROXY "
  local cmd = ("%s%s LUA_PATH=%s LUA_CPATH=%s %s -e %s 2>&1"):format(clear, env, shq(package.path .. ";;"),
    shq(package.cpath .. ";;"), helper.lua_cmd(), shq(code))
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("*a")
  f:close()
  return out
end

describe("the SSRF guard with a proxy in the environment", function()
  local srv, outside
  setup(function()
    if H.have_node() then srv = H.node_server("proxy_probe.mjs") end
    outside = outside_address()
  end)
  teardown(function()
    if srv then
      helper.kill(tonumber(srv.line:match('"pid"%s*:%s*(%d+)')), "TERM")
      srv.f:close()
    end
  end)

  it("keeps the environment's proxy for a request without the guard (the control)", function()
    if not srv then pending("node is needed for the fixture"); return end
    local out = request(("http_proxy=http://127.0.0.1:%d"):format(srv.port),
      { url = ("http://203.0.113.9:%d/x"):format(srv.port) })
    assert.equals("ok via-proxy", out)
  end)

  it("does not fail a guarded request as SSRF because the proxy is on loopback: it goes direct", function()
    if not srv then pending("node is needed for the fixture"); return end
    if not outside then pending("no address of this host outside loopback"); return end
    local env = ("http_proxy=http://127.0.0.1:%d https_proxy=http://127.0.0.1:%d"):format(srv.port, srv.port)
    local out = request(env, { url = ("http://%s:%d/x"):format(outside, srv.port), refuse_addresses = "local" })
    assert.equals("ok direct", out)
  end)

  it("is not bypassed by a proxy outside loopback: the target is what is checked", function()
    if not srv then pending("node is needed for the fixture"); return end
    if not outside then pending("no address of this host outside loopback"); return end
    local out = request(("http_proxy=http://%s:%d"):format(outside, srv.port),
      { url = ("http://127.0.0.1:%d/x"):format(srv.port), refuse_addresses = "local" })
    assert.truthy(out:find("^err "), out)
    assert.truthy(out:find("refused to connect to 127.0.0.1", 1, true), out)
    assert.truthy(out:find("SSRF guard", 1, true), out)
  end)

  it("goes through a proxy the host names for guarded requests (MCP_OAUTH_PROXY, or the proxy option)", function()
    if not srv then pending("node is needed for the fixture"); return end
    local env = ("MCP_OAUTH_PROXY=http://127.0.0.1:%d"):format(srv.port)
    local out = request(env, { url = ("http://203.0.113.9:%d/x"):format(srv.port), refuse_addresses = "local" })
    assert.equals("ok via-proxy", out)
    out = request("", { url = ("http://203.0.113.9:%d/x"):format(srv.port), refuse_addresses = "local",
      proxy = ("http://127.0.0.1:%d"):format(srv.port) })
    assert.equals("ok via-proxy", out)
    -- "" (no proxy) wins over the environment's
    out = request(("http_proxy=http://127.0.0.1:%d"):format(srv.port),
      { url = ("http://127.0.0.1:%d/x"):format(srv.port), proxy = "" })
    assert.equals("ok direct", out)
  end)

  it("checks its options", function()
    assert.has_error(function() mcp.http_request({ url = "http://x.test/", proxy = 1 }) end,
      "mcp.http_request: proxy must be a string")
  end)
end)
