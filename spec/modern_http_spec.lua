-- The dual-era client over streamable HTTP: the 2026-07-28 wire against
-- spec/fixtures/modern_http.mjs (modern_server.lua behind the 2026-07-28 HTTP transport), and the
-- server/discover probe's fallback to initialize against spec/fixtures/http_server.mjs (a legacy
-- server) for each way a legacy HTTP server can refuse the probe.
local mcp = require("mcp")
local helper = require("helper")
local H = require("http_helper")

if not H.have_node() or not H.have_curl() then
  describe("2026-07-28 over HTTP", function()
    pending("needs node and curl")
  end)
  return
end

local function methods(state, http_method)
  local out = {}
  for _, r in ipairs(state.requests) do
    if http_method == nil or r.http_method == http_method then out[#out + 1] = r.rpc_method or r.http_method end
  end
  return out
end

describe("2026-07-28 over streamable HTTP", function()
  local srv
  before_each(function() srv = H.start_modern() end)
  after_each(function() H.stop(srv) end)

  it("is stateless: MCP-Protocol-Version on every POST, no session id (though the server sends one), no GET, no DELETE", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    assert.are.equal("2026-07-28", c:protocol_version())
    assert.are.equal("lua-mcp-modern-server", c:server_info().name)
    assert(c:list_tools())
    assert(c:call_tool("echo", { message = "a" }))
    assert(c:call_tool("echo", { message = "b" }))
    c:close()
    local state = H.modern_state(srv)
    assert.are.same({ "server/discover", "tools/list", "tools/call", "tools/call" }, methods(state))
    for _, r in ipairs(state.requests) do
      assert.are.equal("POST", r.http_method)
      assert.are.equal(200, r.status)
      assert.are.equal("2026-07-28", r.headers["mcp-protocol-version"])
      assert.is_nil(r.headers["mcp-session-id"])
    end
  end)

  it("follows a task to its result; the progress the server reports on the tasks/get streams reaches on_progress", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    local got = {}
    local res = assert(c:call_tool("task", { polls = 2, progress = true },
      { on_progress = function(p) got[#got + 1] = p.progress end }))
    assert.are.equal("task done", res.content[1].text)
    assert.is_true(helper.wait_until(function() return #got == 2 end, helper.ms(2000)))
    assert.are.same({ 1, 2 }, got)
    assert.are.same({ "server/discover", "tools/call", "tasks/get", "tasks/get" }, methods(H.modern_state(srv)))
    assert.is_nil(next(c.progress))
  end)

  it("sends Mcp-Method on every request, Mcp-Name where it applies, and the tool's Mcp-Param-* headers", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    assert(c:list_tools())
    assert(c:call_tool("region", { region = " eu west ", priority = 7, note = "not bound" }))
    assert(c:call_tool("region", { region = "us" })) -- priority absent: no header
    assert(c:read_resource("test://r/1"))
    assert(c:get_prompt("greet", { name = "Ann" }))
    local rs = H.modern_state(srv).requests
    local by = {}
    for _, r in ipairs(rs) do
      assert.are.equal(r.rpc_method, r.headers["mcp-method"])
      by[#by + 1] = r
    end
    assert.are.same({ "server/discover", "tools/list", "tools/call", "tools/call", "resources/read", "prompts/get" },
      methods({ requests = by }))
    assert.is_nil(by[1].headers["mcp-name"])
    assert.are.equal("region", by[3].headers["mcp-name"])
    assert.are.equal(mcp.encode_header_value(" eu west "), by[3].headers["mcp-param-region"])
    assert.are.equal("=?base64?IGV1IHdlc3Qg?=", by[3].headers["mcp-param-region"])
    assert.are.equal("7", by[3].headers["mcp-param-priority"])
    assert.are.equal("us", by[4].headers["mcp-param-region"])
    assert.is_nil(by[4].headers["mcp-param-priority"])
    assert.are.equal("test://r/1", by[5].headers["mcp-name"])
    assert.are.equal("greet", by[6].headers["mcp-name"])
    -- a bound argument of the wrong type fails the call before anything is sent
    local res, err = c:call_tool("region", { region = 42 })
    assert.is_nil(res)
    assert.are.equal("validation", err.kind)
    assert.are.equal(6, #H.modern_state(srv).requests)
  end)

  it("cancels a request by closing its response stream, without notifications/cancelled", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    local token = mcp.cancel_token()
    local res, err
    mcp.spawn(function() res, err = c:call_tool("hang", {}, { cancel = token }) end)
    mcp.spawn(function()
      mcp.sleep(100)
      token:cancel("the user gave up")
    end)
    mcp.run()
    assert.is_nil(res)
    assert.are.equal("cancelled", err.kind)
    local res2, err2 = c:call_tool("hang", {}, { timeout_ms = 100 })
    assert.is_nil(res2)
    assert.are.equal("timeout", err2.kind)
    assert.is_true(helper.wait_until(function() return #H.modern_state(srv).disconnects == 2 end, helper.ms(3000)))
    local state = H.modern_state(srv)
    assert.are.equal("tools/call", state.disconnects[1].rpc_method)
    for _, m in ipairs(methods(state)) do assert.are_not.equal("notifications/cancelled", m) end
  end)

  it("answers input_required rounds (elicitation, sampling, roots) over HTTP", function()
    local c = assert(mcp.create_http_client(srv.url, {
      on_elicitation_request = function() return mcp.elicitation.accept({ confirmed = true }) end,
      on_sampling_request = function() return mcp.sampling.text("ok") end,
      roots = { "/srv" },
    }))
    finally(function() c:close() end)
    local res = assert(c:call_tool("mrtr", { rounds = 2, kinds = { "elicitation", "sampling", "roots" } }))
    assert.are.equal(2, #res.structuredContent.responses)
    assert.are.equal("ok", res.structuredContent.responses[2].sampling.content.text)
    assert.are.same({ "server/discover", "tools/call", "tools/call", "tools/call" }, methods(H.modern_state(srv)))
  end)

  it("drops a tool whose x-mcp-header annotation is invalid, reports it to on_error, keeps the others usable", function()
    local errs = {}
    local c = assert(mcp.create_http_client(srv.url, { on_error = function(e) errs[#errs + 1] = e end }))
    finally(function() c:close() end)
    local names = {}
    for _, t in ipairs(assert(c:list_tools())) do names[t.name] = true end
    assert.is_nil(names.bad_header)
    assert.is_true(names.region)
    assert.is_true(names.echo)
    assert.is_true(helper.wait_until(function() return #errs > 0 end, helper.ms(2000)))
    assert.are.equal(1, #errs)
    assert.is_truthy(helper.has(errs[1].message, 'Ignoring MCP tool "bad_header"'), errs[1].message)
    assert.is_truthy(helper.has(errs[1].message, "boolean, integer, or string"), errs[1].message)
    local res = assert(c:call_tool("region", { region = "eu-west", priority = 2 }))
    assert.are.same({ region = "eu-west", priority = 2 }, mcp.json.decode(res.content[1].text))
  end)

  it("delivers a request's log messages from its response stream, asked for through _meta", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    local got = {}
    c:on_log_message(function(p) got[#got + 1] = p end)
    assert(c:set_logging_level("debug"))
    assert.are.equal('log level "debug"', assert(c:call_tool("log", {})).content[1].text)
    assert.is_true(helper.wait_until(function() return #got == 1 end, helper.ms(2000)))
    assert.are.equal("hello", got[1].data)
  end)

  it("keeps a subscriptions/listen stream open for the notifications, and closes it to cancel", function()
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    local got = {}
    -- (each POST has its own connection: wait until the server has the listen)
    c:on_tools_list_changed(function() got[#got + 1] = "tools" end)
    local l
    helper.wait_until(function()
      l = assert(c:call_tool("listens", {})).structuredContent.listens
      return #l == 1
    end, helper.ms(3000))
    assert.are.same({ toolsListChanged = true }, l[1].notifications)
    assert(c:subscribe_resource("test://r/2"))
    c:on_resource_updated(function(p) got[#got + 1] = p.uri end)
    helper.wait_until(function()
      l = assert(c:call_tool("listens", {})).structuredContent.listens
      return #l == 1 and l[1].notifications.resourceSubscriptions ~= nil
    end, helper.ms(3000))
    assert.are.equal(1, #l)
    assert.are.same({ toolsListChanged = true, resourceSubscriptions = { "test://r/2" } }, l[1].notifications)
    assert(c:call_tool("notify", {}))
    assert.is_true(helper.wait_until(function() return #got == 1 end, helper.ms(2000)))
    assert.are.same({ "tools" }, got) -- test://r/1 was updated, not test://r/2
    -- the first listen, replaced by subscribe_resource: its stream was closed
    assert.is_true(helper.wait_until(function() return #H.modern_state(srv).disconnects == 1 end, helper.ms(3000)))
    local state = H.modern_state(srv)
    assert.are.equal("subscriptions/listen", state.disconnects[1].rpc_method)
  end)

  it("opens a listen again after its stream ends abruptly, and gives up after REOPEN.max_tries ends in a row", function()
    local REOPEN = require("mcp.listen").REOPEN
    local saved = { base_ms = REOPEN.base_ms, max_tries = REOPEN.max_tries }
    REOPEN.base_ms, REOPEN.max_tries = 20, 3
    local reported = {}
    local c
    -- (one finally: busted keeps only the last one a test sets)
    finally(function()
      REOPEN.base_ms, REOPEN.max_tries = saved.base_ms, saved.max_tries
      if c then c:close() end
    end)
    c = assert(mcp.create_http_client(srv.url, { on_error = function(e) reported[#reported + 1] = e end }))
    local got = 0
    c:on_tools_list_changed(function() got = got + 1 end)
    local function listens()
      return assert(c:call_tool("listens", {})).structuredContent.listens
    end
    local l
    assert.is_true(helper.wait_until(function() l = listens(); return #l == 1 end, helper.ms(3000)))
    local first = l[1].id
    assert.is_true(helper.wait_until(function() return c.era.listen.current and c.era.listen.current.acknowledged ~= nil end,
      helper.ms(3000)))
    assert.are.equal(1, H.get_json(srv, "/cut-listens").cut)
    -- a new listen (another request id) takes its place, and its notifications arrive
    assert.is_true(helper.wait_until(function() l = listens(); return #l == 1 and l[1].id ~= first end,
      helper.ms(5000)))
    assert(c:call_tool("notify", {}))
    assert.is_true(helper.wait_until(function() return got == 1 end, helper.ms(2000)))
    assert.are.equal(1, #reported)
    assert.are.equal("transport", reported[1].kind)
    assert.truthy(reported[1].message:find("opening it again in 20 ms", 1, true), reported[1].message)
    -- every listen from now on is dropped before its acknowledgment: 20, 40, 80 ms, then it gives up
    local posts_before = #methods(H.modern_state(srv), "POST")
    H.get_json(srv, "/cut-listens?always=1")
    assert.is_true(helper.wait_until(function()
      local last = reported[#reported]
      return last ~= nil and last.message:find("gave up", 1, true) ~= nil
    end, helper.ms(5000)))
    assert.truthy(reported[#reported].message:find("gave up after 3 abrupt ends in a row", 1, true))
    -- listen requests sent since (a POST the transport sends once more on a dropped kept-alive
    -- connection carries the same id: counted once)
    local ids, n = {}, 0
    local st = H.modern_state(srv)
    local seen_posts = 0
    for _, r in ipairs(st.requests) do
      if r.http_method == "POST" then
        seen_posts = seen_posts + 1
        if seen_posts > posts_before and r.rpc_method == "subscriptions/listen" and not ids[r.rpc_id] then
          ids[r.rpc_id] = true
          n = n + 1
        end
      end
    end
    assert.are.equal(3, n) -- the ones re-opened after the cut, and no more
    assert.is_nil(c.era.listen.timer)
    assert(c:list_tools()) -- the client itself is fine
  end)

  it("fails on a -32022 the version retry cannot fix, without falling back to initialize", function()
    H.stop(srv)
    srv = H.start_modern("--reject-first=2")
    local c, err = mcp.create_http_client(srv.url, {})
    assert.is_nil(c)
    assert.are.equal(-32022, err.code)
    assert.are.same({ "server/discover", "server/discover" }, methods(H.modern_state(srv)))
  end)
end)

describe("2026-07-28 over streamable HTTP: a listen opened again is background work #auth", function()
  local srv
  before_each(function() srv = H.start_modern() end)
  after_each(function() H.stop(srv) end)

  -- No call waits on a listen opened again on a timer: refused with 401, it is the background's,
  -- which may refresh but never logs in (with the static oauth config: one refresh, then
  -- login_required), as a notification is, not a call's; it waits, held, for a call's refresh (or
  -- login), rather than coming back into 401s until the re-opens give up, and then goes on.
  it("refused with 401, it refreshes as the background does, then waits for a call's refresh and goes on", function()
    local REOPEN = require("mcp.listen").REOPEN
    local saved = REOPEN.base_ms
    REOPEN.base_ms = 20
    local reports, refreshes, can = {}, 0, false
    local c
    finally(function()
      REOPEN.base_ms = saved
      if c then c:close() end
    end)
    c = assert(mcp.create_http_client(srv.url, {
      transport_on_error = function(e) reports[#reports + 1] = e end,
      oauth = { access_token = "first", refresh_token_fn = function()
        refreshes = refreshes + 1
        if can then return "second", 60 end
        return nil, "refused by the host"
      end } }))
    c:on_tools_list_changed(function() end)
    local function acknowledged()
      return c.era.listen.current and c.era.listen.current.acknowledged ~= nil
    end
    assert.is_true(helper.wait_until(acknowledged, helper.ms(3000)))
    local function listens()
      local out = {}
      for _, r in ipairs(H.modern_state(srv).requests) do
        if r.rpc_method == "subscriptions/listen" then out[#out + 1] = r end
      end
      return out
    end
    for _ = 1, 3 do H.get_json(srv, "/refuse?method=subscriptions/listen") end
    assert.are.equal(1, H.get_json(srv, "/cut-listens").cut)
    local function login_required() return helper.login_required_reported(reports) end
    assert.is_true(helper.wait_until(function() return refreshes >= 1 and (login_required() or #reports > 0) end,
      helper.ms(5000)), "the listen opened again was not refused")
    assert.are.equal(1, refreshes)
    assert.is_true(login_required(), "not taken as background work: " .. tostring(reports[1] and reports[1].message))
    -- it waits: no more listens into 401 (re-opens 40, 80 ms later before)
    helper.wait_until(function() return #listens() > 2 end, helper.ms(1000))
    assert.are.equal(2, #listens())
    assert.are.equal(401, listens()[2].status)
    -- a call refused with 401 refreshes; the listen goes again with the new token
    can = true
    H.get_json(srv, "/refuse?method=tools/call")
    assert(c:call_tool("echo", { message = "a" }))
    assert.are.equal(2, refreshes)
    assert.is_true(helper.wait_until(acknowledged, helper.ms(5000)), "the listen did not come back")
    local l = listens()
    assert.are.equal("Bearer second", l[#l].headers.authorization)
  end)
end)

describe("server/discover against a legacy HTTP server falls back to initialize", function()
  local srv
  after_each(function() H.stop(srv) end)

  -- With a fail_next fault, the state must show that the fault answered the probe.
  local function connect(flags, opts)
    local faulty = flags:find("fail-next", 1, true) ~= nil
    srv = H.start(flags)
    local c = assert(mcp.create_http_client(srv.url, opts or {}))
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    assert(c:list_tools())
    local state = H.state(srv)
    local rpc = {}
    for _, r in ipairs(state.requests) do
      if r.http_method == "POST" then rpc[#rpc + 1] = r end
    end
    assert.are.equal("server/discover", rpc[1].rpc_method)
    assert.are.equal("2026-07-28", rpc[1].headers["mcp-protocol-version"])
    assert.are.equal("initialize", rpc[2].rpc_method)
    -- after the fallback: the legacy session, with its id and the negotiated version
    local last = rpc[#rpc]
    assert.are.equal("tools/list", last.rpc_method)
    assert.is_string(last.session_id)
    assert.are.equal(mcp.PROTOCOL_VERSION, last.headers["mcp-protocol-version"])
    if faulty then
      local injected = false
      for _, f in ipairs(state.faults) do
        if f.kind == "fail_next" and f.rpc_method == "server/discover" then injected = true end
      end
      assert.is_true(injected, "the fault answered the probe")
    end
    return c, rpc
  end

  it("on 400 with a JSON-RPC error that is not a modern one (this server refuses the unknown MCP-Protocol-Version)", function()
    local c, rpc = connect("")
    c:close()
    assert.are.equal(400, rpc[1].status)
  end)

  for _, f in ipairs({
    { "on 404 with a plain-text body", "404" },
    { "on 500", "500" },
    { "on 405", "405" },
    { "on 400 with a JSON-RPC -32601 body", '{"status":400,"jsonrpc_error":{"code":-32601,"message":"Method not found"}}' },
    { "on 200 with a body that is not JSON", '{"status":200,"body":"<html>hello</html>","content_type":"text/html"}' },
  }) do
    it(f[1], function()
      local c = connect("--fault-methods=server/discover '--fail-next=" .. f[2] .. "'")
      c:close()
    end)
  end

  it("on no answer within protocol_discovery_timeout_ms", function()
    local c = connect("--slow-ms=400", { protocol_discovery_timeout_ms = 150 })
    c:close()
  end)

  it("on -32022 naming only legacy versions: initialize asks for the newest of them", function()
    srv = H.start("--fault-methods=server/discover "
      .. [['--fail-next={"status":400,"jsonrpc_error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-06-18","2025-03-26"]}}}']])
    local c = assert(mcp.create_http_client(srv.url, {}))
    finally(function() c:close() end)
    assert.are.equal("2025-06-18", c:protocol_version())
  end)

  it("fails on -32021 (a modern server), never falling back", function()
    srv = H.start("--fault-methods=server/discover "
      .. [['--fail-next={"status":400,"jsonrpc_error":{"code":-32021,"message":"Missing required client capability"}}']])
    local c, err = mcp.create_http_client(srv.url, {})
    assert.is_nil(c)
    assert.are.equal(-32021, err.code)
    assert.is_truthy(helper.has(err.message, "Missing required client capability"), err.message)
    for _, r in ipairs(H.state(srv).requests) do assert.are_not.equal("initialize", r.rpc_method) end
  end)
end)
