-- Hostile stdio servers: each case is bounded (memory, time, fds) and leaves a second client of
-- the same process (the bystander) working. Servers: spec/hostile/servers/stdio_server.lua.
local mcp = require("mcp")
local helper = require("helper")
local bounds = require("hostile.bounds")

describe("hostile stdio server", function()
  local bystander

  setup(function()
    bystander = assert(bounds.bystander())
  end)

  teardown(function()
    if bystander then bystander:close() end
    assert.are.equal(0, bounds.reap_all())
  end)

  after_each(function()
    bounds.assert_unharmed(bystander)
  end)

  it("flooding stderr neither delays a call's timeout nor grows memory without bound (defect 1)", function()
    local lines, dropped = 0, nil
    local c = assert(bounds.stdio("stderr_flood", { 3 }, {
      stderr = function(line)
        lines = lines + 1
        dropped = line:match("^mcp: (%d+) lines of server stderr dropped") or dropped
      end,
      max_stderr_lines = 200,
    }))
    local rss0 = bounds.rss_kb()
    local ms, r = bounds.timed(function() return { c:call_tool("flood", {}, { timeout_ms = 500 }) } end)
    local res, err = r[1][1], r[1][2]
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    -- Bound: the 500 ms timeout fires while the flood goes on (3 s), not after it.
    assert.is_true(ms < helper.ms(2000), "the timeout fired after " .. ms .. " ms")
    helper.wait_until(function() return not c:is_connected() or dropped ~= nil end, helper.ms(3000))
    assert.is_true(lines > 0)
    -- Bound: memory grows by far less than the flood (about 1.5 KB per line before).
    assert.is_true(bounds.rss_kb() - rss0 < 64 * 1024, "RSS grew by " .. (bounds.rss_kb() - rss0) .. " KiB")
    c:close()
  end)

  it("a spawned server inherits no fd of the host (defect 2)", function()
    local path = os.tmpname()
    local fh = assert(io.open(path, "w")) -- stdio's fopen: not close-on-exec
    local c = assert(bounds.stdio("fds"))
    local res = assert(c:call_tool("fds", {}))
    c:close()
    fh:close()
    os.remove(path)
    local extra, listed = {}, 0
    for fd, target in res.content[1].text:gmatch("(%d+)=([^;]*)") do
      assert.are_not.equal(path, target, "the server inherited the host's file " .. path)
      listed = listed + 1
      if tonumber(fd) > 2 then extra[#extra + 1] = fd .. "=" .. target end
    end
    -- The server lists its fds through os.execute (no fd of its own): 0-2 and nothing above.
    assert.are.equal(3, listed, res.content[1].text)
    assert.are.equal(0, #extra, table.concat(extra, " "))
  end)

  it("list_all_tools stops at max_pages when every page has a new cursor (defect 4)", function()
    local c = assert(bounds.stdio("cursor_forever", nil, { max_pages = 50 }))
    local tools, err = c:list_all_tools()
    assert.is_nil(tools)
    assert.are.equal("protocol", err.kind)
    assert.truthy(err.message:find("more than 50 pages", 1, true))
    -- The default bound applies without configuration, and per call.
    tools, err = c:list_all_tools({ max_pages = 3 })
    assert.is_nil(tools)
    assert.truthy(err.message:find("more than 3 pages", 1, true))
    assert.are.equal(1000, require("mcp.client").DEFAULT_MAX_PAGES)
    c:close()
  end)

  it("numbers beyond a double never make library functions raise (defect 5)", function()
    local c = assert(bounds.stdio("inf"))
    local res, err = c:call_tool("x", {})
    assert.is_nil(res)
    assert.are.equal("protocol", err.kind)
    assert.truthy(err.message:find("structuredContent", 1, true))
    local tools = assert(c:list_tools())
    local fp, ferr = mcp.fingerprint_tools(tools)
    assert.is_nil(fp)
    assert.are.equal("validation", ferr.kind)
    assert.truthy(ferr.message:find("big", 1, true))
    local drift, derr = mcp.detect_tool_drift(tools, tools)
    assert.is_nil(drift)
    assert.are.equal("validation", derr.kind)
    c:close()
  end)

  it("a server that never reads its stdin meets a bounded write queue with a clear error (defect 9)", function()
    local c = assert(bounds.stdio("ping_flood", { 200000 }, { max_write_queue = 64 * 1024 }))
    local rss0 = bounds.rss_kb()
    local err
    helper.wait_until(function()
      local res
      res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(200) })
      return res == nil and err.kind ~= "timeout"
    end, helper.ms(10000))
    assert.truthy(err and err.message:find("not reading its stdin", 1, true), tostring(err))
    assert.is_true(bounds.rss_kb() - rss0 < 32 * 1024, "RSS grew by " .. (bounds.rss_kb() - rss0) .. " KiB")
    c:close()
  end)

  it("ping answers dropped at a full write queue are reported once per episode, not once per ping", function()
    local errs = {}
    local c = assert(bounds.stdio("ping_flood", { 200000 }, {
      max_write_queue = 64 * 1024, on_error = function(e) errs[#errs + 1] = e end,
    }))
    local rss0 = bounds.rss_kb()
    -- The server reads its stdin again 5 s after its 200000 pings: a call answered then was
    -- read after every ping, so every ping answer has been sent or dropped by then.
    local res
    helper.wait_until(function()
      res = res or c:call_tool("x", {}, { timeout_ms = helper.ms(200) })
      return res ~= nil
    end, helper.ms(20000))
    assert.truthy(res, "the client did not become usable again")
    assert.are.equal("ok", res.content[1].text)
    local reports = {}
    for _, e in ipairs(errs) do
      if e.message:find("answer to a server ping was dropped", 1, true) then reports[#reports + 1] = e end
    end
    -- Before: 0 reports (dropped silently). Bound: one for the whole flood (thousands dropped).
    assert.are.equal(1, #reports, "ping drop reports: " .. #reports)
    assert.are.equal("transport", reports[1].kind)
    assert.truthy(reports[1].message:find("not reading its stdin", 1, true), reports[1].message) -- why
    assert.is_true(bounds.rss_kb() - rss0 < 32 * 1024, "RSS grew by " .. (bounds.rss_kb() - rss0) .. " KiB")
    assert.truthy(c:list_tools())
    c:close()
  end)

  it("close() also stops helpers in the server's process group when the server exits on EOF (defect 10)", function()
    local pidfile = os.tmpname()
    local c = assert(bounds.stdio("group_helper", { pidfile }))
    local pid
    helper.wait_until(function()
      local fh = io.open(pidfile, "r")
      pid = fh and tonumber(fh:read("*a"))
      if fh then fh:close() end
      return pid ~= nil
    end, helper.ms(5000))
    os.remove(pidfile)
    assert.is_number(pid)
    assert.is_true((helper.proc_exists(pid)))
    c:close()
    local state = helper.wait_dead(pid, helper.ms(3000))
    assert.is_true(state == "gone" or state == "Z", "the helper is still alive: " .. tostring(state))
  end)

  for _, where in ipairs({ "first", "last" }) do
    it("a response over max_message_size fails its call at once (id " .. where .. ")", function()
      local c = assert(bounds.stdio("oversize", { 300000, where }, { max_message_size = 64 * 1024 }))
      local res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(60000) })
      assert.is_nil(res)
      assert.are_not.equal("timeout", err.kind)
      assert.truthy(err.message:find("max_message_size", 1, true), tostring(err))
      -- The connection still works after the dropped message.
      assert.truthy(c:list_tools())
      c:close()
    end)
  end

  it("framing and JSON garbage is reported and skipped; the answer still arrives (CRLF, split)", function()
    local errs = {}
    local c = assert(bounds.stdio("framing", nil, { on_error = function(e) errs[#errs + 1] = e end }))
    local res = assert(c:call_tool("x", {}))
    assert.are.equal("ok", res.content[1].text)
    helper.wait_until(function() return #errs >= 4 end, helper.ms(2000))
    -- not JSON, the NUL byte, the deep nesting, the unknown id and the array: each reported.
    assert.is_true(#errs >= 4, "errors reported: " .. #errs)
    assert.truthy(c:list_tools())
    c:close()
  end)

  it("a server exiting in the middle of a response fails the call at once with its exit status", function()
    local c = assert(bounds.stdio("exit_midline"))
    local res, err = c:call_tool("x", {}, { timeout_ms = helper.ms(60000) })
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
    assert.truthy(err.message:find("exited with status 0", 1, true), tostring(err))
    c:close()
  end)

  it("a server that ignores stdin EOF and SIGTERM is killed and reaped by close() (bounded)", function()
    local c = assert(mcp.create_stdio_client("sh",
      { "-c", "trap '' TERM; exec \"$0\" \"$@\"", helper.lua_cmd(), bounds.server, "stubborn" },
      { stderr = "discard" }))
    local pid = c.transport:pid()
    assert.truthy(c:list_tools())
    local ms = bounds.timed(function() c:close() end)
    -- Bound: 2 s grace after EOF, SIGTERM (ignored), 2 s, SIGKILL: about 4 s, never forever.
    assert.is_true(ms < helper.ms(8000), "close took " .. ms .. " ms")
    assert.is_false((helper.proc_exists(pid)))
  end)
end)
