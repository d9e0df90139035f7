-- Reloading the Lua modules while the C module stays (a plugin manager's reload, busted's fresh
-- modules per spec file): the transports are Lua objects around their C handles
-- (mcp.transport.native), so no instance of the Lua modules puts anything on the C method tables,
-- and each instance's objects use that instance's code (an earlier design patched the shared
-- method table and needed reload guards: an old close once waited 3 s for every close(0)).
require("mcp")

local function c_only(handle)
  for k, v in pairs(getmetatable(handle).__index) do
    if type(v) ~= "function" or debug.getinfo(v, "S").what ~= "C" then return false, tostring(k) end
  end
  return true
end

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

  it("leaves the C method tables as the C module made them, and each instance's objects use its own code", function()
    local classes = {}
    for round = 1, 4 do
      local m = reload()
      for _, t in ipairs({ m.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } }),
          m.sse_transport({ url = "http://127.0.0.1:9/sse" }),
          m.stdio_transport({ command = "true" }) }) do
        assert.is_true(c_only(t.handle), "round " .. round)
        local class = getmetatable(rawget(t, "inner") or t)
        assert.is_true(classes[class] == nil or classes[class] == round, "an earlier instance's class")
        classes[class] = round -- this instance's code
        assert.is_true(t:close(0))
        assert.is_false(t:is_open())
      end
    end
  end)

  it("after only the HTTP module was reloaded, the OAuth layer goes over the new module's object", function()
    local m = reload()
    local first = m.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } })
    first:close(0)
    package.loaded["mcp.transport.http"] = nil
    local http = require("mcp.transport.http")
    local t = http.http_transport({ url = "http://127.0.0.1:9/mcp", oauth = { access_token = "tok" } })
    assert.are_not.equal(getmetatable(first.inner), getmetatable(t.inner))
    assert.are.equal(getmetatable(first), getmetatable(t)) -- the same OAuth layer module
    assert.is_true(c_only(t.handle))
    assert.is_true(t:close(0))
  end)
end)
