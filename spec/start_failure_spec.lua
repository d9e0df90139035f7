-- A stdio server that cannot start at all (exit status 127: command not found; or any exit before
-- it read the probe from its stdin) is started once: the discovery probe's restart would only
-- print its errors a second time.
local mcp = require("mcp")
local helper = require("helper")

describe("a stdio server that fails at start", function()
  it("is not started again after the probe (its stderr shows once)", function()
    local lines = {}
    local c, err = mcp.create_stdio_client("sh", { "-c", "echo boom >&2; exit 127" },
      { stderr = function(line) lines[#lines + 1] = line end, request_timeout_ms = 30000 })
    assert.is_nil(c)
    assert.truthy(err.message:find("exited with status 127", 1, true), err.message)
    local booms = 0
    for _, l in ipairs(lines) do if l:find("boom", 1, true) then booms = booms + 1 end end
    assert.equals(1, booms)
  end)

  it("a server that exits otherwise on the probe is still restarted once for initialize", function()
    local c, err = helper.test_server({ "--on-discover=exit" })
    assert.is_nil(err)
    assert.truthy(c:ping())
    c:close()
  end)

  it("a server that dies at start, before reading the probe, is not started again: its exit is the connect error", function()
    local starts = os.tmpname()
    local c
    finally(function() -- one finally(): busted keeps only the last one of a test
      if c then c:close() end
      os.remove(starts)
    end)
    local errs, lines = {}, {}
    local t = mcp.stdio_transport({ command = "sh", args = { "-c", "echo started >> \"$0\"; echo boom >&2; exit 1", starts },
                                    stderr = function(line) lines[#lines + 1] = line end })
    c = mcp.new_client(t, { on_error = function(e) errs[#errs + 1] = e end })
    local ok, err = c:connect()
    assert.is_nil(ok)
    assert.are.equal("closed", err.kind)
    assert.are.equal("server/discover", err.method)
    assert.is_truthy(helper.has(err.message, "exited with status 1 before reading its input"), err.message)
    assert.are.equal(t, c.transport) -- no second transport
    local fh = assert(io.open(starts, "rb"))
    assert.are.equal("started\n", fh:read("*a"))
    fh:close()
    assert.is_true(helper.wait_until(function() return #lines > 0 end, helper.ms(2000)))
    assert.are.same({ "boom" }, lines)
    assert.are.same({}, errs) -- no "restarted it once" report
  end)

  it("the close says whether the server read its input (the stdin pipe's unread bytes)", function()
    local function close_reason(script)
      local c, err = mcp.create_stdio_client("sh", { "-c", script },
        { stderr = "discard", protocol_version_discovery = false, request_timeout_ms = helper.ms(30000) })
      assert.is_nil(c)
      return err.message
    end
    local msg = close_reason("exit 3")
    assert.truthy(msg:find("exited with status 3 before reading its input", 1, true), msg)
    msg = close_reason("read line; exit 3")
    assert.truthy(msg:find("exited with status 3", 1, true), msg)
    assert.falsy(msg:find("before reading", 1, true), msg)
  end)

  -- The poll(2) backend could see the exit before the stderr pipe's last bytes (about one start in
  -- three): the lines were dropped with the pipe, and mcp-lua printed no "server stderr:" block.
  it("hands over what the server wrote on stderr before it died, before the connect fails", function()
    for _ = 1, 20 do
      local lines = {}
      local c = mcp.create_stdio_client("sh", { "-c", "echo boom >&2; exit 1" },
        { stderr = function(line) lines[#lines + 1] = line end })
      assert.is_nil(c)
      assert.are.same({ "boom" }, lines)
    end
  end)
end)
