-- A request that times out names the last line the server wrote that was not JSON-RPC (a log
-- line on stdout is the usual cause of a stdio server that "never answers"), escaped and bounded.
local helper = require("helper")

describe("a timeout", function()
  it("names the server's last line that was not JSON-RPC", function()
    local c, err = helper.test_server({ "--garbage" })
    assert.is_nil(err)
    local res
    res, err = c:call_tool("hang", {}, { timeout_ms = 200 })
    assert.is_nil(res)
    assert.equals("timeout", err.kind)
    assert.truthy(err.message:find("request timed out after 200 ms; the last line the server wrote that was not "
      .. 'JSON-RPC: {"escaped":"a\\x5c"b\\x5cnc" oops}', 1, true), err.message)
    c:close()
  end)

  it("says nothing more when the server wrote only JSON-RPC", function()
    local c, err = helper.test_server()
    assert.is_nil(err)
    local res
    res, err = c:call_tool("hang", {}, { timeout_ms = 200 })
    assert.is_nil(res)
    assert.equals("request timed out after 200 ms", err.message)
    c:close()
  end)
end)
