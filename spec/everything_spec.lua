-- The client against the official reference server @modelcontextprotocol/server-everything
-- (stdio). `make test` installs it (scripts/deps.sh) and exports its executable as
-- MCP_EVERYTHING_SERVER (run with the argument "stdio"). Without it, or without node, every
-- test here is pending with the reason.
--
-- Names, texts and shapes asserted below were checked against server-everything 2026.8.31;
-- with another version only the version-independent checks run (the others are pending).
local mcp = require("mcp")
local helper = require("helper")

local ms = helper.ms
local has = helper.has

local VERIFIED_VERSION = "2026.8.31"

local file_exists = helper.file_exists
local in_path = helper.in_path

-- The installed version, read from the package.json next to node_modules/.bin.
local function installed_version(bin)
  local root = bin:match("^(.*)/%.bin/[^/]+$")
  if not root then return nil end
  local fh = io.open(root .. "/@modelcontextprotocol/server-everything/package.json", "rb")
  if not fh then return nil end
  local pkg = mcp.json.decode(fh:read("*a"))
  fh:close()
  return type(pkg) == "table" and pkg.version or nil
end

local BIN = os.getenv("MCP_EVERYTHING_SERVER")
local NODE = in_path("node")
local unavailable
if BIN == nil or BIN == "" then
  unavailable = "MCP_EVERYTHING_SERVER is not set (run the suite with `make test`, which installs "
    .. "@modelcontextprotocol/server-everything through scripts/deps.sh)"
elseif not file_exists(BIN) then
  unavailable = "MCP_EVERYTHING_SERVER=" .. BIN .. " does not exist (run `make deps`)"
elseif NODE == nil then
  unavailable = "node is not installed (server-everything needs it)"
end
local VERSION = not unavailable and installed_version(BIN) or nil
local EXACT = VERSION == VERIFIED_VERSION

-- it() that is pending when the server is unavailable; exact=true: pending unless the
-- installed version is the verified one.
local function test(name, fn, exact)
  it(name, function()
    if unavailable then
      pending(unavailable)
      return
    end
    if exact and not EXACT then
      pending("checked against server-everything " .. VERIFIED_VERSION .. ", installed: " .. tostring(VERSION))
      return
    end
    fn()
  end)
end

local function connect(opts)
  local o = { stderr = "discard", request_timeout_ms = ms(30000) }
  for k, v in pairs(opts or {}) do o[k] = v end
  return mcp.create_stdio_client(BIN, { "stdio" }, o)
end

local function names(list, field)
  local out = {}
  for i, item in ipairs(list) do out[i] = item[field or "name"] end
  return out
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function text(res, i)
  return res.content[i or 1].text
end

describe("server-everything", function()
  -- One connection with every handler registered (so the conditional tools exist).
  local c, connect_err
  local elicit = { action = "accept", content = { name = "Ann", check = true, integer = 7 } }
  local elicit_seen, sample_seen = {}, {}
  local logs, updates, errors = {}, {}, {}
  local roots = { { uri = "file:///tmp/spec-root", name = "spec root" } }

  setup(function()
    if unavailable then return end
    c, connect_err = connect({
      client_name = "lua-mcp-spec",
      client_version = "1.2.3",
      roots = roots,
      env = { MCP_SPEC_EVERYTHING = "visible" },
      on_error = function(e) errors[#errors + 1] = e end,
      on_elicitation_request = function(req)
        elicit_seen[#elicit_seen + 1] = req
        return elicit
      end,
      on_sampling_request = function(params)
        sample_seen[#sample_seen + 1] = params
        return { role = "assistant", model = "spec-model", stopReason = "endTurn",
                 content = { type = "text", text = "sampled!" } }
      end,
    })
    if c then
      c:on_log_message(function(p) logs[#logs + 1] = p end)
      c:on_resource_updated(function(p) updates[#updates + 1] = p end)
    end
  end)

  teardown(function()
    if c then c:close() end
  end)

  local function client()
    assert(c, "cannot connect to server-everything: " .. tostring(connect_err))
    return c
  end

  local function call(name, args, opts)
    local res, err = client():call_tool(name, args, opts)
    assert(res, ("call_tool(%s) failed: %s"):format(name, tostring(err)))
    return res
  end

  -- Log messages whose data contains s.
  local function log_with(s)
    for _, p in ipairs(logs) do
      if type(p.data) == "string" and has(p.data, s) then return p end
    end
  end

  test("connects: server info, capabilities, instructions, protocol version", function()
    local cl = client()
    assert.is_true(cl:is_connected())
    assert.are.equal("2025-11-25", cl:protocol_version())
    local info = cl:server_info()
    assert.is_string(info.name)
    assert.is_string(info.version)
    local caps = cl:server_capabilities()
    assert.is_table(caps.tools)
    assert.is_table(caps.resources)
    assert.is_true(caps.resources.subscribe)
    assert.is_table(caps.prompts)
    assert.is_table(caps.logging)
    assert.is_table(caps.completions)
    assert.is_true(#cl:server_instructions() > 0)
    assert.are.equal(cl:server_instructions(), cl:initialize_result().instructions)
  end)

  test("server info and instructions of " .. VERIFIED_VERSION, function()
    assert.are.equal("mcp-servers/everything", client():server_info().name)
    assert.is_truthy(has(client():server_instructions(), "Everything Server"))
  end, true)

  test("lists tools: first page, with cursor, all pages, serializable", function()
    local cl = client()
    local first = assert(cl:list_tools())
    local page = assert(cl:list_tools_with_cursor(nil))
    local raw = assert(cl:get_serializable_tools())
    local all = assert(cl:list_all_tools())
    assert.is_true(#all >= 10)
    -- no pagination here: one page holds everything
    assert.is_nil(page.nextCursor)
    assert.are.same(names(all), names(page.tools))
    assert.are.same(names(all), names(first))
    assert.are.same(names(all), names(raw.tools))
    for _, t in ipairs(all) do
      assert.is_string(t.name)
      assert.is_table(t.inputSchema)
      assert.are.equal("object", t.inputSchema.type)
    end
  end)

  test("ships the tools of " .. VERIFIED_VERSION .. ", with the conditional ones for our capabilities", function()
    local tools = set_of(names(assert(client():list_all_tools())))
    for _, n in ipairs({
      "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
      "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
      "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
      -- registered only because we advertised roots, elicitation and sampling:
      "get-roots-list", "trigger-elicitation-request", "trigger-sampling-request",
    }) do
      assert.is_true(tools[n] == true, "missing tool " .. n)
    end
  end, true)

  test("without handlers the conditional tools are not offered", function()
    local bare, err = connect()
    assert(bare, tostring(err))
    finally(function() bare:close() end)
    local tools = set_of(names(assert(bare:list_all_tools())))
    assert.is_true(tools.echo)
    assert.is_nil(tools["trigger-elicitation-request"])
    assert.is_nil(tools["trigger-sampling-request"])
    assert.is_nil(tools["get-roots-list"])
  end, true)

  test("call_tool: echo, get-sum, get-structured-content, get-tiny-image, annotations, resource links", function()
    assert.are.equal("Echo: hello everything", text(call("echo", { message = "hello everything" })))
    assert.are.equal("The sum of 2 and 40 is 42.", text(call("get-sum", { a = 2, b = 40 })))
    assert.are.equal("The sum of 0.5 and -3 is -2.5.", text(call("get-sum", { a = 0.5, b = -3 })))

    local w = call("get-structured-content", { location = "Chicago" })
    assert.are.equal(36, w.structuredContent.temperature)
    assert.are.equal("Light rain / drizzle", w.structuredContent.conditions)
    assert.are.equal(82, w.structuredContent.humidity)
    assert.are.same(w.structuredContent, mcp.json.decode(text(w)))

    local img = call("get-tiny-image")
    local found
    for _, item in ipairs(img.content) do
      if item.type == "image" then found = item end
    end
    assert.is_table(found)
    assert.are.equal("image/png", found.mimeType)
    assert.is_truthy(found.data:match("^iVBORw0KGgo"))

    local ann = call("get-annotated-message", { messageType = "error", includeImage = true })
    assert.are.equal("Error: Operation failed", text(ann))
    assert.are.equal(1, ann.content[1].annotations.priority)
    assert.are.same({ "user", "assistant" }, ann.content[1].annotations.audience)
    assert.are.equal("image", ann.content[2].type)

    local links = call("get-resource-links", { count = 2 })
    assert.are.equal(3, #links.content)
    assert.are.equal("resource_link", links.content[2].type)
    assert.are.equal("demo://resource/dynamic/blob/1", links.content[2].uri)
    assert.are.equal("demo://resource/dynamic/text/2", links.content[3].uri)

    local ref = call("get-resource-reference", { resourceType = "Text", resourceId = 5 })
    assert.are.equal("resource", ref.content[2].type)
    assert.are.equal("demo://resource/dynamic/text/5", ref.content[2].resource.uri)
  end, true)

  test("a bad tool call is an isError result, not a failure", function()
    local res, err = client():call_tool("no-such-tool", {})
    assert.is_nil(err)
    assert.is_true(res.isError)
    assert.is_truthy(has(text(res), "no-such-tool"))
    local res2, err2 = client():call_tool("get-sum", { a = "x" })
    assert.is_nil(err2)
    assert.is_true(res2.isError)
  end)

  test("the server sees only the allowlisted environment plus opts.env (get-env)", function()
    local env = mcp.json.decode(text(call("get-env")))
    assert.is_table(env)
    assert.are.equal("visible", env.MCP_SPEC_EVERYTHING)
    assert.are.equal(os.getenv("PATH"), env.PATH)
    local allowed = set_of({ "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "MCP_SPEC_EVERYTHING" })
    for k in pairs(env) do
      assert.is_true(allowed[k] == true, "unexpected variable in the server's environment: " .. k)
    end
  end, true)

  test("resources: list, all pages, read text", function()
    local cl = client()
    local first = assert(cl:list_resources())
    local page = assert(cl:list_resources_with_cursor(nil))
    local all = assert(cl:list_all_resources())
    assert.is_true(#all >= 1)
    assert.is_nil(page.nextCursor)
    assert.are.same(names(all, "uri"), names(first, "uri"))
    local r = assert(cl:read_resource(all[1].uri))
    assert.are.equal(all[1].uri, r.contents[1].uri)
    assert.is_true(r.contents[1].text ~= nil or r.contents[1].blob ~= nil)
  end)

  test("resources of " .. VERIFIED_VERSION .. ": static documents and templates", function()
    local cl = client()
    local uris = set_of(names(assert(cl:list_all_resources()), "uri"))
    for _, doc in ipairs({ "architecture", "extension", "features", "how-it-works", "instructions", "startup", "structure" }) do
      assert.is_true(uris["demo://resource/static/document/" .. doc .. ".md"], "missing " .. doc)
    end
    local r = assert(cl:read_resource("demo://resource/static/document/features.md"))
    assert.are.equal("text/markdown", r.contents[1].mimeType)
    assert.is_truthy(r.contents[1].text:match("^# Everything Server"))

    local tpl = assert(cl:list_resource_templates())
    assert.is_nil(tpl.nextCursor)
    local all_tpl = assert(cl:list_all_resource_templates())
    assert.are.same(names(tpl.resourceTemplates, "uriTemplate"), names(all_tpl, "uriTemplate"))
    local page = assert(cl:list_resource_templates_with_cursor(nil))
    assert.are.same(names(all_tpl, "uriTemplate"), names(page.resourceTemplates, "uriTemplate"))
    local t = set_of(names(all_tpl, "uriTemplate"))
    assert.is_true(t["demo://resource/dynamic/text/{resourceId}"])
    assert.is_true(t["demo://resource/dynamic/blob/{resourceId}"])

    local txt = assert(cl:read_resource("demo://resource/dynamic/text/7"))
    assert.are.equal("text/plain", txt.contents[1].mimeType)
    assert.is_truthy(txt.contents[1].text:match("^Resource 7: This is a plaintext resource"))
    local blob = assert(cl:read_resource("demo://resource/dynamic/blob/7"))
    assert.is_nil(blob.contents[1].text)
    -- base64 of "Resource 7: "
    assert.are.equal("UmVzb3VyY2UgNzog", blob.contents[1].blob:sub(1, 16))

    local none, err = cl:read_resource("demo://resource/nothing/here")
    assert.is_nil(none)
    assert.are.equal("rpc", err.kind)
    assert.is_number(err.code)
    assert.is_truthy(has(err.message, "not found"), err.message)
  end, true)

  test("prompts: list, all pages, get", function()
    local cl = client()
    local first = assert(cl:list_prompts())
    local page = assert(cl:list_prompts_with_cursor(nil))
    local all = assert(cl:list_all_prompts())
    assert.is_true(#all >= 1)
    assert.is_nil(page.nextCursor)
    assert.are.same(names(all), names(first))
  end)

  test("prompts of " .. VERIFIED_VERSION, function()
    local cl = client()
    local p = set_of(names(assert(cl:list_all_prompts())))
    for _, n in ipairs({ "simple-prompt", "args-prompt", "completable-prompt", "resource-prompt" }) do
      assert.is_true(p[n], "missing prompt " .. n)
    end
    local simple = assert(cl:get_prompt("simple-prompt"))
    assert.are.equal("This is a simple prompt without arguments.", simple.messages[1].content.text)
    local args = assert(cl:get_prompt("args-prompt", { city = "Paris", state = "TX" }))
    assert.are.equal("What's weather in Paris, TX?", args.messages[1].content.text)
    local res = assert(cl:get_prompt("resource-prompt", { resourceType = "Text", resourceId = "3" }))
    assert.are.equal(2, #res.messages)
    assert.are.equal("resource", res.messages[2].content.type)
    assert.are.equal("demo://resource/dynamic/text/3", res.messages[2].content.resource.uri)
    local none, err = cl:get_prompt("args-prompt", {})
    assert.is_nil(none)
    assert.are.equal("rpc", err.kind)
    assert.are.equal(-32602, err.code)
  end, true)

  test("completion: prompt argument, with context, resource template", function()
    local cl = client()
    local r = assert(cl:complete({ ref = { type = "ref/prompt", name = "completable-prompt" },
                                   argument = { name = "department", value = "S" } }))
    assert.are.same({ "Sales", "Support" }, r.completion.values)
    local ctx = assert(cl:complete({
      ref = { type = "ref/prompt", name = "completable-prompt" },
      argument = { name = "name", value = "" },
      context = { arguments = { department = "Engineering" } },
    }))
    assert.are.same({ "Alice", "Bob", "Charlie" }, ctx.completion.values)
    local go = assert(cl:complete({ prompt_ref = { name = "completable-prompt" },
                                    argument = { name = "department", value = "Eng" } }))
    assert.are.same({ "Engineering" }, go.completion.values)
    local tpl = assert(cl:complete({
      ref = { type = "ref/resource", uri = "demo://resource/dynamic/text/{resourceId}" },
      argument = { name = "resourceId", value = "12" },
    }))
    assert.are.same({ "12" }, tpl.completion.values)
  end, true)

  test("ping and set_logging_level", function()
    local cl = client()
    local p, err = cl:ping()
    assert.is_table(p, tostring(err))
    assert.is_nil(next(p))
    for _, level in ipairs({ "debug", "info", "error" }) do
      local r, e = cl:set_logging_level(level)
      assert.is_table(r, tostring(e))
    end
    assert.is_table((cl:set_logging_level("debug")))
    local raw = assert(cl:request("ping"))
    assert.is_nil(next(raw))
    local tools = assert(cl:request("tools/list", {}))
    assert.is_table(tools.tools)
    assert.is_true((cl:notify("notifications/roots/list_changed")))
  end)

  test("toggle-simulated-logging: a log message arrives at once at level debug", function()
    local cl = client()
    assert.is_table((cl:set_logging_level("debug")))
    local n = #logs
    assert.is_truthy(has(text(call("toggle-simulated-logging")), "Started"))
    finally(function() cl:call_tool("toggle-simulated-logging") end)
    local levels = set_of(mcp.LOGGING_LEVELS)
    local found
    assert.is_true(helper.wait_until(function()
      for i = n + 1, #logs do
        if type(logs[i].data) == "string" and logs[i].data:find("message", 1, true) and levels[logs[i].level] then
          found = logs[i]
        end
      end
      return found ~= nil
    end, ms(5000)))
  end, true)

  test("subscribe_resource / unsubscribe_resource, with the server's log messages and updates", function()
    local cl = client()
    local uri = "demo://resource/static/document/features.md"
    assert.is_table((cl:subscribe_resource(uri)))
    assert.is_true(helper.wait_until(function() return log_with("Received Subscribe Resource request for URI: " .. uri) ~= nil end, ms(5000)))
    -- simulated updates: sent at once for subscribed URIs, then every 5 s (stopped below)
    assert.is_truthy(has(text(call("toggle-subscriber-updates")), "Started"))
    finally(function() cl:call_tool("toggle-subscriber-updates") end)
    assert.is_true(helper.wait_until(function() return #updates > 0 end, ms(5000)))
    assert.are.equal(uri, updates[1].uri)
    assert.is_table((cl:unsubscribe_resource(uri)))
    assert.is_true(helper.wait_until(function() return log_with("Received Unsubscribe Resource request: " .. uri) ~= nil end, ms(5000)))
  end, true)

  test("progress: trigger-long-running-operation reports each step to on_progress", function()
    local seen = {}
    local res = call("trigger-long-running-operation", { duration = 0.3, steps = 3 },
      { on_progress = function(p) seen[#seen + 1] = p end })
    helper.drain()
    assert.is_truthy(has(text(res), "Long running operation completed"))
    assert.are.equal(3, #seen)
    for i, p in ipairs(seen) do
      assert.are.equal(i, p.progress)
      assert.are.equal(3, p.total)
      assert.are.equal(seen[1].progressToken, p.progressToken)
    end
  end, true)

  test("elicitation: accepted, declined and cancelled", function()
    elicit = { action = "accept", content = { name = "Ann", check = true, integer = 7 } }
    local res = call("trigger-elicitation-request")
    local all = {}
    for _, item in ipairs(res.content) do all[#all + 1] = item.text end
    local joined = table.concat(all, "\n")
    assert.is_truthy(has(joined, "User provided the requested information"), joined)
    assert.is_truthy(has(joined, "- Name: Ann"), joined)
    assert.is_truthy(has(joined, "- Agreed to terms: true"), joined)
    assert.is_truthy(has(joined, "- Favorite Integer: 7"), joined)
    local req = elicit_seen[#elicit_seen]
    assert.are.equal("form", req.mode)
    assert.are.equal("Please provide inputs for the following fields:", req.message)
    assert.are.equal("object", req.requested_schema.type)
    assert.are.equal("string", req.requested_schema.properties.name.type)
    assert.are.same({ "name" }, req.requested_schema.required)

    elicit = { action = "decline" }
    assert.is_truthy(has(text(call("trigger-elicitation-request")), "declined"))
    elicit = { action = "cancel" }
    assert.is_truthy(has(text(call("trigger-elicitation-request")), "cancelled"))
  end, true)

  test("sampling: trigger-sampling-request reaches the handler and gets its result", function()
    local res = call("trigger-sampling-request", { prompt = "hello", maxTokens = 50 })
    local p = sample_seen[#sample_seen]
    assert.are.equal(50, p.maxTokens)
    assert.are.equal("user", p.messages[1].role)
    assert.is_truthy(has(p.messages[1].content.text, "hello"))
    assert.is_truthy(has(text(res), "spec-model"))
    assert.is_truthy(has(text(res), "sampled!"))
  end, true)

  test("roots: the server reads them, and set_roots makes it read them again", function()
    local cl = client()
    local res = call("get-roots-list")
    assert.is_truthy(has(text(res), "file:///tmp/spec-root"), text(res))
    assert.is_truthy(has(text(res), "spec root"))
    -- notifications/roots/list_changed -> the server asks roots/list again and logs the count
    assert.is_true((cl:set_roots({ { uri = "file:///tmp/a", name = "A" }, { uri = "file:///tmp/b", name = "B" } })))
    assert.is_true(helper.wait_until(function() return log_with("Roots updated: 2 root(s)") ~= nil end, ms(5000)))
    local res2 = call("get-roots-list")
    assert.is_truthy(has(text(res2), "file:///tmp/b"), text(res2))
    assert.is_falsy(has(text(res2), "spec-root"))
  end, true)

  test("no protocol or handler errors were reported on the connection", function()
    helper.drain()
    local msgs = {}
    for _, e in ipairs(errors) do msgs[#msgs + 1] = tostring(e) end
    assert.are.same({}, msgs)
  end)

  test("close() stops node and reaps it", function()
    local before = mcp.core.children()
    local other, err = connect()
    assert(other, tostring(err))
    local pid = other.transport:pid()
    assert.is_true((helper.proc_exists(pid)))
    assert.are.equal(before + 1, mcp.core.children())
    assert.is_true(other:close())
    assert.is_false((helper.proc_exists(pid)))
    assert.are.equal(before, mcp.core.children())
    local r, e = other:call_tool("echo", { message = "x" })
    assert.is_nil(r)
    assert.are.equal("closed", e.kind)
  end)
end)
