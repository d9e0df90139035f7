-- A stdio server that cannot start at all (exit status 127: command not found) is started once:
-- the discovery probe's restart would only print its errors a second time.
local mcp = require("mcp")

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
    local helper = require("helper")
    local c, err = helper.test_server({ "--on-discover=exit" })
    assert.is_nil(err)
    assert.truthy(c:ping())
    c:close()
  end)
end)
