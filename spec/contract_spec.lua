-- The transport contract (docs/API.md "Transports"): the whole client API over a transport
-- written in Lua (mcp.memory_transport_pair with the in-process server
-- spec/fixtures/memory_server.lua), transports that break the contract, the raw message surface
-- (mcp.message_transport), mcp.on_task_error, unknown option keys, connect() on a dead client and
-- integer ids.
local mcp = require("mcp")
local helper = require("helper")
local memory_server = require("fixtures.memory_server")

local json = mcp.json
local has = helper.has
local HAS_INTEGERS = math.type ~= nil

-- A connected client over the memory pair, closed when the test ends.
local function connected(config, opts)
  local c, srv = memory_server.client(config, opts)
  assert(c:connect())
  finally(function() c:close() end)
  return c, srv
end

local function sc(res) return res.structuredContent end

describe("the client over a Lua transport (memory pair)", function()
  it("connects and reports what the server said", function()
    local c, srv = connected({ client_name = "contract-spec" })
    assert.is_true(c:is_connected())
    assert.are.equal("memory-server", c:server_info().name)
    assert.are.equal("An in-process test server.", c:server_instructions())
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    assert.is_table(c:server_capabilities().tools)
    assert.are.equal(c:protocol_version(), c:initialize_result().protocolVersion)
    assert.are.equal("contract-spec", srv.initialize_params.clientInfo.name)
    assert.is_true(helper.wait_until(function() return srv.notifications[1] ~= nil end, helper.ms(2000)))
    assert.are.equal("notifications/initialized", srv.notifications[1].method)
  end)

  it("lists tools (one page, a page by cursor, all pages, the serializable page)", function()
    local c = connected()
    local first = assert(c:list_tools())
    assert.are.equal(5, #first)
    local p = assert(c:list_tools_with_cursor())
    assert.are.equal("6", p.nextCursor)
    local p2 = assert(c:list_tools_with_cursor(p.nextCursor))
    assert.are.equal("error", p2.tools[1].name)
    local all = assert(c:list_all_tools())
    assert.are.equal(14, #all)
    assert.are.equal("hangup", all[14].name)
    assert.are.same(p, assert(c:get_serializable_tools()))
  end)

  it("calls tools: text, structured, JSON-RPC errors, isError, _meta", function()
    local c, srv = connected()
    assert.are.equal("hi", assert(c:call_tool("echo", { message = "hi" })).content[1].text)
    assert.are.equal(5, sc(assert(c:call_tool("add", { a = 2, b = 3 }))).sum)
    local res, err = c:call_tool("error", {})
    assert.is_nil(res)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32603, err.code)
    assert.are.equal("boom", err.data.detail)
    assert.is_true(assert(c:call_tool("tool_error")).isError)
    assert(c:call_tool("echo", { message = "m" }, { meta = { trace = "t1" } }))
    local last = json.decode(srv.received[#srv.received].text)
    assert.are.equal("t1", last.params._meta.trace)
    local _, uerr = c:call_tool("nope")
    assert.are.equal(-32602, uerr.code)
  end)

  it("reports progress, with an integer token on 5.3+", function()
    local c = connected()
    local seen = {}
    local res = assert(c:call_tool("progress", { steps = 4 }, { on_progress = function(p) seen[#seen + 1] = p end }))
    assert.are.equal(4, #seen)
    assert.are.equal(4, seen[4].progress)
    if HAS_INTEGERS then
      assert.are.equal("integer", math.type(seen[1].progressToken))
      assert.are.equal("integer", sc(res).token_type)
    end
  end)

  it("times out and cancels: the call fails locally and the server hears notifications/cancelled", function()
    local c, srv = connected()
    local res, err = c:call_tool("hang", {}, { timeout_ms = 30 })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_nil(err.code)
    local token = mcp.cancel_token()
    local got
    mcp.spawn(function()
      local _, e = c:call_tool("hang", {}, { cancel = token })
      got = e
    end)
    mcp.spawn(function() token:cancel("changed my mind") end)
    mcp.run()
    assert.are.equal("cancelled", got.kind)
    assert.is_true(helper.wait_until(function() return #srv.cancelled == 2 end, helper.ms(2000)))
    if HAS_INTEGERS then assert.are.equal("integer", math.type(srv.cancelled[1])) end
  end)

  it("reads resources and templates, subscribes and unsubscribes", function()
    local c, srv = connected()
    assert.are.equal(2, #assert(c:list_resources()))
    assert.are.equal(3, #assert(c:list_all_resources()))
    assert.are.equal("mem://items/{id}", assert(c:list_resource_templates()).resourceTemplates[1].uriTemplate)
    assert.are.equal(1, #assert(c:list_all_resource_templates()))
    assert.are.equal("resource 2", assert(c:read_resource("mem://r/2")).contents[1].text)
    assert.are.equal("resource 7", assert(c:read_resource("mem://items/7")).contents[1].text)
    local _, err = c:read_resource("mem://nothing")
    assert.are.equal(-32002, err.code)
    assert(c:subscribe_resource("mem://r/1"))
    assert.is_true(srv.subscriptions["mem://r/1"])
    assert(c:unsubscribe_resource("mem://r/1"))
    assert.is_nil(srv.subscriptions["mem://r/1"])
  end)

  it("gets prompts, completes arguments, pings, sets the log level", function()
    local c, srv = connected()
    assert.are.equal(2, #assert(c:list_prompts()))
    assert.are.equal(2, #assert(c:list_all_prompts()))
    assert.are.equal("Hello, Ada!", assert(c:get_prompt("greet", { name = "Ada" })).messages[1].content.text)
    local done = assert(c:complete({ ref = { type = "ref/prompt", name = "greet" }, argument = { name = "name", value = "Al" } }))
    assert.are.same({ "Alice", "Alan" }, { done.completion.values[1], done.completion.values[2] })
    assert(c:ping())
    assert(c:set_logging_level("debug"))
    assert.are.equal("debug", srv.log_level)
  end)

  it("delivers notifications to their handlers", function()
    local c = connected()
    local got = {}
    c:on_tools_list_changed(function() got.tools = true end)
    c:on_resource_updated(function(p) got.uri = p.uri end)
    c:on_log_message(function(p) got.log = p.data end)
    c:on_notification("*", function(_, method) got[method] = true end)
    assert(c:call_tool("notify"))
    assert.is_true(helper.wait_until(function() return got.log ~= nil end, helper.ms(2000)))
    assert.is_true(got.tools)
    assert.are.equal("mem://r/1", got.uri)
    assert.are.equal("hello", got.log)
    assert.is_true(got["notifications/message"])
  end)

  it("answers the server's elicitation, sampling, roots and ping requests", function()
    local c, srv = connected({
      on_elicitation_request = function(req)
        return mcp.elicitation.accept({ name = "Lua " .. req.message })
      end,
      on_sampling_request = function(params)
        return mcp.sampling.text("sampled: " .. params.messages[1].content.text)
      end,
      roots = { { uri = "file:///tmp", name = "tmp" } },
    })
    local caps = srv.initialize_params.capabilities
    assert.is_table(caps.elicitation)
    assert.is_table(caps.sampling)
    assert.is_table(caps.roots)
    local e = sc(assert(c:call_tool("elicit", { message = "who" })))
    assert.are.equal("accept", e.result.action)
    assert.are.equal("Lua who", e.result.content.name)
    local s = sc(assert(c:call_tool("sample", { prompt = "x" })))
    assert.are.equal("sampled: x", s.result.content.text)
    local r = sc(assert(c:call_tool("roots")))
    assert.are.equal("file:///tmp", r.result.roots[1].uri)
    local p = sc(assert(c:call_tool("ping_client")))
    assert.is_table(p.result)
    assert(c:set_roots({ { uri = "file:///home", name = "home" } }))
    assert.is_true(helper.wait_until(function()
      return srv.notifications[#srv.notifications].method == "notifications/roots/list_changed"
    end, helper.ms(2000)))
  end)

  it("passes send options to the transport: the request id, the method, per-request headers", function()
    local c, srv = connected()
    local res = sc(assert(c:call_tool("send_opts", {}, { headers = { ["Mcp-Name"] = "send_opts", ["X-Num"] = 7, ["X-Drop"] = false } })))
    assert.are.equal("tools/call", res.method)
    assert.is_number(res.request_id)
    if HAS_INTEGERS then assert.are.equal("integer", res.id_type) end
    assert.are.equal("send_opts", res.headers["Mcp-Name"])
    assert.are.equal("7", res.headers["X-Num"])
    assert.is_false(res.headers["X-Drop"])
    assert(c:notify("notifications/custom", { a = 1 }, { headers = { ["X-Note"] = "n" } }))
    assert.is_true(helper.wait_until(function()
      local last = srv.received[#srv.received]
      return last.opts.headers ~= nil and last.opts.headers["X-Note"] == "n"
    end, helper.ms(2000)))
    assert.is_nil(srv.received[#srv.received].opts.request_id)
    assert.has_error(function() c:call_tool("echo", {}, { headers = { ["Bad Name"] = "x" } }) end)
    assert.has_error(function() c:call_tool("echo", {}, { headers = { X = "a\r\nb" } }) end)
  end)

  it("runs many calls at once from tasks", function()
    local c = connected()
    local results = {}
    for i = 1, 20 do
      mcp.spawn(function()
        results[i] = assert(c:call_tool("slow", { ms = 5 + i % 3 })).content[1].text
      end)
    end
    mcp.run()
    for i = 1, 20 do assert.are.equal("slept", results[i]) end
  end)

  it("fails what is in flight when the server goes away, and connect() then returns nil, err (closed)", function()
    local closed_with
    local c, srv = connected({ on_close = function(reason) closed_with = reason end })
    local res, err = c:call_tool("hangup")
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
    assert.is_true(srv.closed)
    assert.is_true(helper.wait_until(function() return closed_with ~= nil end, helper.ms(2000)))
    assert.is_truthy(has(closed_with, "peer closed"))
    assert.is_false(c:is_connected())
    local ok, cerr = c:connect()
    assert.is_nil(ok)
    assert.are.equal("closed", cerr.kind)
    local _, lerr = c:list_tools()
    assert.are.equal("closed", lerr.kind)
  end)

  it("close() closes the transport, and the server hears it", function()
    local c, srv = memory_server.client()
    assert(c:connect())
    assert.is_true(c:close())
    assert.is_true(helper.wait_until(function() return srv.closed == true end, helper.ms(2000)))
    assert.is_truthy(has(srv.close_reason, "peer closed"))
    assert.is_true(c:close()) -- idempotent
  end)

  it("works the same with mcp.create_client", function()
    local a, b = mcp.memory_transport_pair()
    memory_server.new(b)
    local c = assert(mcp.create_client({ client_name = "cc" }, a))
    assert.are.equal("hi", assert(c:call_tool("echo", { message = "hi" })).content[1].text)
    c:close()
  end)
end)

describe("a transport written in Lua", function()
  -- A minimal transport whose behaviour each test bends; calls records what the client did.
  local function scripted(overrides)
    local calls = {}
    local t = { calls = calls }
    function t:start(events)
      calls[#calls + 1] = "start"
      self.events = events
      return true
    end
    function t:send(text)
      calls[#calls + 1] = "send"
      local m = json.decode(text)
      if m.method == "initialize" then
        -- answered synchronously, from inside send
        self.events.message(json.encode({ jsonrpc = "2.0", id = m.id, result = {
          protocolVersion = mcp.PROTOCOL_VERSION, capabilities = json.object(), serverInfo = { name = "s", version = "1" } } }))
      end
      if self.on_send then return self.on_send(m) end
      return true
    end
    function t:close(wait_ms)
      calls[#calls + 1] = "close:" .. tostring(wait_ms)
    end
    for k, v in pairs(overrides or {}) do t[k] = v end
    return t
  end

  local function count(calls, what)
    local n = 0
    for _, c in ipairs(calls) do if c:sub(1, #what) == what then n = n + 1 end end
    return n
  end

  it("without send (the issue's { start, close }): connect returns nil, err, nothing is started", function()
    local started = false
    local c = mcp.new_client({ start = function() started = true; return true end, close = function() end })
    local ok, err = c:connect()
    assert.is_nil(ok)
    assert.are.equal("config", err.kind)
    assert.is_truthy(has(err.message, "no send method"))
    assert.is_false(started)
    assert.are_not.equal("connecting", c.state)
  end)

  it("whose start raises: nil, err and it is closed", function()
    local t = scripted({ start = function() error("cannot start") end })
    local c = mcp.new_client(t)
    local ok, err = c:connect()
    assert.is_nil(ok)
    assert.are.equal("transport", err.kind)
    assert.is_truthy(has(err.message, "cannot start"))
    assert.are.equal(1, count(t.calls, "close"))
    local ok2, err2 = c:connect()
    assert.is_nil(ok2)
    assert.are.equal("closed", err2.kind)
  end)

  it("whose start returns something else than true or nil, err: nil, err (config) and it is closed", function()
    local t = scripted({ start = function(self) self.calls[#self.calls + 1] = "start"; return 42 end })
    local ok, err = mcp.new_client(t):connect()
    assert.is_nil(ok)
    assert.are.equal("config", err.kind)
    assert.is_truthy(has(err.message, "returned number"))
    assert.are.equal(1, count(t.calls, "close"))
  end)

  it("whose start returns nil, err: that error, and it is closed", function()
    local t = scripted({ start = function(self) self.calls[#self.calls + 1] = "start"; return nil, "no route" end })
    local ok, err = mcp.new_client(t):connect()
    assert.is_nil(ok)
    assert.is_truthy(has(err.message, "no route"))
    assert.are.equal(1, count(t.calls, "close"))
  end)

  it("whose send raises or fails: that request fails (kind transport), the client goes on", function()
    local t = scripted()
    local c = mcp.new_client(t)
    assert(c:connect())
    t.on_send = function(m)
      if m.method == "raise" then error("wire cut") end
      if m.method == "fail" then return nil, "queue full" end
      return true
    end
    local _, e1 = c:request("raise")
    assert.are.equal("transport", e1.kind)
    assert.is_truthy(has(e1.message, "wire cut"))
    local _, e2 = c:request("fail")
    assert.are.equal("transport", e2.kind)
    assert.is_truthy(has(e2.message, "queue full"))
    assert.is_true(c:is_connected())
    c:close()
    assert.are.equal(1, count(t.calls, "close:5000"))
  end)

  it("events.error(err, id) fails that request with the HTTP-like fields; without id it goes to on_error", function()
    local t = scripted()
    local reported = {}
    local c = mcp.new_client(t, { on_error = function(e) reported[#reported + 1] = e end })
    assert(c:connect())
    t.on_send = function(m)
      if m.method == "guarded" then
        t.events.error({ message = "HTTP 401", status_code = 401, response_body = "no",
          response_headers = { ["WWW-Authenticate"] = 'Bearer realm="x"' } }, m.id)
        t.events.error("a diagnostic")
      end
      return true
    end
    local _, err = c:request("guarded")
    assert.are.equal(401, err.status_code)
    assert.are.equal('Bearer realm="x"', err.response_headers["www-authenticate"])
    assert.are.equal("no", err.response_body)
    assert.is_true(helper.wait_until(function() return #reported > 0 end, helper.ms(2000)))
    assert.is_truthy(has(tostring(reported[1]), "a diagnostic"))
    c:close()
  end)

  it("an invalid message from it is reported, not raised", function()
    local t = scripted()
    local reported = {}
    local c = mcp.new_client(t, { on_error = function(e) reported[#reported + 1] = e end })
    assert(c:connect())
    t.events.message("this is not JSON")
    t.events.message(42)
    assert.is_true(helper.wait_until(function() return #reported >= 2 end, helper.ms(2000)))
    assert.are.equal("protocol", reported[1].kind)
    assert.are.equal("protocol", reported[2].kind)
    assert(c:ping({ timeout_ms = 20 }) == nil) -- nobody answers ping here: a timeout, not a crash
    c:close()
  end)

  it("is asked nothing about authorization: a 401 fails the request as it is (authorization is the transport's)", function()
    local t = scripted()
    local c = mcp.new_client(t)
    assert(c:connect())
    local asked = 0
    t.on_send = function(m)
      if m.method == "guarded" then t.events.error({ message = "HTTP 401", status_code = 401 }, m.id) end
      return true
    end
    function t:reauthorize() asked = asked + 1; return true end
    function t:request_headers() asked = asked + 1; return { ["X-Proof"] = "p" } end
    local sent = 0
    local send = t.send
    function t:send(text, opts)
      if text:find('"guarded"', 1, true) then sent = sent + 1 end
      assert.is_nil(opts and opts.headers and opts.headers["X-Proof"])
      return send(self, text, opts)
    end
    local _, err = c:request("guarded")
    assert.are.equal(401, err.status_code)
    assert.are.equal(1, sent)
    assert.are.equal(0, asked)
    c:close()
  end)

  it("is called an optional method only when it declares it in capabilities, each one documented", function()
    local asked = {}
    local function optional(caps)
      return scripted({
        capabilities = caps,
        session_id = function() asked[#asked + 1] = "session_id"; return "sid" end,
        authorizing = function() asked[#asked + 1] = "authorizing"; return false, nil end,
      })
    end
    -- undeclared: never called (a method of that name is the host's business)
    local c = mcp.new_client(optional(nil))
    assert(c:connect())
    assert(c:request("anything", nil, { timeout_ms = 20 }) == nil)
    assert.is_false(c:_has_sessions())
    assert.is_nil(c:_session_id())
    assert.is_nil(c:_authorizing())
    c:close()
    assert.are.same({}, asked)
    -- declared: the client uses them
    c = mcp.new_client(optional({ session_id = true, authorizing = true }))
    assert(c:connect())
    assert.is_true(c:_has_sessions())
    assert.are.equal("sid", c:_session_id())
    assert.is_false((assert(c:_authorizing())()))
    c:close()
    local seen = {}
    for _, m in ipairs(asked) do seen[m] = true end
    assert.are.same({ session_id = true, authorizing = true }, seen)
    -- the core's HTTP transports declare what they have: session_id; authorizing with OAuth only
    local plain = mcp.http_transport({ url = "http://127.0.0.1:9/mcp" })
    local sse = mcp.sse_transport({ url = "http://127.0.0.1:9/sse" })
    local authed = mcp.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "t" } })
    assert.is_true(plain.capabilities.session_id and sse.capabilities.session_id and authed.capabilities.session_id)
    assert.is_nil(plain.capabilities.authorizing)
    assert.is_true(authed.capabilities.authorizing)
    assert.are.equal("function", type(authed.authorizing))
    for _, t in ipairs({ plain, sse, authed }) do t:close(0) end
    -- every capability client.lua asks for has its row in docs/API.md's table
    local src, doc = helper.read_file("lua/mcp/client.lua"), helper.read_file("docs/API.md")
    local n = 0
    for name in src:gmatch('capable%([%w_.]+, "([%w_]+)"%)') do
      n = n + 1
      assert.truthy(doc:find("\n| `" .. name .. "` | ", 1, true), "docs/API.md has no row for the capability " .. name)
    end
    assert.is_true(n >= 7)
    -- and it tests no transport method's presence behind the capabilities' back
    assert.is_nil(src:find("type%(t%.[%w_]+%)"), "client.lua tests a transport method's presence")
    assert.is_nil(src:find("type%(self%.transport%.[%w_]+%)"), "client.lua tests a transport method's presence")
  end)
end)

describe("mcp.message_transport (the raw message surface for hosts that proxy)", function()
  it("carries the client over a connection the host owns", function()
    -- The "connection" the host owns: here the server end of a memory pair stands for a process
    -- or socket; the host moves the bytes both ways.
    local a, b = mcp.memory_transport_pair()
    memory_server.new(b)
    local host_closed = false
    local t = mcp.message_transport({
      send = function(text) return a:send(text) end,           -- lua-mcp's messages out
      close = function() host_closed = true; a:close() end,
    })
    a:start({ message = function(text) t:receive(text) end,    -- the host's reads in
      close = function(reason) t:closed(reason) end })
    local c = mcp.new_client(t)
    assert(c:connect())
    assert.are.equal("via host", assert(c:call_tool("echo", { message = "via host" })).content[1].text)
    c:close()
    assert.is_true(host_closed)
  end)

  it("rejects an unknown host field", function()
    assert.has_error(function() mcp.message_transport({ send = function() end, clsoe = function() end }) end,
      "mcp.message_transport: unknown option 'clsoe' (did you mean 'close'?)")
  end)
end)

describe("mcp.on_task_error", function()
  local prev
  before_each(function() prev = mcp.on_task_error(nil) end)
  after_each(function() mcp.on_task_error(prev) end)

  it("gets the error of a failed task; an unrelated blocking call does not raise it", function()
    local c = connected()
    local seen = {}
    mcp.on_task_error(function(err, tb) seen[#seen + 1] = { err = tostring(err), tb = tb } end)
    mcp.spawn(function() error("x") end)
    local tools = assert(c:list_tools()) -- runs the task while waiting; must not raise
    assert.are.equal(5, #tools)
    assert.are.equal(1, #seen)
    assert.is_truthy(has(seen[1].err, "x"))
    assert.is_truthy(has(seen[1].tb, "stack traceback"))
  end)

  it("what the hook raises comes out of mcp.loop.step(), not out of a client call", function()
    local c = connected()
    mcp.on_task_error(function(err) error("hook: " .. tostring(err), 0) end)
    mcp.spawn(function() error("y") end)
    assert(c:ping()) -- the task fails in here; the call still returns normally
    local ok, err = pcall(mcp.loop.step, 0)
    assert.is_false(ok)
    assert.is_truthy(has(tostring(err), "hook:"))
    assert.is_true(pcall(mcp.loop.step, 0)) -- raised once
  end)

  it("defaults to one line on stderr", function()
    mcp.on_task_error(nil)
    local written = {}
    local real = io.stderr
    local fake = { write = function(_, ...) for _, s in ipairs({ ... }) do written[#written + 1] = s end end }
    io.stderr = fake -- luacheck: ignore 122 (the default hook writes to io.stderr; catch it)
    local ok = pcall(function()
      mcp.spawn(function() error("multi\nline") end)
      mcp.run()
    end)
    io.stderr = real -- luacheck: ignore 122
    assert.is_true(ok)
    local line = table.concat(written)
    assert.is_truthy(has(line, "mcp: a task failed:"))
    assert.are.equal(1, select(2, line:gsub("\n", "")))
  end)

  it("rejects what is not a function", function()
    assert.has_error(function() mcp.on_task_error(42) end)
  end)
end)

describe("unknown option keys", function()
  local function rejects(fn, pattern)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    assert.is_truthy(has(tostring(err), pattern), tostring(err))
  end

  it("in a client config, naming the nearest known key", function()
    local a = mcp.memory_transport_pair()
    rejects(function() mcp.new_client(a, { request_timeout = 5 }) end,
      "unknown option 'request_timeout' (did you mean 'request_timeout_ms'?)")
    rejects(function() mcp.new_client(a, { on_eror = print }) end, "(did you mean 'on_error'?)")
  end)

  it("in per-call options", function()
    local c = connected()
    rejects(function() c:call_tool("echo", {}, { timeout = 5 }) end, "unknown option 'timeout' (did you mean 'timeout_ms'?)")
    rejects(function() c:list_tools({ canel = mcp.cancel_token() }) end, "(did you mean 'cancel'?)")
    rejects(function() c:notify("x", nil, { header = {} }) end, "(did you mean 'headers'?)")
    rejects(function() c:call_tool("echo", {}, { timeout_ms = "5" }) end, "mcp: timeout_ms must be a number")
  end)

  it("in transport configs and in the create_* options", function()
    rejects(function() mcp.stdio_transport({ command = "true", workdir = "/" }) end, "(did you mean 'working_dir'?)")
    rejects(function() mcp.http_transport({ url = "http://127.0.0.1:1/mcp", timeout = 5 }) end,
      "unknown option 'timeout' (did you mean 'timeout_ms'?)")
    rejects(function() mcp.sse_transport({ url = "http://127.0.0.1:1/sse", header = {} }) end, "(did you mean 'headers'?)")
    rejects(function() mcp.create_http_client("http://127.0.0.1:1/mcp", { timeout = 5 }) end,
      "mcp.create_http_client: opts: unknown option 'timeout' (did you mean 'timeout_ms'?)")
    rejects(function() mcp.create_stdio_client("true", {}, { envv = {} }) end, "(did you mean 'env'?)")
  end)
end)

describe("request ids", function()
  it("are integers on Lua 5.3+ (floats never reach Lua)", function()
    local c = connected()
    local id = c.session:next_id()
    local rid = c.session:request("ping", nil, 1000, function() end)
    if HAS_INTEGERS then
      assert.are.equal("integer", math.type(id))
      assert.are.equal("integer", math.type(rid))
    else
      assert.are.equal(id + 1, rid)
    end
  end)
end)
