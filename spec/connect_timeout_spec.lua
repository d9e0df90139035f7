-- The first connect of a stdio server is bounded by 60 s (a cold `npx -y` start downloads its
-- package first), not by request_timeout_ms; connect_timeout_ms still bounds it when given.
local helper = require("helper")
local protocol = require("mcp.protocol")

-- A server that answers initialize 1.5 s late; protocol_version: initialize at once, no probe.
local function connect(opts)
  opts.protocol_version = "2025-11-25"
  return helper.test_server({ "--init-delay-ms=1500" }, opts)
end

describe("the stdio connect timeout", function()
  it("defaults to 60 s for the first connect, whatever request_timeout_ms is", function()
    assert.equals(60000, protocol.DEFAULT_STDIO_CONNECT_TIMEOUT_MS)
    local c, err = connect({ request_timeout_ms = 200 })
    assert.is_nil(err)
    assert.truthy(c:ping())
    c:close()
  end)

  it("is connect_timeout_ms when given", function()
    local c, err = connect({ request_timeout_ms = 60000, connect_timeout_ms = 200 })
    assert.is_nil(c)
    assert.equals("timeout", err.kind)
  end)
end)
