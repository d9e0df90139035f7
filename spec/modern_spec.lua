-- The dual-era client over stdio: the server/discover probe and its fallback to initialize on
-- each kind of failure, the 2026-07-28 wire (_meta, resultType, no initialize) and multi
-- round-trip requests, against spec/fixtures/modern_server.lua (2026-07-28 only) and
-- spec/fixtures/test_server.lua (legacy, with --on-discover=... reactions to the probe).
local mcp = require("mcp")
local helper = require("helper")

local MODERN = helper.fixtures .. "/modern_server.lua"

local function modern_server(args, opts)
  local argv = { MODERN }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  opts = opts or {}
  opts.stderr = opts.stderr or "discard"
  return mcp.create_stdio_client(helper.lua_cmd(), argv, opts)
end

local function seen(c)
  local res = assert(c:call_tool("seen", {}))
  return res.structuredContent.requests
end

local function methods(requests)
  local out = {}
  for i, r in ipairs(requests) do out[i] = r.method end
  return out
end

local function initialize_params(c)
  return assert(c:call_tool("last_initialize", {})).structuredContent
end

describe("protocol discovery against a 2026-07-28 server (stdio)", function()
  it("selects the modern era: no initialize, server info and capabilities from the DiscoverResult", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    assert.are.same({ name = "lua-mcp-modern-server", version = "0.1.0", title = "lua-mcp modern test server" },
      c:server_info())
    assert.are.equal("2026-07-28 server for the lua-mcp test suite.", c:server_instructions())
    assert.is_table(c:server_capabilities().tools)
    assert.is_table(c:server_capabilities().completions)
    local tools = assert(c:list_tools())
    assert.is_true(#tools > 3)
    assert.are.same({ "server/discover", "tools/list", "tools/call" }, methods(seen(c)))
  end)

  it("puts protocolVersion, clientCapabilities and clientInfo in the _meta of every request", function()
    local c = assert(modern_server({}, {
      client_name = "spec-client", client_version = "9.9",
      on_elicitation_request = function() return mcp.elicitation.decline() end,
      roots = { "/tmp" },
    }))
    finally(function() c:close() end)
    assert(c:list_prompts())
    assert(c:call_tool("echo", { message = "hi" }, { meta = { custom = "kept" } }))
    local requests = seen(c)
    assert.are.equal(4, #requests)
    for _, r in ipairs(requests) do
      assert.are.equal("2026-07-28", r.meta["io.modelcontextprotocol/protocolVersion"], r.method)
      assert.are.same({ name = "spec-client", version = "9.9" }, r.meta["io.modelcontextprotocol/clientInfo"])
      local caps = r.meta["io.modelcontextprotocol/clientCapabilities"]
      assert.are.same({ form = {} }, caps.elicitation)
      assert.are.same({}, caps.roots) -- no listChanged in 2026-07-28
    end
    assert.are.equal("kept", requests[3].meta.custom)
  end)

  it("retries once with a version the -32022 error names, then succeeds", function()
    local c = assert(modern_server({ "--reject-first" }))
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    local requests = seen(c)
    assert.are.same({ "server/discover", "server/discover", "tools/call" }, methods(requests))
    assert.are_not.equal(requests[1].id, requests[2].id)
  end)

  it("fails (no fallback) when the version retry is refused too", function()
    local c, err = modern_server({ "--reject-first=2" })
    assert.is_nil(c)
    assert.are.equal(-32022, err.code)
    assert.is_truthy(helper.has(err.message, "protocol discovery failed"), err.message)
  end)

  for _, code in ipairs({ -32021, -32020 }) do
    it("fails on " .. code .. " from server/discover, with the server's message", function()
      local c, err = modern_server({ "--discover-error=" .. code })
      assert.is_nil(c)
      assert.are.equal("rpc", err.kind)
      assert.are.equal(code, err.code)
      assert.is_truthy(helper.has(err.message, "discover refused on purpose"), err.message)
    end)
  end

  it("protocol_version 2026-07-28 with protocol_version_discovery = false skips the probe", function()
    local c = assert(modern_server({}, { protocol_version = "2026-07-28", protocol_version_discovery = false }))
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    assert.are.same({ "tools/call" }, methods(seen(c)))
  end)
end)

describe("protocol discovery against a legacy server (stdio): falls back to initialize", function()
  local kinds = {
    { "method not found (-32601)", {} },
    { "invalid params (-32602)", { "--on-discover=invalid-params" } },
    { "another error (-32603)", { "--on-discover=internal" } },
    { "a result that is not an object", { "--on-discover=not-object" } },
    { "a result without supportedVersions", { "--on-discover=empty" } },
    { "supportedVersions without 2026-07-28", { "--on-discover=old-versions" } },
    -- a fallback a deadline decided is reported (issue 32): the era says nothing about the server
    { "no answer (timeout)", { "--on-discover=hang" }, "timeout" },
  }
  for _, k in ipairs(kinds) do
    it("on " .. k[1], function()
      local errs = {}
      local c = assert(helper.test_server(k[2], {
        -- the start-up allowance is short only where it is meant to expire (no answer)
        protocol_discovery_timeout_ms = 300, protocol_discovery_startup_ms = k[3] and 300 or helper.ms(10000),
        on_error = function(e) errs[#errs + 1] = e end,
      }))
      finally(function() c:close() end)
      assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
      assert.are.equal(mcp.PROTOCOL_VERSION, initialize_params(c).protocolVersion)
      assert.are.equal("lua-mcp-test-server", c:server_info().name)
      mcp.sleep(50)
      if k[3] then
        assert.are.equal(1, #errs)
        assert.are.equal(k[3], errs[1].kind)
        assert.are.equal("server/discover", errs[1].method)
      else
        assert.are.same({}, errs)
      end
    end)
  end

  it("on -32022 naming only a legacy version: initialize asks for that version", function()
    local c = assert(helper.test_server({ "--on-discover=unsupported" }))
    finally(function() c:close() end)
    assert.are.equal("2025-06-18", initialize_params(c).protocolVersion)
    assert.are.equal("2025-06-18", c:protocol_version())
  end)

  it("restarts a server that exits on the probe, once, reports it to on_error and goes on in the legacy era", function()
    local errs = {}
    local t = mcp.stdio_transport({ command = helper.lua_cmd(), args = { helper.test_server_path, "--on-discover=exit" },
                                    stderr = "discard" })
    local c = mcp.new_client(t, { on_error = function(e) errs[#errs + 1] = e end })
    finally(function() c:close() end)
    assert(c:connect())
    local first_pid = t:pid()
    assert.are_not.equal(first_pid, c.transport:pid())
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    assert(c:call_tool("echo", { message = "still here" }))
    assert.is_true(helper.wait_until(function() return #errs > 0 end, helper.ms(2000)))
    assert.are.equal(1, #errs)
    assert.is_truthy(helper.has(errs[1].message, "server/discover"), errs[1].message)
    assert.is_true(helper.wait_until(function() return t:reaped() end, helper.ms(3000)))
  end)

  it("protocol_version_discovery = false sends initialize first (the probe would kill this server)", function()
    local errs = {}
    local c = assert(helper.test_server({ "--on-discover=exit" }, {
      protocol_version_discovery = false, on_error = function(e) errs[#errs + 1] = e end,
    }))
    finally(function() c:close() end)
    local pid = c.transport:pid()
    assert(c:call_tool("echo", { message = "x" }))
    assert.are.equal(pid, c.transport:pid())
    assert.are.same({}, errs)
  end)

  it("a legacy protocol_version sends initialize first, without the probe", function()
    local errs = {}
    local c = assert(helper.test_server({ "--on-discover=exit" }, {
      protocol_version = "2025-06-18", on_error = function(e) errs[#errs + 1] = e end,
    }))
    finally(function() c:close() end)
    assert.are.equal("2025-06-18", c:protocol_version())
    assert.are.same({}, errs)
  end)
end)

describe("the 2026-07-28 wire (stdio)", function()
  it("reads resultType: an unknown value is a protocol error", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("bad_result_type", {})
    assert.is_nil(res)
    assert.are.equal("protocol", err.kind)
    assert.is_truthy(helper.has(err.message, "bogus"), err.message)
  end)

  it("a missing resource is -32602 with data.uri, flagged resource_not_found", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:read_resource("test://none")
    assert.is_nil(res)
    assert.are.equal(-32602, err.code)
    assert.is_true(err.resource_not_found)
    assert.are.equal("resource 1", assert(c:read_resource("test://r/1")).contents[1].text)
  end)

  it("asks for log messages through _meta instead of logging/setLevel", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local got = {}
    c:on_log_message(function(p) got[#got + 1] = p end)
    assert.are.equal("no log level", assert(c:call_tool("log", {})).content[1].text)
    assert(c:set_logging_level("warning"))
    assert.are.equal("log level \"warning\"", assert(c:call_tool("log", {})).content[1].text)
    assert.is_true(helper.wait_until(function() return #got == 1 end, helper.ms(2000)))
    assert.are.equal("hello", got[1].data)
    for _, m in ipairs(methods(seen(c))) do assert.are_not.equal("logging/setLevel", m) end
  end)

  it("ping sends server/discover", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    assert(c:ping())
    assert.are.same({ "server/discover", "server/discover", "tools/call" }, methods(seen(c)))
  end)

  it("cancels with notifications/cancelled", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("hang", {}, { timeout_ms = 100 })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    local ids = assert(c:call_tool("cancelled", {})).structuredContent.ids
    assert.are.equal(1, #ids)
  end)
end)

describe("multi round-trip requests (SEP-2322, stdio)", function()
  local function client(opts)
    opts = opts or {}
    local calls = { elicitation = 0, sampling = 0, roots = 0 }
    opts.on_elicitation_request = opts.on_elicitation_request or function(req)
      calls.elicitation = calls.elicitation + 1
      assert(req.message:find("confirm", 1, true))
      return mcp.elicitation.accept({ confirmed = true })
    end
    opts.on_sampling_request = function(p)
      calls.sampling = calls.sampling + 1
      return mcp.sampling.text("reply to " .. p.messages[1].content.text)
    end
    opts.on_roots_list = function()
      calls.roots = calls.roots + 1
      return { mcp.roots.file_root("/srv/project", "project") }
    end
    return assert(modern_server({}, opts)), calls
  end

  it("answers elicitation, sampling and roots in one round, over several rounds; one call for the caller", function()
    local c, calls = client()
    finally(function() c:close() end)
    local res = assert(c:call_tool("mrtr", { rounds = 3, kinds = { "elicitation", "sampling", "roots" } }))
    assert.are.equal("done after 3 rounds", res.content[1].text)
    local sc = res.structuredContent
    assert.are.equal(3, #sc.responses)
    for round, r in ipairs(sc.responses) do
      assert.are.same({ action = "accept", content = { confirmed = true, age = 30 } }, r.elicitation)
      assert.are.equal("reply to round " .. round, r.sampling.content.text)
      assert.are.same({ { uri = "file:///srv/project", name = "project" } }, r.roots.roots)
    end
    assert.are.same({ elicitation = 3, sampling = 3, roots = 3 }, calls)
    -- every round went out with a new id
    local ids = { [sc.ids[1]] = true, [sc.ids[2]] = true, [sc.ids[3]] = true }
    local n = 0
    for _ in pairs(ids) do n = n + 1 end
    assert.are.equal(3, n)
    local all = seen(c)
    local first_call = all[2]
    assert.are.equal("tools/call", first_call.method)
    assert.is_nil(ids[first_call.id])
  end)

  it("sends no requestState when the server gave none", function()
    local c = client()
    finally(function() c:close() end)
    local res = assert(c:call_tool("mrtr", { state = false }))
    assert.is_false(res.structuredContent.has_state)
    assert.are.equal("accept", res.structuredContent.responses.elicitation.action)
  end)

  it("a declined elicitation is an answer like any other", function()
    local c = client({ on_elicitation_request = function() return mcp.elicitation.decline() end })
    finally(function() c:close() end)
    local res = assert(c:call_tool("mrtr", { rounds = 1 }))
    assert.are.equal("decline", res.structuredContent.responses[1].elicitation.action)
  end)

  it("works inside a task too", function()
    local c = client()
    finally(function() c:close() end)
    local res, err
    mcp.spawn(function()
      res, err = c:call_tool("mrtr", { rounds = 2, kinds = { "sampling" } })
    end)
    mcp.run()
    assert.is_nil(err)
    assert.are.equal(2, #res.structuredContent.responses)
  end)

  it("stops after max_input_rounds with a clear error", function()
    local c = client({ max_input_rounds = 3 })
    finally(function() c:close() end)
    local res, err = c:call_tool("mrtr_forever", {})
    assert.is_nil(res)
    assert.are.equal("protocol", err.kind)
    assert.is_truthy(helper.has(err.message, "3 rounds"), err.message)
  end)

  it("fails clearly when the server asks for input the client has no handler for", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("mrtr", { kinds = { "sampling" } })
    assert.is_nil(res)
    assert.are.equal("protocol", err.kind)
    assert.is_truthy(helper.has(err.message, "sampling/createMessage"), err.message)
  end)
end)

describe("result caching (ttlMs, SEP-2549, stdio)", function()
  local function count(c, method)
    local n = 0
    for _, r in ipairs(seen(c)) do
      if r.method == method then n = n + 1 end
    end
    return n
  end

  it("serves a fresh cached list and read; cache = false asks the server", function()
    local c = assert(modern_server({ "--ttl-ms=600000" }))
    finally(function() c:close() end)
    local a = assert(c:list_tools())
    local b = assert(c:list_tools())
    assert.are.equal(#a, #b)
    assert.are.equal(1, count(c, "tools/list"))
    assert(c:read_resource("test://r/2"))
    assert(c:read_resource("test://r/2"))
    assert(c:read_resource("test://r/3")) -- another uri, another entry
    assert.are.equal(2, count(c, "resources/read"))
    assert(c:list_tools({ cache = false }))
    assert.are.equal(2, count(c, "tools/list"))
    assert(c:ping()) -- ping always reaches the server
    assert(c:ping())
    assert.are.equal(3, count(c, "server/discover"))
  end)

  it("caches nothing when ttlMs is 0", function()
    local c = assert(modern_server({ "--ttl-ms=0" }))
    finally(function() c:close() end)
    assert(c:list_tools())
    assert(c:list_tools())
    assert.are.equal(2, count(c, "tools/list"))
  end)

  it("drops the entries a list_changed or resources/updated notification makes stale", function()
    local c = assert(modern_server({ "--ttl-ms=600000" }))
    finally(function() c:close() end)
    local changed = false
    c:on_tools_list_changed(function() changed = true end)
    assert(c:subscribe_resource("test://r/1"))
    assert(c:list_tools())
    assert(c:list_prompts())
    assert(c:read_resource("test://r/1"))
    assert(c:read_resource("test://r/2"))
    assert(c:call_tool("notify", {}))
    assert.is_true(helper.wait_until(function() return changed end, helper.ms(2000)))
    assert(c:list_tools())
    assert(c:list_prompts())
    assert(c:read_resource("test://r/1"))
    assert(c:read_resource("test://r/2"))
    assert.are.equal(2, count(c, "tools/list"))
    assert.are.equal(1, count(c, "prompts/list"))
    assert.are.equal(3, count(c, "resources/read")) -- r/1 read again, r/2 still cached
  end)

  it("never caches a read that needed input (input_required, then complete), though it carries ttlMs", function()
    local asked = 0
    local c = assert(modern_server({ "--ttl-ms=600000" }, { on_elicitation_request = function()
      asked = asked + 1
      return mcp.elicitation.accept({ confirmed = true })
    end }))
    finally(function() c:close() end)
    for _ = 1, 2 do
      local res = assert(c:read_resource("test://ask"))
      assert.are.same({ confirm = { action = "accept", content = { confirmed = true, age = 30 } } },
        mcp.json.decode(res.contents[1].text))
      assert.are.equal(600000, res.ttlMs)
    end
    assert.are.equal(2, asked)
    assert.are.equal(4, count(c, "resources/read")) -- two rounds per read, nothing served from the cache
    assert(c:read_resource("test://r/1"))
    assert(c:read_resource("test://r/1"))
    assert.are.equal(5, count(c, "resources/read")) -- while a plain read is cached
  end)

  it("clear_cache forgets everything; cache must be a boolean", function()
    local c = assert(modern_server({ "--ttl-ms=600000" }))
    finally(function() c:close() end)
    assert(c:list_prompts())
    c:clear_cache()
    assert(c:list_prompts())
    assert.are.equal(2, count(c, "prompts/list"))
    assert.has_error(function() c:list_prompts({ cache = "no" }) end, "mcp: cache must be a boolean")
  end)
end)

describe("subscriptions/listen (stdio)", function()
  local function listens(c)
    return assert(c:call_tool("listens", {})).structuredContent.listens
  end

  it("opens one listen for the handlers and subscriptions, replaces it when they change, routes its notifications", function()
    local errs = {}
    local c = assert(modern_server({}, { on_error = function(e) errs[#errs + 1] = e end }))
    finally(function() c:close() end)
    assert.are.same({}, listens(c)) -- nothing to listen for yet
    local got = {}
    c:on_tools_list_changed(function() got[#got + 1] = "tools" end)
    c:on_resource_updated(function(p) got[#got + 1] = "updated " .. p.uri end)
    local l = listens(c)
    assert.are.equal(1, #l)
    assert.are.same({ toolsListChanged = true }, l[1].notifications)
    local first = l[1].id
    assert(c:subscribe_resource("test://r/1"))
    l = listens(c)
    assert.are.equal(1, #l) -- the first one was cancelled (notifications/cancelled), a new one sent
    assert.are.same({ toolsListChanged = true, resourceSubscriptions = { "test://r/1" } }, l[1].notifications)
    assert.are.same({ first }, assert(c:call_tool("cancelled", {})).structuredContent.ids)
    assert(c:call_tool("notify", {}))
    assert.is_true(helper.wait_until(function() return #got == 2 end, helper.ms(2000)))
    table.sort(got)
    assert.are.same({ "tools", "updated test://r/1" }, got)
    assert(c:unsubscribe_resource("test://r/1"))
    assert.are.same({ toolsListChanged = true }, listens(c)[1].notifications)
    assert.are.same({}, errs)
  end)

  it("reports what the server's acknowledgment does not honor", function()
    local errs = {}
    local c = assert(modern_server({}, { on_error = function(e) errs[#errs + 1] = e end }))
    finally(function() c:close() end)
    assert(c:subscribe_resource("test://unknown"))
    assert.is_true(helper.wait_until(function() return #errs == 1 end, helper.ms(2000)))
    assert.is_truthy(helper.has(errs[1].message, "test://unknown"), errs[1].message)
  end)

  it("drops a notification that names another subscription", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local got = 0
    c:on_tools_list_changed(function() got = got + 1 end)
    local id = listens(c)[1].id
    c:_on_notification("notifications/tools/list_changed",
      { _meta = { ["io.modelcontextprotocol/subscriptionId"] = id + 1000 } })
    c:_on_notification("notifications/tools/list_changed",
      { _meta = { ["io.modelcontextprotocol/subscriptionId"] = id } })
    helper.wait_until(function() return got >= 1 end, helper.ms(1000))
    mcp.sleep(50)
    assert.are.equal(1, got)
  end)

  for _, how in ipairs({ "result", "cancelled" }) do
    it("forgets a listen the server ends (" .. how .. ")", function()
      local c = assert(modern_server())
      finally(function() c:close() end)
      c:on_tools_list_changed(function() end)
      assert.is_table(c.era.listen.current)
      assert(c:call_tool("end_listen", { how = how }))
      if how == "result" then
        assert.is_true(helper.wait_until(function() return c.era.listen.current == nil end, helper.ms(2000)))
      else
        -- a server's notifications/cancelled for the listen: the handler sees it; the request
        -- itself stays until the client replaces or closes it
        assert.are.same({}, listens(c))
      end
    end)
  end

  it("subscribe_resource fails when the server does not support subscriptions", function()
    local c = assert(modern_server({}, { protocol_version = "2026-07-28", protocol_version_discovery = false }))
    finally(function() c:close() end)
    local res, err = c:subscribe_resource("test://r/1")
    assert.is_nil(res)
    assert.are.equal("protocol", err.kind)
  end)
end)

describe("tasks (the io.modelcontextprotocol/tasks extension, stdio)", function()
  local function state(c)
    return assert(c:call_tool("task_state", {})).structuredContent.tasks
  end

  it("declares the extension and follows a task with tasks/get to its result, behind one call_tool", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res = assert(c:call_tool("task", { polls = 3 }))
    assert.are.equal("task done", res.content[1].text)
    assert.are.equal(3, res.structuredContent.gets)
    assert.are.same({ status = "completed", gets = 3, cancelled = false }, state(c)["task-1"])
  end)

  it("answers the input a task asks for through the handlers and tasks/update", function()
    local asked = 0
    local c = assert(modern_server({}, { on_elicitation_request = function()
      asked = asked + 1
      return mcp.elicitation.accept({ confirmed = true })
    end }))
    finally(function() c:close() end)
    local res = assert(c:call_tool("task", { polls = 1, input = true }))
    assert.are.equal(1, asked)
    assert.are.same({ confirm = { action = "accept", content = { confirmed = true, age = 30 } } }, res.structuredContent.input)
  end)

  it("a failed task is the call's error", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("task", { polls = 1, fail = true })
    assert.is_nil(res)
    assert.are.equal(-32603, err.code)
    assert.are.equal("task failed on purpose", err.message)
  end)

  it("the call's timeout and its cancel token end the task with tasks/cancel", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("task", { polls = 100000 }, { timeout_ms = 150 })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_true(state(c)["task-1"].cancelled)
    local token = mcp.cancel_token()
    mcp.spawn(function() res, err = c:call_tool("task", { polls = 100000 }, { cancel = token }) end)
    mcp.spawn(function()
      mcp.sleep(100)
      token:cancel("enough")
    end)
    mcp.run()
    assert.is_nil(res)
    assert.are.equal("cancelled", err.kind)
    assert.are.same({ status = "cancelled", cancelled = true }, { status = state(c)["task-2"].status, cancelled = state(c)["task-2"].cancelled })
  end)

  it("reports the progress the server sends with the call's token to on_progress while the task is polled", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local got = {}
    local res = assert(c:call_tool("task", { polls = 3, progress = true },
      { on_progress = function(p) got[#got + 1] = p end }))
    assert.are.equal("task done", res.content[1].text)
    assert.is_true(helper.wait_until(function() return #got == 3 end, helper.ms(2000)))
    local call
    for _, r in ipairs(seen(c)) do
      if r.method == "tools/call" and call == nil then call = r end
    end
    assert.is_not_nil(call.meta.progressToken)
    for i, p in ipairs(got) do
      assert.are.equal(call.meta.progressToken, p.progressToken)
      assert.are.equal(i, p.progress)
      assert.are.equal(3, p.total)
    end
    assert.are.same({ "working (2 polls left)", "working (1 polls left)", "completed (0 polls left)" },
      { got[1].message, got[2].message, got[3].message })
    -- the token is released once the task has ended
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  it("releases the call's progress token when the timeout cancels the task", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local n = 0
    local res, err = c:call_tool("task", { polls = 100000, progress = true },
      { timeout_ms = 300, on_progress = function() n = n + 1 end })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_true(n > 0)
    assert.is_true(state(c)["task-1"].cancelled)
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  -- Each poll waits the interval the task names, then tasks/get reports progress: six polls last
  -- longer than the timeout in all, while the gap between two reports stays well under it.
  it("reset_timeout_on_progress: the task's progress restarts the call's timeout while it is polled", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local args = { polls = 6, progress = true, interval = helper.ms(150) }
    local n = 0
    local res = assert(c:call_tool("task", args, {
      timeout_ms = helper.ms(500), reset_timeout_on_progress = true, on_progress = function() n = n + 1 end,
    }))
    assert.are.equal("task done", res.content[1].text)
    assert.are.same({ status = "completed", gets = 6, cancelled = false }, state(c)["task-1"])
    assert.is_true(helper.wait_until(function() return n == 6 end, helper.ms(2000)))
    -- the same task without the option outlives the call's timeout
    local err
    res, err = c:call_tool("task", args, { timeout_ms = helper.ms(500) })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_true(state(c)["task-2"].cancelled)
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  it("max_total_timeout_ms ends a task that keeps reporting progress under reset_timeout_on_progress", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    local res, err = c:call_tool("task", { polls = 100000, progress = true, interval = helper.ms(50) }, {
      timeout_ms = helper.ms(500), reset_timeout_on_progress = true, max_total_timeout_ms = helper.ms(1000),
    })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.matches("max_total_timeout_ms", err.message, 1, true)
    local task = state(c)["task-1"]
    assert.is_true(task.cancelled)
    assert.is_true(task.gets > 1) -- it was polled, with progress, past the first timeout
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  it("get_task and list_tasks show the tasks of this client", function()
    local c = assert(modern_server())
    finally(function() c:close() end)
    assert(c:call_tool("task", { polls = 1 }))
    assert(c:call_tool("task", { polls = 1 }))
    local list = assert(c:list_tasks())
    assert.are.same({ "task-1", "task-2" }, { list[1].taskId, list[2].taskId })
    assert.are.equal("completed", list[2].status)
    local t = assert(c:get_task("task-1"))
    assert.are.equal("completed", t.status)
    local none, err = c:get_task("task-99")
    assert.is_nil(none)
    assert.are.equal(-32602, err.code)
  end)
end)

describe("tasks, 2025-11-25 shape (task augmentation, legacy era)", function()
  it("call_tool with opts.task follows the task with tasks/get, then tasks/result gives the result", function()
    local c = assert(helper.test_server({ "--tasks" }))
    finally(function() c:close() end)
    assert.are.equal("no task", assert(c:call_tool("task_tool", {})).content[1].text)
    local res = assert(c:call_tool("task_tool", { polls = 3 }, { task = { ttl = 60000 } }))
    assert.are.equal("task result legacy-task-1", res.content[1].text)
    local _, err = c:call_tool("task_tool", { polls = 1, fail = true }, { task = {} })
    assert.are.equal(-32603, err.code)
    local list = assert(c:list_tasks())
    assert.are.equal(2, #list)
    assert.are.equal("completed", list[1].status)
    assert.are.equal("failed", assert(c:get_task("legacy-task-2")).status)
  end)

  it("reports the progress the server sends with the call's token while the task is polled", function()
    local c = assert(helper.test_server({ "--tasks" }))
    finally(function() c:close() end)
    local got = {}
    local res = assert(c:call_tool("task_tool", { polls = 3, progress = true },
      { task = {}, on_progress = function(p) got[#got + 1] = p end }))
    assert.are.equal("task result legacy-task-1", res.content[1].text)
    assert.is_true(helper.wait_until(function() return #got == 3 end, helper.ms(2000)))
    for i, p in ipairs(got) do
      assert.are.equal(got[1].progressToken, p.progressToken)
      assert.are.equal(i, p.progress)
      assert.are.equal(3, p.total)
      assert.are.equal("poll " .. i, p.message)
    end
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  it("reset_timeout_on_progress: the task's progress restarts the call's timeout while it is polled", function()
    local c = assert(helper.test_server({ "--tasks" }))
    finally(function() c:close() end)
    local args = { polls = 6, progress = true, interval = helper.ms(150) }
    local res = assert(c:call_tool("task_tool", args,
      { task = {}, timeout_ms = helper.ms(500), reset_timeout_on_progress = true }))
    assert.are.equal("task result legacy-task-1", res.content[1].text)
    -- the same task without the option outlives the call's timeout
    local err
    res, err = c:call_tool("task_tool", args, { task = {}, timeout_ms = helper.ms(500) })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.are.equal("cancelled", assert(c:get_task("legacy-task-2")).status)
    assert.is_nil(next(c.progress))
    assert.is_nil(next(c.task_progress))
  end)

  it("the call's timeout cancels the task", function()
    local c = assert(helper.test_server({ "--tasks" }))
    finally(function() c:close() end)
    local res, err = c:call_tool("task_tool", { polls = 100000 }, { task = {}, timeout_ms = 150 })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.are.equal("cancelled", assert(c:get_task("legacy-task-1")).status)
  end)
end)
