-- Per-call timeouts: timeout_ms = 0 (no timeout), reset_timeout_on_progress and
-- max_total_timeout_ms (lua/mcp/deadline.lua), against spec/fixtures/test_server.lua. The margins
-- are wide (a gap between progress reports is less than half the timeout), and they scale under
-- sanitizers; no assertion is on elapsed time.
local mcp = require("mcp")
local helper = require("helper")

local function server(opts)
  local c = assert(helper.test_server({}, opts))
  finally(function() c:close() end)
  return c
end

describe("per-call timeouts", function()
  it("timeout_ms = 0 means no timeout, whatever request_timeout_ms says", function()
    local c = server({ request_timeout_ms = helper.ms(100), connect_timeout_ms = helper.ms(30000) })
    local res, err = c:call_tool("sleep", { ms = helper.ms(400) })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    res = assert(c:call_tool("sleep", { ms = helper.ms(400) }, { timeout_ms = 0 }))
    assert.is_false(res.isError == true)
  end)

  it("a call that keeps reporting progress outlives its timeout with reset_timeout_on_progress", function()
    local c = server()
    local args = { steps = 5, delay_ms = helper.ms(300) }
    local seen = 0
    local res = assert(c:call_tool("progress", args, {
      timeout_ms = helper.ms(800), reset_timeout_on_progress = true,
      on_progress = function() seen = seen + 1 end,
    }))
    assert.are.equal(5, res.structuredContent.notifications)
    assert.are.equal(5, seen)
    -- the same call without the option cannot last 5 x 300 ms (last: the server is busy afterwards)
    local err
    res, err = c:call_tool("progress", args, { timeout_ms = helper.ms(800) })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
  end)

  it("reset_timeout_on_progress asks for progress even without on_progress", function()
    local c = server()
    local res = assert(c:call_tool("progress", { steps = 4, delay_ms = helper.ms(300) },
      { timeout_ms = helper.ms(800), reset_timeout_on_progress = true }))
    assert.are.equal(4, res.structuredContent.notifications)
  end)

  it("max_total_timeout_ms ends the call whatever progress it reports, and cancels it", function()
    local c = server()
    local res, err = c:call_tool("progress", { steps = 20, delay_ms = helper.ms(200) }, {
      timeout_ms = helper.ms(2000), reset_timeout_on_progress = true, max_total_timeout_ms = helper.ms(1000),
    })
    assert.is_nil(res)
    assert.are.equal("timeout", err.kind)
    assert.is_nil(err.code)
    assert.matches("max_total_timeout_ms", err.message, 1, true)
    local cancelled = assert(c:call_tool("cancelled", {}))
    assert.are.equal(1, #cancelled.structuredContent.ids)
    assert.matches("max_total_timeout_ms", cancelled.structuredContent.reasons[1], 1, true)
    -- the client goes on working
    assert.are.equal("ok", assert(c:call_tool("echo", { message = "ok" })).content[1].text)
  end)

  it("a timer-driven call still completes normally and can be cancelled by its token", function()
    local c = server()
    assert(c:call_tool("echo", { message = "x" }, { max_total_timeout_ms = helper.ms(5000) }))
    local token = mcp.cancel_token()
    mcp.spawn(function()
      mcp.sleep(helper.ms(200))
      token:cancel("user")
    end)
    local res, err = c:call_tool("hang", {}, { cancel = token, max_total_timeout_ms = helper.ms(20000) })
    assert.is_nil(res)
    assert.are.equal("cancelled", err.kind)
  end)

  it("refuses bad timeout options", function()
    local c = server()
    assert.has_error(function() c:call_tool("echo", {}, { timeout_ms = -1 }) end)
    assert.has_error(function() c:call_tool("echo", {}, { timeout_ms = "5" }) end)
    assert.has_error(function() c:call_tool("echo", {}, { max_total_timeout_ms = 0 }) end)
    assert.has_error(function() c:call_tool("echo", {}, { reset_timeout_on_progress = 1 }) end)
  end)
end)
