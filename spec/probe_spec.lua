-- Issue 32: what a host sees must not depend on the era chosen, and the era must not depend on
-- how fast the server starts. The server/discover probe's deadline (lua/mcp/probe.lua) and the
-- 2026-07-28 serverInfo (protocol.discover_result_server_info).
local mcp = require("mcp")
local helper = require("helper")

local MODERN = helper.fixtures .. "/modern_server.lua"

local function modern_server(args, opts)
  local argv = { MODERN }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  local o = { stderr = "discard", request_timeout_ms = helper.ms(30000) }
  for k, v in pairs(opts or {}) do o[k] = v end
  return mcp.create_stdio_client(helper.lua_cmd(), argv, o)
end

local function collect()
  local errs = {}
  return errs, function(e) errs[#errs + 1] = e end
end

local FULL = {
  description = "A server whose serverInfo has every field",
  websiteUrl = "https://example.invalid/lua-mcp",
  icons = { { src = "data:image/png;base64,iVBORw0KGgo=", mimeType = "image/png", sizes = { "16x16" } } },
}

describe("serverInfo keeps every field in both eras", function()
  local function check(c, name, title)
    for _, info in ipairs({ c:server_info(), c:initialize_result().serverInfo }) do
      assert.are.equal(name, info.name)
      assert.are.equal("0.1.0", info.version)
      assert.are.equal(title, info.title)
      assert.are.equal(FULL.description, info.description)
      assert.are.equal(FULL.websiteUrl, info.websiteUrl)
      assert.are.same(FULL.icons, info.icons)
    end
  end

  it("2026-07-28: description, icons and websiteUrl from the DiscoverResult _meta", function()
    local c = assert(modern_server({ "--full-info" }))
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    check(c, "lua-mcp-modern-server", "lua-mcp modern test server")
  end)

  it("legacy: the same fields from the InitializeResult", function()
    local c = assert(helper.test_server({ "--full-info" }))
    finally(function() c:close() end)
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    check(c, "lua-mcp-test-server", "lua-mcp test server")
  end)

  it("discover_result_server_info keeps unknown fields and copies the object", function()
    local info = { name = "s", version = "1", description = "d", websiteUrl = "https://x.invalid", extra = { 1 } }
    local got = mcp.discover_result_server_info({ _meta = { ["io.modelcontextprotocol/serverInfo"] = info } })
    assert.are.same(info, got)
    assert.are_not.equal(info, got)
  end)
end)

describe("the server/discover probe's deadline (stdio)", function()
  it("a 2026-07-28 server that starts in 1.5 s is still probed into the modern era, and nothing is reported", function()
    local errs, on_error = collect()
    local c, err = modern_server({ "--start-delay-ms=1500" }, { on_error = on_error })
    assert(c, err and err.message)
    finally(function() c:close() end)
    assert.are.equal("2026-07-28", c:protocol_version())
    assert.are.equal("lua-mcp-modern-server", c:server_info().name)
    assert(c:call_tool("echo", { message = "hi" }))
    mcp.sleep(50)
    assert.are.same({}, errs)
  end)

  it("a server that writes nothing: the start-up allowance expires, the fallback is reported to on_error", function()
    local errs, on_error = collect()
    local c = assert(helper.test_server({ "--on-discover=hang" }, {
      protocol_discovery_startup_ms = 200, protocol_discovery_timeout_ms = 60000, on_error = on_error,
    }))
    finally(function() c:close() end)
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    assert.is_true(helper.wait_until(function() return #errs > 0 end, helper.ms(2000)))
    assert.are.equal(1, #errs)
    assert.are.equal("timeout", errs[1].kind)
    assert.are.equal("server/discover", errs[1].method)
    assert.is_truthy(helper.has(errs[1].message, "protocol_discovery_startup_ms"), errs[1].message)
  end)

  it("a server that shows it is alive (lines on stdout) has protocol_discovery_timeout_ms from then on", function()
    -- --garbage writes lines that are not JSON-RPC at start-up: a sign of life
    local errs, on_error = collect()
    local c = assert(helper.test_server({ "--on-discover=hang", "--garbage" }, {
      protocol_discovery_startup_ms = 600000, protocol_discovery_timeout_ms = 200, on_error = on_error,
    }))
    finally(function() c:close() end)
    assert.are.equal(mcp.PROTOCOL_VERSION, c:protocol_version())
    assert.is_true(helper.wait_until(function()
      for _, e in ipairs(errs) do
        if e.method == "server/discover" then return true end
      end
      return false
    end, helper.ms(2000)))
    local probe
    for _, e in ipairs(errs) do
      if e.method == "server/discover" then probe = e end
    end
    assert.are.equal("timeout", probe.kind)
    assert.is_truthy(helper.has(probe.message, "protocol_discovery_timeout_ms"), probe.message)
  end)

  it("streamable HTTP and other transports that do not spawn their server keep the deadline from the send", function()
    local probe = require("mcp.probe")
    local opts = probe.start({ timeout_ms = 123, startup_ms = 9, spawned = false }, false)
    assert.are.same({ timeout_ms = 123 }, opts)
  end)
end)
