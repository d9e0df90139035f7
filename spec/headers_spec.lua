-- Tool parameter headers (x-mcp-header): bindings, header values and their encoding.
local mcp = require("mcp")
local H = mcp.headers

local function schema(props) return { type = "object", properties = props } end

describe("encode_header_value", function()
  local cases = {
    { "abc", "abc" },
    { "", "" },
    { "a b\tc", "a b\tc" },
    { " a", "=?base64?IGE=?=" },
    { "a\tb ", "=?base64?YQliIA==?=" },
    { "café", "=?base64?Y2Fmw6k=?=" },
    { "line\nbreak", "=?base64?bGluZQpicmVhaw==?=" },
    { "=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?=" },
  }
  for _, c in ipairs(cases) do
    it(("%q -> %q"):format(c[1], c[2]), function()
      assert.equal(c[2], H.encode_header_value(c[1]))
    end)
  end
  it("raises on a non-string", function()
    assert.has_error(function() H.encode_header_value(1) end)
  end)
end)

describe("get_tool_header_bindings", function()
  it("binds properties reachable through properties only, sorted by path", function()
    local b = assert(H.get_tool_header_bindings(schema({
      region = { type = "string", ["x-mcp-header"] = "Region" },
      opts = { type = "object", properties = { dry = { type = "boolean", ["x-mcp-header"] = "Dry-Run" } } },
      count = { type = "integer", ["x-mcp-header"] = "Count" },
      plain = { type = "string" },
    })))
    assert.same({
      { header_name = "Count", path = { "count" }, value_type = "integer" },
      { header_name = "Dry-Run", path = { "opts", "dry" }, value_type = "boolean" },
      { header_name = "Region", path = { "region" }, value_type = "string" },
    }, b)
  end)

  it("ignores annotations inside arrays (allOf, anyOf, tuple items)", function()
    local b = assert(H.get_tool_header_bindings({
      type = "object",
      allOf = mcp.array({ { properties = { x = { type = "string", ["x-mcp-header"] = "X" } } } }),
    }))
    assert.same({}, b)
  end)

  local bad = {
    { "not an object", mcp.array({}), "inputSchema must be a JSON Schema object" },
    { "on the root", { type = "object", ["x-mcp-header"] = "Root" }, "not on a statically reachable property" },
    { "under items", schema({ list = { type = "array", items = { type = "string", ["x-mcp-header"] = "I" } } }),
      "not on a statically reachable property" },
    { "under $defs", { type = "object", ["$defs"] = { d = { properties = { p = { type = "string", ["x-mcp-header"] = "D" } } } } },
      "not on a statically reachable property" },
    { "not a token", schema({ a = { type = "string", ["x-mcp-header"] = "Bad Name" } }), "non-empty HTTP token" },
    { "empty", schema({ a = { type = "string", ["x-mcp-header"] = "" } }), "non-empty HTTP token" },
    { "duplicate ignoring case", schema({ a = { type = "string", ["x-mcp-header"] = "Name" },
      b = { type = "string", ["x-mcp-header"] = "NAME" } }), "is not unique" },
    { "a number property", schema({ a = { type = "number", ["x-mcp-header"] = "N" } }), "boolean, integer, or string" },
    { "a type array", schema({ a = { type = mcp.array({ "string", "null" }), ["x-mcp-header"] = "T" } }),
      "boolean, integer, or string" },
  }
  for _, c in ipairs(bad) do
    it("rejects an annotation " .. c[1], function()
      local b, err = H.get_tool_header_bindings(c[2])
      assert.is_nil(b)
      assert.equal("validation", err.kind)
      assert.truthy(err.message:find(c[3], 1, true), err.message)
    end)
  end
end)

describe("create_tool_headers", function()
  local bindings = assert(H.get_tool_header_bindings(schema({
    region = { type = "string", ["x-mcp-header"] = "Region" },
    n = { type = "integer", ["x-mcp-header"] = "N" },
    flag = { type = "boolean", ["x-mcp-header"] = "Flag" },
    deep = { type = "object", properties = { id = { type = "string", ["x-mcp-header"] = "Id" } } },
  })))

  it("builds Mcp-Param-* headers from the arguments, encoded", function()
    local h = assert(H.create_tool_headers(bindings, { region = "eu-west", n = 42, flag = false, deep = { id = "naïve" } }))
    assert.same({
      ["Mcp-Param-Region"] = "eu-west",
      ["Mcp-Param-N"] = "42",
      ["Mcp-Param-Flag"] = "false",
      ["Mcp-Param-Id"] = "=?base64?bmHDr3Zl?=",
    }, h)
  end)

  it("omits absent and null arguments", function()
    assert.same({}, assert(H.create_tool_headers(bindings, { region = mcp.null, deep = "not an object" })))
    assert.same({}, assert(H.create_tool_headers(bindings, nil)))
  end)

  it("accepts safe integers only", function()
    assert.equal("9007199254740991", assert(H.create_tool_headers(bindings, { n = 9007199254740991 }))["Mcp-Param-N"])
    assert.equal("-9007199254740991", assert(H.create_tool_headers(bindings, { n = -9007199254740991 }))["Mcp-Param-N"])
    for _, v in ipairs({ 9007199254740992, 1.5, "7" }) do
      local h, err = H.create_tool_headers(bindings, { n = v })
      assert.is_nil(h)
      assert.truthy(err.message:find('Tool argument "n" does not match its x-mcp-header type', 1, true))
    end
  end)

  it("rejects a wrong type for strings and booleans", function()
    assert.is_nil((H.create_tool_headers(bindings, { region = 5 })))
    assert.is_nil((H.create_tool_headers(bindings, { flag = "true" })))
    assert.is_nil((H.create_tool_headers(bindings, { deep = { id = true } })))
  end)
end)
