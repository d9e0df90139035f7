-- The 2025-11-25 client features against a server built with the official TypeScript SDK
-- (spec/fixtures/sdk_server.mjs on @modelcontextprotocol/sdk, installed pinned into .deps/npm by
-- scripts/deps.sh): URL-mode elicitation, the SDK's UrlElicitationRequiredError (-32042) with
-- notifications/elicitation/complete, sampling requests with tools, trace context in _meta, and
-- validate_output. Without node or the SDK every test is pending with the reason.
local mcp = require("mcp")
local helper = require("helper")

local SDK_PKG = helper.root .. "/.deps/npm/node_modules/@modelcontextprotocol/sdk/package.json"
local FIXTURE = helper.fixtures .. "/sdk_server.mjs"

local file_exists = helper.file_exists
local in_path = helper.in_path

local NODE = in_path("node")
local unavailable
if NODE == nil then
  unavailable = "node is not installed"
elseif not file_exists(SDK_PKG) then
  unavailable = "@modelcontextprotocol/sdk is not in .deps/npm (run `make deps`)"
end

local function test(name, fn)
  it(name, function()
    if unavailable then
      pending(unavailable)
      return
    end
    fn()
  end)
end

local function connect(opts)
  local o = { stderr = "discard", request_timeout_ms = helper.ms(30000) }
  for k, v in pairs(opts or {}) do o[k] = v end
  local c, err = mcp.create_stdio_client(NODE, { FIXTURE }, o)
  assert(c, "cannot connect to the SDK server: " .. tostring(err))
  finally(function() c:close() end)
  return c
end

local function text(res) return res.content[1].text end

describe("against a TypeScript SDK server (2025-11-25)", function()
  test("negotiates 2025-11-25", function()
    local c = connect()
    assert.are.equal("2025-11-25", c:protocol_version())
    assert.are.equal("sdk-fixture", c:server_info().name)
  end)

  test("URL-mode elicitation: the handler gets the URL and host; the completion arrives after the accept", function()
    local seen, done = {}, {}
    local c = connect({ elicitation_url = true, on_elicitation_request = function(req)
      seen[#seen + 1] = req
      return mcp.elicitation.accept()
    end })
    c:on_notification("notifications/elicitation/complete", function(p) done[#done + 1] = p.elicitationId end)
    local res = assert(c:call_tool("url_elicit"))
    assert.are.equal("accept", text(res))
    assert.are.equal("url", seen[1].mode)
    assert.are.equal("auth.example.com", seen[1].url_host)
    assert.matches("^https://auth%.example%.com/connect%?x=", seen[1].url)
    assert.is_true(helper.wait_until(function() return #done == 1 end, helper.ms(5000)))
    assert.are.equal(seen[1].elicitation_id, done[1])
  end)

  test("the SDK refuses URL mode when the client did not declare it (form only)", function()
    local c = connect({ on_elicitation_request = function() return mcp.elicitation.accept() end })
    local res = assert(c:call_tool("url_elicit"))
    assert.is_true(res.isError)
    assert.matches("does not support url elicitation", text(res), 1, true)
  end)

  test("-32042: the elicitation is run, the call is sent again after notifications/elicitation/complete", function()
    local seen, sent = {}, 0
    local c = connect({ elicitation_url = true, on_elicitation_request = function(req)
      seen[#seen + 1] = req
      return mcp.elicitation.accept()
    end, on_message = function(dir, m)
      if dir == "send" and m.method == "tools/call" and m.params.name == "url_required" then sent = sent + 1 end
    end })
    local res, err
    mcp.spawn(function() res, err = c:call_tool("url_required") end)
    -- consented: the client waits for the flow's completion and does not send the call again yet
    assert.is_true(helper.wait_until(function()
      return c.url_elicitations ~= nil and c.url_elicitations.waiters["req-1"] ~= nil
    end, helper.ms(10000)))
    assert.are.equal(1, sent)
    assert.is_nil(res or err)
    assert.are.equal(1, #seen)
    assert.are.equal("req-1", seen[1].elicitation_id)
    assert.are.equal("https://auth.example.com/authorize", seen[1].url)
    assert.are.equal("finished", text(assert(c:call_tool("finish_flow"))))
    assert.is_true(helper.wait_until(function() return res ~= nil or err ~= nil end, helper.ms(10000)))
    assert(res, tostring(err))
    assert.are.equal("authorized", text(res))
    assert.are.equal(2, sent)
  end)

  test("-32042 declined: a clear error", function()
    local c = connect({ elicitation_url = true, on_elicitation_request = function() return mcp.elicitation.decline() end })
    local res, err = c:call_tool("url_required")
    assert.is_nil(res)
    assert.are.equal("declined", err.kind)
    assert.are.equal(-32042, err.code)
  end)

  test("sampling with tools: tool_use out, tool_result in, both through the handler", function()
    local calls = {}
    local c = connect({ sampling_tools = true, on_sampling_request = function(p)
      calls[#calls + 1] = p
      if #calls == 1 then
        return mcp.sampling.tool_calls({ mcp.sampling.tool_use("tu-1", "get_weather", { city = "Paris" }) },
          { model = "test-model" })
      end
      return mcp.sampling.text("It is " .. p.messages[#p.messages].content[1].content[1].text, { model = "test-model" })
    end })
    local res = assert(c:call_tool("sample_tools"))
    local out = mcp.json.decode(text(res))
    assert.are.equal(2, #calls)
    assert.are.equal("get_weather", calls[1].tools[1].name)
    assert.are.equal("auto", calls[1].toolChoice.mode)
    assert.are.equal("none", calls[2].toolChoice.mode)
    assert.are.equal("tool_use", calls[2].messages[2].content[1].type)
    assert.are.equal("tu-1", calls[2].messages[3].content[1].toolUseId)
    assert.are.equal("toolUse", out.first.stopReason)
    assert.are.equal("tool_use", out.first.content[1].type)
    assert.are.equal("It is sunny in Paris", out.second.content.text)
  end)

  test("sampling tools are not sent when the client did not declare sampling.tools", function()
    local c = connect({ on_sampling_request = function() return "x" end })
    local res = assert(c:call_tool("sample_tools"))
    assert.is_true(res.isError)
    assert.matches("does not support sampling tools", text(res), 1, true)
  end)

  test("trace context reaches the server in _meta; spans name the server and tool", function()
    local tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    local ended = {}
    local c = connect({ trace_context = { traceparent = tp, tracestate = "k=v" },
      on_span_end = function(s) ended[#ended + 1] = s end })
    local res = assert(c:call_tool("echo_meta"))
    assert.are.equal(tp, res.structuredContent.meta.traceparent)
    assert.are.equal("k=v", res.structuredContent.meta.tracestate)
    local last = ended[#ended]
    assert.are.equal("tools/call", last.method)
    assert.are.equal("echo_meta", last.tool)
    assert.are.equal("sdk-fixture", last.server)
    assert.are.equal("ok", last.status)
  end)

  test("validate_output checks structuredContent against the SDK tool's outputSchema", function()
    local c = connect()
    local res = assert(c:call_tool("structured", { n = 4 }, { validate_output = true }))
    assert.are.equal(4, res.structuredContent.n)
    -- the schema it checked against is the server's (a number, required)
    local tools = assert(c:list_all_tools())
    for _, t in ipairs(tools) do
      if t.name == "structured" then assert.are.equal("number", t.outputSchema.properties.n.type) end
    end
  end)
end)
