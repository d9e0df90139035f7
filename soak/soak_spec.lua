-- The soak and fault suite (`make soak`, soak/README.md): long runs judged by plateaus of RSS,
-- C heap, Lua heap and descriptors after warm-up; connect/close churn; crash storms with calls in
-- flight; descriptor limits; big results and their release; floods; a server that never reads;
-- signal storms; HTTP sessions lost and found again. Counts scale with SOAK_SCALE.
local mcp = require("mcp")
local helper = require("helper")
local bounds = require("hostile.bounds")
local H = require("http_helper")
local m = require("measure")

local function stdio(opts)
  return assert(helper.test_server(nil, opts))
end

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function pid_of_self()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  return pid
end

describe("soak: stdio", function()
  it("sequential calls on one client: memory and descriptors plateau", function()
    local c = stdio()
    local ok, why = m.plateau("sequential calls", m.n(20000), function(i)
      local r = assert(c:call_tool("echo", { message = "m" .. i }))
      assert(r.content[1].text == "m" .. i)
    end)
    c:close()
    assert(ok, why)
  end)

  it("connect/close churn gives back every descriptor and byte", function()
    local ok, why = m.plateau("connect/close churn", m.n(200), function()
      local c = stdio()
      assert(c:ping())
      c:close()
    end)
    assert(ok, why)
    assert.equal(0, bounds.reap_all())
  end)

  it("a server killed with 20 calls in flight: every call is answered, nothing is left", function()
    local ok, why = m.plateau("crash storm", m.n(50), function()
      local c = stdio()
      local answered, kinds = 0, {}
      for _ = 1, 20 do
        mcp.spawn(function()
          local res, err = c:call_tool("sleep", { ms = 60000 })
          assert(res == nil)
          kinds[err.kind] = true
          answered = answered + 1
        end)
      end
      mcp.loop.step(0)
      helper.kill(c.transport:pid(), "KILL")
      assert(helper.wait_until(function() return answered == 20 end, helper.ms(20000)), "calls left unanswered")
      for kind in pairs(kinds) do assert(kind == "closed", kind) end
      c:close()
    end)
    assert(ok, why)
    assert.equal(0, bounds.reap_all())
  end)

  it("many servers in one process", function()
    local n = m.n(100)
    local clients, done = {}, 0
    local before = m.sample()
    for i = 1, n do
      mcp.spawn(function()
        clients[i] = stdio()
        done = done + 1
      end)
    end
    assert(helper.wait_until(function() return done == n end, helper.ms(120000)))
    for i = 1, n do assert.equal("s" .. i, clients[i]:call_tool("echo", { message = "s" .. i }).content[1].text) end
    for i = 1, n do clients[i]:close() end
    assert.equal(0, bounds.reap_all())
    local after = m.sample()
    assert.is_true(after.fds <= before.fds, ("fds %d -> %d"):format(before.fds, after.fds))
  end)

  it("big results are given back once dropped", function()
    local c = stdio()
    local size = 32 * 1024 * 1024
    local ok, why = m.plateau("big results", m.n(6), function()
      local r = assert(c:call_tool("big", { bytes = size }))
      assert(#r.content[1].text == size)
    end, { checkpoints = 6, warmup = 1 })
    c:close()
    assert(ok, why)
  end)

  it("a flood of notifications is delivered and costs nothing after", function()
    local c = stdio()
    local steps = m.n(30000)
    local ok, why = m.plateau("notification flood", 3, function()
      local seen = 0
      assert(c:call_tool("progress", { steps = steps }, {
        timeout_ms = helper.ms(120000), on_progress = function() seen = seen + 1 end,
      }))
      helper.wait_until(function() return seen == steps end, helper.ms(10000))
      assert(seen == steps, ("%d of %d notifications"):format(seen, steps))
    end, { checkpoints = 3, warmup = 1 })
    c:close()
    assert(ok, why)
  end)

  it("a server that never reads meets the write queue bound, again and again", function()
    local ok, why = m.plateau("server that never reads", m.n(5), function()
      local c = assert(bounds.stdio("ping_flood", { 200000 }, { max_write_queue = 64 * 1024 }))
      local err
      helper.wait_until(function()
        local res
        res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(200) })
        return res == nil and err.kind ~= "timeout"
      end, helper.ms(20000))
      assert(err and err.message:find("not reading its stdin", 1, true), tostring(err))
      c:close()
    end, { checkpoints = 5, warmup = 1 })
    assert(ok, why)
    assert.equal(0, bounds.reap_all())
  end)

  it("signal storms (SIGCHLD, SIGWINCH, SIGURG) do not lose a call", function()
    local c = stdio()
    local n = m.n(3000)
    local storm = io.popen(("sh -c %s"):format(shq(("for i in $(seq %d); do kill -s CHLD %s; kill -s WINCH %s; "
      .. "kill -s URG %s; done 2>/dev/null"):format(m.n(3000), pid_of_self(), pid_of_self(), pid_of_self()))))
    for i = 1, n do
      local r = assert(c:call_tool("echo", { message = "s" .. i }))
      assert(r.content[1].text == "s" .. i)
    end
    storm:close()
    c:close()
  end)
end)

describe("soak: descriptor limits", function()
  it("under ulimit -n 32, clients opened and closed one at a time never run out", function()
    local script = os.tmpname()
    helper.write_file(script, ([[
      local helper_server = %q
      local mcp = require("mcp")
      for i = 1, %d do
        local c, err = mcp.create_stdio_client(%q, { helper_server }, { stderr = "discard" })
        if not c then print("failed at " .. i .. ": " .. tostring(err)) os.exit(1) end
        assert(c:ping())
        c:close()
      end
      print("cycles ok")
    ]]):format(helper.test_server_path, m.n(100), helper.lua_cmd()))
    local cmd = ("ulimit -n 32; LUA_PATH=%s LUA_CPATH=%s exec %s %s 2>&1"):format(shq(package.path .. ";;"),
      shq(package.cpath .. ";;"), helper.lua_cmd(), shq(script))
    local p = assert(io.popen("sh -c " .. shq(cmd)))
    local out = p:read("*a")
    p:close()
    os.remove(script)
    assert.truthy(out:find("cycles ok", 1, true), out)
  end)
end)

describe("soak: HTTP #http", function()
  local srv = H.serve("", { reset = false })
  if not srv then return end

  it("sequential calls and lost sessions: every call answered, memory plateaus", function()
    local renewals = 0
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000),
      on_reconnect = function() renewals = renewals + 1 end }))
    local ok, why = m.plateau("HTTP calls with lost sessions", m.n(4000), function(i)
      if i % 40 == 0 then H.control(srv, { expire_session = (i % 80 == 0) and 400 or 404 }) end
      local r = assert(c:call_tool("echo", { message = "h" .. i }))
      assert(r.content[1].text == "h" .. i)
    end, { allow = { fds = 4 } })
    c:close()
    assert(ok, why)
    helper.wait_until(function() return renewals == math.floor(m.n(4000) / 40) end, helper.ms(5000))
    assert.equal(math.floor(m.n(4000) / 40), renewals)
  end)

  it("calls in flight at once all complete", function()
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(120000) }))
    local n, done, failed = m.n(1000), 0, {}
    for i = 1, n do
      mcp.spawn(function()
        local r, err = c:call_tool("echo", { message = "f" .. i })
        if not r or r.content[1].text ~= "f" .. i then failed[#failed + 1] = tostring(err) end
        done = done + 1
      end)
    end
    assert(helper.wait_until(function() return done == n end, helper.ms(300000)))
    assert.same({}, failed)
    c:close()
  end)
end)
