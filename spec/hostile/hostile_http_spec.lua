-- Hostile HTTP servers (spec/hostile/servers/http_server.mjs on loopback): each case is bounded
-- and leaves a second client of the same process (the bystander) working.
local mcp = require("mcp")
local helper = require("helper")
local bounds = require("hostile.bounds")

local describe_node = bounds.have_node() and describe or pending

describe_node("hostile HTTP server", function()
  local srv, bystander

  setup(function()
    srv = bounds.start_http()
    bystander = assert(bounds.http(srv, "plain"))
  end)

  teardown(function()
    if bystander then bystander:close() end
    bounds.stop_http(srv)
    assert.are.equal(0, bounds.reap_all())
  end)

  after_each(function()
    bounds.assert_unharmed(bystander)
  end)

  local function last_request(path, method)
    local reqs = bounds.http_state(srv).requests
    for i = #reqs, 1, -1 do
      if reqs[i].path == path and (method == nil or reqs[i].method == method) then return reqs[i] end
    end
  end

  it("sends header values of any length back whole: a 10 KB session id, a 6000-byte token (defect 6)", function()
    local token = string.rep("t", 6000)
    local c = assert(bounds.http(srv, "long-sid", { bearer_token = token }))
    assert.truthy(c:list_tools())
    local r = last_request("/long-sid", "POST")
    assert.are.equal(10000, #r.headers["mcp-session-id"])
    assert.are.equal("Bearer " .. token, r.headers["authorization"])
    c:close()
  end)

  it("refuses a session id with a CR and never echoes it (defect 7)", function()
    local c, err = bounds.http(srv, "cr-sid")
    assert.is_nil(c)
    assert.truthy(err.message:find("invalid Mcp-Session-Id", 1, true), tostring(err))
    local seen = 0
    for _, r in ipairs(bounds.http_state(srv).requests) do
      if r.path == "/cr-sid" then
        seen = seen + 1
        assert.is_nil(r.headers["mcp-session-id"], "a session id was sent back")
      end
    end
    assert.is_true(seen >= 1)
  end)

  for _, mode in ipairs({ "bad-json", "gzip", "empty200" }) do
    it("completes a call whose HTTP 200 has an unusable body at once (" .. mode .. ", defect 8)", function()
      local c = assert(bounds.http(srv, mode))
      local res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(60000) })
      assert.is_nil(res)
      assert.are_not.equal("timeout", err.kind)
      assert.truthy(err.message:find("HTTP 200", 1, true), tostring(err))
      c:close()
    end)
  end

  it("a GET stream ending at once with retry: 1 reconnects at a bounded rate (defect 11)", function()
    local errs = {}
    local c = assert(bounds.http(srv, "retry1", { on_error = function(e) errs[#errs + 1] = tostring(e) end }))
    mcp.sleep(2000)
    c:close()
    local gets = 0
    for _, r in ipairs(bounds.http_state(srv).requests) do
      if r.path == "/retry1" and r.method == "GET" then gets = gets + 1 end
    end
    -- Before: about 1200 in 2 s. Now: max_reconnects (5) at the 100 ms floor, then 1 s, 1.5 s, ...
    assert.is_true(gets >= 2 and gets <= 10, "GET requests in 2 s: " .. gets)
    local told = false
    for _, e in ipairs(errs) do told = told or e:find("keeps ending without a message", 1, true) ~= nil end
    assert.is_true(told)
  end)

  it("the transport's idle timeout fires on time (defect 12)", function()
    local c = assert(bounds.http(srv, "idle", { timeout_ms = 1000 }))
    local ms, r = bounds.timed(function() return { c:call_tool("x", {}, { timeout_ms = helper.ms(60000) }) } end)
    local res, err = r[1][1], r[1][2]
    assert.is_nil(res)
    assert.truthy(err.message:find("idle timeout", 1, true), tostring(err))
    -- Bound: 1 s of silence, not 7 (libcurl's LOW_SPEED_TIME).
    assert.is_true(ms >= 900 and ms < helper.ms(3000), "fired after " .. ms .. " ms")
    c:close()
  end)

  it("a cross-origin redirect strips every user and session header (defect 13)", function()
    local c = assert(bounds.http(srv, "redirect", {
      redirect = mcp.REDIRECT_FOLLOW, headers = { ["X-Api-Key"] = "secret" }, bearer_token = "tok",
    }))
    assert.truthy(c:list_tools({ headers = { ["X-Trace"] = "per-request" } }))
    local landed = 0
    for _, r in ipairs(bounds.http_state(srv).requests) do
      if r.path == "/plain" and r.headers.host:find("^localhost:") then
        landed = landed + 1
        assert.is_nil(r.headers["x-api-key"])
        assert.is_nil(r.headers["authorization"])
        assert.is_nil(r.headers["mcp-session-id"])
        assert.is_nil(r.headers["x-trace"]) -- a call's own headers are user headers too
      end
    end
    assert.is_true(landed >= 2) -- initialize and tools/list at least
    c:close()
  end)

  it("a same-origin redirect keeps them", function()
    local c = assert(bounds.http(srv, "redirect-same", {
      redirect = mcp.REDIRECT_FOLLOW, headers = { ["X-Api-Key"] = "secret" }, bearer_token = "tok",
    }))
    assert.truthy(c:list_tools({ headers = { ["X-Trace"] = "per-request" } }))
    -- the tools/list POST itself (notifications/initialized goes on a reply connection of its
    -- own and may land after it, so the last POST is not always this one)
    local r
    for _, q in ipairs(bounds.http_state(srv).requests) do
      if q.path == "/plain" and q.method == "POST" and q.rpc == "tools/list" then r = q end
    end
    assert.truthy(r, "the tools/list POST reached /plain")
    assert.are.equal("per-request", r.headers["x-trace"]) -- the call's own headers follow the hop
    assert.are.equal("secret", r.headers["x-api-key"])
    assert.are.equal("Bearer tok", r.headers["authorization"])
    assert.are.equal("sid-1", r.headers["mcp-session-id"])
    c:close()
  end)

  it("a server flooding pings and never answering the replies gets a bounded number of connections (defect 3)", function()
    local errs = {}
    local c = assert(bounds.http(srv, "ping-flood", { on_error = function(e) errs[#errs + 1] = tostring(e) end }))
    local rss0 = bounds.rss_kb()
    local dropped = function()
      for _, e in ipairs(errs) do
        if e:find("not answering our POSTs", 1, true) then return true end
      end
    end
    helper.wait_until(dropped, helper.ms(10000))
    assert.truthy(dropped(), "no drop reported: " .. table.concat(errs, "; "))
    -- The transport reported the drops; the session does not report the dropped ping answers again.
    for _, e in ipairs(errs) do assert.falsy(e:find("answer to a server ping was dropped", 1, true), e) end
    local st = bounds.http_state(srv)
    -- Bound: 8 reply POSTs, the GET stream, the bystander's and the state request, not 3000.
    assert.is_true(st.open <= 16, "open connections at the server: " .. st.open)
    assert.is_true(bounds.rss_kb() - rss0 < 64 * 1024, "RSS grew by " .. (bounds.rss_kb() - rss0) .. " KiB")
    -- A new stdio client still starts (fds are not exhausted).
    local s = assert(bounds.stdio("plain"))
    bounds.assert_unharmed(s)
    s:close()
    c:close()
  end)

  it("max_reply_connections = 2, max_queued_replies = 5: the server never sees more than 2 reply POSTs open at once", function()
    local errs = {}
    local c = assert(bounds.http(srv, "ping-flood/small", {
      max_reply_connections = 2, max_queued_replies = 5, on_error = function(e) errs[#errs + 1] = tostring(e) end,
    }))
    local drops = function()
      local n = 0
      for _, e in ipairs(errs) do
        if e:find("not answering our POSTs (2 running, 5 waiting", 1, true) then n = n + 1 end
      end
      return n
    end
    local held = function(st) return (st or bounds.http_state(srv)).held_peak["/ping-flood/small"] or 0 end
    helper.wait_until(function() return drops() > 0 and held() >= 2 end, helper.ms(10000))
    assert.are.equal(1, drops(), "drop reports: " .. table.concat(errs, "; "))
    assert.are.equal(1, #errs, "reports: " .. table.concat(errs, "; ")) -- none of the session's besides
    assert.truthy(errs[1]:find("max_reply_connections, max_queued_replies", 1, true), errs[1])
    local st = bounds.http_state(srv)
    -- Measured at the server: the 2 running reply POSTs are all it ever gets (nothing answers
    -- them, so the 5 waiting never start and the other 2993 answers are dropped).
    assert.are.equal(2, held(st))
    local posts = 0
    for _, r in ipairs(st.requests) do
      if r.path == "/ping-flood/small" and r.method == "POST" and r.rpc == nil then posts = posts + 1 end
    end
    assert.are.equal(2, posts)
    c:close()
  end)

  it("max_reply_connections and max_queued_replies must be integers from 1 to 65536 (HTTP and legacy SSE)", function()
    for _, f in ipairs({ "max_reply_connections", "max_queued_replies" }) do
      for _, bad in ipairs({ 0, -1, 1.5, "8", 65537, true }) do
        for _, make in ipairs({ mcp.http_transport, mcp.sse_transport }) do
          assert.has_error(function() make({ url = srv.base .. "/plain", [f] = bad }) end,
            "mcp: " .. f .. " must be an integer from 1 to 65536")
        end
      end
    end
    -- A misspelt key raises and names the nearest one.
    local ok, err = pcall(mcp.create_http_client, srv.base .. "/plain", { max_reply_connection = 2 })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("max_reply_connections", 1, true), tostring(err))
  end)

  it("an endless event stream costs bounded memory and ends with the call's timeout", function()
    local c = assert(bounds.http(srv, "endless", { max_message_size = 1024 * 1024 }))
    local rss0 = bounds.rss_kb()
    local res, err = c:call_tool("x", {}, { timeout_ms = 1500 })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_true(bounds.rss_kb() - rss0 < 64 * 1024, "RSS grew by " .. (bounds.rss_kb() - rss0) .. " KiB")
    c:close()
  end)

  it("a body beyond max_message_size fails its call at once, without reading the rest", function()
    local c = assert(bounds.http(srv, "big-body", { max_message_size = 1024 * 1024 }))
    local res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(60000) })
    assert.is_nil(res)
    assert.are_not.equal("timeout", err.kind)
    assert.are.equal("transport", err.kind)
    c:close()
  end)

  it("a TLS failure is a clear connect error", function()
    local c, err = mcp.create_http_client("https://127.0.0.1:" .. srv.port .. "/plain",
      { request_timeout_ms = helper.ms(30000) })
    assert.is_nil(c)
    assert.are.equal("transport", err.kind)
    assert.truthy(err.message:find("SSL", 1, true) or err.message:find("TLS", 1, true), tostring(err))
  end)
end)
