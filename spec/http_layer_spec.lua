-- The shared HTTP layer (src/transports/http_transport.c) knows neither protocol (issue 24, item
-- 3): what streamable HTTP, legacy SSE and the 2026-07-28 protocol decide, and the state only one
-- of them has, are theirs (streamable_http.c, legacy_sse.c), reached through mcp_http_proto.
local helper = require("helper")

-- The C source without its comments.
local function code_of(path)
  local s = helper.read_file(helper.root .. "/" .. path)
  s = s:gsub("/%*.-%*/", " ")
  return (s:gsub("//[^\n]*", ""))
end

describe("the shared HTTP layer (http_transport.c)", function()
  it("names no protocol version, no MCP method and neither protocol's own state", function()
    local code = code_of("src/transports/http_transport.c")
    for _, pattern in ipairs({
      "20%d%d%-%d%d%-%d%d", -- a protocol version: the era's decisions are a protocol's
      "notifications/", -- an MCP method
      "mcp_streamable_http", "mcp_legacy_sse", -- the protocols by name
      "%->endpoint", -- legacy SSE's endpoint
      "inbound_last_id", "inbound_wanted", "empty_streams", "%->resumes", "reconnect_timer", -- streamable HTTP's
    }) do
      local at = code:find(pattern)
      assert.is_nil(at, "http_transport.c matches " .. pattern .. ": "
        .. (at and code:sub(math.max(1, at - 60), at + 60) or ""))
    end
  end)

  it("holds no protocol's own state in the shared object (mcp_http): each protocol's object has it", function()
    local struct = code_of("src/transports/http_internal.h"):match("typedef struct mcp_http {(.-)} mcp_http;")
    assert.truthy(struct, "http_internal.h has no struct mcp_http")
    for _, field in ipairs({ "endpoint", "ready", "inbound_last_id", "inbound_wanted", "inbound_retry_ms",
      "empty_streams", "reconnects", "reconnect_timer", "resumes" }) do
      assert.is_nil(struct:find("[%s%*]" .. field .. "%s*;"), "mcp_http has the field " .. field)
    end
  end)

  it("and the protocols reach each other only through it", function()
    assert.is_nil(code_of("src/transports/streamable_http.c"):find("mcp_legacy_sse"))
    assert.is_nil(code_of("src/transports/legacy_sse.c"):find("mcp_streamable_http"))
  end)
end)
