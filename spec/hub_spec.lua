-- mcp.hub against real servers: concurrent start (one never starts, one hangs on initialize,
-- 20 at once), aggregation and routing, list_changed, a crashed stdio server restarted with
-- backoff and a limit, HTTP servers that lost the session (the fault server's reset and a 400,
-- server-everything restarted on the same port), approval, tracing, client:reconnect().
local mcp = require("mcp")
local helper = require("helper")
local sched = require("mcp.sched")
local H = require("http_helper")

local LUA = helper.lua_cmd()
local T = helper.test_server_path

local function server(...)
  return { command = LUA, args = { T, ... } }
end

-- on_state recorder: the events in order, as "name:state".
local function recorder()
  local r = { events = {} }
  function r.on_state(name, state, info)
    r.events[#r.events + 1] = name .. ":" .. state
    r.last = r.last or {}
    r.last[name] = info
  end
  function r.index(ev)
    for i, e in ipairs(r.events) do if e == ev then return i end end
  end
  return r
end

local function names(list)
  local out = {}
  for _, t in ipairs(list) do out[#out + 1] = t.name end
  return out
end

local function contains(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

describe("mcp.hub", function()
  it("connects every server concurrently: one never starts, one hangs on initialize, the others are ready first", function()
    local rec = recorder()
    local hub = assert(mcp.hub({ mcpServers = {
      a = server("--name=a"),
      b = server("--tools=2"),
      missing = { command = "/nonexistent/lua-mcp-server" },
      hang = server("--no-answer-init"),
      off = { command = "never-run", disabled = true },
    } }, { connect_timeout_ms = helper.ms(1500), on_state = rec.on_state }))
    helper.drain()
    assert.equals("ready", hub:state("a"))
    assert.equals("ready", hub:state("b"))
    local st, err = hub:state("missing")
    assert.equals("failed", st)
    assert.equals("transport", err.kind)
    assert.truthy(helper.has(err.message, "server 'missing' failed to start"), err.message)
    assert.truthy(helper.has(err.message, "/nonexistent/lua-mcp-server"), err.message)
    st, err = hub:state("hang")
    assert.equals("failed", st)
    assert.equals("timeout", err.kind)
    assert.truthy(helper.has(err.message, "(stderr: [test-server] started"), err.message)
    assert.equals("disabled", hub:state("off"))
    -- Ordering, not timing: both healthy servers were ready before the hanging one gave up.
    assert.truthy(rec.index("a:ready") < rec.index("hang:failed"))
    assert.truthy(rec.index("b:ready") < rec.index("hang:failed"))
    assert.truthy(rec.index("hang:connecting") < rec.index("a:ready"))
    assert.truthy(rec.index("off:disabled"))

    local tools = names(hub:list_tools())
    assert.truthy(contains(tools, "a__echo"))
    assert.truthy(contains(tools, "b__tool_2"))
    assert.is_false(contains(tools, "hang__echo"))
    local a_echo
    for _, t in ipairs(hub:list_tools()) do if t.name == "a__echo" then a_echo = t end end
    assert.equals("a", a_echo.server)
    assert.equals("echo", a_echo.original_name)
    assert.equals("object", a_echo.inputSchema.type)
    assert.same({ "a", "echo" }, { hub:resolve("a__echo") })

    local res = assert(hub:call_tool("a__echo", { message = "via a" }))
    assert.equals("via a", res.content[1].text)
    res = assert(hub:call_tool("b__tool_1", { value = 1 }))
    assert.truthy(helper.has(res.content[1].text, "tool_1"))
    res = assert(hub:call_tool("echo", { message = "by server" }, { server = "b" }))
    assert.equals("by server", res.content[1].text)

    local _, e1 = hub:call_tool("nope__x", {})
    assert.equals("not_found", e1.kind)
    local _, e2 = hub:call_tool("echo", {}, { server = "hang" })
    assert.equals("unavailable", e2.kind)
    assert.truthy(helper.has(e2.message, "server 'hang' is not ready (failed; "), e2.message)
    local _, e3 = hub:call_tool("echo", {}, { server = "off" })
    assert.equals("server 'off' is disabled", e3.message)
    assert.has_error(function() hub:call_tool("echo", {}, { server = "nosuch" }) end,
      "mcp.hub:call_tool: no server named 'nosuch'")

    -- resources and prompts are aggregated and routed too
    local uris = {}
    for _, r in ipairs(hub:list_resources()) do uris[#uris + 1] = r.server .. " " .. r.uri end
    assert.truthy(contains(uris, "a test://r/1"))
    assert.truthy(contains(uris, "b test://r/1"))
    res = assert(hub:read_resource("test://r/2"))
    assert.equals("resource 2", res.contents[1].text)
    res = assert(hub:read_resource("test://items/42", { server = "b" }))
    assert.equals("item 42", res.contents[1].text)
    res = assert(hub:read_resource("test://items/7")) -- matched through a's template
    assert.equals("item 7", res.contents[1].text)
    local _, e4 = hub:read_resource("nothing://x")
    assert.equals("not_found", e4.kind)
    assert.truthy(contains(names(hub:list_prompts()), "b__greet"))
    res = assert(hub:get_prompt("b__greet", { name = "Ada" }))
    assert.truthy(helper.has(res.messages[1].content.text, "Hello, Ada!"))

    local servers = hub:servers()
    assert.same({ "a", "b", "hang", "missing", "off" }, names(servers))
    local pid = hub:client("a").transport:pid()
    assert.truthy(helper.proc_exists(pid))
    hub:close()
    assert.is_false(helper.proc_exists(pid))
    assert.is_nil(hub:client("a"))
    assert.same({}, hub:list_tools())
  end)

  it("starts 20 servers at once", function()
    local cfg = { mcpServers = {} }
    for i = 1, 20 do cfg.mcpServers[("s%02d"):format(i)] = server("--items=1") end
    local hub = assert(mcp.hub(cfg))
    local pids = {}
    for _, s in ipairs(hub:servers()) do
      assert.equals("ready", s.state)
      pids[#pids + 1] = s.client.transport:pid()
    end
    assert.equals(20, #pids)
    assert.equals(20 * 18, #hub:list_tools())
    for i = 1, 20 do
      local name = ("s%02d__echo"):format(i)
      assert.equals(name, hub:call_tool(name, { message = name }).content[1].text)
    end
    hub:close()
    for _, pid in ipairs(pids) do assert.is_false(helper.proc_exists(pid)) end
  end)

  it("restarts a crashed stdio server with backoff and routes calls to the new process", function()
    local rec = recorder()
    local hub = assert(mcp.hub({ mcpServers = { a = server(), b = server() } },
      { on_state = rec.on_state, restart = { base_ms = 20 } }))
    local pid = hub:client("a").transport:pid()
    local _, err = hub:call_tool("a__die", {})
    assert.equals("closed", err.kind)
    assert.equals("a", err.server)
    assert.truthy(helper.wait_until(function() return rec.index("a:restarting") ~= nil end, helper.ms(5000)))
    assert.truthy(hub:wait(helper.ms(10000)))
    assert.equals("ready", hub:state("a"))
    helper.drain()
    local i = rec.index("a:restarting")
    assert.equals("a:ready", rec.events[i + 1]) -- restarting covers the wait and the new connection
    assert.equals(1, hub:servers()[1].attempts)
    local newpid = hub:client("a").transport:pid()
    assert.are_not.equal(pid, newpid)
    assert.equals("back", hub:call_tool("a__echo", { message = "back" }).content[1].text)
    assert.truthy(contains(names(hub:list_tools()), "a__echo"))
    hub:close()
  end)

  it("while a server restarts, its tools fail with kind unavailable, not not_found", function()
    local hub = assert(mcp.hub({ mcpServers = { a = server(), b = server() } }, { restart = { base_ms = 60000 } }))
    hub:call_tool("a__die", {})
    assert.truthy(helper.wait_until(function() return hub:state("a") == "restarting" end, helper.ms(5000)))
    local res, err = hub:call_tool("a__echo", { message = "x" })
    assert.is_nil(res)
    assert.equals("unavailable", err.kind)
    assert.equals("a", err.server)
    assert.truthy(helper.has(err.message, "restarting"), err.message)
    -- a name no server could own is still not_found
    assert.equals("not_found", select(2, hub:call_tool("zz__echo", {})).kind)
    assert.equals("not_found", select(2, hub:call_tool("b__no_such_tool", {})).kind)
    hub:close()
  end)

  it("gives up after restart.max failed restarts", function()
    local flag = os.tmpname()
    os.remove(flag)
    -- Starts once; every later start fails before initialize.
    local script = ("if [ -e %s ]; then echo refusing >&2; exit 1; fi; touch %s; exec %s %s"):format(flag, flag, LUA, T)
    local rec = recorder()
    local hub = assert(mcp.hub({ mcpServers = { flaky = { command = "sh", args = { "-c", script } } } },
      { on_state = rec.on_state, restart = { max = 2, base_ms = 10 } }))
    assert.equals("ready", hub:state("flaky"))
    hub:call_tool("flaky__die", {})
    assert.truthy(helper.wait_until(function() return hub:state("flaky") == "failed" end, helper.ms(10000)))
    os.remove(flag)
    local _, err = hub:state("flaky")
    assert.truthy(helper.has(err.message, "gave up after 2 restarts"), err.message)
    assert.truthy(helper.has(err.message, "exited with status 1"), err.message)
    helper.drain()
    local seq = {}
    for _, e in ipairs(rec.events) do seq[#seq + 1] = e:match(":(.*)") end
    assert.same({ "connecting", "ready", "restarting", "restarting", "failed" }, seq)
    assert.same({}, hub:list_tools())
    -- restart() starts it again from scratch
    hub:restart("flaky")
    assert.equals("ready", hub:state("flaky"))
    hub:close()
    os.remove(flag)
  end)

  -- The restart timer is background work: a weak timer (core.timer(ms, fn, true)).
  it("a pending restart keeps no mcp.run() waiting (a weak timer); the loop runs it when it runs", function()
    -- what earlier specs left in the loop (a timer, a connection) would keep it alive
    if not helper.wait_until(function() return not mcp.core.alive() end, helper.ms(5000)) then
      pending("the loop has work left by earlier specs")
      return
    end
    local hub = assert(mcp.hub({ mcpServers = { a = server() } }, { restart = { base_ms = 60000 } }))
    hub:call_tool("a__die", {})
    assert.truthy(helper.wait_until(function() return hub:state("a") == "restarting" end, helper.ms(5000)))
    -- once the crashed server is reaped, only the restart, 60 s away, is pending: not waited for
    assert.is_true(helper.wait_until(function() return not mcp.core.alive() end, helper.ms(5000)),
      "the pending restart keeps the loop alive")
    local wake
    mcp.spawn(function() sched.await(function(cb) wake = cb end) end) -- waits for nothing in flight
    local ok, err = pcall(mcp.run)
    assert.is_false(ok)
    assert.truthy(helper.has(tostring(err), "1 task(s) wait for something that is not in flight"), tostring(err))
    wake()
    helper.drain()
    assert.equals("restarting", hub:state("a"))
    assert.is_true(mcp.core.timeout() > 0) -- (a host's loop still sees it due)
    hub:close()
  end)

  it("hub:wait() waits for a pending restart, blocking and in a task", function()
    local hub = assert(mcp.hub({ mcpServers = { a = server() } }, { restart = { base_ms = 200 } }))
    finally(function() hub:close() end)
    hub:call_tool("a__die", {})
    assert.truthy(helper.wait_until(function() return hub:state("a") == "restarting" end, helper.ms(5000)))
    assert.is_true(hub:wait())
    assert.equals("ready", hub:state("a"))
    hub:call_tool("a__die", {})
    assert.truthy(helper.wait_until(function() return hub:state("a") == "restarting" end, helper.ms(5000)))
    local settled
    mcp.spawn(function() settled = hub:wait() end)
    mcp.run()
    assert.is_true(settled)
    assert.equals("ready", hub:state("a"))
    hub:close()
  end)

  it("reconnect(): the new client connects beside the old one, whose call in flight finishes on it", function()
    local hub = assert(mcp.hub({ mcpServers = { a = server() } }))
    local old = hub:client("a")
    local res, cerr
    mcp.spawn(function() res, cerr = hub:call_tool("a__sleep", { ms = 400 }) end)
    local ok, err
    mcp.spawn(function() ok, err = hub:reconnect("a") end)
    assert.truthy(helper.wait_until(function() return ok ~= nil or err ~= nil end, helper.ms(10000)))
    assert.is_true(ok, tostring(err))
    assert.equals("ready", hub:state("a"))
    assert.are_not.equal(old, hub:client("a"))
    assert.is_true(old:is_connected(), "the old client stays while its call runs")
    assert.truthy(helper.wait_until(function() return res ~= nil or cerr ~= nil end, helper.ms(10000)))
    assert.truthy(res, tostring(cerr))
    assert.is_false(old:is_connected(), "closed once its call ended")
    assert.truthy(hub:call_tool("a__echo", { message = "x" }))
    -- with nothing in flight the old client goes at once
    local second = hub:client("a")
    assert(hub:reconnect("a"))
    assert.is_false(second:is_connected())
    hub:close()
  end)

  it("reconnect(): a server disabled while the new client fetches its lists stays disabled", function()
    local hub = assert(mcp.hub({ mcpServers = { a = server() } }))
    local old = hub:client("a")
    local ok, err
    mcp.spawn(function() ok, err = hub:reconnect("a") end)
    -- the new client takes over, then lists the server's tools, resources and prompts
    assert.truthy(helper.wait_until(function() return hub:client("a") ~= old end, helper.ms(10000)))
    assert.is_nil(ok)
    hub:disable("a")
    assert.truthy(helper.wait_until(function() return ok ~= nil or err ~= nil end, helper.ms(10000)))
    assert.is_nil(ok)
    assert.equals("closed", err.kind)
    assert.equals("disabled", hub:state("a"))
    assert.is_nil(hub:client("a"))
    assert.is_false(old:is_connected(), "the old client closed too")
    hub:close()
  end)

  it("follows list_changed and reports it through on_change", function()
    local changes = {}
    local hub = assert(mcp.hub({ mcpServers = { a = server() } },
      { on_change = function(kind, name) changes[#changes + 1] = kind .. ":" .. name end }))
    helper.drain()
    changes = {}
    assert(hub:call_tool("a__notify", {}))
    assert.truthy(helper.wait_until(function() return #changes >= 3 end, helper.ms(5000)))
    table.sort(changes)
    assert.same({ "prompts:a", "resources:a", "tools:a" }, changes)
    assert.truthy(contains(names(hub:list_tools()), "a__echo"))
    hub:close()
  end)

  it("namespaces names stably: sanitized, collisions numbered, long names cut with a digest, disabled tools hidden", function()
    local hub = assert(mcp.hub({ mcpServers = {
      ["my.server"] = server(), my_server = server(), ["a__b"] = server("--tools=1"),
      x = { command = LUA, args = { T }, disabled_tools = { "die", "hang" } },
    } }, { max_name_length = 24 }))
    local by_prefix = {}
    for _, s in ipairs(hub:servers()) do by_prefix[s.name] = s.prefix end
    assert.same({ ["my.server"] = "my_server", my_server = "my_server_2", ["a__b"] = "a_b", x = "x" }, by_prefix)
    local tools = names(hub:list_tools())
    assert.truthy(contains(tools, "my_server__echo"))
    assert.truthy(contains(tools, "my_server_2__echo"))
    assert.truthy(contains(tools, "a_b__tool_1"))
    for _, n in ipairs(tools) do assert.truthy(#n <= 24, n) end
    -- "my_server_2__last_initialize" is 28 characters: cut, with a digest of the original
    local cut
    for _, t in ipairs(hub:list_tools()) do
      if t.server == "my_server" and t.original_name == "last_initialize" then cut = t.name end
    end
    assert.truthy(cut:match("^my_server_2__last_%x%x%x%x%x%x$"), cut)
    assert.equals("my_server", (hub:resolve(cut)))
    assert.truthy(hub:call_tool(cut, {}).structuredContent.clientInfo)
    assert.is_false(contains(tools, "x__die"))
    local _, err = hub:call_tool("die", {}, { server = "x" })
    assert.equals("denied", err.kind)
    assert.equals("tool 'die' of server 'x' is disabled in the config", err.message)
    hub:close()
  end)

  describe("approval", function()
    it("asks with server, tool, arguments and annotations; allow, deny and always", function()
      local asked, answers = {}, { "deny", "allow", "always" }
      local hub = assert(mcp.hub({ mcpServers = { ex = { command = LUA, args = { helper.example_server_path } } } }, {
        approve = function(req)
          asked[#asked + 1] = req
          return table.remove(answers, 1), "not today"
        end,
      }))
      local res, err = hub:call_tool("ex__echo", { message = "hi" })
      assert.is_nil(res)
      assert.equals("denied", err.kind)
      assert.equals("call to tool 'echo' of server 'ex' was denied: not today", err.message)
      local q = asked[1]
      assert.equals("ex", q.server)
      assert.equals("echo", q.tool)
      assert.equals("ex__echo", q.name)
      assert.same({ message = "hi" }, q.arguments)
      assert.is_true(q.annotations.readOnlyHint)
      assert.equals("Echo", q.definition.title)
      assert.equals("hi", hub:call_tool("ex__echo", { message = "hi" }).content[1].text)
      assert(hub:call_tool("ex__add", { a = 1, b = 2 })) -- "always"
      assert(hub:call_tool("ex__add", { a = 1, b = 2 }))
      assert.equals(3, #asked)
      assert.equals("add", asked[3].tool)
      assert.is_true(asked[3].annotations.idempotentHint)
      hub:close()
    end)

    it("honours auto_approve (a list, or true) without asking", function()
      local asked = 0
      local hub = assert(mcp.hub({ mcpServers = {
        listed = { command = LUA, args = { T }, autoApprove = { "echo" } },
        all = { command = LUA, args = { T }, auto_approve = true },
      } }, { approve = function() asked = asked + 1; return "deny" end }))
      assert(hub:call_tool("listed__echo", { message = "x" }))
      assert(hub:call_tool("all__numbers", {}))
      assert.equals(0, asked)
      local _, err = hub:call_tool("listed__numbers", {})
      assert.equals("denied", err.kind)
      assert.equals(1, asked)
      hub:close()
    end)

    it("verify runs on every call, auto-approved and \"always\" ones too, before approve", function()
      local verified, asked, drifted = {}, 0, false
      local hub = assert(mcp.hub({ mcpServers = {
        all = { command = LUA, args = { T }, auto_approve = true },
        ask = { command = LUA, args = { T } },
      } }, {
        verify = function(req)
          verified[#verified + 1] = req.name
          assert.equals("echo", req.definition.name)
          if drifted then return "deny", "drifted" end
          return "allow"
        end,
        approve = function() asked = asked + 1; return "always" end,
      }))
      assert(hub:call_tool("all__echo", { message = "x" }))
      assert(hub:call_tool("ask__echo", { message = "x" }))
      assert(hub:call_tool("ask__echo", { message = "x" })) -- "always": not asked again, still verified
      assert.equals(1, asked)
      assert.same({ "all__echo", "ask__echo", "ask__echo" }, verified)
      drifted = true
      local res, err = hub:call_tool("all__echo", { message = "x" })
      assert.is_nil(res)
      assert.equals("denied", err.kind)
      assert.equals("call to tool 'echo' of server 'all' was denied: drifted", err.message)
      res, err = hub:call_tool("ask__echo", { message = "x" })
      assert.is_nil(res)
      assert.equals("denied", err.kind)
      assert.equals(1, asked)
      hub:close()
    end)

    it("a verify hook that raises denies, naming it; an answer other than allow/deny raises", function()
      local answers = { "always" }
      local hub = assert(mcp.hub({ mcpServers = { a = { command = LUA, args = { T }, auto_approve = true } } }, {
        verify = function()
          if #answers > 0 then return table.remove(answers, 1) end
          error("no pins", 0)
        end,
      }))
      assert.has_error(function() hub:call_tool("a__echo", { message = "x" }) end,
        'mcp.hub: verify must answer "allow" or "deny", got always')
      local res, err = hub:call_tool("a__echo", { message = "x" })
      assert.is_nil(res)
      assert.equals("denied", err.kind)
      assert.equals("call to tool 'echo' of server 'a' was denied: the verify hook raised: no pins", err.message)
      assert.equals("no pins", err.cause)
      hub:close()
    end)

    it("a hook that raises denies the call with a structured error, and the tool is not called", function()
      local sent = {}
      local boom = setmetatable({}, { __tostring = function() return "hook exploded" end })
      local raise = { "no policy for this", boom }
      local hub = assert(mcp.hub({ mcpServers = { a = server() } }, {
        approve = function() error(table.remove(raise, 1), 0) end,
        on_message = function(dir, msg) if dir == "send" and msg.method then sent[#sent + 1] = msg.method end end,
      }))
      local res, err = hub:call_tool("a__echo", { message = "x" })
      assert.is_nil(res)
      assert.equals("denied", err.kind)
      assert.equals("a", err.server)
      assert.equals("tools/call", err.method)
      assert.equals("call to tool 'echo' of server 'a' was denied: the approve hook raised: no policy for this", err.message)
      assert.equals("no policy for this", err.cause)
      res, err = hub:call_tool("a__echo", { message = "x" })
      assert.is_nil(res)
      assert.equals(boom, err.cause)
      assert.truthy(tostring(err):find("the approve hook raised: hook exploded", 1, true))
      for _, m in ipairs(sent) do assert.are_not.equal("tools/call", m) end
      assert.is_true(#sent > 0) -- the tracing saw the handshake, so it would have seen a call
      hub:close()
    end)

    it("a hook that waits inside a task, then raises, denies too (sched.pcall; also on PUC Lua 5.1)", function()
      local hub = assert(mcp.hub({ mcpServers = { a = server() } }, {
        approve = function() mcp.sleep(5); error("later", 0) end,
      }))
      local err
      mcp.spawn(function() err = select(2, hub:call_tool("a__echo", { message = "x" })) end)
      mcp.run()
      assert.equals("denied", err.kind)
      assert.equals("later", err.cause)
      hub:close()
    end)

    it("an answer other than allow/deny/always raises", function()
      local hub = assert(mcp.hub({ mcpServers = { a = server() } }, { approve = function() return "maybe" end }))
      assert.has_error(function() hub:call_tool("a__echo", {}) end,
        'mcp.hub: approve must answer "allow", "deny" or "always", got maybe')
      hub:close()
    end)
  end)

  describe("tracing", function()
    it("on_message on a client sees requests, results, errors, notifications and server requests both ways", function()
      local seen = {}
      local c = assert(helper.test_server(nil, {
        on_message = function(dir, msg) seen[#seen + 1] = { dir = dir, msg = msg } end,
        on_roots_list = function() return { { uri = "file:///tmp", name = "tmp" } } end,
      }))
      assert(c:call_tool("echo", { message = "x" }))
      c:call_tool("error", {})
      assert(c:call_tool("notify", {}))
      assert(c:call_tool("roots", {}))
      helper.drain()
      c:close()
      local lines = {}
      for _, s in ipairs(seen) do
        local m = s.msg
        assert.equals("2.0", m.jsonrpc)
        local what = m.method or (m.result and "result") or (m.error and ("error " .. m.error.code))
        lines[#lines + 1] = s.dir .. " " .. what
      end
      local text = table.concat(lines, "\n")
      for _, want in ipairs({ "send initialize\nreceive result\nsend notifications/initialized\nsend tools/call\nreceive result",
        "send tools/call\nreceive error -32603", "receive notifications/tools/list_changed", "receive roots/list",
        "send result" }) do
        assert.truthy(helper.has(text, want), text)
      end
      -- the response carries the id of its request (after the server/discover probe and its
      -- -32601, which this legacy server answers first)
      assert.equals("server/discover", seen[1].msg.method)
      assert.equals(-32601, seen[2].msg.error.code)
      assert.equals(seen[1].msg.id, seen[2].msg.id)
      assert.equals("initialize", seen[3].msg.method)
      assert.equals(seen[3].msg.id, seen[4].msg.id)
      assert.equals("echo", seen[6].msg.params.name)
    end)

    it("on_message sees a server's ping and the core's answer to it", function()
      local seen = {}
      local c = assert(helper.test_server(nil, {
        on_message = function(dir, msg) seen[#seen + 1] = { dir = dir, msg = msg } end,
      }))
      assert(c:call_tool("ping_client", {}))
      c:close()
      local ping, answer
      for _, s in ipairs(seen) do
        if s.dir == "receive" and s.msg.method == "ping" then ping = s.msg end
        if s.dir == "send" and ping and s.msg.id == ping.id and s.msg.result then answer = s.msg end
      end
      assert.truthy(ping, "the ping was not traced")
      assert.truthy(answer, "the answer was not traced")
      assert.equals("2.0", answer.jsonrpc)
      assert.equals("{}", mcp.json.encode(answer.result))
    end)

    it("on_message sees the notifications/cancelled the core sends when a request times out", function()
      local seen = {}
      local c = assert(helper.test_server(nil, {
        on_message = function(dir, msg) seen[#seen + 1] = { dir = dir, msg = msg } end,
      }))
      local _, err = c:call_tool("sleep", { ms = 3000 }, { timeout_ms = 100 })
      assert.equals("timeout", err.kind)
      c:close()
      local call, cancel
      for _, s in ipairs(seen) do
        if s.dir == "send" and s.msg.method == "tools/call" then call = s.msg end
        if s.dir == "send" and s.msg.method == "notifications/cancelled" then cancel = s.msg end
      end
      assert.truthy(call and cancel)
      assert.equals(call.id, cancel.params.requestId)
      assert.equals(err.message, cancel.params.reason)
    end)

    it("an error in on_message goes to on_error and loses nothing", function()
      local reported
      local c = assert(helper.test_server(nil, {
        on_message = function() error("tracer broke") end,
        on_error = function(e) reported = e end,
      }))
      assert.equals("x", c:call_tool("echo", { message = "x" }).content[1].text)
      helper.drain()
      assert.truthy(helper.has(tostring(reported), "on_message raised"), tostring(reported))
      c:close()
    end)

    it("client:on_message can start tracing on a connected client; the hub passes the server name", function()
      local c = assert(helper.test_server())
      local n = 0
      c:on_message(function() n = n + 1 end)
      assert(c:ping())
      assert.equals(2, n)
      c:close()
      local seen = {}
      local hub = assert(mcp.hub({ mcpServers = { a = server(), b = server() } },
        { on_message = function(dir, msg, name) seen[#seen + 1] = name .. " " .. dir .. " " .. tostring(msg.method) end }))
      assert(hub:call_tool("b__echo", { message = "m" }))
      hub:close()
      assert.truthy(contains(seen, "a send initialize"))
      assert.truthy(contains(seen, "b send tools/call"))
    end)
  end)

  describe("client:reconnect()", function()
    it("brings a stdio client back after its server died, keeping handlers", function()
      local c = assert(helper.test_server())
      local changed = 0
      c:on_tools_list_changed(function() changed = changed + 1 end)
      local pid = c.transport:pid()
      c:call_tool("die", {})
      assert.truthy(helper.wait_until(function() return not c:is_connected() end, helper.ms(5000)))
      assert(c:reconnect())
      assert.is_true(c:is_connected())
      assert.are_not.equal(pid, c.transport:pid())
      assert(c:call_tool("notify", {}))
      assert.truthy(helper.wait_until(function() return changed == 1 end, helper.ms(5000)))
      c:close()
    end)

    it("needs a transport or a factory", function()
      local c = mcp.new_client(mcp.stdio_transport({ command = LUA, args = { T }, stderr = "discard" }))
      local ok, err = c:reconnect()
      assert.is_nil(ok)
      assert.equals("config", err.kind)
      assert(c:reconnect(mcp.stdio_transport({ command = LUA, args = { T }, stderr = "discard" })))
      assert(c:ping())
      c:close()
    end)
  end)

  describe("HTTP servers", function()
    local srv
    before_each(function()
      if not H.have_node() or not H.have_curl() then return end
      srv = H.start()
    end)
    after_each(function() H.stop(srv); srv = nil end)

    it("reconnects with a fresh initialize when the server forgot the session (404) or names it in a 400", function()
      if not srv then pending("node or curl missing"); return end
      local rec = recorder()
      local hub = assert(mcp.hub({ mcpServers = { web = { url = srv.url }, loc = server() } }, { on_state = rec.on_state }))
      assert.equals("ready", hub:state("web"))
      local sid1 = H.state(srv).sessions[1].id
      assert.equals("one", hub:call_tool("web__echo", { message = "one" }).content[1].text)
      H.control(srv, { reset = true }) -- every session forgotten: the next request gets 404
      assert.equals("two", hub:call_tool("web__echo", { message = "two" }).content[1].text)
      helper.drain()
      local i = rec.index("web:restarting")
      assert.truthy(i)
      assert.equals("web:ready", rec.events[i + 1])
      local st = H.state(srv)
      assert.equals(1, #st.sessions)
      assert.are_not.equal(sid1, st.sessions[1].id)
      -- a 400 that names the session (server-everything's answer to an unknown session)
      H.control(srv, { fail_next = { { status = 400, jsonrpc_error = { code = -32000,
        message = "Bad Request: No valid session ID provided" } } } })
      assert.equals("three", hub:call_tool("web__echo", { message = "three" }).content[1].text)
      -- another 400 is not a lost session
      H.control(srv, { fail_next = { { status = 400, body = "bad arguments" } } })
      local _, err = hub:call_tool("web__echo", { message = "four" })
      assert.equals(400, err.status_code)
      assert.equals("web", err.server)
      hub:close()
    end)

    it("reconnects at once a server that lost the session while the hub only listened (no call saw it)", function()
      if not srv then pending("node or curl missing"); return end
      local rec = recorder()
      local hub = assert(mcp.hub({ mcpServers = { web = { url = srv.url } } }, { on_state = rec.on_state }))
      assert.equals("ready", hub:state("web"))
      local sid1 = H.state(srv).sessions[1].id
      assert.truthy(helper.wait_until(function()
        local s = H.state(srv).sessions[1]
        return s ~= nil and s.get_stream_open
      end, helper.ms(5000)))
      H.control(srv, { reset = true }) -- every session forgotten, the GET stream ended: its reconnection gets 404
      assert.truthy(helper.wait_until(function()
        local i = rec.index("web:restarting")
        return i ~= nil and rec.events[i + 1] == "web:ready"
      end, helper.ms(10000)), table.concat(rec.events, ", "))
      local st = H.state(srv)
      local calls = 0
      for _, q in ipairs(st.requests) do if q.rpc_method == "tools/call" then calls = calls + 1 end end
      assert.equals(0, calls) -- no call made it
      assert.equals(1, #st.sessions)
      assert.are_not.equal(sid1, st.sessions[1].id)
      assert.equals("ready", hub:state("web"))
      assert.equals("after", hub:call_tool("web__echo", { message = "after" }).content[1].text)
      hub:close()
    end)

    it("a server whose lost session cannot be made again fails and leaves the lists", function()
      if not srv then pending("node or curl missing"); return end
      local rec = recorder()
      local hub = assert(mcp.hub({ mcpServers = { web = { url = srv.url }, loc = server() } }, { on_state = rec.on_state }))
      local function has(name)
        for _, t in ipairs(hub:list_tools()) do if t.name == name then return true end end
        return false
      end
      assert.is_true(has("web__echo"))
      -- every session forgotten, and the new session's initialize refused
      H.control(srv, { reset = true })
      H.control(srv, { fault_methods = "initialize", fail_next = { 400, 400, 400 } })
      local _, err = hub:call_tool("web__echo", { message = "x" })
      assert.truthy(err)
      assert.equals("failed", hub:state("web"))
      assert.is_false(has("web__echo")) -- a failed server's tools are not offered (they cannot be called)
      assert.is_true(has("loc__echo"))
      hub:close()
    end)

    it("a url without a type that refuses the POST as a legacy server does (405, 404) is legacy HTTP+SSE", function()
      if not srv then pending("node or curl missing"); return end
      local hub = assert(mcp.hub({ mcpServers = {
        legacy = { url = srv.base .. "/sse" },
        typed = { type = "http", url = srv.base .. "/sse" },
        gone = { url = srv.base .. "/nothing-here" },
      } }))
      assert.equals("ready", hub:state("legacy"))
      assert.equals("legacy", hub:call_tool("legacy__echo", { message = "legacy" }).content[1].text)
      local types = {}
      for _, s in ipairs(hub:servers()) do types[s.name] = s.type end
      assert.same({ legacy = "sse", typed = "http", gone = "sse" }, types)
      -- an explicit type is kept: the 405 is that server's error
      local st, err = hub:state("typed")
      assert.equals("failed", st)
      assert.equals(405, err.cause.status_code)
      -- a 404 is tried as legacy too; that fails as well, with the legacy transport's error
      st, err = hub:state("gone")
      assert.equals("failed", st)
      assert.equals("transport", err.kind)
      local legacy_gets = 0
      for _, r in ipairs(H.state(srv).requests) do
        if r.http_method == "GET" and r.path == "/sse" then legacy_gets = legacy_gets + 1 end
      end
      assert.equals(1, legacy_gets)
      hub:close()
    end)

    it("client:reconnect() starts a new HTTP session", function()
      if not srv then pending("node or curl missing"); return end
      local c = assert(mcp.create_http_client(srv.url, { auto_reinitialize = false }))
      H.control(srv, { reset = true })
      local _, err = c:ping()
      assert.equals(404, err.status_code)
      assert(c:reconnect())
      assert(c:ping())
      c:close()
    end)
  end)

  it("follows server-everything restarted on the same port (400 'No valid session ID')", function()
    local ev = H.start_everything("streamableHttp")
    if not ev then pending("server-everything unavailable"); return end
    local hub = assert(mcp.hub({ mcpServers = { ev = { type = "http", url = ev.base .. "/mcp" } } }))
    assert.equals("ready", hub:state("ev"))
    assert(hub:call_tool("ev__echo", { message = "before" }))
    H.stop_everything(ev)
    helper.wait_dead(ev.pid, helper.ms(5000))
    local ev2 = H.start_everything_on(ev.port, "streamableHttp")
    assert.truthy(ev2, "server-everything did not come back on its port")
    local res, err = hub:call_tool("ev__echo", { message = "after" })
    H.stop_everything(ev2)
    hub:close()
    assert.is_nil(err)
    assert.truthy(helper.has(res.content[1].text, "after"))
  end)

  it("runs inside a task with wait = false, and disable/enable", function()
    local out = {}
    mcp.spawn(function()
      local hub = assert(mcp.hub({ mcpServers = { a = server(), b = server() } }, { wait = false }))
      out.initial = hub:state("a")
      out.settled = hub:wait()
      hub:disable("b")
      out.disabled = hub:state("b")
      out.tools = #hub:list_tools()
      hub:enable("b")
      out.enabled = hub:state("b")
      out.echo = hub:call_tool("b__echo", { message = "in task" }).content[1].text
      hub:close()
    end)
    mcp.run()
    assert.same({ initial = "connecting", settled = true, disabled = "disabled", tools = 18, enabled = "ready",
      echo = "in task" }, out)
  end)

  it("enable() asks a disabled server's ${input:...} as the file declares it (password, description)", function()
    local asked = {}
    local hub = assert(mcp.hub({
      servers = { late = { command = LUA, args = { T, "--name=${input:name}" }, disabled = true } },
      inputs = { { id = "name", type = "promptString", description = "The server's name", password = true } },
    }, { on_input = function(input) asked[#asked + 1] = input; return "from-input" end }))
    assert.equals(0, #asked) -- a disabled server is not interpolated
    hub:enable("late")
    assert.equals("ready", hub:state("late"))
    assert.equals(1, #asked)
    assert.equals("name", asked[1].id)
    assert.is_true(asked[1].password)
    assert.equals("The server's name", asked[1].description)
    assert.equals("late", asked[1].server)
    hub:close()
  end)

  it("enable() interpolates a server disabled in the config", function()
    local hub = assert(mcp.hub({ mcpServers = { late = { command = "${LUA_CMD}", args = { T }, disabled = true } } },
      { env = { LUA_CMD = LUA } }))
    assert.equals("disabled", hub:state("late"))
    hub:enable("late")
    assert.equals("ready", hub:state("late"))
    hub:close()
  end)

  it("a server whose entry cannot be read fails alone: the others start; restart() reads it again", function()
    local vars, reported = {}, {}
    local rec = recorder()
    local hub = assert(mcp.hub({ mcpServers = {
      a = server("--name=a"),
      bad = { command = "x", args = "y" },
      needs = { command = LUA, args = { T, "--name=${LUA_MCP_HUB_SPEC_NAME}" } },
    } }, { on_state = rec.on_state, on_error = function(e) reported[#reported + 1] = e end,
      env = vars }))
    helper.drain()
    assert.equals("ready", hub:state("a"))
    local st, err = hub:state("bad")
    assert.equals("failed", st)
    assert.equals("config", err.kind)
    assert.equals("bad", err.server)
    assert.equals("args", err.field)
    st, err = hub:state("needs")
    assert.equals("failed", st)
    assert.equals("config", err.kind)
    assert.truthy(helper.has(err.message, "LUA_MCP_HUB_SPEC_NAME is not set"), err.message)
    assert.truthy(rec.index("needs:failed"))
    local seen = {}
    for _, e in ipairs(reported) do seen[e.server] = e.kind end
    assert.same({ bad = "config", needs = "config" }, seen)
    assert.truthy(contains(names(hub:list_tools()), "a__echo"))
    local _, cerr = hub:call_tool("needs__echo", { message = "x" }, {})
    assert.equals("not_found", cerr.kind)
    -- the variable is set now: restart interpolates the entry again and the server starts
    vars.LUA_MCP_HUB_SPEC_NAME = "late"
    hub:restart("needs")
    assert.equals("ready", hub:state("needs"))
    assert.equals("hi", hub:call_tool("needs__echo", { message = "hi" }).content[1].text)
    -- still wrong: restart leaves it failed, with the error again
    hub:restart("bad")
    st, err = hub:state("bad")
    assert.equals("failed", st)
    assert.equals("args", err.field)
    hub:close()
  end)

  it("returns the config error of the file itself, and raises on misuse", function()
    local hub, err = mcp.hub({ mcpServers = 5 })
    assert.is_nil(hub)
    assert.equals("config", err.kind)
    assert.equals("mcpServers", err.field)
    assert.has_error(function() mcp.hub({ mcpServers = {} }, { on_state = 1 }) end,
      "mcp.hub: option 'on_state' must be a function, got number")
    assert.has_error(function() mcp.hub({ mcpServers = {} }, { typo = 1 }) end, "mcp.hub: unknown option 'typo'")
  end)
end)

describe("mcp.hub auth_provider #auth", function()
  local A = require("auth_helper")
  local srv = A.serve()
  if not srv then return end

  it("gives each HTTP server without static tokens the host's provider: a 401 logs in", function()
    local asked = {}
    local hub = assert(mcp.hub({ mcpServers = {
      secure = { url = srv.url },
      static = { url = srv.url, oauth = { access_token = "not-a-token" } },
      local_one = server(),
    } }, {
      restart = { max = 0 },
      auth_provider = function(name, spec)
        asked[#asked + 1] = name .. " " .. spec.url
        return A.provider(srv, { store = mcp.auth.memory_store() })
      end,
    }))
    assert.same({ "secure " .. srv.url }, asked)
    assert.equals("ready", hub:state("secure"))
    assert.truthy(contains(names(hub:list_tools()), "secure__whoami"))
    assert.equals("ready", hub:state("local_one"))
    hub:close()
  end)

  it("without it a 401 fails the server", function()
    local hub = assert(mcp.hub({ mcpServers = { secure = { url = srv.url } } }, { restart = { max = 0 } }))
    assert.equals("failed", hub:state("secure"))
    hub:close()
    assert.has_error(function() mcp.hub({ mcpServers = {} }, { auth_provider = {} }) end,
      "mcp.hub: option 'auth_provider' must be a function, got table")
  end)
end)
