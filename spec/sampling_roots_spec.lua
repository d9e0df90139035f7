-- mcp.sampling and mcp.roots: helpers and the client's checks of what handlers return.
local mcp = require("mcp")
local helper = require("helper")

describe("mcp.sampling", function()
  it("builds a text result", function()
    assert.are.same({ role = "assistant", content = { type = "text", text = "hi" }, model = "m", stopReason = "endTurn" },
      mcp.sampling.text("hi", { model = "m" }))
    assert.has_error(function() mcp.sampling.text(1) end)
  end)
  local finish_cases = {
    { "a string", "Paris", { role = "assistant", content = { type = "text", text = "Paris" }, model = "unknown", stopReason = "endTurn" } },
    { "role defaults", { content = { type = "text", text = "x" }, model = "m" }, { role = "assistant", content = { type = "text", text = "x" }, model = "m" } },
    { "content array", { role = "assistant", content = { { type = "text", text = "a" }, { type = "image", data = "", mimeType = "image/png" } }, model = "m" }, true },
    { "no model", { content = { type = "text", text = "x" } }, "no model" },
    { "no content", { model = "m" }, "no valid content" },
    { "bad block", { model = "m", content = { { text = "no type" } } }, "no valid content" },
    { "bad role", { role = "system", model = "m", content = { type = "text", text = "x" } }, "invalid role" },
    { "a number", 42, "not a result table" },
  }
  for _, c in ipairs(finish_cases) do
    it("finish: " .. c[1], function()
      local r, err = mcp.sampling.finish(c[2])
      if type(c[3]) == "string" then
        assert.is_nil(r)
        assert.truthy(err.message:find(c[3], 1, true), err.message)
      elseif c[3] == true then
        assert.is_table(r)
      else
        assert.are.same(c[3], r)
      end
    end)
  end
end)

describe("mcp.roots", function()
  it("builds file roots with percent-encoding", function()
    assert.are.same({ uri = "file:///home/me/my%20project", name = "p" }, mcp.roots.file_root("/home/me/my project", "p"))
    assert.are.equal("file:///a/%C3%A9", mcp.roots.file_root("/a/\195\169").uri)
    assert.has_error(function() mcp.roots.file_root("relative") end)
  end)
  local cases = {
    { "roots", { { uri = "file:///a", name = "a" } }, 1 },
    { "paths and URIs as strings", { "/tmp/x", "file:///y" }, 2 },
    { "empty", {}, 0 },
    { "not file://", { { uri = "https://x" } }, "needs a file:// uri" },
    { "bad name", { { uri = "file:///a", name = 1 } }, "name must be a string" },
    { "not a table", "file:///a", "must be an array" },
  }
  for _, c in ipairs(cases) do
    it("check: " .. c[1], function()
      local list, err = mcp.roots.check(c[2])
      if type(c[3]) == "number" then
        assert.are.equal(c[3], #list)
        assert.are.equal("[]", c[3] == 0 and mcp.json.encode(list) or "[]")
      else
        assert.is_nil(list)
        assert.truthy(err.message:find(c[3], 1, true), err.message)
      end
    end)
  end
end)

describe("sampling and roots through the client", function()
  local client, reported
  local function connect(opts)
    reported = {}
    opts.on_error = function(e) reported[#reported + 1] = e end
    local err
    client, err = helper.test_server(nil, opts)
    assert(client, tostring(err))
  end
  after_each(function()
    if client then client:close() end
    client = nil
  end)

  it("answers sampling with a string turned into a result", function()
    local seen
    connect({ on_sampling_request = function(params)
      seen = params
      return "Paris"
    end })
    local msg = assert(client:call_tool("sample", { prompt = "Capital of France?" })).structuredContent
    assert.are.equal("Paris", msg.result.content.text)
    assert.are.equal("assistant", msg.result.role)
    assert.are.equal("Capital of France?", seen.messages[1].content.text)
  end)
  it("answers an invalid sampling result with an error and reports it", function()
    connect({ on_sampling_request = function() return { content = { type = "text", text = "x" } } end })
    local msg = assert(client:call_tool("sample", { prompt = "?" })).structuredContent
    assert.are.equal(-32603, msg.error.code)
    assert.truthy(msg.error.message:find("no model", 1, true))
    assert.is_true(helper.wait_until(function() return #reported > 0 end, 2000))
  end)
  it("serves checked roots and tells the server when they change", function()
    connect({ roots = { mcp.roots.file_root("/srv/a", "a") } })
    local msg = assert(client:call_tool("roots")).structuredContent
    assert.are.same({ { uri = "file:///srv/a", name = "a" } }, msg.result.roots)
    assert.is_true(client:set_roots({ "/srv/b" }))
    msg = assert(client:call_tool("roots")).structuredContent
    assert.are.same({ { uri = "file:///srv/b" } }, msg.result.roots)
    assert.is_true(client:set_roots({ { uri = "https://not-a-file" } }))
    msg = assert(client:call_tool("roots")).structuredContent
    assert.are.equal(-32603, msg.error.code)
    assert.truthy(msg.error.message:find("file://", 1, true))
  end)
  it("serves roots from an on_roots_list handler", function()
    connect({ on_roots_list = function() return { mcp.roots.file_root("/h") } end })
    local msg = assert(client:call_tool("roots")).structuredContent
    assert.are.same({ { uri = "file:///h" } }, msg.result.roots)
  end)
end)
