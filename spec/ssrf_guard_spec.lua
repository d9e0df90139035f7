-- The SSRF guard at connect time (src/transports/addrguard.c through core.http_fetch's
-- refuse_addresses): a host *name* that resolves to a loopback or link-local address is refused
-- when the request is made on behalf of a server that is not on one. Names are pinned to
-- addresses with `resolve` (curl's --resolve), so no DNS is involved; a refused address is never
-- connected to, and the only address ever connected to is the fixture's on 127.0.0.1.
local mcp = require("mcp")
local H = require("http_helper")
local url = require("mcp.auth.url")

describe("the connect-time SSRF guard", function()
  local srv
  setup(function()
    if H.have_node() then srv = H.start() end
  end)
  teardown(function() H.stop(srv) end)

  local function get(name, pin, guard)
    local u = ("http://%s:%d/control/state"):format(name, srv.port)
    return mcp.http_request({ url = u, resolve = { ("%s:%d:%s"):format(name, srv.port, pin) },
      refuse_addresses = guard, timeout_ms = 10000 })
  end

  it("lets a pinned name through without a guard (the control), and refuses it with one", function()
    if not srv then pending("node is needed for the fixture"); return end
    -- the fixture answers a Host it does not know with 403 (its own rebinding check): an answer,
    -- so the exchange took place
    local res = assert(get("rebind.test", "127.0.0.1", nil))
    assert.equals(403, res.status)
    for _, guard in ipairs({ "loopback", "local" }) do
      local none, err = get("rebind.test", "127.0.0.1", guard)
      assert.is_nil(none)
      assert.equals("transport", err.kind)
      assert.truthy(err.message:find("refused to connect to 127.0.0.1", 1, true), err.message)
      assert.truthy(err.message:find("SSRF guard", 1, true), err.message)
    end
  end)

  it("refuses on a fresh connection, so a kept-alive one to the same name does not bypass it", function()
    if not srv then pending("node is needed for the fixture"); return end
    assert.equals(403, assert(get("kept.test", "127.0.0.1", nil)).status) -- leaves a connection open
    local none, err = get("kept.test", "127.0.0.1", "loopback")
    assert.is_nil(none)
    assert.truthy(err.message:find("refused to connect", 1, true), err.message)
    assert.equals(403, assert(get("kept.test", "127.0.0.1", nil)).status) -- and the name still works
  end)

  it("refuses IPv6 loopback, unspecified and link-local addresses, and the IPv4 metadata address", function()
    if not srv then pending("node is needed for the fixture"); return end
    for _, case in ipairs({ { "[::1]", "::1", "loopback" }, { "0.0.0.0", "0.0.0.0", "loopback" },
      { "169.254.169.254", "169.254.169.254", "local" }, { "[fe80::1]", "fe80::1", "local" } }) do
      local none, err = get("meta.test", case[1], case[3])
      assert.is_nil(none, case[2])
      assert.truthy(err.message:find("refused to connect to " .. case[2], 1, true), err.message)
    end
  end)

  it("checks its options", function()
    assert.has_error(function() mcp.http_request({ url = "http://x.test/", refuse_addresses = "all" }) end,
      'mcp.http_request: refuse_addresses must be "loopback" or "local"')
    assert.has_error(function() mcp.http_request({ url = "http://x.test/", resolve = "x" }) end,
      'mcp.http_request: resolve must be an array of "host:port:address"')
  end)

  it("is chosen from the MCP server the OAuth flow works for (url.connect_guard)", function()
    assert.is_nil(url.connect_guard("http://127.0.0.1:8080/mcp"))
    assert.is_nil(url.connect_guard("http://localhost/mcp"))
    assert.equals("loopback", url.connect_guard("http://10.1.2.3/mcp"))
    assert.equals("loopback", url.connect_guard("https://[fd00::5]/mcp"))
    assert.equals("local", url.connect_guard("https://mcp.example.com/mcp"))
    assert.equals("local", url.connect_guard("https://203.0.113.7/mcp"))
    assert.equals("local", url.connect_guard("not a url"))
  end)

  it("is passed by the OAuth flow's metadata, registration and token requests", function()
    local fetch = require("mcp.fetch")
    local discovery = require("mcp.auth.discovery")
    local real = fetch.request
    local seen = {}
    fetch.request = function(opts)
      seen[#seen + 1] = opts.refuse_addresses or "none"
      return nil, mcp.new_error(nil, "stopped here", nil, { kind = "transport" })
    end
    finally(function() fetch.request = real end)
    discovery.get("https://auth.example.com/.well-known/oauth-authorization-server", "https://mcp.example.com/mcp")
    discovery.get("http://127.0.0.1:9/.well-known/oauth-authorization-server", "http://127.0.0.1:9/mcp")
    assert.same({ "local", "none" }, seen)
  end)
end)
