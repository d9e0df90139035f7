-- mcp.convert_content: MCP content items -> content parts.
local mcp = require("mcp")
local helper = require("helper")

local PNG_B64 = "iVBORw0KGgo="
local PNG = "\137PNG\r\n\26\n"

describe("mcp.convert_content", function()
  local ok_cases = {
    { "text", { type = "text", text = "hi" }, { type = "text", text = "hi" } },
    { "image base64", { type = "image", data = PNG_B64, mimeType = "image/png" },
      { type = "image", data = PNG, media_type = "image/png" } },
    { "image data: URL", { type = "image", data = "data:image/png;base64," .. PNG_B64, mimeType = "image/png" },
      { type = "image", data = PNG, media_type = "image/png" } },
    { "image https URL kept", { type = "image", data = "https://example.com/a.png", mimeType = "image/png" },
      { type = "image", url = "https://example.com/a.png", media_type = "image/png" } },
    { "image http URL kept", { type = "image", data = "HTTP://example.com/a.png", mimeType = "image/png" },
      { type = "image", url = "HTTP://example.com/a.png", media_type = "image/png" } },
    { "audio", { type = "audio", data = "AAEC", mimeType = "audio/wav" },
      { type = "audio", data = "\0\1\2", media_type = "audio/wav" } },
    { "embedded text resource", { type = "resource", resource = { uri = "file:///a.txt", mimeType = "text/plain", text = "body" } },
      { type = "resource", uri = "file:///a.txt", media_type = "text/plain", text = "body" } },
    { "embedded blob resource", { type = "resource", resource = { uri = "test://blob", mimeType = "image/png", blob = PNG_B64 } },
      { type = "resource", uri = "test://blob", media_type = "image/png", data = PNG } },
    { "resource link", { type = "resource_link", uri = "file:///b", name = "b", title = "B", description = "d", mimeType = "text/x", size = 12 },
      { type = "resource_link", uri = "file:///b", name = "b", title = "B", description = "d", media_type = "text/x", size = 12 } },
    { "annotations and _meta kept", { type = "text", text = "x", annotations = { audience = { "user" } }, _meta = { k = 1 } },
      { type = "text", text = "x", annotations = { audience = { "user" } }, meta = { k = 1 } } },
  }
  for _, c in ipairs(ok_cases) do
    it(c[1], function()
      local parts, err = mcp.convert_content({ c[2] })
      assert.is_nil(err)
      assert.are.same({ c[3] }, parts)
    end)
  end

  local bad_cases = {
    { "bad base64 image", { type = "image", data = "iVBOR$w0", mimeType = "image/png" }, "bad base64 image data" },
    { "bad base64 in a data: URL", { type = "image", data = "data:image/png;base64,@@@", mimeType = "image/png" }, "bad base64" },
    { "data: URL without a comma", { type = "image", data = "data:image/png;base64", mimeType = "image/png" }, "malformed data: URL" },
    { "bad base64 blob", { type = "resource", resource = { uri = "u", blob = "!!" } }, "bad base64 resource blob" },
    { "resource without text or blob", { type = "resource", resource = { uri = "u" } }, "neither text nor blob" },
    { "resource without uri", { type = "resource", resource = { text = "x" } }, "no resource.uri" },
    { "resource_link without uri", { type = "resource_link", name = "x" }, "no uri" },
    { "text without text", { type = "text" }, "no text" },
  }
  for _, c in ipairs(bad_cases) do
    it("rejects " .. c[1], function()
      local parts, err = mcp.convert_content({ { type = "text", text = "first" }, c[2] })
      assert.is_nil(parts)
      assert.is_true(mcp.is_error(err))
      assert.are.equal("protocol", err.kind)
      assert.truthy(err.message:find("content[2]", 1, true), err.message)
      assert.truthy(err.message:find(c[3], 1, true), err.message)
    end)
  end

  -- As the reference: what it cannot convert reaches the model as the item's JSON.
  local json_cases = {
    { "unknown type", { type = "video", data = "x", annotations = { audience = { "user" } } } },
    { "no type", { text = "x" } },
    { "image without mimeType", { type = "image", data = PNG_B64 } },
    { "image without data", { type = "image", mimeType = "image/png" } },
    { "image with an empty mimeType", { type = "image", data = PNG_B64, mimeType = "" } },
    { "audio without mimeType", { type = "audio", data = "AAEC" } },
  }
  for _, c in ipairs(json_cases) do
    it("turns into a JSON text part: " .. c[1], function()
      local parts, err = mcp.convert_content({ { type = "text", text = "first" }, c[2] })
      assert.is_nil(err)
      assert.are.equal(2, #parts)
      assert.are.equal("text", parts[2].type)
      assert.are.same(c[2], mcp.json.decode(parts[2].text))
      assert.are.equal(c[2].type, parts[2].original_type)
      assert.are.same(c[2].annotations, parts[2].annotations)
    end)
  end

  it("accepts a CallToolResult and an empty list", function()
    assert.are.same({ { type = "text", text = "a" } }, mcp.convert_content({ content = { { type = "text", text = "a" } } }))
    assert.are.same({}, mcp.convert_content({}))
  end)
  it("decodes a large image fast", function()
    local raw = ("\0\1\2\3\255"):rep(2 * 1024 * 1024) -- 10 MB
    local t0 = os.clock()
    local parts = mcp.convert_content({ { type = "image", data = mcp.core.base64_encode(raw), mimeType = "image/png" } })
    assert.are.equal(raw, parts[1].data)
    assert.is_true(os.clock() - t0 < 5 * helper.slow())
  end)
  it("renders parts as text", function()
    local parts = mcp.convert_content({ { type = "text", text = "a" }, { type = "image", data = PNG_B64, mimeType = "image/png" },
      { type = "resource_link", uri = "x://y", name = "y" } })
    assert.are.equal("a\n[image image/png, 8 bytes]\n[resource x://y]", require("mcp.content").to_text(parts))
  end)
  it("raises on misuse", function()
    assert.has_error(function() mcp.convert_content("text") end)
  end)
end)
