-- Reloading the Lua modules while the C module stays (a plugin manager's reload, busted's fresh
-- modules per spec file): the HTTP transports' method table belongs to mcp.core, so each new
-- instance of lua/mcp/transport/http.lua and lua/mcp/auth/transport.lua must put its wrappers on
-- the C functions, not on an earlier instance's wrappers (which chained: an old close waited
-- 3 s for every close(0)).
require("mcp")

local function upvalue(fn, name)
  local i = 1
  while true do
    local n, v = debug.getupvalue(fn, i)
    if n == nil then return nil end
    if n == name then return v end
    i = i + 1
  end
end

local function is_c(fn) return type(fn) == "function" and debug.getinfo(fn, "S").what == "C" end

describe("reloading the Lua modules (mcp.core stays loaded)", function()
  local saved = {}
  before_each(function()
    for k, v in pairs(package.loaded) do
      if k == "mcp" or k:sub(1, 4) == "mcp." then saved[k] = v end
    end
  end)
  after_each(function()
    for k in pairs(package.loaded) do
      if k == "mcp" or k:sub(1, 4) == "mcp." then package.loaded[k] = nil end
    end
    for k, v in pairs(saved) do package.loaded[k] = v end
  end)

  local function reload()
    for k in pairs(package.loaded) do
      if k == "mcp" or (k:sub(1, 4) == "mcp." and k ~= "mcp.core") then package.loaded[k] = nil end
    end
    return require("mcp")
  end

  it("puts the HTTP and OAuth wrappers on the C functions every time, never on an earlier instance's", function()
    local methods
    for round = 1, 4 do
      local m = reload()
      local t = m.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } })
      local mt = getmetatable(t).__index
      if round == 1 then methods = mt end
      assert.are.equal(methods, mt) -- one table, shared by every instance
      assert.is_true(is_c(methods._c_start), "round " .. round)
      assert.is_true(is_c(methods._c_close), "round " .. round)
      -- close and the start under the OAuth layer are this instance's, straight on C
      assert.are.equal(methods._c_close, upvalue(methods.close, "c_close"))
      local under = methods._under_auth
      assert.are.equal(methods._c_start, upvalue(under, "c_start"))
      assert.are.equal(under, upvalue(methods.start, "c_start")) -- OAuth's start wraps it, once
      assert.is_true(is_c(upvalue(methods.set_protocol_version, "c_set_version")))
      t:close(0)
    end
  end)

  it("reinstalls after only the HTTP module was reloaded, keeping the OAuth layer on top", function()
    local m = reload()
    m.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } }):close(0)
    package.loaded["mcp.transport.http"] = nil
    local http = require("mcp.transport.http")
    local t = http.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } })
    local methods = getmetatable(t).__index
    local under = methods._under_auth
    assert.are.equal(under, upvalue(methods.start, "c_start"))
    assert.are.equal(methods._c_start, upvalue(under, "c_start"))
    assert.are.equal(methods._c_close, upvalue(methods.close, "c_close"))
    t:close(0)
  end)
end)
