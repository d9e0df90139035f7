-- The seam between the client and the protocol eras (lua/mcp/era/, docs/ARCHITECTURE.md):
-- client.lua never asks which era it has, both era objects implement the one interface the
-- client calls, and the era machinery (the era objects, listen.lua, tasks.lua, modern.lua,
-- cache.lua) and the modules beside it (url_elicitation.lua, output_schema.lua, span.lua, trace.lua,
-- handlers/, elicitation/) reach the client through named methods only, never its fields.
local eras = require("mcp.era")
local helper = require("helper")
local mcp = require("mcp")

local read = helper.read_file

-- The source without its comments (a `--` outside a string ends the code of a line; the sources
-- checked here put none inside strings).
local function code_of(path)
  local out = {}
  for line in (read(path) .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = (line:gsub("%-%-.*$", ""))
  end
  return table.concat(out, "\n")
end

local function fake_client()
  return mcp.new_client({}, {})
end

describe("the era seam", function()
  local client_code = code_of("lua/mcp/client.lua")

  it("client.lua holds no era branch", function()
    for _, pattern in ipairs({
      "%.era%s*[=~]=", -- self.era == "modern", self.era ~= "modern"
      "[=~]=%s*[%w_.]*%.era[^%w_:]", -- "modern" == self.era
      '"modern"', '"legacy"', "'modern'", "'legacy'",
      'require%("mcp%.modern"%)', 'require%("mcp%.listen"%)', 'require%("mcp%.cache"%)',
      "[^%w_]modern%.", "[^%w_]listen%.", "[^%w_]cache%.",
    }) do
      assert.is_nil(client_code:find(pattern), "client.lua matches " .. pattern)
    end
  end)

  it("client.lua calls only the era interface", function()
    local interface = {}
    for _, name in ipairs(eras.INTERFACE) do interface[name] = true end
    local called = {}
    for name in client_code:gmatch("[%w_]*era:([%w_]+)%(") do
      called[name] = true
      assert.is_true(interface[name] == true, "client.lua calls era:" .. name .. ", which is not in mcp.era.INTERFACE")
    end
    -- and the interface is what the client needs: every method is called (capabilities by the
    -- eras themselves, for initialize and every modern request's _meta)
    for name in pairs(interface) do
      if name ~= "capabilities" then assert.is_true(called[name], "client.lua never calls era:" .. name) end
    end
  end)

  it("both era objects implement every method of the interface", function()
    local c = fake_client()
    local settings = { client_info = { name = "x", version = "1" }, max_input_rounds = 1 }
    local objects = { legacy = eras.legacy(c, settings), modern = eras.modern(c, settings, "2026-07-28") }
    assert.are.equal("legacy", objects.legacy.name)
    assert.are.equal("modern", objects.modern.name)
    for what, era in pairs(objects) do
      for _, name in ipairs(eras.INTERFACE) do
        assert.are.equal("function", type(era[name]), what .. " era lacks " .. name)
      end
    end
  end)

  it("a client starts in the legacy era and speaks it until connect decides", function()
    local c = fake_client()
    assert.are.equal("legacy", c.era.name)
    -- not connected: the legacy era's set_roots tells nobody, and requests fail as not connected
    assert.is_true(c:set_roots({}))
    local res, err = c:ping()
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
  end)

  it("the era machinery reaches the client through methods, never its fields", function()
    for _, path in ipairs({
      "lua/mcp/era/init.lua", "lua/mcp/era/legacy.lua", "lua/mcp/era/modern.lua", "lua/mcp/listen.lua",
      "lua/mcp/tasks.lua", "lua/mcp/modern.lua", "lua/mcp/cache.lua",
      -- and the modules beside the eras: each one's state is an object the client holds
      "lua/mcp/url_elicitation.lua", "lua/mcp/output_schema.lua", "lua/mcp/span.lua", "lua/mcp/trace.lua",
      "lua/mcp/handlers/init.lua", "lua/mcp/handlers/roots.lua", "lua/mcp/handlers/sampling.lua",
      "lua/mcp/elicitation/init.lua",
    }) do
      local code = code_of(path)
      local field = code:match("[^%w_]client%.([%w_]+)")
      assert.is_nil(field, path .. " reads or writes client." .. tostring(field))
      -- a method of the client's internal interface is one client.lua defines
      for name in code:gmatch("client:(_[%w_]+)%(") do
        assert.is_truthy(client_code:find("function Client:" .. name .. "%("), path .. " calls client:" .. name
          .. ", which client.lua does not define")
      end
    end
  end)

  it("the server request handlers are one table, the same for both eras", function()
    local handlers = require("mcp.handlers")
    local c = fake_client()
    assert.is_nil(handlers.find(c, "sampling/createMessage"))
    c:on_sampling_request(function() return "hi" end)
    assert.are.equal(handlers.SERVER_REQUESTS["sampling/createMessage"], handlers.find(c, "sampling/createMessage"))
    assert.is_nil(handlers.find(c, "ping")) -- the core answers ping itself
    -- the modern era's input rounds use it too
    local responses = assert(handlers.fulfil(c, "tools/call", {
      a = { method = "sampling/createMessage", params = { messages = {}, maxTokens = 1 } },
    }))
    assert.are.equal("hi", responses.a.content.text)
    local _, err = handlers.fulfil(c, "tools/call", { b = { method = "roots/list" } })
    assert.are.equal("protocol", err.kind)
  end)
end)
