-- End to end: tools for agents, content conversion and elicitation against the official
-- @modelcontextprotocol/server-everything (stdio). MCP_EVERYTHING_SERVER names its executable
-- (`make test` exports it); without it, or without node, every test is pending with the reason.
local mcp = require("mcp")
local helper = require("helper")

local BIN = os.getenv("MCP_EVERYTHING_SERVER")
local unavailable
do
  local fh = BIN and BIN ~= "" and io.open(BIN, "rb")
  if fh then fh:close() end
  local node = os.execute("command -v node >/dev/null 2>&1")
  if BIN == nil or BIN == "" then
    unavailable = "MCP_EVERYTHING_SERVER is not set (run `make test`, which installs server-everything)"
  elseif not fh then
    unavailable = "MCP_EVERYTHING_SERVER=" .. BIN .. " does not exist (run `make deps`)"
  elseif node ~= true and node ~= 0 then
    unavailable = "node is not installed"
  end
end

local function text_of(parts)
  local t = {}
  for _, p in ipairs(parts) do
    if p.type == "text" then t[#t + 1] = p.text end
  end
  return table.concat(t, "\n")
end

describe("tools for agents against server-everything", function()
  local client, tools, reported, answer
  local seen = {}

  setup(function()
    if unavailable then return end
    reported = {}
    local err
    client, err = mcp.create_stdio_client(BIN, { "stdio" }, {
      stderr = "discard", request_timeout_ms = helper.ms(30000),
      on_error = function(e) reported[#reported + 1] = e end,
      on_elicitation_request = function(req)
        seen[#seen + 1] = req
        return answer(req)
      end,
    })
    assert(client, tostring(err))
    -- the elicitation tools are registered after initialization: wait for them
    local deadline = mcp.core.now_ms() + helper.ms(10000)
    repeat
      tools = assert(mcp.get_tools_for_agent(client))
      if mcp.tools.by_name(tools)["trigger-elicitation-request"] then break end
      mcp.sleep(50)
    until mcp.core.now_ms() > deadline
  end)
  teardown(function()
    if client then client:close() end
  end)

  local function test(name, fn)
    it(name, function()
      if unavailable then return pending(unavailable) end
      fn()
    end)
  end
  local function tool(name)
    local t = mcp.tools.by_name(tools)[name]
    assert(t, "server-everything has no tool " .. name)
    return t
  end

  test("converts every tool with schemas, annotations and metadata", function()
    for _, name in ipairs({ "echo", "get-sum", "get-tiny-image", "get-structured-content", "trigger-elicitation-request" }) do
      local t = tool(name)
      assert.are.equal("dynamic", t.type)
      assert.are.equal("object", t.input_schema.type)
      assert.is_false(t.input_schema.additionalProperties)
      assert.are.equal(name, t.provider_metadata.mcp.tool_name)
    end
    local ann = tool("get-structured-content").annotations
    assert.is_true(ann.untrusted)
    assert.is_true(ann.readOnlyHint)
    assert.is_table(tool("get-structured-content").output_schema)
    for _, fmt in ipairs({ "to_openai", "to_anthropic", "to_gemini" }) do
      assert.is_string(mcp.json.encode(mcp.tools[fmt](tools)))
    end
  end)

  test("fingerprints are stable across listings", function()
    local again = assert(mcp.get_tools_for_agent(client))
    local drift = mcp.detect_tool_drift(mcp.fingerprint_tools(again), mcp.fingerprint_tools(tools))
    assert.are.same({ added = {}, removed = {}, changed = {} }, drift)
  end)

  test("executes echo and get-sum", function()
    local parts, result = tool("echo").execute({ message = "hello agents" })
    assert.is_table(parts, tostring(result))
    assert.truthy(text_of(parts):find("hello agents", 1, true), text_of(parts))
    parts = assert(tool("get-sum").execute({ a = 2, b = 40 }))
    assert.truthy(text_of(parts):find("42", 1, true), text_of(parts))
  end)

  test("decodes the image of get-tiny-image to PNG bytes", function()
    local parts = assert(tool("get-tiny-image").execute())
    local img
    for _, p in ipairs(parts) do
      if p.type == "image" then img = p end
    end
    assert.is_table(img)
    assert.are.equal("image/png", img.media_type)
    assert.are.equal("\137PNG\r\n\26\n", img.data:sub(1, 8))
  end)

  test("validates structured output against the server's schema and a given one", function()
    local parts, result = tool("get-structured-content").execute({ location = "Chicago" })
    assert.is_table(parts, tostring(result))
    assert.is_number(result.structuredContent.temperature)
    local conv = mcp.new_tool_converter(client)
    local strict = assert(conv:convert_to_tools_with_schemas({ ["get-structured-content"] = {
      output_schema = { type = "object", properties = { temperature = { type = "string" } } } } }))
    assert.are.equal(1, #strict)
    local p2, err = strict[1].execute({ location = "Chicago" })
    assert.is_nil(p2)
    assert.are.equal("validation", err.kind)
    assert.are.equal("/temperature", err.data.path)
  end)

  test("a scripted elicitation accepted gets the schema's defaults", function()
    answer = function() return mcp.elicitation.accept({ name = "Ada", check = true }) end
    local parts = assert(tool("trigger-elicitation-request").execute())
    local text = text_of(parts)
    assert.truthy(text:find("Name: Ada", 1, true), text)
    assert.truthy(text:find("It was a dark and stormy night.", 1, true), text) -- firstLine's default
    assert.truthy(text:find("Favorite Integer: 42", 1, true), text)
    local req = seen[#seen]
    local fields = mcp.tools.by_name(mcp.elicitation.fields(req.requested_schema))
    assert.are.equal("name", mcp.elicitation.fields(req.requested_schema)[1].name)
    assert.is_true(fields.untitledMultipleSelectEnum.multiple)
    assert.are.equal("Superman", fields.titledSingleSelectEnum.choices[1].label)
    assert.are.equal("Cats", fields.legacyTitledEnum.choices[1].label)
  end)

  test("a scripted elicitation declined", function()
    answer = function() return mcp.elicitation.decline() end
    local parts = assert(tool("trigger-elicitation-request").execute())
    assert.truthy(text_of(parts):find("declined", 1, true), text_of(parts))
  end)

  test("an invalid answer is refused with a JSON-RPC error and reported", function()
    local before = #reported
    answer = function() return mcp.elicitation.accept({ name = "Ada", integer = 500, email = "nope" }) end
    local parts, res = tool("trigger-elicitation-request").execute()
    -- the server's tool fails: a JSON-RPC error, or an isError result
    assert.is_true(parts == nil or (type(res) == "table" and res.isError == true))
    assert.is_true(helper.wait_until(function() return #reported > before end, helper.ms(5000)))
    local e = reported[#reported]
    assert.are.equal("validation", e.kind)
    assert.truthy(e.message:find("/email", 1, true) or e.message:find("/integer", 1, true), e.message)
  end)
end)
