-- Hostile TLS: an HTTPS MCP server on loopback (spec/hostile/servers/https_server.mjs) with
-- certificates made at setup by the openssl command (spec/hostile/tls.lua). Every bad certificate
-- is a clear "transport" error naming the problem, at once, leaking no fd, and a second HTTPS
-- client of the same process (the bystander, on the valid certificate) keeps working. The valid
-- certificate with the test CA connects: the negative cases fail for the reason they claim.
local mcp = require("mcp")
local helper = require("helper")
local bounds = require("hostile.bounds")
local tls = require("hostile.tls")

-- Without the commands the cases are pending, with the reason (never a vacuous pass).
local describe_tls = describe
if not (bounds.have_node() and tls.have_openssl()) then
  describe_tls = function(name)
    pending(name .. ": needs the node and openssl commands (make deps installs them)")
  end
end

describe_tls("hostile TLS server", function()
  local certs, srv, bystander

  setup(function()
    certs = tls.make_certs()
    srv = tls.start_https(certs)
    bystander = assert(mcp.create_http_client(tls.url(srv, "good"),
      { request_timeout_ms = helper.ms(30000), curl_options = { cainfo = certs.ca } }))
    bounds.assert_unharmed(bystander) -- its connections settle before the first case counts fds
  end)

  teardown(function()
    if bystander then bystander:close() end
    tls.stop_https(srv)
    if certs then tls.remove(certs.dir) end
    assert.are.equal(0, bounds.reap_all())
  end)

  after_each(function()
    bounds.assert_unharmed(bystander)
  end)

  local ATTEMPTS = 5

  -- The fds after ATTEMPTS attempts against fds1, the count after the first: a closing
  -- connection may take a loop step or two to go, so the check waits for it (bounded). One fd of
  -- slack for the rest of the process (a client an earlier spec file left to the GC, say); a
  -- descriptor leaked per attempt would be ATTEMPTS - 1 more.
  local function assert_no_fd_growth(fds1)
    local n
    helper.wait_until(function()
      n = bounds.fd_count()
      return n <= fds1
    end, helper.ms(2000))
    assert.is_true(n <= fds1 + 1, ("fds after the first of %d attempts %d, after the last %d"):format(ATTEMPTS, fds1, n))
  end

  -- Connect to the port of the certificate name with opts, ATTEMPTS times; each failure must be a
  -- transport error matching pattern, within a bounded time, with nothing getting through to
  -- HTTP, and the repeats must leave no fd behind. in_handshake: the server sees the handshake
  -- fail (the client refused the chain); a host name mismatch is found after it completed.
  local function refused(name, opts, pattern, in_handshake)
    local o = { request_timeout_ms = helper.ms(30000) }
    for k, v in pairs(opts or {}) do o[k] = v end
    local fds1
    for _ = 1, ATTEMPTS do
      local st0 = tls.state(srv)
      local ms, r = bounds.timed(function() return mcp.create_http_client(tls.url(srv, name, "refused"), o) end)
      local c, err = r[1], r[2]
      assert.is_nil(c)
      assert.are.equal("transport", err.kind)
      assert.truthy(err.message:find(pattern), "the message does not name the problem: " .. tostring(err))
      -- Bound: a refused certificate fails at the handshake, never at the 30 s request timeout.
      assert.is_true(ms < helper.ms(5000), "failed after " .. ms .. " ms")
      local st = tls.state(srv)
      if in_handshake then assert.is_true(st.tls_errors > st0.tls_errors, "the server saw no failed handshake") end
      assert.is_nil(st.requests["/refused"], "a request got through")
      fds1 = fds1 or bounds.fd_count()
    end
    assert_no_fd_growth(fds1)
  end

  it("a self-signed certificate with the default trust is refused as self-signed", function()
    refused("selfsigned", nil, "self.signed certificate", true)
  end)

  it("a certificate of a CA the client was not told about is refused: unable to get local issuer", function()
    refused("good", nil, "unable to get local issuer certificate", true)
  end)

  it("with the test CA as curl_options.cainfo, a valid certificate connects and calls a tool (the control)", function()
    local fds1
    for _ = 1, ATTEMPTS do
      local c = assert(mcp.create_http_client(tls.url(srv, "good"),
        { request_timeout_ms = helper.ms(30000), curl_options = { cainfo = certs.ca } }))
      local res = assert(c:call_tool("x", {}))
      assert.are.equal("ok", res.content[1].text)
      c:close()
      -- A closed client's connections may stay in libcurl's shared connection cache (for the
      -- next client to reuse), so the count after the first is the base, not the count before.
      fds1 = fds1 or bounds.fd_count()
    end
    assert_no_fd_growth(fds1)
  end)

  it("with the test CA, an expired certificate is refused as expired", function()
    refused("expired", { curl_options = { cainfo = certs.ca } }, "certificate has expired", true)
  end)

  it("with the test CA, a certificate for another name is refused on the host name", function()
    refused("misnamed", { curl_options = { cainfo = certs.ca } }, "no alternative certificate subject name matches", false)
  end)

  it("mcp.http_request (the OAuth metadata fetch) to a bad certificate returns nil, err", function()
    local fds1
    for _ = 1, ATTEMPTS do
      local ms, r = bounds.timed(function()
        return mcp.http_request({ url = tls.url(srv, "selfsigned", ".well-known/oauth-protected-resource") })
      end)
      local res, err = r[1], r[2]
      assert.is_nil(res)
      assert.are.equal("transport", err.kind)
      assert.truthy(err.message:find("self.signed certificate"), tostring(err))
      assert.is_true(ms < helper.ms(5000), "failed after " .. ms .. " ms")
      -- The same through the core directly (core.http_fetch): its callback gets nil, message.
      local msg
      mcp.core.http_fetch({ method = "GET", url = tls.url(srv, "good", "x"), headers = {},
        timeout_ms = helper.ms(30000), max_body = 1024 }, function(got, m) msg = got == nil and m or "answered" end)
      helper.wait_until(function() return msg ~= nil end, helper.ms(5000))
      assert.truthy(msg and msg:find("unable to get local issuer certificate", 1, true), tostring(msg))
      fds1 = fds1 or bounds.fd_count()
    end
    assert_no_fd_growth(fds1)
  end)
end)
