-- mcp.tools: converting server tools into agent tools, execute(), and the model-API exporters.
local mcp = require("mcp")
local helper = require("helper")

local D = mcp.json.decode

local DEFS = D([[{"tools":[
  {"name":"search","title":"Search","description":"Find things","inputSchema":{"type":"object",
    "properties":{"q":{"type":"string","x-mcp-header":"Query"},"n":{"$ref":"#/$defs/count"}},"required":["q"],
    "$defs":{"count":{"type":"integer"}},"x-vendor":{"keep":true}},
   "annotations":{"title":"Ann title","readOnlyHint":true,"destructiveHint":"no","openWorldHint":false}},
  {"name":"bare","inputSchema":{"type":"object"},"annotations":{"title":"From annotations"}},
  {"name":"nullprops","inputSchema":{"type":"object","properties":null,"additionalProperties":true}},
  {"name":"app","description":"has a UI","inputSchema":{"type":"object","properties":{}},
   "_meta":{"ui":{"resourceUri":"ui://app/main","visibility":["model","app"],"csp":{"connectDomains":["https://x"]}}}},
  {"name":"structured","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"t":{"type":"number"}},"required":["t"]}}
]}]])

local fake_client = { config = { client_name = "fake" }, call_tool = function() error("not used") end }

local function by_name(list) return mcp.tools.by_name(list) end

describe("mcp.tools conversion (definitions in hand)", function()
  local conv = mcp.new_tool_converter(fake_client)

  it("converts every tool in automatic mode", function()
    local tools, err = conv:tools_from_definitions(DEFS)
    assert.is_nil(err)
    assert.are.equal(5, #tools)
    local t = by_name(tools)
    local s = t.search
    assert.are.equal("dynamic", s.type)
    assert.are.equal("Search", s.title)
    assert.are.equal("Find things", s.description)
    -- the schema as sent, plus the reference's two normalisations
    assert.are.equal("Query", s.input_schema.properties.q["x-mcp-header"])
    assert.are.equal("#/$defs/count", s.input_schema.properties.n["$ref"])
    assert.is_true(s.input_schema["x-vendor"].keep)
    assert.is_false(s.input_schema.additionalProperties)
    assert.are.same({ "q" }, s.input_schema.required)
    -- a copy: the definition is untouched
    assert.is_nil(DEFS.tools[1].inputSchema.additionalProperties)
    -- annotations: only well-typed hints, marked untrusted
    assert.are.same({ readOnlyHint = true, openWorldHint = false, title = "Ann title", untrusted = true }, s.annotations)
    -- definition: the server's definition itself (what mcp.tools.pin_store fingerprints)
    assert.are.equal(DEFS.tools[1], s.provider_metadata.mcp.definition)
    assert.are.same({ client_name = "fake", tool_name = "search", title = "Search", annotations = s.annotations,
      definition = DEFS.tools[1] }, s.provider_metadata.mcp)
    assert.are.equal("function", type(s.execute))
    -- title falls back to annotations.title
    assert.are.equal("From annotations", t.bare.title)
    assert.is_nil(t.bare.description)
    assert.are.equal('{}', mcp.json.encode(t.bare.input_schema.properties))
    assert.are.equal('{}', mcp.json.encode(t.nullprops.input_schema.properties))
    assert.is_false(t.nullprops.input_schema.additionalProperties)
    -- app metadata
    local app = t.app.provider_metadata.mcp.app
    assert.are.equal("ui://app/main", app.resourceUri)
    assert.are.equal("text/html;profile=mcp-app", app.mimeType)
    assert.are.same({ "model", "app" }, app.visibility)
    assert.are.same({ connectDomains = { "https://x" } }, app.csp)
    assert.is_nil(t.search.provider_metadata.mcp.app)
    -- the server's output schema is kept
    assert.are.equal("number", t.structured.output_schema.properties.t.type)
  end)

  it("converts only the tools named in a schema map, with those schemas", function()
    local tools = conv:tools_from_definitions(DEFS, {
      search = { input_schema = { type = "object", properties = { q = { type = "string" } } } },
      structured = { outputSchema = { type = "object", required = { "u" } } },
      missing = { input_schema = {} },
    })
    assert.are.equal(2, #tools)
    local t = by_name(tools)
    assert.are.equal("function", t.search.type)
    assert.is_nil(t.search.input_schema.additionalProperties) -- a given schema is used as is
    assert.are.same({ "u" }, t.structured.output_schema.required)
    assert.are.equal("object", t.structured.input_schema.type) -- discovered schema kept
  end)

  it("takes an array of definitions too", function()
    assert.are.equal(5, #conv:tools_from_definitions(DEFS.tools))
  end)

  it("fails on an invalid app URI", function()
    local tools, err = conv:tools_from_definitions({ { name = "x", inputSchema = {}, _meta = { ui = { resourceUri = "https://no" } } } })
    assert.is_nil(tools)
    assert.truthy(err.message:find("Invalid MCP App resource URI", 1, true))
  end)

  it("fingerprints converted tools (what the model sees)", function()
    local fp = mcp.fingerprint_tools(conv:tools_from_definitions(DEFS))
    local raw = mcp.fingerprint_tools(DEFS)
    local n = 0
    for _ in pairs(fp) do n = n + 1 end
    assert.are.equal(5, n)
    assert.are_not.equal(fp.search, raw.search) -- additionalProperties=false was added
    assert.are.equal(fp.search, mcp.fingerprint_tools(conv:tools_from_definitions(D(mcp.json.encode(DEFS)))).search)
  end)

  it("raises on misuse", function()
    assert.has_error(function() mcp.new_tool_converter(nil) end)
    assert.has_error(function() conv:tools_from_definitions("x") end)
    assert.has_error(function() conv:tools_from_definitions(DEFS, "x") end)
  end)
end)

describe("mcp.tools exporters", function()
  local tools = mcp.new_tool_converter(fake_client):tools_from_definitions(DEFS)

  it("to_openai (chat and responses)", function()
    local o = mcp.tools.to_openai(tools)
    assert.are.equal(5, #o)
    assert.are.equal("function", o[1].type)
    assert.are.equal("search", o[1]["function"].name)
    assert.are.equal("Find things", o[1]["function"].description)
    assert.are.equal(tools[1].input_schema, o[1]["function"].parameters)
    assert.are.equal("", o[2]["function"].description)
    assert.is_nil(o[1]["function"].strict)
    local r = mcp.tools.to_openai(tools, { api = "responses", strict = false })
    assert.are.same({ "function", "search", false }, { r[1].type, r[1].name, r[1].strict })
    assert.is_string(mcp.json.encode(o))
  end)
  it("to_anthropic", function()
    local a = mcp.tools.to_anthropic(tools)
    assert.are.same({ "search", "Find things" }, { a[1].name, a[1].description })
    assert.are.equal("object", a[1].input_schema.type)
    local noType = mcp.tools.to_anthropic({ { name = "x", input_schema = { properties = {} } } })
    assert.are.equal("object", noType[1].input_schema.type)
  end)
  it("to_gemini (parametersJsonSchema, or the OpenAPI subset)", function()
    local g = mcp.tools.to_gemini(tools)
    assert.are.equal(5, #g.functionDeclarations)
    assert.are.equal(tools[1].input_schema, g.functionDeclarations[1].parametersJsonSchema)
    local o = mcp.tools.to_gemini(tools, { openapi = true }).functionDeclarations[1].parameters
    assert.is_nil(o.additionalProperties)
    assert.is_nil(o["$defs"])
    assert.is_nil(o["x-vendor"])
    assert.is_nil(o.properties.q["x-mcp-header"])
    assert.are.equal("string", o.properties.q.type)
    assert.are.same({ "q" }, o.required)
  end)
  it("to_codecompanion builds a CodeCompanion tool table", function()
    local calls = {}
    local t = { name = "echo", description = "Echo", input_schema = { type = "object" },
      execute = function(args)
        calls[#calls + 1] = args
        return { { type = "text", text = "said " .. args.message } }, { content = {} }
      end }
    local cc = mcp.tools.to_codecompanion(t, { blocking = true })
    assert.are.equal("echo", cc.name)
    assert.are.equal("function", cc.schema.type)
    assert.are.equal("Echo", cc.schema["function"].description)
    local got
    cc.cmds[1](cc, { message = "hi" }, { output_cb = function(r) got = r end })
    assert.are.same({ status = "success", data = "said hi" }, got)
    local out = {}
    cc.output.success(cc, { "said hi" }, { tools = { chat = { add_tool_output = function(_, _, text) out[#out + 1] = text end } } })
    assert.are.same({ "said hi" }, out)
    local failing = mcp.tools.to_codecompanion({ name = "f", execute = function() return nil, mcp.new_error(nil, "nope") end })
    assert.are.equal("error", failing.cmds[1](failing, {}, {}).status)
  end)
  it("raises on misuse", function()
    assert.has_error(function() mcp.tools.to_openai({ { description = "no name" } }) end)
    assert.has_error(function() mcp.tools.to_codecompanion({ name = "x" }) end)
  end)
end)

describe("mcp.tools against a live server", function()
  local client
  before_each(function()
    local err
    client, err = helper.test_server({ "--page-size=3", "--tools=4" })
    assert(client, tostring(err))
  end)
  after_each(function()
    if client then client:close() end
  end)

  local function tool(name, schemas)
    local conv = mcp.new_tool_converter(client)
    local list = assert(schemas and conv:convert_to_tools_with_schemas(schemas) or conv:convert_to_tools())
    return mcp.tools.by_name(list)[name], list
  end

  it("converts every page of tools/list", function()
    local first = assert(client:list_tools())
    local list = assert(mcp.get_tools_for_agent(client))
    assert.are.equal(3, #first)
    assert.is_true(#list > 3)
    assert.is_not_nil(mcp.tools.by_name(list).tool_4)
    assert.are.equal(client.config.client_name, list[1].provider_metadata.mcp.client_name)
  end)

  it("executes a tool and returns content parts and the result", function()
    local echo = tool("echo")
    local parts, result = echo.execute({ message = "hello" })
    assert.are.same({ { type = "text", text = "hello" } }, parts)
    assert.are.equal("hello", result.content[1].text)
  end)

  it("decodes image and audio content to bytes", function()
    local parts = assert(tool("image").execute())
    assert.are.equal("image", parts[1].type)
    assert.are.equal("\137PNG\r\n\26\n", parts[1].data:sub(1, 8))
    assert.are.equal("image/png", parts[1].media_type)
    assert.are.equal("audio", parts[2].type)
    assert.are.equal("RIFF", parts[2].data:sub(1, 4))
  end)

  it("validates structuredContent against a given output schema", function()
    local s = { type = "object", properties = { t = { type = "number" }, inner = { type = "object",
      properties = { list = { type = "array", items = { type = "string" } } } } }, required = { "t" } }
    local echo_args = tool("echo_args", { echo_args = { output_schema = s } })
    local parts, result = echo_args.execute({ t = 1.5, inner = { list = { "a" } } })
    assert.is_table(parts)
    assert.are.equal(1.5, result.structuredContent.t)
    local p2, err = echo_args.execute({ t = 1, inner = { list = { "a", "b", 3 } } })
    assert.is_nil(p2)
    assert.are.equal("validation", err.kind)
    assert.truthy(err.message:find('Tool "echo_args" returned structuredContent that does not match the expected outputSchema', 1, true), err.message)
    assert.truthy(err.message:find("/inner/list/2", 1, true), err.message)
    assert.are.equal("/inner/list/2", err.data.path)
  end)

  it("falls back to parsing the first text part when there is no structuredContent", function()
    local echo = tool("echo", { echo = { output_schema = { type = "object", required = { "a" } } } })
    local parts, result = echo.execute({ message = '{"a":1}' })
    assert.is_table(parts)
    assert.are.equal(1, result.structuredContent.a)
    local p2, err = echo.execute({ message = '{"b":1}' })
    assert.is_nil(p2)
    assert.truthy(err.message:find("returned content that does not match", 1, true), err.message)
    assert.truthy(err.message:find("/a", 1, true))
    local p3, err3 = echo.execute({ message = "not json" })
    assert.is_nil(p3)
    assert.truthy(err3.message:find("not JSON", 1, true))
  end)

  it("reports a structured-output tool that returns nothing parseable", function()
    local img = tool("image", { image = { output_schema = { type = "object" } } })
    local p, err = img.execute()
    assert.is_nil(p)
    assert.truthy(err.message:find("did not return structuredContent or parseable text content", 1, true))
  end)

  it("passes a tool-level error through without validation", function()
    local te = tool("tool_error", { tool_error = { output_schema = { type = "object", required = { "x" } } } })
    local parts, result = te.execute()
    assert.is_true(result.isError)
    assert.are.equal("tool failed on purpose", parts[1].text)
  end)

  it("returns nil, err for a JSON-RPC error, keeping its code", function()
    local parts, err = tool("error").execute()
    assert.is_nil(parts)
    assert.are.equal(-32603, err.code)
    assert.are.equal("rpc", err.kind)
    assert.truthy(err.message:find("MCP tool error failed: boom", 1, true), err.message)
  end)

  it("runs inside tasks", function()
    local echo = tool("echo")
    local got = {}
    for i = 1, 5 do
      mcp.spawn(function()
        local parts = echo.execute({ message = "m" .. i })
        got[#got + 1] = parts[1].text
      end)
    end
    mcp.run()
    table.sort(got)
    assert.are.same({ "m1", "m2", "m3", "m4", "m5" }, got)
  end)
end)
