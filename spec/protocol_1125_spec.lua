-- The rest of 2025-11-25 against the project's own test server (spec/fixtures/test_server.lua):
-- URL-mode elicitation (SEP-1036: the elicitation.url capability, -32042 and
-- notifications/elicitation/complete), sampling with tools (SEP-1577), trace context and spans
-- (SEP-414), and call_tool's validate_output. spec/sdk_server_spec.lua runs the same against a
-- server built with the official TypeScript SDK.
local mcp = require("mcp")
local helper = require("helper")

-- (busted keeps one finally() per test: the clients a test starts are tracked and closed after it)
after_each(helper.close_tracked)

local function server(args, opts)
  args = { "--spec-1125", (table.unpack or unpack)(args or {}) }
  local c, err = helper.test_server(args, opts)
  assert(c, "cannot connect to the test server: " .. tostring(err))
  return helper.track(c)
end

local function call(c, name, args, opts)
  local res, err = c:call_tool(name, args, opts)
  assert(res, ("call_tool(%s) failed: %s"):format(name, tostring(err)))
  return res
end

local function initialize_params(c)
  return mcp.json.decode(call(c, "last_initialize").content[1].text)
end

local function accept_url(log)
  return function(req)
    log[#log + 1] = req
    return mcp.elicitation.accept()
  end
end

describe("URL-mode elicitation (2025-11-25)", function()
  it("declares elicitation.url only when the handler takes URL mode", function()
    local c = server({}, { on_elicitation_request = accept_url({}) })
    local caps = initialize_params(c).capabilities
    assert.is_table(caps.elicitation.form)
    assert.is_nil(caps.elicitation.url)
    local c2 = server({}, { on_elicitation_request = accept_url({}), elicitation_url = true })
    caps = initialize_params(c2).capabilities
    assert.is_table(caps.elicitation.form)
    assert.is_table(caps.elicitation.url)
  end)

  it("on_elicitation_request(fn, {url = true}) declares it too", function()
    local c = mcp.new_client(mcp.stdio_transport({ command = helper.lua_cmd(), args = { helper.test_server_path },
      stderr = "discard" }), { request_timeout_ms = helper.ms(30000) })
    finally(function() c:close() end)
    c:on_elicitation_request(accept_url({}), { url = true })
    assert.is_true(c:connect())
    assert.is_table(initialize_params(c).capabilities.elicitation.url)
  end)

  it("a URL-mode request when URL mode was not declared is refused with -32602", function()
    local seen = {}
    local c = server({}, { on_elicitation_request = accept_url(seen) })
    local msg = call(c, "elicit", { mode = "url", url = "https://example.com/x" }).structuredContent
    assert.are.equal(-32602, msg.error.code)
    assert.are.equal(0, #seen)
  end)

  it("the handler gets the URL's host (and a punycode warning flag)", function()
    local seen = {}
    local c = server({}, { on_elicitation_request = accept_url(seen), elicitation_url = true })
    call(c, "elicit", { mode = "url", url = "https://user@Login.Example.com:8443/a?b=c" })
    assert.are.equal("login.example.com", seen[1].url_host)
    assert.is_false(seen[1].url_punycode)
    assert.are.equal("lua-mcp test server", seen[1].server) -- who asks: a UI shows it
    call(c, "elicit", { mode = "url", url = "https://xn--pple-43d.com/" })
    assert.are.equal("xn--pple-43d.com", seen[2].url_host)
    assert.is_true(seen[2].url_punycode)
  end)

  it("-32042: the listed elicitation goes to the handler, the call is sent again after its completion", function()
    local seen = {}
    local c = server({}, { on_elicitation_request = accept_url(seen), elicitation_url = true })
    local res = call(c, "url_required", { id = "a1", complete = true })
    assert.are.equal("authorized after 1 rounds", res.content[1].text)
    assert.are.equal(1, #seen)
    assert.are.equal("url", seen[1].mode)
    assert.are.equal("a1", seen[1].elicitation_id)
    assert.are.equal("https://auth.example.com/authorize?id=a1", seen[1].url)
    assert.are.equal("auth.example.com", seen[1].url_host)
    assert.are.equal("lua-mcp test server", seen[1].server)
  end)

  it("-32042: the call waits for a completion that comes later, and is sent again only after it", function()
    local log = {}
    local c = server({}, { elicitation_url = true, on_elicitation_request = accept_url({}),
      on_message = function(dir, m)
        if m.method == "notifications/elicitation/complete" or (dir == "send" and m.method == "tools/call") then
          log[#log + 1] = dir .. " " .. m.method .. " " .. tostring(m.params.name or m.params.elicitationId)
        end
      end })
    local res, err
    mcp.spawn(function() res, err = c:call_tool("url_required", { id = "w1" }) end)
    -- the user consented; the client waits for the flow to finish, the call not sent again
    assert.is_true(helper.wait_until(function()
      return c.url_elicitations ~= nil and c.url_elicitations.waiters.w1 ~= nil
    end, helper.ms(5000)))
    assert.are.same({ "send tools/call url_required" }, log)
    assert.is_nil(res)
    assert.is_nil(err)
    -- the flow finishes: the server sends the completion, and only then the call goes again
    call(c, "url_complete", { id = "w1" })
    assert.is_true(helper.wait_until(function() return res ~= nil or err ~= nil end, helper.ms(5000)))
    assert(res, tostring(err))
    assert.are.equal("authorized after 1 rounds", res.content[1].text)
    assert.are.same({ "send tools/call url_required", "send tools/call url_complete",
      "receive notifications/elicitation/complete w1", "send tools/call url_required" }, log)
  end)

  it("-32042 is bounded: a server that keeps asking ends the call after MAX_ROUNDS", function()
    local seen = {}
    local c = server({}, { on_elicitation_request = accept_url(seen), elicitation_url = true })
    local res, err = c:call_tool("url_required", { id = "b1", complete = true, rounds = 50 })
    assert.is_nil(res)
    assert.are.equal(-32042, err.code)
    assert.matches("still requires a URL elicitation after 3 rounds", err.message, 1, true)
    assert.are.equal(3, #seen)
  end)

  it("-32042 declined by the user: a clear error, the call is not sent again", function()
    local c = server({}, { elicitation_url = true, on_elicitation_request = function() return mcp.elicitation.decline() end })
    local res, err = c:call_tool("url_required", { id = "c1", complete = true })
    assert.is_nil(res)
    assert.are.equal("declined", err.kind)
    assert.are.equal(-32042, err.code)
    assert.matches("the user declined", err.message, 1, true)
    -- the server saw one call only: the next one is its second (rounds = 1 → authorized)
    assert.are.equal("authorized after 1 rounds", call(c, "url_required", { id = "c1" }).content[1].text)
  end)

  it("-32042 whose completion never comes: a timeout error bounded by the call's timeout", function()
    local c = server({}, { on_elicitation_request = accept_url({}), elicitation_url = true })
    local res, err = c:call_tool("url_required", { id = "d1" }, { timeout_ms = helper.ms(300) })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.matches("URL elicitation d1 did not complete", err.message, 1, true)
    assert.are.equal("d1", err.data.elicitationId)
    assert.are.equal("https://auth.example.com/authorize?id=d1", err.data.url)
    assert.are.equal(-32042, err.cause.code) -- the server's error
    assert.is_nil(err.code) -- a local failure
  end)

  it("-32042 whose completion never comes, the call without timeout_ms: bounded by request_timeout_ms", function()
    local limit = helper.ms(1500)
    local c = server({}, { on_elicitation_request = accept_url({}), elicitation_url = true, request_timeout_ms = limit })
    local res, err = c:call_tool("url_required", { id = "d2" })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.matches("URL elicitation d2 did not complete within " .. limit .. " ms", err.message, 1, true)
  end)

  it("-32042: the call's cancel token ends the wait for the completion at once (kind cancelled)", function()
    local c = server({}, { elicitation_url = true, on_elicitation_request = accept_url({}) })
    local token = mcp.cancel_token()
    local res, err
    mcp.spawn(function() res, err = c:call_tool("url_required", { id = "k1" }, { cancel = token }) end)
    assert.is_true(helper.wait_until(function()
      return c.url_elicitations ~= nil and c.url_elicitations.waiters.k1 ~= nil
    end, helper.ms(5000)))
    token:cancel("the user gave up")
    assert.is_true(helper.wait_until(function() return res ~= nil or err ~= nil end, helper.ms(5000)))
    assert.is_nil(res)
    assert.are.equal("cancelled", err.kind)
    assert.matches("the user gave up", err.message, 1, true)
    assert.are.equal("k1", err.data.elicitationId)
    assert.is_nil(c.url_elicitations.waiters.k1) -- forgotten: a late completion calls nothing
    -- the client goes on; a completion that comes late is harmless
    assert.are.equal("completed k1", call(c, "url_complete", { id = "k1" }).content[1].text)
  end)

  it("-32042 whose server dies while the client waits for the completion: a closed error, no hang", function()
    local c
    c = server({}, { elicitation_url = true, on_elicitation_request = function()
      -- the user's yes comes after the server is gone
      c:call_tool("die", nil, { timeout_ms = helper.ms(500) })
      return mcp.elicitation.accept()
    end })
    local res, err = c:call_tool("url_required", { id = "g1" })
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
  end)

  it("-32042: the connection closing during the wait ends it (kind closed)", function()
    local c = server({}, { elicitation_url = true, on_elicitation_request = function() return mcp.elicitation.accept() end })
    local res, err
    mcp.spawn(function() res, err = c:call_tool("url_required", { id = "h1" }) end)
    assert.is_true(helper.wait_until(function()
      return c.url_elicitations ~= nil and next(c.url_elicitations.waiters) ~= nil
    end, helper.ms(5000)))
    mcp.spawn(function() c:call_tool("die", nil, { timeout_ms = helper.ms(500) }) end)
    assert.is_true(helper.wait_until(function() return err ~= nil end, helper.ms(5000)))
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
  end)

  it("-32042 without a URL-mode handler is returned as it is", function()
    local c = server({}, { on_elicitation_request = accept_url({}) })
    local res, err = c:call_tool("url_required", { id = "e1", complete = true })
    assert.is_nil(res)
    assert.are.equal(-32042, err.code)
    assert.are.equal("e1", err.data.elicitations[1].elicitationId)
  end)

  it("notifications/elicitation/complete reaches on_notification (an unknown id is harmless)", function()
    local got = {}
    local c = server({}, { on_elicitation_request = accept_url({}), elicitation_url = true })
    c:on_notification("notifications/elicitation/complete", function(p) got[#got + 1] = p.elicitationId end)
    call(c, "url_required", { id = "f1", complete = true })
    assert.is_true(helper.wait_until(function() return #got >= 1 end, helper.ms(5000)))
    assert.are.equal("f1", got[1])
    assert.is_true(require("mcp.url_elicitation").is_complete(c, "f1"))
  end)
end)

describe("the terminal handler in URL mode", function()
  local function run(answer, url)
    local out = {}
    local opened = {}
    local h = mcp.elicitation.terminal_handler({
      input = function() return answer end,
      output = { write = function(_, s) out[#out + 1] = s end, flush = function() end },
      open_url = function(u) opened[#opened + 1] = u end,
    })
    local req = mcp.elicitation.request_from_params({ mode = "url", message = "Sign in", url = url, elicitationId = "x" })
    return h(req), table.concat(out), opened
  end

  it("shows the URL and its host, and opens it only on yes", function()
    local res, text, opened = run("y", "https://auth.example.com/x")
    assert.are.equal("accept", res.action)
    assert.matches("https://auth.example.com/x", text, 1, true)
    assert.matches("host: auth.example.com", text, 1, true)
    assert.are.same({ "https://auth.example.com/x" }, opened)
    local res2, _, opened2 = run("n", "https://auth.example.com/x")
    assert.are.equal("decline", res2.action)
    assert.are.same({}, opened2)
  end)

  it("without an opener (open_url returns false) it tells the user to open the URL", function()
    local out = {}
    local h = mcp.elicitation.terminal_handler({
      input = function() return "yes" end,
      output = { write = function(_, s) out[#out + 1] = s end, flush = function() end },
      open_url = function() return false end,
    })
    local res = h(mcp.elicitation.request_from_params({ mode = "url", message = "m", url = "https://a.example/x" }))
    assert.are.equal("accept", res.action)
    assert.matches("Open it in your browser: https://a.example/x", table.concat(out), 1, true)
  end)

  it("warns about a punycode host", function()
    local _, text = run("n", "https://xn--80ak6aa92e.com/")
    assert.matches("WARNING", text, 1, true)
  end)
end)

describe("sampling with tools (2025-11-25)", function()
  local TOOLS = mcp.json.decode([[ [{"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}] ]])

  local function sample(c, params)
    return call(c, "sample", { params = params }).structuredContent
  end

  it("declares sampling.tools only when the handler says it can", function()
    local c = server({}, { on_sampling_request = function() return "x" end })
    assert.is_nil(initialize_params(c).capabilities.sampling.tools)
    local c2 = server({}, { on_sampling_request = function() return "x" end, sampling_tools = true })
    assert.is_table(initialize_params(c2).capabilities.sampling.tools)
  end)

  it("tools without the capability: -32602, the handler is not called", function()
    local called = false
    local c = server({}, { on_sampling_request = function() called = true return "x" end })
    local msg = sample(c, { messages = { { role = "user", content = { type = "text", text = "hi" } } }, maxTokens = 10,
      tools = TOOLS })
    assert.are.equal(-32602, msg.error.code)
    assert.is_false(called)
  end)

  it("tools and toolChoice reach the handler; a tool_use answer goes back with stopReason toolUse", function()
    local seen
    local c = server({}, { sampling_tools = true, on_sampling_request = function(p)
      seen = p
      return mcp.sampling.tool_calls({ mcp.sampling.tool_use("call-1", "get_weather", { city = "Paris" }) },
        { model = "m" })
    end })
    local msg = sample(c, { messages = { { role = "user", content = { type = "text", text = "Weather?" } } },
      maxTokens = 10, tools = TOOLS, toolChoice = { mode = "required" } })
    assert.are.equal("get_weather", seen.tools[1].name)
    assert.are.equal("required", seen.toolChoice.mode)
    assert.are.equal("toolUse", msg.result.stopReason)
    assert.are.equal("tool_use", msg.result.content[1].type)
    assert.are.equal("call-1", msg.result.content[1].id)
    assert.are.equal("Paris", msg.result.content[1].input.city)
  end)

  it("tool_result messages reach the handler; mismatched tool results are refused with -32602", function()
    local seen
    local c = server({}, { sampling_tools = true, on_sampling_request = function(p) seen = p return "sunny" end })
    local messages = {
      { role = "user", content = { type = "text", text = "Weather?" } },
      { role = "assistant", content = { { type = "tool_use", id = "t1", name = "get_weather", input = { city = "P" } } } },
      { role = "user", content = { { type = "tool_result", toolUseId = "t1", content = { { type = "text", text = "sun" } } } } },
    }
    local msg = sample(c, { messages = messages, maxTokens = 10, tools = TOOLS })
    assert.are.equal("sunny", msg.result.content.text)
    assert.are.equal("tool_result", seen.messages[3].content[1].type)
    assert.are.equal("t1", seen.messages[3].content[1].toolUseId)
    messages[3].content[1].toolUseId = "t2"
    msg = sample(c, { messages = messages, maxTokens = 10, tools = TOOLS })
    assert.are.equal(-32602, msg.error.code)
    messages[3].content[1].toolUseId = "t1"
    messages[3].content[2] = { type = "text", text = "and more" }
    msg = sample(c, { messages = messages, maxTokens = 10, tools = TOOLS })
    assert.are.equal(-32602, msg.error.code)
  end)

  it("a handler's tool_use without id is refused", function()
    local c = server({}, { sampling_tools = true, on_sampling_request = function()
      return { model = "m", content = { { type = "tool_use", name = "x", input = {} } } }
    end })
    local msg = sample(c, { messages = { { role = "user", content = { type = "text", text = "hi" } } }, maxTokens = 10,
      tools = TOOLS })
    assert.is_nil(msg.result)
    assert.is_table(msg.error)
  end)

  it("tool_loop runs the host's tools until the model answers", function()
    local asked = 0
    local res = mcp.sampling.tool_loop({ { role = "user", content = { type = "text", text = "2+3?" } } },
      function(messages)
        asked = asked + 1
        if asked == 1 then return mcp.sampling.tool_calls({ mcp.sampling.tool_use("u1", "add", { a = 2, b = 3 }) }) end
        local last = messages[#messages]
        assert.are.equal("tool_result", last.content[1].type)
        return mcp.sampling.text("the sum is " .. last.content[1].content[1].text, { model = "m" })
      end,
      function(use) return tostring(use.input.a + use.input.b) end)
    assert.are.equal("the sum is 5", res.content.text)
    assert.are.equal(2, asked)
    local _, err = mcp.sampling.tool_loop({}, function() return mcp.sampling.tool_calls({ mcp.sampling.tool_use("u", "x") }) end,
      function() return "again" end, { max_iterations = 3 })
    assert.matches("did not end within 3 iterations", err.message, 1, true)
  end)
end)

describe("trace context and spans (SEP-414)", function()
  local TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

  local function meta_of(res)
    return mcp.json.decode(res.content[1].text).params._meta
  end

  it("trace_context puts traceparent and tracestate in _meta of every request", function()
    local c = server({}, { trace_context = { traceparent = TP, tracestate = "vendor=1" } })
    local meta = meta_of(call(c, "echo_args", { x = 1 }))
    assert.are.equal(TP, meta.traceparent)
    assert.are.equal("vendor=1", meta.tracestate)
    local init = initialize_params(c)
    assert.are.equal(TP, init._meta.traceparent)
  end)

  it("the caller's own _meta is kept; without a trace context nothing is added", function()
    local c = server({}, { trace_context = function() return { traceparent = TP } end })
    local meta = meta_of(call(c, "echo_args", {}, { meta = { mine = "yes" } }))
    assert.are.equal(TP, meta.traceparent)
    assert.are.equal("yes", meta.mine)
    assert.is_nil(meta.tracestate)
    local c2 = server({})
    assert.is_nil(mcp.json.decode(call(c2, "echo_args", {}).content[1].text).params._meta)
  end)

  it("on_span_start/on_span_end see method, server, tool, status and duration; start may give the context", function()
    local spans = {}
    local c = server({}, {
      on_span_start = function(span)
        spans[#spans + 1] = span
        if span.tool == "echo_args" then return { traceparent = TP } end
      end,
      on_span_end = function(span) span.ended = true end,
    })
    local meta = meta_of(call(c, "echo_args", {}))
    assert.are.equal(TP, meta.traceparent)
    call(c, "tool_error")
    local _, err = c:call_tool("error")
    assert.is_table(err)
    local by = {}
    for _, s in ipairs(spans) do by[s.name] = s end
    local s = by["tools/call echo_args"]
    assert.are.equal("tools/call", s.method)
    assert.are.equal("echo_args", s.tool)
    assert.are.equal("lua-mcp-test-server", s.server)
    assert.are.equal("ok", s.status)
    assert.is_true(s.ended)
    assert.is_number(s.duration_ms)
    assert.is_true(s.duration_ms >= 0)
    assert.are.equal("error", by["tools/call tool_error"].status)
    assert.are.equal("error", by["tools/call error"].status)
    assert.are.equal(-32603, by["tools/call error"].error.code)
    assert.is_table(by["initialize"]) -- the handshake is a span too
    assert.is_nil(by["initialize"].tool)
  end)

  it("a raising hook goes to on_error and does not fail the request", function()
    local errs = {}
    local c = server({}, { on_error = function(e) errs[#errs + 1] = e end,
      on_span_end = function() error("tracer broke") end })
    call(c, "echo", { message = "hi" })
    assert.is_true(helper.wait_until(function() return #errs > 0 end, helper.ms(5000)))
    assert.matches("tracer broke", tostring(errs[1]), 1, true)
  end)

  it("the 2026-07-28 era: traceparent beside the era's own _meta keys", function()
    local c = assert(mcp.create_stdio_client(helper.lua_cmd(), { helper.fixtures .. "/modern_server.lua" },
      { stderr = "discard", request_timeout_ms = helper.ms(30000), trace_context = { traceparent = TP } }))
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    assert.is_table(c:call_tool("echo", { message = "hi" }))
    local reqs = c:call_tool("seen", {}).structuredContent.requests
    local last
    for _, r in ipairs(reqs) do if r.method == "tools/call" then last = r end end
    assert.are.equal(TP, last.meta.traceparent)
    assert.are.equal("2026-07-28", last.meta["io.modelcontextprotocol/protocolVersion"])
  end)

  it("a bad trace_context raises at new_client", function()
    assert.has_error(function() mcp.new_client({}, { trace_context = 3 }) end)
  end)
end)

describe("through an mcp.hub", function()
  it("URL mode, tools in sampling, trace context and spans reach every server's client", function()
    local TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    local seen, spans = {}, {}
    local hub = assert(mcp.hub({ mcpServers = {
      s = { command = helper.lua_cmd(), args = { helper.test_server_path, "--spec-1125" } } } },
      { request_timeout_ms = helper.ms(30000), client = {
        elicitation_url = true, on_elicitation_request = accept_url(seen),
        sampling_tools = true, on_sampling_request = function() return "x" end,
        trace_context = { traceparent = TP }, on_span_end = function(span) spans[#spans + 1] = span end } }))
    finally(function() hub:close() end)
    hub:wait(helper.ms(20000))
    assert.are.equal("ready", (hub:state("s")))
    local init = mcp.json.decode(assert(hub:call_tool("s__last_initialize")).content[1].text)
    assert.is_table(init.capabilities.elicitation.url)
    assert.is_table(init.capabilities.sampling.tools)
    assert.are.equal(TP, init._meta.traceparent)
    local res = assert(hub:call_tool("s__url_required", { id = "hub-1", complete = true }))
    assert.are.equal("authorized after 1 rounds", res.content[1].text)
    assert.are.equal("https://auth.example.com/authorize?id=hub-1", seen[1].url)
    local echoed = mcp.json.decode(assert(hub:call_tool("s__echo_args", {})).content[1].text)
    assert.are.equal(TP, echoed.params._meta.traceparent)
    local last = spans[#spans]
    assert.are.equal("echo_args", last.tool)
    assert.are.equal("lua-mcp-test-server", last.server)
  end)
end)

describe("call_tool validate_output", function()
  it("a structuredContent that matches the outputSchema passes", function()
    local c = server({})
    local res = call(c, "structured", { n = 5 }, { validate_output = true })
    assert.are.equal(5, res.structuredContent.n)
  end)

  it("a mismatch is a validation error naming the path; without the option it passes", function()
    local c = server({})
    local res, err = c:call_tool("structured", { n = "five" }, { validate_output = true })
    assert.is_nil(res)
    assert.are.equal("validation", err.kind)
    assert.matches("structuredContent does not match its schema", err.message, 1, true)
    assert.are.equal("five", err.data.result.structuredContent.n)
    assert.are.equal("five", call(c, "structured", { n = "five" }).structuredContent.n)
  end)

  it("a tool with an outputSchema that returns no structuredContent fails; tools without one pass", function()
    local c = server({})
    local _, err = c:call_tool("structured", { omit = true }, { validate_output = true })
    assert.are.equal("validation", err.kind)
    assert.matches("returned no structuredContent", err.message, 1, true)
    assert.are.equal("hi", call(c, "echo", { message = "hi" }, { validate_output = true }).content[1].text)
  end)

  it("a pattern no engine here runs is said, never passed silently: a third value lists it", function()
    local c = server({})
    local res, err, unchecked = c:call_tool("structured_pattern", { code = "ab" }, { validate_output = true })
    assert(res, tostring(err))
    assert.is_nil(err)
    assert.are.equal(1, #unchecked)
    assert.are.equal("pattern", unchecked[1].keyword)
    assert.are.equal("/code", unchecked[1].path)
    -- the converted tool's execute says it the same way
    local tool = mcp.tools.by_name(assert(mcp.get_tools_for_agent(c))).structured_pattern
    local parts, result, skipped = tool.execute({ code = "ab" })
    assert.are.equal("ab", parts[1].text)
    assert.are.equal("ab", result.structuredContent.code)
    assert.are.equal("/code", skipped[1].path)
    -- a check that ran in full adds nothing
    assert.is_nil(select(3, c:call_tool("structured", { n = 1 }, { validate_output = true })))
  end)

  it("uses the schemas of a tools/list already read", function()
    local lists = 0
    local c = server({}, { on_message = function(dir, m) if dir == "send" and m.method == "tools/list" then lists = lists + 1 end end })
    assert.is_table(c:list_all_tools())
    assert.are.equal(1, lists)
    call(c, "structured", { n = 1 }, { validate_output = true })
    call(c, "structured", { n = 2 }, { validate_output = true })
    assert.are.equal(1, lists)
  end)
end)
