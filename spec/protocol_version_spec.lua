-- Client config `protocol_version`: the version asked for in initialize (the conformance client
-- passes MCP_CONFORMANCE_PROTOCOL_VERSION through it).
local mcp = require("mcp")
local helper = require("helper")

local function initialize_params(c)
  local res = assert(c:call_tool("last_initialize", {}))
  return res.structuredContent
end

describe("client config protocol_version", function()
  it("defaults to mcp.PROTOCOL_VERSION", function()
    local c = assert(helper.test_server({}))
    finally(function() c:close() end)
    assert.are.equal(mcp.PROTOCOL_VERSION, initialize_params(c).protocolVersion)
  end)

  for _, v in ipairs(mcp.STATEFUL_PROTOCOL_VERSIONS) do
    it("asks for " .. v .. " and negotiates it", function()
      local c = assert(helper.test_server({}, { protocol_version = v }))
      finally(function() c:close() end)
      assert.are.equal(v, initialize_params(c).protocolVersion)
      assert.are.equal(v, c:protocol_version())
    end)
  end

  it("2026-07-28 against a legacy server: the probe falls back to initialize with the latest legacy version", function()
    local c = assert(helper.test_server({}, { protocol_version = "2026-07-28" }))
    finally(function() c:close() end)
    assert.are.equal(mcp.LATEST_LEGACY_PROTOCOL_VERSION, initialize_params(c).protocolVersion)
    assert.are.equal(mcp.LATEST_LEGACY_PROTOCOL_VERSION, c:protocol_version())
  end)

  it("an unknown version: connect fails with kind config naming it", function()
    local c, err = helper.test_server({}, { protocol_version = "1999-01-01" })
    assert.is_nil(c)
    assert.are.equal("config", err.kind)
    assert.is_truthy(helper.has(err.message, "1999-01-01"), err.message)
  end)

  it("a non-string version is misuse and raises", function()
    assert.has_error(function() mcp.new_client(mcp.stdio_transport({ command = "true" }), { protocol_version = 20251125 }) end)
  end)
end)

describe("discover_result_server_info", function()
  it("reads name, version and title from the DiscoverResult _meta", function()
    local r = { supportedVersions = { "2026-07-28" }, _meta = { ["io.modelcontextprotocol/serverInfo"] = { name = "s", version = "1", title = "S" } } }
    assert.same({ name = "s", version = "1", title = "S" }, mcp.discover_result_server_info(r))
  end)
  it("is nil without a name or a version", function()
    assert.is_nil(mcp.discover_result_server_info({ _meta = { ["io.modelcontextprotocol/serverInfo"] = { name = "s" } } }))
    assert.is_nil(mcp.discover_result_server_info({}))
    assert.is_nil(mcp.discover_result_server_info(nil))
  end)
end)
