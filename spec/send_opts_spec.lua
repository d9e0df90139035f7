-- The transport contract's send options on the HTTP transports, against the project's HTTP
-- test server (spec/fixtures/http_server.mjs): per-request headers on the POST (replacing what
-- the transport would send, false removing it), transport:set_header for every later exchange,
-- the response's status, headers and body on a failed request, transport:resumption_token.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

-- (busted keeps one finally() per test: the clients a test starts are tracked and closed after it)
after_each(helper.close_tracked)

local function headers_of(c, opts)
  local r = assert(c:call_tool("last_headers", {}, opts))
  return r.structuredContent.headers
end

describe("send options over HTTP #http", function()
  local srv = H.serve("")
  if not srv then return end

  local function client(opts)
    local o = { request_timeout_ms = helper.ms(20000) }
    for k, v in pairs(opts or {}) do o[k] = v end
    return helper.track(assert(mcp.create_http_client(srv.url, o)))
  end

  it("puts per-request headers on that POST only, replacing the transport's own", function()
    local c = client({ headers = { ["X-Config"] = "config" }, bearer_token = "old" })
    local h = headers_of(c, { headers = { ["X-Trace"] = "t-1", ["X-Config"] = "call", Authorization = "Bearer new",
      ["Mcp-Method"] = "tools/call" } })
    assert.equal("t-1", h["x-trace"])
    assert.equal("call", h["x-config"])
    assert.equal("Bearer new", h["authorization"])
    assert.equal("tools/call", h["mcp-method"])
    local h2 = headers_of(c)
    assert.is_nil(h2["x-trace"])
    assert.equal("config", h2["x-config"])
    assert.equal("Bearer old", h2["authorization"])
  end)

  it("false sends the request without the header, even one the transport adds", function()
    local c = client({ headers = { ["X-Config"] = "config" } })
    local h = headers_of(c, { headers = { ["X-Config"] = false, ["MCP-Protocol-Version"] = false } })
    assert.is_nil(h["x-config"])
    assert.is_nil(h["mcp-protocol-version"])
    assert.is_string(h["mcp-session-id"])
    local h2 = headers_of(c, { headers = { ["MCP-Protocol-Version"] = "2025-06-18" } })
    assert.equal("2025-06-18", h2["mcp-protocol-version"])
  end)

  it("sends lua-mcp's User-Agent unless the config, a call or set_header replaces or removes it", function()
    local c = client()
    assert.equal("lua-mcp/0.1.0", headers_of(c)["user-agent"])
    assert.equal("call/2", headers_of(c, { headers = { ["User-Agent"] = "call/2" } })["user-agent"])
    assert.is_nil(headers_of(c, { headers = { ["User-Agent"] = false } })["user-agent"])
    c.transport:set_header("User-Agent", "set/3")
    assert.equal("set/3", headers_of(c)["user-agent"])
    local c2 = client({ headers = { ["User-Agent"] = "config/1" } })
    assert.equal("config/1", headers_of(c2)["user-agent"])
  end)

  it("carries notification headers too", function()
    local c = client()
    assert(c:notify("notifications/roots/list_changed", nil, { headers = { ["X-Note"] = "n1" } }))
    assert.is_true(helper.wait_until(function()
      for _, r in ipairs(H.state(srv).requests) do
        if r.rpc_method == "notifications/roots/list_changed" then return r.headers["x-note"] == "n1" end
      end
      return false
    end, helper.ms(5000)))
  end)

  it("transport:set_header changes every later exchange; nil removes it", function()
    local c = client({ bearer_token = "old" })
    c.transport:set_header("Authorization", "Bearer refreshed")
    c.transport:set_header("X-Tenant", "t7")
    local h = headers_of(c)
    assert.equal("Bearer refreshed", h["authorization"])
    assert.equal("t7", h["x-tenant"])
    c.transport:set_header("X-Tenant", nil)
    assert.is_nil(headers_of(c)["x-tenant"])
    assert.has_error(function() c.transport:set_header("Bad Name", "x") end)
    assert.has_error(function() c.transport:set_header("X-Ok", "a\r\nInjected: 1") end)
  end)

  it("a failed POST gives status_code, response_headers and response_body", function()
    local c = client()
    H.control(srv, { fail_next = { { status = 401, body = "login first",
      headers = { ["WWW-Authenticate"] = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"' } } } })
    local res, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(401, err.status_code)
    assert.equal("transport", err.kind)
    assert.equal('Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
      err.response_headers["www-authenticate"])
    assert.equal("login first", err.response_body)
    H.control(srv, { fail_next = { { status = 403, jsonrpc_error = { code = -32003, message = "forbidden" },
      headers = { ["WWW-Authenticate"] = 'Bearer error="insufficient_scope", scope="a b"' } } } })
    local _, e2 = c:call_tool("echo", { message = "x" })
    assert.equal(403, e2.status_code)
    assert.equal("rpc", e2.kind)
    assert.equal(-32003, e2.code)
    assert.equal('Bearer error="insufficient_scope", scope="a b"', e2.response_headers["www-authenticate"])
    assert.equal("x", assert(c:call_tool("echo", { message = "x" })).content[1].text)
  end)

  it("a POST after a failed one carries nothing of it (status, headers, body, per-call headers)", function()
    local c = client({ max_connections = 1 }) -- one POST at a time: each reuses the one before
    assert.equal("a", assert(c:call_tool("echo", { message = "a" })).content[1].text)
    H.control(srv, { fail_next = { { status = 503, body = "first", headers = { ["Retry-After"] = "7" } } } })
    local _, e1 = c:call_tool("echo", { message = "x" }, { headers = { ["X-Once"] = "1" } })
    assert.equal(503, e1.status_code)
    assert.equal("7", e1.response_headers["retry-after"])
    assert.equal("first", e1.response_body)
    local h = headers_of(c)
    assert.is_nil(h["x-once"])
    H.control(srv, { fail_next = { { status = 500, body = "second" } } })
    local _, e2 = c:call_tool("echo", { message = "x" })
    assert.equal(500, e2.status_code)
    assert.is_nil(e2.response_headers["retry-after"])
    assert.equal("second", e2.response_body)
    assert.equal("b", assert(c:call_tool("echo", { message = "b" })).content[1].text)
  end)

  -- A 2xx JSON body is decoded in place (no copy of a large escaped string); when it does not
  -- answer the request, the request fails with the body as it came, byte for byte.
  it("a 200 JSON body that answers nothing fails the request with the body unchanged", function()
    local c = client()
    local long = ('say \\"hi\\"\\n\\t\\\\ '):rep(600) -- over 4 KiB of source, two-byte escapes only
    local body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse \\"error\\" '
      .. long .. '","data":{"short":"a\\"b","u":"caf\\u00e9 \\/ ' .. long .. '"}}}'
    assert.truthy(mcp.json.decode(body))
    H.control(srv, { fail_next = { { status = 200, content_type = "application/json", body = body } } })
    local res, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(res)
    assert.equal(200, err.status_code)
    assert.equal("rpc", err.kind)
    assert.equal(-32700, err.code)
    assert.equal("caf\195\169 / " .. mcp.json.decode('"' .. long .. '"'), err.data.u)
    assert.equal(body, err.response_body)
    local text = ('a "quoted" line\n\t\\ '):rep(30000) -- 0.7 MB answered with escapes, decoded in place
    assert.equal(text, assert(c:call_tool("echo", { message = text })).content[1].text)
  end)

  it("transport:resumption_token() is the standalone stream's last event id", function()
    local c = client()
    assert.is_true(helper.wait_until(function()
      for _, s in ipairs(H.state(srv).sessions) do if s.get_stream_open then return true end end
      return false
    end, helper.ms(5000)))
    local got = false
    c:on_tools_list_changed(function() got = true end)
    H.control(srv, { send_notification = { method = "notifications/tools/list_changed" } })
    assert.is_true(helper.wait_until(function() return got end, helper.ms(5000)))
    local token = c.transport:resumption_token()
    assert.is_string(token)
    assert.truthy(token:match("^ev%-%d+$"), token)
  end)
end)

describe("send options over legacy SSE #http", function()
  local srv = H.serve("")
  if not srv then return end

  it("puts per-request headers on the POST to the endpoint", function()
    local c = assert(mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000) }))
    finally(function() c:close() end)
    local h = headers_of(c, { headers = { ["X-Trace"] = "sse-1" } })
    assert.equal("sse-1", h["x-trace"])
  end)
end)
