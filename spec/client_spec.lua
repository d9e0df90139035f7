-- The client against spec/fixtures/test_server.lua (the fault-injection MCP server) and the
-- example server: every client method, server-to-client requests, notifications, exact numbers
-- and ids on the wire, concurrency, and failures (dying, hanging, garbage, oversized messages).
local mcp = require("mcp")
local helper = require("helper")

local json = mcp.json
local now = mcp.core.now_ms
local ms = helper.ms
local has = helper.has
local HAS_INTEGERS = math.type ~= nil
local unpack = table.unpack or unpack

local DOCUMENTED_KINDS = {
  rpc = true, timeout = true, cancelled = true, closed = true, transport = true,
  protocol = true, config = true, handler = true,
}

-- A connected test server client, closed when the test ends.
-- (busted keeps one finally() per test: the clients a test starts are tracked and closed after it)
after_each(helper.close_tracked)

local function server(args, opts)
  local c, err = helper.test_server(args, opts)
  assert(c, "cannot connect to the test server: " .. tostring(err))
  return helper.track(c)
end

local function text(res, i)
  return res.content[i or 1].text
end

-- Call a tool that must succeed; returns the result.
local function call(c, name, args, opts)
  local res, err = c:call_tool(name, args, opts)
  assert(res, ("call_tool(%s) failed: %s"):format(name, tostring(err)))
  return res
end

local function names(list, field)
  local out = {}
  for i, item in ipairs(list) do out[i] = item[field or "name"] end
  return out
end

local function count_keys(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function contains(list, v)
  for _, x in ipairs(list) do
    if x == v then return true end
  end
  return false
end

local function int_text(v)
  return string.format("%.0f", v)
end

-- The id of the next request: echo_args returns the raw request line (with its id).
local function last_request_id(c)
  local res = call(c, "echo_args", {})
  local id = text(res):match('"id":(%d+)')
  assert(id, "no numeric id in " .. text(res))
  return tonumber(id)
end

local BUILTIN_TOOLS = {
  "echo", "big", "die", "hang", "sleep", "cancelled", "progress", "elicit", "roots", "sample",
  "ping_client", "notify", "last_initialize", "numbers", "echo_args", "image", "error", "tool_error",
}

-- Writes a tiny Lua MCP server (using examples/servers/mcp_server.lua) to a temp file; its
-- initialize result carries what it saw: serverInfo.name = "probe", instructions = JSON
-- {cwd = `pwd -P`, env = {NAME = value|false for each NAME given as an argument}}.
local function write_probe_server()
  local path = os.tmpname()
  helper.write_file(path, ([[
local mcp = dofile(%q)
local p = io.popen("pwd -P")
local cwd = p and p:read("*l") or "?"
if p then p:close() end
local env = {}
for _, name in ipairs(arg) do env[name] = os.getenv(name) or false end
local server = mcp.new { name = "probe", version = "1.0.0", instructions = mcp.encode({ cwd = cwd, env = env }) }
server:run()
]]):format(helper.root .. "/examples/servers/mcp_server.lua"))
  return path
end

-- Writes a server whose tool `burst` sends 3 progress notifications and a log message and then
-- its answer in ONE write (stdout fully buffered, flushed only after a response), so that the
-- client reads them all in the same loop step.
local function write_burst_server()
  local path = os.tmpname()
  helper.write_file(path, ([[
local mcp = dofile(%q)
io.stdout:setvbuf("full", 1048576)
local server = mcp.new { name = "burst", version = "1.0.0" }
function server.write_line(self, line)
  io.stdout:write(line, "\n")
  if line:find('"id"', 1, true) then io.stdout:flush() end
end
server:tool { name = "burst", description = "progress + log + answer in one write",
  inputSchema = { type = "object" },
  call = function(_, req)
    for i = 1, 3 do req:progress(i, 3, "step " .. i) end
    server:notify("notifications/message", { level = "info", logger = "burst", data = "in the same write" })
    return "burst done"
  end }
server:run()
]]):format(helper.root .. "/examples/servers/mcp_server.lua"))
  return path
end

---------------------------------------------------------------------------------------------
describe("connect", function()
  it("connects and exposes server_info, capabilities, instructions, initialize_result, protocol_version", function()
    local c = server()
    assert.is_true(c:is_connected())
    local info = c:server_info()
    assert.are.equal("lua-mcp-test-server", info.name)
    assert.are.equal("0.1.0", info.version)
    assert.are.equal("lua-mcp test server", info.title)
    local caps = c:server_capabilities()
    assert.is_true(caps.tools.listChanged)
    assert.is_true(caps.resources.subscribe)
    assert.is_true(caps.resources.listChanged)
    assert.is_true(caps.prompts.listChanged)
    assert.is_table(caps.completions)
    assert.is_table(caps.logging)
    assert.are.equal("Fault-injection server for the lua-mcp test suite.", c:server_instructions())
    assert.are.equal("2025-11-25", c:protocol_version())
    local init = c:initialize_result()
    assert.are.equal("2025-11-25", init.protocolVersion)
    assert.are.equal("lua-mcp-test-server", init.serverInfo.name)
    assert.are.equal(c:server_instructions(), init.instructions)
    assert.is_table(init.capabilities.tools)
  end)

  it("uses --name for serverInfo.name", function()
    local c = server({ "--name=renamed" })
    assert.are.equal("renamed", c:server_info().name)
  end)

  it("exposes the protocol constants", function()
    assert.are.equal("2025-11-25", mcp.PROTOCOL_VERSION)
    assert.is_table(mcp.SUPPORTED_PROTOCOL_VERSIONS)
    assert.is_true(contains(mcp.SUPPORTED_PROTOCOL_VERSIONS, "2025-11-25"))
    assert.is_true(contains(mcp.SUPPORTED_PROTOCOL_VERSIONS, "2024-11-05"))
    assert.are.equal(-32601, mcp.ERROR_CODES.METHOD_NOT_FOUND)
    assert.are.equal(-32002, mcp.ERROR_CODES.RESOURCE_NOT_FOUND)
  end)

  it("sends initialize with protocolVersion 2025-11-25, clientInfo and, without handlers, only its extensions", function()
    local c = server({}, { client_name = "spec-client", client_version = "9.8.7" })
    local res = call(c, "last_initialize")
    local p = res.structuredContent
    assert.are.equal("2025-11-25", p.protocolVersion)
    assert.are.equal("spec-client", p.clientInfo.name)
    assert.are.equal("9.8.7", p.clientInfo.version)
    assert.is_table(p.capabilities)
    -- no elicitation, roots or sampling: just the skills extension (SEP-2640), which has no settings
    assert.are.equal(1, count_keys(p.capabilities))
    assert.are.equal(1, count_keys(p.capabilities.extensions))
    -- exactly {} on the wire, not [] or null
    assert.is_truthy(has(text(res), '"capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}}'), text(res))
  end)

  it("defaults clientInfo to lua-mcp and accepts the `name` alias", function()
    local c = server()
    local p = call(c, "last_initialize").structuredContent
    assert.are.equal("lua-mcp", p.clientInfo.name)
    assert.is_string(p.clientInfo.version)
    local c2 = server({}, { name = "aliased" })
    assert.are.equal("aliased", call(c2, "last_initialize").structuredContent.clientInfo.name)
  end)

  it("advertises elicitation, roots and sampling only for registered handlers", function()
    local c = server({}, {
      on_elicitation_request = function() return { action = "decline" } end,
      on_roots_list = function() return {} end,
      on_sampling_request = function() return nil end,
    })
    local caps = call(c, "last_initialize").structuredContent.capabilities
    assert.is_table(caps.elicitation)
    assert.is_table(caps.roots)
    assert.is_true(caps.roots.listChanged)
    assert.is_table(caps.sampling)

    local c2 = server({}, { on_elicitation_request = function() return { action = "decline" } end })
    local caps2 = call(c2, "last_initialize").structuredContent.capabilities
    assert.is_table(caps2.elicitation)
    assert.is_nil(caps2.roots)
    assert.is_nil(caps2.sampling)

    local c3 = server({}, { roots = { { uri = "file:///tmp", name = "tmp" } } })
    local caps3 = call(c3, "last_initialize").structuredContent.capabilities
    assert.is_table(caps3.roots)
    assert.is_nil(caps3.elicitation)
    assert.is_nil(caps3.sampling)
  end)

  it("sends user-provided capabilities as given", function()
    local c = server({}, { capabilities = { experimental = { ["spec.feature"] = mcp.object({}) } } })
    local res = call(c, "last_initialize")
    assert.is_table(res.structuredContent.capabilities.experimental["spec.feature"])
    assert.is_truthy(has(text(res), '"spec.feature":{}'), text(res))
  end)

  it("new_client + connect and create_client work as create_stdio_client does", function()
    local t = mcp.stdio_transport({ command = helper.lua_cmd(), args = { helper.test_server_path }, stderr = "discard" })
    local c = helper.track(mcp.new_client(t, { client_name = "two-step" }))
    assert.is_false(c:is_connected())
    assert.is_nil(c:protocol_version())
    assert.are.equal("", c:server_instructions())
    assert.is_table(c:server_info())
    assert.is_nil(c:server_info().name)
    local ok, err = c:connect()
    assert.is_true(ok, tostring(err))
    assert.is_true(c:is_connected())
    assert.is_true(c:connect()) -- connected already: no second handshake
    assert.are.equal("two-step", call(c, "last_initialize").structuredContent.clientInfo.name)

    local t2 = mcp.stdio_transport({ command = helper.lua_cmd(), args = { helper.test_server_path }, stderr = "discard" })
    local c2, err2 = mcp.create_client({ client_name = "created" }, t2)
    assert(helper.track(c2), tostring(err2))
    assert.is_true(c2:is_connected())
    assert.are.equal("created", call(c2, "last_initialize").structuredContent.clientInfo.name)
  end)

  it("talks to the example server", function()
    local c, err = helper.example_server()
    assert(c, tostring(err))
    finally(function() c:close() end)
    assert.are.equal("lua-example-server", c:server_info().name)
    local tools = assert(c:list_all_tools())
    assert.is_true(contains(names(tools), "add"))
    local res = call(c, "add", { a = 2, b = 40 })
    assert.are.equal(42, res.structuredContent.sum)
    assert.are.equal("2 + 40 = 42", text(res))
    local r = assert(c:read_resource("example://greeting"))
    assert.are.equal("Hello from the Lua MCP example server!", r.contents[1].text)
  end)
end)

---------------------------------------------------------------------------------------------
describe("pagination", function()
  local c
  setup(function()
    local err
    c, err = helper.test_server({ "--page-size=3", "--tools=10" })
    assert(c, tostring(err))
  end)
  teardown(function()
    if c then c:close() end
  end)

  -- Walks every page with the *_with_cursor method; returns the items and the page count.
  local function walk(method, field)
    local items, pages, cursor, seen = {}, 0, nil, {}
    repeat
      local page, err = c[method](c, cursor)
      assert(page, tostring(err))
      pages = pages + 1
      assert.is_table(page[field])
      assert.is_true(#page[field] <= 3)
      for _, it in ipairs(page[field]) do items[#items + 1] = it end
      cursor = page.nextCursor
      if cursor ~= nil then
        assert.is_string(cursor)
        assert.is_nil(seen[cursor])
        seen[cursor] = true
        assert.are.equal(3, #page[field]) -- only the last page may be short
      end
      assert.is_true(pages < 50)
    until cursor == nil
    return items, pages
  end

  it("pages tools: list_tools, list_tools_with_cursor, list_all_tools, get_serializable_tools", function()
    local first = assert(c:list_tools())
    assert.are.equal(3, #first)

    local raw = assert(c:get_serializable_tools())
    assert.are.equal(3, #raw.tools)
    assert.is_string(raw.nextCursor)
    assert.are.same(names(first), names(raw.tools))

    local items, pages = walk("list_tools_with_cursor", "tools")
    assert.are.equal(28, #items) -- 18 built-in + tool_1..tool_10
    assert.are.equal(10, pages)

    local all = assert(c:list_all_tools())
    assert.are.equal(28, #all)
    assert.are.same(names(items), names(all))
    local set = {}
    for _, n in ipairs(names(all)) do
      assert.is_nil(set[n], "duplicate tool " .. n)
      set[n] = true
    end
    for _, n in ipairs(BUILTIN_TOOLS) do assert.is_true(set[n], "missing " .. n) end
    for i = 1, 10 do assert.is_true(set["tool_" .. i], "missing tool_" .. i) end
    assert.is_table(all[1].inputSchema)
    assert.is_string(all[1].description)
  end)

  it("pages resources", function()
    local first = assert(c:list_resources())
    assert.are.equal(3, #first)
    local items, pages = walk("list_resources_with_cursor", "resources")
    assert.are.equal(8, #items) -- test://r/1..7 + test://blob
    assert.are.equal(3, pages)
    local all = assert(c:list_all_resources())
    assert.are.same(names(items, "uri"), names(all, "uri"))
    local uris = names(all, "uri")
    for i = 1, 7 do assert.is_true(contains(uris, "test://r/" .. i)) end
    assert.is_true(contains(uris, "test://blob"))
  end)

  it("pages resource templates", function()
    local first = assert(c:list_resource_templates())
    assert.are.equal(3, #first.resourceTemplates)
    assert.is_string(first.nextCursor)
    local items, pages = walk("list_resource_templates_with_cursor", "resourceTemplates")
    assert.are.equal(8, #items) -- test://items/{id} + test://t1..t7/{id}
    assert.are.equal(3, pages)
    local all = assert(c:list_all_resource_templates())
    assert.are.equal(8, #all)
    local tpls = names(all, "uriTemplate")
    assert.is_true(contains(tpls, "test://items/{id}"))
    assert.is_true(contains(tpls, "test://t7/{id}"))
  end)

  it("pages prompts", function()
    local first = assert(c:list_prompts())
    assert.are.equal(3, #first)
    local items, pages = walk("list_prompts_with_cursor", "prompts")
    assert.are.equal(8, #items) -- greet + prompt_1..prompt_7
    assert.are.equal(3, pages)
    local all = assert(c:list_all_prompts())
    assert.are.same(names(items), names(all))
    assert.is_true(contains(names(all), "greet"))
    assert.is_true(contains(names(all), "prompt_7"))
  end)

  it("treats an empty cursor as the first page", function()
    local page = assert(c:list_tools_with_cursor(""))
    assert.are.same(names(assert(c:list_tools())), names(page.tools))
  end)

  it("returns the server's error for a bad cursor", function()
    local page, err = c:list_tools_with_cursor("not-a-cursor")
    assert.is_nil(page)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32602, err.code)
    assert.is_truthy(has(err.message, "Invalid cursor"))
    assert.is_true(err:is(mcp.errors.invalid_params))
  end)

  it("returns everything in one page without --page-size", function()
    local c2 = server()
    local page = assert(c2:list_tools_with_cursor(nil))
    assert.are.equal(18, #page.tools)
    assert.is_nil(page.nextCursor)
    assert.are.equal(18, #assert(c2:list_all_tools()))
  end)
end)

---------------------------------------------------------------------------------------------
describe("tools, resources, prompts, completion, utilities", function()
  local c
  setup(function()
    local err
    c, err = helper.test_server({})
    assert(c, tostring(err))
  end)
  teardown(function()
    if c then c:close() end
  end)

  it("call_tool echo", function()
    local res = call(c, "echo", { message = "hello, wörld \"quoted\"\n" })
    assert.are.equal(1, #res.content)
    assert.are.equal("text", res.content[1].type)
    assert.are.equal("hello, wörld \"quoted\"\n", text(res))
    assert.is_falsy(res.isError)
  end)

  it("call_tool with structured content", function()
    local res = call(c, "numbers")
    assert.is_table(res.structuredContent)
    assert.are.equal(0.5, res.structuredContent.float)
    assert.are.equal('{"big":9007199254740992,"neg":-9007199254740992,"float":0.5}', text(res))
  end)

  it("returns isError tool results as a success value", function()
    local res, err = c:call_tool("tool_error")
    assert.is_nil(err)
    assert.is_true(res.isError)
    assert.are.equal("tool failed on purpose", text(res))
  end)

  it("returns image and audio content items", function()
    local res = call(c, "image")
    assert.are.equal("image", res.content[1].type)
    assert.are.equal("image/png", res.content[1].mimeType)
    assert.is_truthy(res.content[1].data:match("^iVBORw0KGgo"))
    assert.are.equal("audio", res.content[2].type)
    assert.are.equal("audio/wav", res.content[2].mimeType)
  end)

  it("returns a JSON-RPC error as nil, err with kind rpc, code, message and data", function()
    local res, err = c:call_tool("error")
    assert.is_nil(res)
    assert.is_true(mcp.is_error(err))
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32603, err.code)
    assert.are.equal("boom", err.message)
    assert.are.equal("boom", err.data.detail)
    assert.are.equal("tools/call", err.method)
    assert.is_true(err:is(mcp.errors.internal_error))
    assert.is_true(err:is(-32603))
    assert.is_false(err:is(mcp.errors.method_not_found))
    assert.is_truthy(has(tostring(err), "boom"))
    assert.is_truthy(has(tostring(err), "-32603"))
  end)

  it("reports an unknown tool", function()
    local res, err = c:call_tool("no_such_tool", { x = 1 })
    assert.is_nil(res)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32602, err.code)
    assert.are.equal("Unknown tool: no_such_tool", err.message)
  end)

  it("reports an unknown method through request()", function()
    local res, err = c:request("no/such/method", {})
    assert.is_nil(res)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32601, err.code)
    assert.is_true(err:is(mcp.errors.method_not_found))
    assert.are.equal("no/such/method", err.method)
  end)

  it("request() returns the raw result", function()
    local res = assert(c:request("tools/call", { name = "echo", arguments = { message = "raw" } }))
    assert.are.equal("raw", res.content[1].text)
  end)

  it("read_resource: text, blob, template and not found", function()
    local r = assert(c:read_resource("test://r/3"))
    assert.are.equal(1, #r.contents)
    assert.are.equal("test://r/3", r.contents[1].uri)
    assert.are.equal("text/plain", r.contents[1].mimeType)
    assert.are.equal("resource 3", r.contents[1].text)

    local b = assert(c:read_resource("test://blob"))
    assert.are.equal("image/png", b.contents[1].mimeType)
    assert.are.equal("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4n8YAAAPNAWb9kSz2AAAAAElFTkSuQmCC",
      b.contents[1].blob)
    assert.is_nil(b.contents[1].text)

    local t = assert(c:read_resource("test://items/42"))
    assert.are.equal("item 42", t.contents[1].text)

    local none, err = c:read_resource("test://nothing")
    assert.is_nil(none)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32002, err.code)
    assert.is_true(err:is(mcp.errors.resource_not_found))
    assert.are.equal("test://nothing", err.data.uri)
  end)

  it("get_prompt with arguments", function()
    local p = assert(c:get_prompt("greet", { name = "Ann" }))
    assert.are.equal("Greeting", p.description)
    assert.are.equal(1, #p.messages)
    assert.are.equal("user", p.messages[1].role)
    assert.are.equal("Hello, Ann!", p.messages[1].content.text)
    local p2 = assert(c:get_prompt("greet", { name = "Bo", greeting = "Howdy" }))
    assert.are.equal("Howdy, Bo!", p2.messages[1].content.text)
    local p3 = assert(c:get_prompt("prompt_2"))
    assert.is_truthy(p3.messages[1].content.text:match("^prompt 2 "))
    local none, err = c:get_prompt("no_such_prompt")
    assert.is_nil(none)
    assert.are.equal("rpc", err.kind)
  end)

  it("complete: prompt argument, with context, resource template, Go-style refs", function()
    local r = assert(c:complete({ ref = { type = "ref/prompt", name = "greet" }, argument = { name = "name", value = "A" } }))
    assert.are.same({ "Alice", "Alan" }, r.completion.values)

    local ctx = assert(c:complete({
      ref = { type = "ref/prompt", name = "greet" },
      argument = { name = "greeting", value = "H" },
      context = { arguments = { name = "Bob" } },
    }))
    assert.are.same({ "Hello Bob", "Hi Bob", "Hey Bob" }, ctx.completion.values)

    local tpl = assert(c:complete({
      ref = { type = "ref/resource", uri = "test://items/{id}" }, argument = { name = "id", value = "1" },
    }))
    assert.are.same({ "1", "10", "11", "12", "100" }, tpl.completion.values)

    local go = assert(c:complete({ prompt_ref = { name = "prompt_1" }, argument = { name = "arg", value = "g" } }))
    assert.are.same({ "gamma" }, go.completion.values)
    local go2 = assert(c:complete({ resource_ref = { uri = "test://items/{id}" }, argument = { name = "id", value = "4" } }))
    assert.are.same({ "42" }, go2.completion.values)
  end)

  it("ping, set_logging_level, subscribe_resource, unsubscribe_resource", function()
    local p, err = c:ping()
    assert.is_table(p, tostring(err))
    assert.are.equal(0, count_keys(p))
    for _, level in ipairs({ "debug", "info", "warning", "emergency" }) do
      local r, e = c:set_logging_level(level)
      assert.is_table(r, tostring(e))
    end
    assert.is_table((c:subscribe_resource("test://r/1")))
    assert.is_table((c:unsubscribe_resource("test://r/1")))
  end)

  it("notify() sends a notification", function()
    assert.is_true((c:notify("notifications/roots/list_changed")))
    -- the session goes on
    assert.are.equal("after notify", text(call(c, "echo", { message = "after notify" })))
  end)
end)

---------------------------------------------------------------------------------------------
describe("key_order", function()
  local SCHEMA = '{"type":"object","properties":{"source":{"type":"string"},'
    .. '"destination":{"type":"string"},"overwrite":{"type":"boolean"}},"required":["source","destination"]}'

  local function move_file(c)
    for _, t in ipairs(assert(c:list_all_tools())) do
      if t.name == "move_file" then return t end
    end
  end

  it("true: every object the server sends keeps its key order, and encodes in it again", function()
    local c = assert(helper.test_server({ "--ordered-tool" }, { key_order = true }))
    finally(function() c:close() end)
    local t = assert(move_file(c))
    assert.are.same({ "type", "properties", "required" }, getmetatable(t.inputSchema).__keyorder)
    assert.are.equal(SCHEMA, mcp.json.encode(t.inputSchema))
    -- a call's result too
    local res = assert(c:call_tool("echo", { message = "hi" }))
    assert.is_table(getmetatable(res).__keyorder)
  end)

  it("default: plain tables (only \"properties\" keeps its order)", function()
    local c = assert(helper.test_server({ "--ordered-tool" }))
    finally(function() c:close() end)
    local t = assert(move_file(c))
    assert.is_nil(getmetatable(t.inputSchema))
    assert.are.same({ "source", "destination", "overwrite" }, getmetatable(t.inputSchema.properties).__keyorder)
    assert.has_error(function() mcp.new_client(c.transport, { key_order = "yes" }) end)
  end)
end)

describe("notifications", function()
  it("reach the list_changed, resource_updated, log and '*' handlers", function()
    local c = server()
    local got = { tools = 0, resources = 0, prompts = 0, all = {} }
    c:on_tools_list_changed(function()
      got.tools = got.tools + 1
      got.tools_after = c:list_all_tools() -- handlers run in tasks and may call the server
    end)
    c:on_resources_list_changed(function() got.resources = got.resources + 1 end)
    c:on_prompts_list_changed(function() got.prompts = got.prompts + 1 end)
    c:on_resource_updated(function(params) got.updated = params end)
    c:on_log_message(function(params) got.log = params end)
    c:on_notification("*", function(params, method) got.all[#got.all + 1] = { method = method, params = params } end)
    c:on_notification("notifications/message", function(params, method) got.by_name = method end)

    assert.are.equal("ok", text(call(c, "notify")))
    assert.is_true(helper.wait_until(function()
      return #got.all >= 5 and got.log ~= nil and got.tools_after ~= nil
    end, ms(5000)))
    helper.drain()
    assert.are.equal(1, got.tools)
    assert.are.equal(18, #got.tools_after)
    assert.are.equal(1, got.resources)
    assert.are.equal(1, got.prompts)
    assert.are.equal("test://r/1", got.updated.uri)
    assert.are.equal("info", got.log.level)
    assert.are.equal("test", got.log.logger)
    assert.are.equal("hello", got.log.data)
    assert.are.equal("notifications/message", got.by_name)
    assert.are.same({
      "notifications/tools/list_changed", "notifications/resources/list_changed",
      "notifications/prompts/list_changed", "notifications/resources/updated", "notifications/message",
    }, names(got.all, "method"))
  end)

  it("a raising notification handler is reported to on_error and the session continues", function()
    local errs = {}
    local c = server({}, { on_error = function(e) errs[#errs + 1] = e end })
    c:on_log_message(function() error("handler exploded") end)
    call(c, "notify")
    assert.is_true(helper.wait_until(function() return #errs > 0 end, ms(5000)))
    assert.is_true(mcp.is_error(errs[1]))
    assert.are.equal("handler", errs[1].kind)
    assert.is_truthy(has(errs[1].message, "handler exploded"))
    assert.are.equal("still here", text(call(c, "echo", { message = "still here" })))
  end)

  it("handlers queued by the read that carries a blocking call's answer run before the call returns", function()
    local path = write_burst_server()
    finally(function() os.remove(path) end)
    local c, err = mcp.create_stdio_client(helper.lua_cmd(), { path }, { stderr = "discard" })
    assert(helper.track(c), tostring(err))
    local progress, logs = {}, 0
    c:on_log_message(function() logs = logs + 1 end)
    local res = call(c, "burst", nil, { on_progress = function(p) progress[#progress + 1] = p.progress end })
    assert.are.equal("burst done", text(res))
    -- no loop step in between
    assert.are.same({ 1, 2, 3 }, progress)
    assert.are.equal(1, logs)
  end)
end)

---------------------------------------------------------------------------------------------
describe("progress", function()
  it("opts.on_progress receives every notifications/progress of the call", function()
    local c = server()
    local seen = {}
    local res = call(c, "progress", { steps = 4 }, { on_progress = function(p) seen[#seen + 1] = p end })
    helper.drain()
    assert.are.equal(4, res.structuredContent.steps)
    assert.are.equal(4, res.structuredContent.notifications) -- the server got a progressToken
    assert.are.equal(4, #seen)
    for i, p in ipairs(seen) do
      assert.are.equal(i, p.progress)
      assert.are.equal(4, p.total)
      assert.are.equal("step " .. i .. " of 4", p.message)
      assert.is_not_nil(p.progressToken)
      assert.are.equal(seen[1].progressToken, p.progressToken)
    end
  end)

  it("sends no progressToken without on_progress, and keeps caller _meta", function()
    local c = server()
    local res = call(c, "progress", { steps = 2 })
    assert.are.equal(0, res.structuredContent.notifications)
    local r2 = call(c, "echo_args", { a = 1 }, { meta = { traceId = "t-1" }, on_progress = function() end })
    assert.is_truthy(has(text(r2), '"traceId":"t-1"'), text(r2))
    assert.is_truthy(has(text(r2), '"progressToken":'), text(r2))
  end)

  it("progress callbacks of concurrent calls do not mix", function()
    local c = server()
    local a, b = {}, {}
    mcp.spawn(function() call(c, "progress", { steps = 3, delay_ms = 20 }, { on_progress = function(p) a[#a + 1] = p.progress end }) end)
    mcp.spawn(function() call(c, "progress", { steps = 5 }, { on_progress = function(p) b[#b + 1] = p.progress end }) end)
    mcp.run()
    assert.are.same({ 1, 2, 3 }, a)
    assert.are.same({ 1, 2, 3, 4, 5 }, b)
  end)
end)

---------------------------------------------------------------------------------------------
describe("elicitation", function()
  it("accepted: the handler sees the request and its content goes back to the server", function()
    local seen
    local c = server({}, {
      on_elicitation_request = function(req)
        seen = req
        return { action = "accept", content = { name = "Ann", age = 31 } }
      end,
    })
    local res = call(c, "elicit", { message = "Who are you?" })
    local msg = res.structuredContent
    assert.are.equal("2.0", msg.jsonrpc)
    assert.are.equal("srv-1", msg.id)
    assert.is_nil(msg.error)
    assert.are.equal("accept", msg.result.action)
    assert.are.same({ name = "Ann", age = 31 }, msg.result.content)
    assert.is_truthy(has(text(res), '"id":"srv-1"'), text(res))

    assert.are.equal("Who are you?", seen.message)
    assert.are.equal("form", seen.mode)
    assert.are.equal("object", seen.requested_schema.type)
    assert.are.equal("string", seen.requested_schema.properties.name.type)
    assert.are.equal(30, seen.requested_schema.properties.age.default)
    assert.are.same({ "name" }, seen.requested_schema.required)
    assert.are.equal("Who are you?", seen.params.message)
  end)

  it("declined and cancelled: no content is sent", function()
    local action = "decline"
    local c = server({}, {
      on_elicitation_request = function() return { action = action, content = { name = "leak" } } end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.are.equal("decline", msg.result.action)
    assert.is_nil(msg.result.content)
    action = "cancel"
    msg = call(c, "elicit").structuredContent
    assert.are.equal("cancel", msg.result.action)
    assert.is_nil(msg.result.content)
    assert.are.equal("srv-2", msg.id)
  end)

  it("url mode: mode, url and elicitation_id reach the handler", function()
    local seen
    local c = server({}, { elicitation_url = true,
      on_elicitation_request = function(req) seen = req; return { action = "accept" } end })
    local msg = call(c, "elicit", { mode = "url", url = "https://example.com/x", elicitationId = "el-9" }).structuredContent
    assert.are.equal("accept", msg.result.action)
    assert.are.equal("url", seen.mode)
    assert.are.equal("https://example.com/x", seen.url)
    assert.are.equal("el-9", seen.elicitation_id)
  end)

  it("a raising handler: the server gets a JSON-RPC error, on_error is called, the session continues", function()
    local errs = {}
    local c = server({}, {
      on_error = function(e) errs[#errs + 1] = e end,
      on_elicitation_request = function() error("the dialog crashed") end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.is_nil(msg.result)
    assert.are.equal("srv-1", msg.id)
    assert.are.equal(-32603, msg.error.code)
    assert.is_truthy(has(msg.error.message, "the dialog crashed"))
    assert.is_true(helper.wait_until(function() return #errs > 0 end, ms(5000)))
    assert.are.equal("handler", errs[1].kind)
    assert.is_truthy(has(errs[1].message, "the dialog crashed"))
    assert.are.equal("alive", text(call(c, "echo", { message = "alive" })))
  end)

  it("a handler returning an invalid action: the server gets a JSON-RPC error", function()
    local errs = {}
    local c = server({}, {
      on_error = function(e) errs[#errs + 1] = e end,
      on_elicitation_request = function() return { action = "maybe" } end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.is_nil(msg.result)
    assert.are.equal(-32603, msg.error.code)
    assert.is_truthy(has(msg.error.message, "action"))
    assert.is_true(helper.wait_until(function() return #errs > 0 end, ms(5000)))
    assert.are.equal("handler", errs[1].kind)
    -- a non-table result is invalid too
    c:on_elicitation_request(function() return "yes" end)
    msg = call(c, "elicit").structuredContent
    assert.are.equal(-32603, msg.error.code)
  end)

  it("a handler returning nil, err: the error's code and message go to the server", function()
    local c = server({}, {
      on_elicitation_request = function() return nil, mcp.new_error(-32602, "schema not supported") end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.are.equal(-32602, msg.error.code)
    assert.are.equal("schema not supported", msg.error.message)
    c:on_elicitation_request(function() return nil end)
    msg = call(c, "elicit").structuredContent
    assert.are.equal(-32603, msg.error.code)
  end)

  it("without a handler the server gets -32601", function()
    local c = server()
    local msg = call(c, "elicit").structuredContent
    assert.is_nil(msg.result)
    assert.are.equal(-32601, msg.error.code)
  end)

  it("a handler registered after connect is used", function()
    local c = server()
    c:on_elicitation_request(function() return { action = "accept", content = { name = "Late" } } end)
    local msg = call(c, "elicit").structuredContent
    assert.are.equal("Late", msg.result.content.name)
  end)

  it("a handler may call back into the server while the server waits for its answer", function()
    local inner
    local c
    c = server({}, {
      on_elicitation_request = function()
        local r, err = c:call_tool("echo", { message = "nested" })
        inner = r and r.content[1].text or tostring(err)
        return { action = "accept", content = { name = inner } }
      end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.are.equal("nested", inner)
    assert.are.equal("nested", msg.result.content.name)
  end)

  it("--queue: a handler calling a server that queues while it waits times out instead of hanging", function()
    local inner_err
    local c
    c = server({ "--queue" }, {
      on_elicitation_request = function()
        local r, err = c:call_tool("echo", { message = "queued" }, { timeout_ms = 300 })
        inner_err = err
        return { action = r and "accept" or "decline" }
      end,
    })
    local msg = call(c, "elicit").structuredContent
    assert.are.equal("decline", msg.result.action)
    assert.are.equal("timeout", inner_err.kind)
    -- the queued echo is answered late (and ignored); the session goes on
    assert.are.equal("later", text(call(c, "echo", { message = "later" })))
  end)

  it("numeric server request ids (--server-ids=number) are answered with the same id", function()
    local c = server({ "--server-ids=number" }, { on_elicitation_request = function() return { action = "decline" } end })
    local res = call(c, "elicit")
    assert.are.equal(1, res.structuredContent.id)
    assert.is_truthy(has(text(res), '"id":1,'), text(res))
    assert.are.equal("decline", res.structuredContent.result.action)
  end)
end)

---------------------------------------------------------------------------------------------
describe("roots, sampling, ping from the server", function()
  it("serves roots from opts.roots and set_roots", function()
    local c = server({}, { roots = { { uri = "file:///tmp/a", name = "a" } } })
    local msg = call(c, "roots").structuredContent
    assert.are.equal(1, #msg.result.roots)
    assert.are.equal("file:///tmp/a", msg.result.roots[1].uri)
    assert.are.equal("a", msg.result.roots[1].name)

    assert.is_true((c:set_roots({ { uri = "file:///b", name = "b" }, { uri = "file:///c" } })))
    msg = call(c, "roots").structuredContent
    assert.are.same({ "file:///b", "file:///c" }, names(msg.result.roots, "uri"))

    assert.is_true((c:set_roots({})))
    local res = call(c, "roots")
    assert.are.equal(0, #res.structuredContent.result.roots)
    assert.is_truthy(has(text(res), '"roots":[]'), text(res))
  end)

  it("serves roots from on_roots_list", function()
    local calls = 0
    local c = server({}, {
      on_roots_list = function()
        calls = calls + 1
        return { { uri = "file:///from/handler", name = "h" .. calls } }
      end,
    })
    local msg = call(c, "roots").structuredContent
    assert.are.equal("file:///from/handler", msg.result.roots[1].uri)
    assert.are.equal("h1", msg.result.roots[1].name)
    msg = call(c, "roots").structuredContent
    assert.are.equal("h2", msg.result.roots[1].name)
  end)

  it("answers roots/list with -32601 when no roots are configured", function()
    local c = server()
    assert.are.equal(-32601, call(c, "roots").structuredContent.error.code)
  end)

  it("sampling: the handler gets the params and its result goes back", function()
    local seen
    local c = server({}, {
      on_sampling_request = function(params)
        seen = params
        return { role = "assistant", model = "spec-model", stopReason = "endTurn",
                 content = { type = "text", text = "echo: " .. params.messages[1].content.text } }
      end,
    })
    local msg = call(c, "sample", { prompt = "hi there" }).structuredContent
    assert.are.equal("spec-model", msg.result.model)
    assert.are.equal("echo: hi there", msg.result.content.text)
    assert.are.equal("assistant", msg.result.role)
    assert.are.equal(100, seen.maxTokens)
    assert.are.equal("user", seen.messages[1].role)
  end)

  it("sampling without a handler -> -32601", function()
    local c = server()
    assert.are.equal(-32601, call(c, "sample", { prompt = "x" }).structuredContent.error.code)
  end)

  it("answers the server's ping with an empty result and the same string id", function()
    local c = server()
    local res = call(c, "ping_client")
    assert.are.equal("srv-1", res.structuredContent.id)
    assert.are.equal(0, count_keys(res.structuredContent.result))
    assert.is_truthy(has(text(res), '"result":{}'), text(res))
    local c2 = server({ "--server-ids=number" })
    local res2 = call(c2, "ping_client")
    assert.is_truthy(has(text(res2), '"id":1,'), text(res2))
  end)
end)

---------------------------------------------------------------------------------------------
describe("ids and numbers on the wire", function()
  it("matches responses whose numeric ids are written as floats (5.0)", function()
    local c = server({}, { env = { MCP_TEST_RESPOND_FLOAT_IDS = "1" } })
    for i = 1, 5 do
      assert.are.equal("f" .. i, text(call(c, "echo", { message = "f" .. i })))
    end
    local done = 0
    for i = 1, 20 do
      mcp.spawn(function()
        local r = call(c, "echo", { message = "c" .. i })
        if r.content[1].text == "c" .. i then done = done + 1 end
      end)
    end
    mcp.run()
    assert.are.equal(20, done)
  end)

  it("decodes 2^53 and -2^53 exactly", function()
    local c = server()
    local sc = call(c, "numbers").structuredContent
    assert.are.equal(2 ^ 53, sc.big)
    assert.are.equal(-(2 ^ 53), sc.neg)
    assert.are.equal("9007199254740992", int_text(sc.big))
    assert.are.equal("-9007199254740992", int_text(sc.neg))
    assert.are.equal(0.5, sc.float)
    if HAS_INTEGERS then
      assert.are.equal("integer", math.type(sc.big))
      assert.are.equal("integer", math.type(sc.neg))
      assert.are.equal("float", math.type(sc.float))
    end
  end)

  it("keeps [] as [], {} as {} and big integers exact on the wire", function()
    local c = server()
    local args = {
      empty_array = mcp.array({}),
      empty_object = mcp.object({}),
      list = mcp.array({ 1, 2, 3 }),
      n53 = 2 ^ 53,
      neg53 = -(2 ^ 53),
      half = 0.5,
      nested = { inner = mcp.array({}), deep = { k = "v" } },
    }
    if HAS_INTEGERS then args.big = tonumber("9007199254740993") end
    local res = call(c, "echo_args", args)
    local line = text(res)
    assert.is_truthy(has(line, '"empty_array":[]'), line)
    assert.is_truthy(has(line, '"empty_object":{}'), line)
    assert.is_truthy(has(line, '"list":[1,2,3]'), line)
    assert.is_truthy(has(line, '"inner":[]'), line)
    assert.is_truthy(has(line, '"n53":9007199254740992'), line)
    assert.is_truthy(has(line, '"neg53":-9007199254740992'), line)
    assert.is_truthy(has(line, '"half":0.5'), line)
    if HAS_INTEGERS then
      assert.is_truthy(has(line, '"big":9007199254740993'), line)
      assert.are.equal("9007199254740993", string.format("%d", res.structuredContent.big))
    end
    -- and back: the decoded [] is an array, {} an object
    local sc = res.structuredContent
    assert.is_true(json.is_array(sc.empty_array))
    assert.are.equal(0, #sc.empty_array)
    assert.is_false(json.is_array(sc.empty_object))
    assert.are.equal("[]", json.encode(sc.empty_array))
    assert.are.equal("{}", json.encode(sc.empty_object))
    assert.are.same({ 1, 2, 3 }, { sc.list[1], sc.list[2], sc.list[3] })
  end)

  it("sends arguments {} when none are given", function()
    local c = server()
    local line = text(call(c, "echo_args"))
    assert.is_truthy(has(line, '"arguments":{}'), line)
  end)
end)

---------------------------------------------------------------------------------------------
describe("load", function()
  it("1,000 calls from 100 coroutines on one connection all get their own answer", function()
    local c = server()
    local ok, bad, inflight, max_inflight = 0, {}, 0, 0
    for t = 1, 100 do
      mcp.spawn(function()
        for k = 1, 10 do
          local msg = ("task %d call %d"):format(t, k)
          inflight = inflight + 1
          if inflight > max_inflight then max_inflight = inflight end
          local res, err = c:call_tool("echo", { message = msg })
          inflight = inflight - 1
          if res and res.content[1].text == msg then
            ok = ok + 1
          else
            bad[#bad + 1] = msg .. " -> " .. (res and res.content[1].text or tostring(err))
          end
        end
      end)
    end
    mcp.run()
    assert.are.same({}, bad)
    assert.are.equal(1000, ok)
    assert.are.equal(100, max_inflight)
  end)

  it("1,000 calls in flight at once", function()
    local c = server()
    local ok = 0
    for i = 1, 1000 do
      mcp.spawn(function()
        local res = c:call_tool(i % 2 == 0 and "echo" or "echo_args", { message = "m" .. i })
        if res then
          local got = i % 2 == 0 and res.content[1].text or res.structuredContent.message
          if got == "m" .. i then ok = ok + 1 end
        end
      end)
    end
    mcp.run()
    assert.are.equal(1000, ok)
  end)

  it("receives a 10 MB tool result", function()
    local c = server()
    local n = 10 * 1024 * 1024
    local res = call(c, "big", { bytes = n })
    local s = text(res)
    assert.are.equal(n, #s)
    assert.are.equal("0123456789", s:sub(1, 10))
    assert.are.equal("0123456789", s:sub(n - 9, n)) -- 10 MB is a multiple of 10
    assert.is_nil(s:find("[^0-9]"))
    -- and the session goes on
    assert.are.equal("after big", text(call(c, "echo", { message = "after big" })))
  end)

  -- Escaped strings of a stdio message are decoded in place, over the line they come from.
  it("receives a 1.5 MB result full of escapes, byte for byte", function()
    local c = server()
    local msg = ('a "quoted" path/to\\file\n\tcaf\195\169 \1 '):rep(50000)
    assert.are.equal(msg, text(call(c, "echo", { message = msg })))
    assert.are.equal("after", text(call(c, "echo", { message = "after" })))
  end)
end)

---------------------------------------------------------------------------------------------
describe("a misbehaving server", function()
  -- enable_logging writes a report to stderr: a line from the server quoted in it must not carry
  -- its terminal controls (window title, clipboard, erase line, C1 CSI, bidi override) there.
  it("enable_logging: a report quoting the server's text is written to stderr escaped", function()
    local path = os.tmpname()
    finally(function() os.remove(path) end)
    helper.write_file(path, ([[
local mcp = dofile(%q)
local server = mcp.new { name = "junk", version = "1.0.0" }
server:tool { name = "junk", description = "writes a line that is not JSON-RPC, then answers",
  inputSchema = { type = "object" },
  call = function()
    io.stdout:write("\27]0;pwned\7\27]52;c;ZWNobw==\7\r\27[2K\194\155" .. "31m\226\128\174txt.exe\n")
    io.stdout:flush()
    return "done"
  end }
server:run()
]]):format(helper.root .. "/examples/servers/mcp_server.lua"))
    local c = helper.track(assert(mcp.create_stdio_client(helper.lua_cmd(), { path },
      { stderr = "discard", enable_logging = true, request_timeout_ms = ms(30000) })))
    local written = {}
    local real = io.stderr
    io.stderr = { write = function(_, ...) -- luacheck: ignore 122 (the report goes to io.stderr; catch it)
      for _, s in ipairs({ ... }) do written[#written + 1] = s end
    end }
    local ok, res = pcall(function() return c:call_tool("junk") end)
    io.stderr = real -- luacheck: ignore 122
    assert(ok, res)
    assert.are.equal("done", text(res))
    local out = table.concat(written)
    assert.is_truthy(has(out, "skipped a line that is not valid JSON-RPC"), out)
    assert.is_truthy(has(out, "\\x1b]0;pwned\\x07"), out)
    assert.is_truthy(has(out, "\\u009b31m\\u202etxt.exe"), out)
    assert.is_nil(out:find("[%z\1-\9\11-\31\127]"), out) -- no control but the line's end
    assert.is_nil(out:find("\194[\128-\159]"), out)
    assert.is_nil(out:find("\226\128\174", 1, true), out)
  end)

  it("--garbage: calls succeed and on_error reports the invalid lines", function()
    local errs = {}
    local c = server({ "--garbage" }, { on_error = function(e) errs[#errs + 1] = e end })
    for i = 1, 3 do
      assert.are.equal("g" .. i, text(call(c, "echo", { message = "g" .. i })))
    end
    assert.are.equal(18, #assert(c:list_tools()))
    assert.is_true(helper.wait_until(function() return #errs >= 12 end, ms(5000)))
    local not_json, broken, no_jsonrpc, escaped = 0, 0, 0, 0
    for _, e in ipairs(errs) do
      assert.is_true(mcp.is_error(e))
      assert.are.equal("protocol", e.kind)
      assert.is_nil(e.code)
      if has(e.message, "this line is not JSON") then not_json = not_json + 1 end
      if has(e.message, "{ broken json") then broken = broken + 1 end
      -- decoded in place up to the error: the report still quotes the line as it came
      if has(e.message, '{"escaped":"a\\"b\\nc" oops}') then escaped = escaped + 1 end
      if has(e.message, "jsonrpc") and not has(e.message, "broken") and not has(e.message, "not JSON") then
        no_jsonrpc = no_jsonrpc + 1
      end
    end
    assert.is_true(not_json >= 3, "reports of 'this line is not JSON': " .. not_json)
    assert.is_true(broken >= 3, "reports of '{ broken json': " .. broken)
    assert.is_true(no_jsonrpc >= 3, "reports of the message without jsonrpc: " .. no_jsonrpc)
    assert.is_true(escaped >= 3, "reports of the escaped line, as it came: " .. escaped)
  end)

  it("--stderr-spam: stderr lines reach a stderr function, and calls go on", function()
    local lines = {}
    local c = server({ "--stderr-spam=80" }, { stderr = function(line) lines[#lines + 1] = line end })
    for i = 1, 4 do
      assert.are.equal("s" .. i, text(call(c, "echo", { message = "s" .. i })))
    end
    local res = call(c, "progress", { steps = 3 })
    assert.are.equal(3, res.structuredContent.steps)
    assert.is_true(helper.wait_until(function() return #lines > 5000 end, ms(10000)))
    local spam, started, with_newline = 0, 0, 0
    for _, l in ipairs(lines) do
      if has(l, "stderr spam") then spam = spam + 1 end
      if has(l, "[test-server] started") then started = started + 1 end
      if has(l, "\n") then with_newline = with_newline + 1 end
    end
    assert.is_true(spam > 5000, "spam lines: " .. spam)
    assert.are.equal(1, started)
    assert.are.equal(0, with_newline)
  end)

  it("--stderr-spam with stderr = \"discard\" never blocks the server", function()
    local c = server({ "--stderr-spam=256" }, { stderr = "discard", request_timeout_ms = ms(20000) })
    for i = 1, 5 do
      assert.are.equal("d" .. i, text(call(c, "echo", { message = "d" .. i })))
    end
    local res = call(c, "progress", { steps = 4 })
    assert.are.equal(4, res.structuredContent.steps)
  end)

  it("a server that dies mid-call fails every pending call at once with kind closed and its exit status", function()
    local c = server({}, { request_timeout_ms = 60000 })
    local pid = c.transport:pid()
    local results = {}
    local t0 = now()
    for i = 1, 3 do
      mcp.spawn(function()
        local r, err = c:call_tool("hang")
        results[#results + 1] = { r = r, err = err, t = now() - t0, what = "hang " .. i }
      end)
    end
    mcp.spawn(function()
      local r, err = c:call_tool("sleep", { ms = 50 })
      results[#results + 1] = { r = r, err = err, t = now() - t0, what = "sleep" }
    end)
    mcp.spawn(function()
      mcp.sleep(50)
      local r, err = c:call_tool("die")
      results[#results + 1] = { r = r, err = err, t = now() - t0, what = "die" }
    end)
    mcp.run()
    assert.are.equal(5, #results)
    local bound = math.min(ms(5000), 30000)
    for _, r in ipairs(results) do
      if r.what == "sleep" then
        assert.is_table(r.r, r.what .. ": " .. tostring(r.err)) -- answered before the death
      else
        assert.is_nil(r.r, r.what)
        assert.are.equal("closed", r.err.kind, r.what)
        assert.is_nil(r.err.code)
        assert.is_true(r.t < bound, r.what .. " failed after " .. r.t .. " ms")
        -- BUG? racy: when the server's stdout EOF is seen before its exit can be reaped, the
        -- reason is "the server closed its stdout" without the exit status (often, ~2 in 3 runs
        -- of a bare `die` call on an idle 2-core machine).
        assert.is_truthy(has(r.err.message, "exited with status 3"), r.err.message)
      end
    end
    assert.is_false(c:is_connected())
    local r, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(r)
    assert.are.equal("closed", err.kind)
    assert.is_true(helper.wait_until(function() return c.transport:reaped() end, ms(5000)))
    assert.is_false((helper.proc_exists(pid)))
  end)

  it("a blocking call to a server that dies returns closed at once", function()
    local c = server({}, { request_timeout_ms = 60000 })
    local t0 = now()
    local r, err = c:call_tool("die")
    assert.is_nil(r)
    assert.are.equal("closed", err.kind)
    -- BUG? racy, see "a server that dies mid-call ...": the exit status is often missing.
    assert.is_truthy(has(err.message, "exited with status 3"), err.message)
    assert.is_true(now() - t0 < math.min(ms(5000), 30000))
  end)

  it("a call to a server that died while the client was idle fails with kind closed naming the signal", function()
    local c = server()
    local pid = c.transport:pid()
    helper.kill(pid, "KILL")
    assert.are.equal("Z", helper.wait_dead(pid, ms(5000))) -- dead, not yet reaped: the loop did not run
    local r, err = c:call_tool("echo", { message = "x" })
    assert.is_nil(r)
    -- BUG? the write hits EPIPE before the loop sees the exit: kind "transport", message
    -- "writing to the server failed: Broken pipe". With max_retries > 0 this "transport" error is
    -- retried after a 2 s back-off against the dead server. The next call reports kind "closed".
    assert.are.equal("closed", err.kind, tostring(err))
    assert.is_truthy(has(err.message, "killed by signal 9"), err.message)
  end)

  it("on_close is called with the reason", function()
    local reason
    local c = server({}, { on_close = function(why) reason = why end })
    c:call_tool("die")
    assert.is_true(helper.wait_until(function() return reason ~= nil end, ms(5000)))
    -- BUG? racy, see "a server that dies mid-call ...": the exit status is often missing.
    assert.is_truthy(has(reason, "exited with status 3"), reason)
  end)

  it("a call that gets no answer times out, and the server is told with notifications/cancelled", function()
    local c = server()
    local id = last_request_id(c) + 1
    local t0 = now()
    local r, err = c:call_tool("hang", nil, { timeout_ms = 300 })
    local elapsed = now() - t0
    assert.is_nil(r)
    assert.are.equal("timeout", err.kind)
    assert.is_nil(err.code)
    assert.are.equal("tools/call", err.method)
    assert.is_truthy(has(err.message, "timed out"), err.message)
    assert.is_true(elapsed >= 250, "timed out after " .. elapsed .. " ms")
    assert.is_true(err:is(mcp.errors.timeout))
    local res = call(c, "cancelled")
    assert.are.equal("[" .. id .. "]", text(res))
    assert.are.same({ id }, res.structuredContent.ids)
    assert.is_truthy(has(res.structuredContent.reasons[1], "timed out"))
    -- the session goes on
    assert.are.equal("after timeout", text(call(c, "echo", { message = "after timeout" })))
  end)

  it("request_timeout_ms applies to every call", function()
    local c = server({}, { request_timeout_ms = 300 })
    local r, err = c:call_tool("hang")
    assert.is_nil(r)
    assert.are.equal("timeout", err.kind)
    assert.is_truthy(has(err.message, "300"), err.message)
  end)

  it("a cancel token cancels a pending call", function()
    local c = server()
    local id = last_request_id(c) + 1
    local token = mcp.cancel_token()
    local r, err, elapsed
    local t0 = now()
    mcp.spawn(function()
      r, err = c:call_tool("hang", nil, { cancel = token, timeout_ms = 60000 })
      elapsed = now() - t0
    end)
    mcp.spawn(function()
      mcp.sleep(100)
      token:cancel("user abort")
    end)
    mcp.run()
    assert.is_nil(r)
    assert.are.equal("cancelled", err.kind)
    assert.is_nil(err.code)
    assert.is_truthy(has(err.message, "user abort"), err.message)
    assert.is_true(elapsed < math.min(ms(5000), 30000))
    assert.is_true(token.cancelled)
    local res = call(c, "cancelled")
    assert.are.same({ id }, res.structuredContent.ids)
    assert.are.same({ "user abort" }, res.structuredContent.reasons)
  end)

  it("a token cancelled before the call fails the call without sending it", function()
    local c = server()
    local token = mcp.cancel_token()
    token:cancel("too late")
    local r, err = c:call_tool("echo", { message = "x" }, { cancel = token })
    assert.is_nil(r)
    assert.are.equal("cancelled", err.kind)
    assert.is_truthy(has(err.message, "too late"))
    assert.are.equal(0, #call(c, "cancelled").structuredContent.ids)
  end)
end)

---------------------------------------------------------------------------------------------
describe("lifecycle", function()
  it("close() reaps the child, is idempotent, and later calls return kind closed", function()
    local before = mcp.core.children()
    local c = assert(helper.test_server())
    local pid = c.transport:pid()
    assert.is_number(pid)
    local exists, state = helper.proc_exists(pid)
    assert.is_true(exists)
    assert.are_not.equal("Z", state)
    assert.are.equal(before + 1, mcp.core.children())

    assert.is_true(c:close())
    assert.is_true(c.transport:reaped())
    assert.is_false((helper.proc_exists(pid)))
    assert.are.equal(before, mcp.core.children())
    assert.is_false(c:is_connected())
    assert.is_true(c:close())
    assert.are.equal(before, mcp.core.children())

    local checks = {
      { "call_tool", function() return c:call_tool("echo", { message = "x" }) end },
      { "list_tools", function() return c:list_tools() end },
      { "list_all_tools", function() return c:list_all_tools() end },
      { "list_resources", function() return c:list_resources() end },
      { "list_resource_templates", function() return c:list_resource_templates() end },
      { "list_prompts", function() return c:list_prompts() end },
      { "read_resource", function() return c:read_resource("test://r/1") end },
      { "get_prompt", function() return c:get_prompt("greet", { name = "x" }) end },
      { "complete", function() return c:complete({ ref = { type = "ref/prompt", name = "greet" }, argument = { name = "name", value = "" } }) end },
      { "ping", function() return c:ping() end },
      { "set_logging_level", function() return c:set_logging_level("info") end },
      { "subscribe_resource", function() return c:subscribe_resource("test://r/1") end },
      { "request", function() return c:request("ping") end },
      { "connect", function() return c:connect() end },
    }
    for _, chk in ipairs(checks) do
      local r, err = chk[2]()
      assert.is_nil(r, chk[1])
      assert.is_true(mcp.is_error(err), chk[1])
      assert.are.equal("closed", err.kind, chk[1])
    end
  end)

  it("notify() after close returns nil, err with kind closed", function()
    local c = assert(helper.test_server())
    c:close()
    local ok, err = c:notify("notifications/roots/list_changed")
    assert.is_nil(ok)
    -- BUG? notify() on a closed client reports kind "transport" (the session's send error),
    -- while every request on a closed client reports kind "closed".
    assert.are.equal("closed", err.kind)
  end)

  it("close() fails pending calls with kind closed", function()
    local c = assert(helper.test_server({}, { request_timeout_ms = 60000 }))
    local r, err
    mcp.spawn(function() r, err = c:call_tool("hang") end)
    mcp.spawn(function()
      mcp.sleep(50)
      c:close()
    end)
    local t0 = now()
    mcp.run()
    assert.is_nil(r)
    assert.are.equal("closed", err.kind)
    assert.is_true(now() - t0 < math.min(ms(5000), 30000))
    assert.is_true(helper.wait_until(function() return c.transport:reaped() end, ms(5000)))
  end)

  it("a dropped client is collected and its server reaped", function()
    local before = mcp.core.children()
    local function start_and_drop()
      local c = assert(helper.test_server())
      assert.are.equal("x", c:call_tool("echo", { message = "x" }).content[1].text)
      return c.transport:pid()
    end
    local pid = start_and_drop()
    assert.is_true((helper.proc_exists(pid)))
    assert.are.equal(before + 1, mcp.core.children())
    collectgarbage()
    collectgarbage()
    local deadline = now() + ms(5000)
    while mcp.core.children() > before and now() < deadline do
      mcp.loop.step(50)
    end
    assert.are.equal(before, mcp.core.children())
    assert.is_false((helper.proc_exists(pid)))
  end)

  it("a client dropped with a request in flight is collected and its server reaped", function()
    local before = mcp.core.children()
    local fired = false
    local function start_and_drop()
      local c = assert(helper.test_server())
      -- The callback holds nothing of the client, so the client is garbage while it waits.
      c.session:request("tools/call", { name = "hang", arguments = mcp.object() }, 60000,
        function() fired = true end)
      return c.transport:pid()
    end
    local pid = start_and_drop()
    collectgarbage()
    collectgarbage()
    local deadline = now() + ms(5000)
    while mcp.core.children() > before and now() < deadline do
      mcp.loop.step(50)
    end
    assert.are.equal(before, mcp.core.children())
    assert.is_false((helper.proc_exists(pid)))
    assert.is_false(fired) -- finalizers never call back into Lua
  end)

  it("--protocol=1999-01-01: connect fails with kind protocol naming the version", function()
    local before = mcp.core.children()
    local c, err = helper.test_server({ "--protocol=1999-01-01" })
    assert.is_nil(c)
    assert.are.equal("protocol", err.kind)
    assert.is_truthy(has(err.message, "1999-01-01"), err.message)
    assert.are.equal(before, mcp.core.children())
  end)

  it("accepts an older supported version the server picks", function()
    local c = server({ "--protocol=2025-06-18" })
    assert.are.equal("2025-06-18", c:protocol_version())
  end)

  it("--exit-on-init: connect fails at once with kind closed", function()
    local before = mcp.core.children()
    local t0 = now()
    local c, err = helper.test_server({ "--exit-on-init=7" }, { request_timeout_ms = 60000 })
    assert.is_nil(c)
    assert.are.equal("closed", err.kind)
    -- BUG? racy, see "a server that dies mid-call ...": the exit status is often missing.
    assert.is_truthy(has(err.message, "exited with status 7"), err.message)
    assert.is_true(now() - t0 < math.min(ms(5000), 30000))
    assert.are.equal(before, mcp.core.children())
  end)

  it("--no-answer-init: connect times out", function()
    local before = mcp.core.children()
    local c, err = helper.test_server({ "--no-answer-init" }, { request_timeout_ms = 300, connect_timeout_ms = 300 })
    assert.is_nil(c)
    assert.are.equal("timeout", err.kind)
    assert.are.equal("initialize", err.method)
    assert.are.equal(before, mcp.core.children())
  end)

  it("a command that does not exist: connect fails with kind transport", function()
    local before = mcp.core.children()
    local c, err = mcp.create_stdio_client("/nonexistent/lua-mcp-no-such-server", {}, {})
    assert.is_nil(c)
    assert.are.equal("transport", err.kind)
    assert.is_truthy(has(err.message, "/nonexistent/lua-mcp-no-such-server"), err.message)
    local c2, err2 = mcp.create_stdio_client("lua-mcp-no-such-command", {}, {})
    assert.is_nil(c2)
    assert.are.equal("transport", err2.kind)
    assert.are.equal(before, mcp.core.children())
  end)

  it("a cwd that does not exist: connect fails with kind transport", function()
    local c, err = helper.test_server({}, { cwd = "/nonexistent/lua-mcp-dir" })
    assert.is_nil(c)
    assert.are.equal("transport", err.kind)
  end)

  it("negative max_retries: connect fails with kind config and starts nothing", function()
    local before = mcp.core.children()
    local c, err = helper.test_server({}, { max_retries = -1 })
    assert.is_nil(c)
    assert.are.equal("config", err.kind)
    assert.are.equal(before, mcp.core.children())
  end)

  it("max_retries does not retry JSON-RPC errors", function()
    local c = server({}, { max_retries = 3 })
    local t0 = now()
    local r, err = c:call_tool("error")
    assert.is_nil(r)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32603, err.code)
    assert.are.equal("boom", err.message) -- not "Failed after N attempts ..."
    assert.is_true(now() - t0 < 1900) -- no 2 s back-off
  end)
end)

---------------------------------------------------------------------------------------------
describe("misuse raises", function()
  local c
  setup(function()
    c = assert(helper.test_server())
  end)
  teardown(function()
    if c then c:close() end
  end)

  it("wrong argument types to client methods", function()
    assert.has_error(function() c:call_tool(42) end)
    assert.has_error(function() c:call_tool(nil) end)
    assert.has_error(function() c:call_tool("echo", "not a table") end)
    assert.has_error(function() c:read_resource(nil) end)
    assert.has_error(function() c:get_prompt(1) end)
    assert.has_error(function() c:set_logging_level("loud") end)
    assert.has_error(function() c:subscribe_resource(5) end)
    assert.has_error(function() c:complete("x") end)
    assert.has_error(function() c:complete({ argument = { name = "a", value = "" } }) end)
    assert.has_error(function() c:list_tools_with_cursor(12) end)
    assert.has_error(function() c:request(12) end)
    assert.has_error(function() c:on_notification("x") end)
    assert.has_error(function() c:on_elicitation_request("not a function") end)
    assert.has_error(function() c:set_roots("nope") end)
    assert.has_error(function() c:call_tool("echo", { f = function() end }) end)
    -- the client still works
    assert.are.equal("ok", text(call(c, "echo", { message = "ok" })))
  end)

  it("bad transport and client configuration", function()
    assert.has_error(function() mcp.stdio_transport() end)
    assert.has_error(function() mcp.stdio_transport({}) end)
    assert.has_error(function() mcp.stdio_transport({ command = "" }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", args = { 1 } }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", stderr = "bogus" }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", env = { 1 } }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", env = { "NOEQUALS" } }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", env = { ["A=B"] = "c" } }) end)
    assert.has_error(function() mcp.stdio_transport({ command = "x", max_message_size = 0 }) end)
    assert.has_error(function() mcp.create_stdio_client(nil) end)
    assert.has_error(function() mcp.create_stdio_client("x", "not a table") end)
    assert.has_error(function() mcp.create_stdio_client("x", {}, { request_timeout_ms = "soon" }) end)
    assert.has_error(function() mcp.create_stdio_client("x", {}, { max_retries = 1.5 }) end)
    assert.has_error(function() mcp.new_client(nil) end)
  end)
end)

---------------------------------------------------------------------------------------------
describe("stdio options", function()
  local probe
  setup(function() probe = write_probe_server() end)
  teardown(function() if probe then os.remove(probe) end end)

  local function probe_client(names_list, opts)
    local c, err = mcp.create_stdio_client(helper.lua_cmd(), { probe, unpack(names_list) }, opts)
    assert(helper.track(c), tostring(err))
    assert.are.equal("probe", c:server_info().name)
    return json.decode(c:server_instructions())
  end

  -- A variable set in this process but not in the inherited allowlist, or nil.
  local function non_allowlisted_var()
    for _, k in ipairs({ "MCP_TEST_LUA", "MCP_EVERYTHING_SERVER", "MCP_EVERYTHING_VERSION", "PWD", "LANG",
                         "HOSTNAME", "OLDPWD", "SHLVL" }) do
      if os.getenv(k) ~= nil then return k end
    end
  end

  it("env: opts.env reaches the server, the allowlist is inherited, nothing else is", function()
    local leak = non_allowlisted_var()
    local want = { "MCP_SPEC_VAR", "MCP_SPEC_NUM", "HOME", "PATH" }
    if leak then want[#want + 1] = leak end
    local seen = probe_client(want, { env = { MCP_SPEC_VAR = "hello world", MCP_SPEC_NUM = 5, HOME = "/spec-home" } })
    assert.are.equal("hello world", seen.env.MCP_SPEC_VAR)
    assert.are.equal("5", seen.env.MCP_SPEC_NUM)
    assert.are.equal("/spec-home", seen.env.HOME) -- opts.env wins over the inherited value
    assert.are.equal(os.getenv("PATH"), seen.env.PATH)
    if leak then
      assert.are.equal(false, seen.env[leak], leak .. " leaked into the server")
    end
  end)

  it("env as an array of KEY=VALUE strings", function()
    local seen = probe_client({ "MCP_SPEC_A", "MCP_SPEC_B" }, { env = { "MCP_SPEC_A=1=2", "MCP_SPEC_B=" } })
    assert.are.equal("1=2", seen.env.MCP_SPEC_A)
    assert.are.equal("", seen.env.MCP_SPEC_B)
  end)

  it("cwd and its alias working_dir", function()
    local seen = probe_client({}, { cwd = helper.fixtures })
    assert.is_truthy(seen.cwd:match("/spec/fixtures$"), seen.cwd)
    local seen2 = probe_client({}, { working_dir = helper.root .. "/examples" })
    assert.is_truthy(seen2.cwd:match("/examples$"), seen2.cwd)
    -- a relative script path resolves against cwd
    local c, err = mcp.create_stdio_client(helper.lua_cmd(), { "test_server.lua" }, { cwd = helper.fixtures, stderr = "discard" })
    assert(helper.track(c), tostring(err))
    assert.are.equal("lua-mcp-test-server", c:server_info().name)
  end)

  it("max_message_size: a larger message is skipped with on_error, its call fails at once, the session goes on", function()
    local errs = {}
    local c = server({}, { max_message_size = 4096, on_error = function(e) errs[#errs + 1] = e end })
    local r, err = c:call_tool("big", { bytes = 100000 }, { timeout_ms = ms(60000) })
    assert.is_nil(r)
    assert.are.equal("transport", err.kind)
    assert.is_truthy(has(err.message, "max_message_size (4096 bytes)"), err.message)
    helper.wait_until(function() return #errs > 0 end, ms(5000))
    assert.are.equal(1, #errs)
    assert.is_truthy(has(errs[1].message, "max_message_size"), errs[1].message)
    assert.is_truthy(has(errs[1].message, "4096"), errs[1].message)
    -- BUG? the kind is "message_too_large", which is not one of the documented err.kind values
    -- (docs/API.md, lua/mcp/errors.lua): rpc, timeout, cancelled, closed, transport, protocol, config, handler.
    assert.is_true(DOCUMENTED_KINDS[errs[1].kind] == true, "undocumented err.kind " .. tostring(errs[1].kind))
    assert.are.equal("small", text(call(c, "echo", { message = "small" })))
    assert.are.equal(4000, #text(call(c, "big", { bytes = 4000 })))
  end)
end)

---------------------------------------------------------------------------------------------
describe("host loop integration", function()
  -- `make check LOOP=poll` builds the poll(2) backend, which has no pollable fd: fd() is nil there
  -- (hosts step on a timer instead); the epoll backend (Linux default) returns its epoll fd.
  if os.getenv("MCP_TEST_LOOP_BACKEND") == "poll" then
    it("mcp.loop.fd() is nil with the poll(2) backend", function()
      assert.is_nil(mcp.loop.fd())
    end)
  else
    it("mcp.loop.fd() is an integer with the epoll backend", function()
      local fd = mcp.loop.fd()
      assert.is_number(fd)
      assert.are.equal(math.floor(fd), fd)
      assert.is_true(fd >= 0)
      if HAS_INTEGERS then assert.are.equal("integer", math.type(fd)) end
    end)
  end

  it("a call in a task completes when the host only calls step(0) and reads timeout()", function()
    local c = server({}, { request_timeout_ms = 30000 })
    local done, res, err = false, nil, nil
    mcp.spawn(function()
      -- sleep keeps the request in flight for a while (an echo may be answered within one step)
      res, err = c:call_tool("sleep", { ms = 100 })
      done = true
    end)
    assert.are.equal(0, mcp.loop.timeout()) -- a task is ready to run
    local iterations, max_wait, deadline = 0, -1, now() + ms(10000)
    while not done and now() < deadline and iterations < 50000000 do
      local t = mcp.loop.timeout()
      assert.is_number(t)
      assert.is_true(t >= -1 and t <= 30000, "timeout() = " .. t)
      if t > max_wait then max_wait = t end
      mcp.loop.step(0)
      iterations = iterations + 1
    end
    assert.is_true(done, "not done after " .. iterations .. " step(0) calls")
    assert.is_table(res, tostring(err))
    assert.are.equal("slept 100 ms", text(res))
    assert.is_true(iterations > 1)
    assert.is_true(max_wait > 0, "no timer was armed while the request was in flight")
  end)

  it("a host loop drives many tasks and handlers with step(0)", function()
    local c = server()
    local logs, done = 0, 0
    c:on_log_message(function() logs = logs + 1 end)
    for i = 1, 20 do
      mcp.spawn(function()
        call(c, i % 4 == 0 and "notify" or "echo", { message = "x" })
        done = done + 1
      end)
    end
    local deadline = now() + ms(10000)
    while (done < 20 or logs < 5) and now() < deadline do
      mcp.loop.step(0)
    end
    assert.are.equal(20, done)
    assert.are.equal(5, logs)
  end)

  it("mcp.run() returns when no task remains; a failing task goes to mcp.on_task_error, and what the hook raises comes out of run()", function()
    mcp.run() -- nothing to do
    local seen = {}
    local prev = mcp.on_task_error(function(err, tb) seen[#seen + 1] = { err = err, tb = tb } end)
    mcp.spawn(function() error("task failure for the spec") end)
    mcp.run()
    assert.are.equal(1, #seen)
    assert.is_truthy(has(tostring(seen[1].err), "task failure for the spec"))
    assert.is_truthy(has(seen[1].tb, "traceback"))
    mcp.on_task_error(function(err) error("fatal: " .. tostring(err), 0) end)
    mcp.spawn(function() error("task failure for the spec") end)
    local ok, e = pcall(mcp.run)
    mcp.on_task_error(prev)
    assert.is_false(ok)
    assert.is_truthy(has(tostring(e), "fatal:"))
    assert.is_truthy(has(tostring(e), "task failure for the spec"))
  end)
end)
