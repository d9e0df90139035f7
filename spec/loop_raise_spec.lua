--- A loop callback that raises: what a callback's own error does (reported where its errors go),
--- and what escapes one (core._raise_in_step, test builds: a C callback that raises; out of
--- memory making a callback's arguments, core._alloc_fail_above): the step raises it, the loop is
--- not left running, and the next core.step, mcp.loop.step, mcp.run() and blocking call work.
local mcp = require("mcp")
local helper = require("helper")
local core = mcp.core
local sched = require("mcp.sched")

-- The process's stderr (descriptor 2) while fn runs, as a string; fn's pcall results follow.
local function stderr_of(fn)
  local path = os.tmpname()
  core._stderr_capture(path)
  local res = { pcall(fn) }
  core._stderr_restore()
  local text = helper.read_file(path)
  os.remove(path)
  return text, (table.unpack or unpack)(res) -- luacheck: ignore 143
end

describe("a timer callback that raises", function()
  it("is reported on stderr; the next core.step works and the other timers fire", function()
    local fired = {}
    core.timer(0, function() fired[#fired + 1] = "before" end)
    core.timer(0, function() error("timer boom", 0) end)
    core.timer(0, function() fired[#fired + 1] = "after" end)
    local text, ok, err = stderr_of(function() core.step(0) end)
    assert.is_true(ok, tostring(err))
    assert.truthy(text:find("mcp: timer callback failed: timer boom", 1, true), text)
    assert.same({ "before", "after" }, fired)
    core.timer(0, function() fired[#fired + 1] = "next" end)
    core.step(0)
    assert.same({ "before", "after", "next" }, fired)
  end)
end)

describe("an error that escapes a loop callback", function()
  it("comes out of core.step; the next step works and the timers due after it fire", function()
    local fired = {}
    core.timer(0, function() fired[#fired + 1] = 1 end)
    core._raise_in_step("escaped 1")
    core.timer(0, function() fired[#fired + 1] = 2 end)
    local ok, err = pcall(core.step, 0)
    assert.is_false(ok)
    assert.equal("escaped 1", err)
    assert.same({ 1 }, fired)
    local ok2, err2 = pcall(core.step, 0) -- (it raised "the loop is already running")
    assert.is_true(ok2, tostring(err2))
    assert.same({ 1, 2 }, fired)
    -- and again: nothing of the first is left over
    core._raise_in_step("escaped 2")
    assert.equal("escaped 2", select(2, pcall(core.step, 0)))
    assert.is_true((pcall(core.step, 0)))
  end)

  it("after it (a bounded step), a step from inside a loop callback is still refused", function()
    core._raise_in_step("escaped in a budgeted step")
    assert.is_false((pcall(core.step, 0, 5)))
    -- (the running mark is set again by each step)
    local inner
    core.timer(0, function() inner = { pcall(core.step, 0) } end)
    core.step(0)
    assert.is_false(inner[1])
    assert.truthy(tostring(inner[2]):find("already running", 1, true), tostring(inner[2]))
  end)

  it("mcp.loop.step raises it, then goes on: a task waiting on a timer is resumed", function()
    local done = false
    mcp.spawn(function()
      mcp.sleep(1)
      done = true
    end)
    mcp.loop.step(0) -- (the task starts and waits on its timer)
    core._raise_in_step("escaped in mcp.loop.step")
    local ok, err = pcall(mcp.loop.step, 0)
    assert.is_false(ok)
    assert.equal("escaped in mcp.loop.step", err)
    assert.is_true(helper.wait_until(function() return done end, helper.ms(2000)))
    assert.equal(0, sched.live())
  end)

  it("mcp.run() raises it; the next mcp.run() finishes the tasks", function()
    local done = 0
    for _ = 1, 3 do
      mcp.spawn(function()
        mcp.sleep(5)
        done = done + 1
      end)
    end
    core._raise_in_step("escaped in mcp.run")
    local ok, err = pcall(mcp.run)
    assert.is_false(ok)
    assert.equal("escaped in mcp.run", err)
    mcp.run() -- (it raised "the loop is already running")
    assert.equal(3, done)
    assert.equal(0, sched.live())
  end)

  it("a blocking wait raises it; the next blocking call works", function()
    core._raise_in_step("escaped in a blocking wait")
    local ok, err = pcall(mcp.sleep, 1) -- (outside a task: blocks on the loop)
    assert.is_false(ok)
    assert.equal("escaped in a blocking wait", err)
    mcp.sleep(1) -- (raised "the loop is already running")
    local fired = false
    core.timer(0, function() fired = true end)
    assert.is_true(sched.wait_until(function() return fired end, helper.ms(2000)))
  end)
end)

describe("out of memory making a C callback's arguments", function()
  -- every Lua allocation over LIMIT bytes fails while fn runs
  local LIMIT = 16 * 1024
  local function limited(fn)
    core._alloc_fail_above(LIMIT)
    local res = { pcall(fn) }
    core._alloc_fail_above(nil)
    return (table.unpack or unpack)(res) -- luacheck: ignore 143
  end

  it("a stderr line too large to make: reported as the stderr callback's failure, the next lines come", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    local got = {}
    -- a 40000-byte line, then "after"; then it waits for its stdin to close
    local script = [[io.stderr:write(string.rep("x", 40000), "\nafter\n"); io.stderr:flush(); io.read("*a")]]
    local h = core.stdio_transport({
      command = helper.lua_cmd(), args = { "-e", script }, env = { "PATH=" .. (os.getenv("PATH") or "") },
      stderr = function(line) got[#got + 1] = line end,
    })
    assert(h:start())
    local text, ok, err = stderr_of(function()
      assert(limited(function()
        local deadline = core.now_ms() + helper.ms(5000)
        while #got == 0 and core.now_ms() < deadline do core.step(100) end
      end))
    end)
    assert.is_true(ok, tostring(err)) -- (core.step raised "not enough memory", then "already running")
    assert.same({ "after" }, got)
    assert.truthy(text:find("mcp: stderr callback failed: not enough memory", 1, true), text)
    h:close()
    assert.is_true(helper.wait_until(function() return h:reaped() end, helper.ms(5000)))
  end)

  it("a message too large to hand to a Lua transport's send: the call fails with it, the next call works", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    local memory_server = require("fixtures.memory_server")
    local a, b = mcp.memory_transport_pair()
    memory_server.new(b)
    local c = assert(mcp.create_client({ client_name = "big" }, a))
    local big = string.rep("y", 40000)
    local ok, res, err = limited(function() return c:call_tool("echo", { message = big }) end)
    assert.is_true(ok, tostring(res)) -- (core.step raised "not enough memory", then "already running")
    assert.is_nil(res)
    assert.truthy(tostring(err):find("not enough memory", 1, true), tostring(err))
    assert.equal("small", assert(c:call_tool("echo", { message = "small" })).content[1].text)
    c:close()
  end)

  it("a failed request's details too large to make: the call still fails, with the transport's message", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    local json = require("mcp.json")
    local body = string.rep("z", 40000)
    local errors = {}
    local t = {}
    function t:start(events)
      self.events = events
      return true
    end
    function t:send(text)
      local m = json.decode(text)
      if m.method == "initialize" then
        self.events.message(json.encode({ jsonrpc = "2.0", id = m.id, result = {
          protocolVersion = mcp.PROTOCOL_VERSION, capabilities = json.object(), serverInfo = { name = "s", version = "1" } } }))
      elseif m.method == "tools/call" then
        self.events.error({ message = "refused by the peer", status_code = 500, response_body = body }, m.id)
      end
      return true
    end
    function t:close() end
    local c = assert(mcp.create_client({ client_name = "fail", on_error = function(e) errors[#errors + 1] = e end }, t))
    local ok, res, err = limited(function() return c:call_tool("echo", { message = "x" }) end)
    assert.is_true(ok, tostring(res)) -- (the request was dropped: "nothing is in flight (deadlock)")
    assert.is_nil(res)
    assert.equal("transport", err.kind)
    assert.truthy(tostring(err.message):find("refused by the peer", 1, true), tostring(err.message))
    assert.equal(1, #errors) -- (and on_error is told)
    assert.truthy(tostring(errors[1].message or errors[1]):find("refused by the peer", 1, true))
    -- with memory, the same failure keeps its details
    local res2, err2 = c:call_tool("echo", { message = "x" })
    assert.is_nil(res2)
    assert.equal(500, err2.status_code)
    assert.equal(body, err2.response_body)
    c:close()
  end)
end)

describe("out of memory making the HTTP request hook's arguments #http", function()
  local H = require("http_helper")
  local srv = H.serve("")
  if not srv then return end
  local LIMIT = 16 * 1024
  local UNAUTHORIZED = { status = 401, headers = { ["WWW-Authenticate"] = 'Bearer error="invalid_token"' } }

  it("a 401 whose body is too large to hand to `refused`: reported, the call fails, the hook runs again later", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    local refreshed = 0
    local c = assert(mcp.create_http_client(srv.url, {
      request_timeout_ms = helper.ms(20000),
      oauth = { access_token = "first", refresh_token_fn = function() refreshed = refreshed + 1; return "second", 60 end },
    }))
    local big = { status = 401, headers = UNAUTHORIZED.headers, body = string.rep("z", 40000) }
    H.control(srv, { fail_next = { big } })
    local text, ok, res, err = stderr_of(function()
      core._alloc_fail_above(LIMIT)
      local r = { pcall(c.call_tool, c, "echo", { message = "hi" }) }
      core._alloc_fail_above(nil)
      assert(r[1], r[2]) -- (core.step raised "not enough memory")
      return r[2], r[3]
    end)
    assert.is_true(ok, tostring(res))
    assert.is_nil(res)
    assert.truthy(err, "an error")
    assert.truthy(text:find("mcp: HTTP transport request hook failed: not enough memory", 1, true), text)
    assert.equal(0, refreshed)
    -- the hook is not left running: the next 401 is refreshed and sent again
    H.control(srv, { fail_next = { UNAUTHORIZED } })
    assert.equal("again", assert(c:call_tool("echo", { message = "again" })).content[1].text)
    assert.equal(1, refreshed)
    c:close()
  end)
end)
