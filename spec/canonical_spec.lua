-- Canonical JSON (JS-exact), SHA-256 from libcrypto, base64, and the tool fingerprints.
-- Expected digests were computed with Node's JSON.stringify + crypto (same canonical rules).
local mcp = require("mcp")
local core = require("mcp.core")
local canonical = require("mcp.util.canonical")

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

describe("core.sha256 (libcrypto)", function()
  local cases = {
    { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
    { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
    { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
    { ("a"):rep(1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
    { "\0\1\2\255", nil },
  }
  for _, c in ipairs(cases) do
    it("hashes " .. #c[1] .. " bytes", function()
      local d = core.sha256(c[1])
      assert.are.equal(32, #d)
      if c[2] then assert.are.equal(c[2], hex(d)) end
    end)
  end
  it("raises on a non-string", function()
    assert.has_error(function() core.sha256({}) end)
  end)
end)

describe("core.base64_encode / base64_decode", function()
  local vectors = { { "", "", "" }, { "f", "Zg==", "Zg" }, { "fo", "Zm8=", "Zm8" }, { "foo", "Zm9v", "Zm9v" },
    { "foob", "Zm9vYg==", "Zm9vYg" }, { "fooba", "Zm9vYmE=", "Zm9vYmE" }, { "foobar", "Zm9vYmFy", "Zm9vYmFy" },
    { "\251\255\191", "+/+/", "-_-_" } }
  for _, v in ipairs(vectors) do
    it(("round-trips %q"):format(v[1]), function()
      assert.are.equal(v[2], core.base64_encode(v[1]))
      assert.are.equal(v[3], core.base64_encode(v[1], "url"))
      assert.are.equal(v[1], core.base64_decode(v[2]))
      assert.are.equal(v[1], core.base64_decode(v[3], "url"))
      assert.are.equal(v[1], core.base64_decode(v[3], "any"))
    end)
  end
  local bad = {
    { "Zm9v!", "std", "byte 4" }, { "Z", "std", "lone final" }, { "Zm9=v", "std", "after padding" },
    { "Zg=", "std", "padding" }, { "Zm9v=", "std", "padding" }, { "-_-_", "std", "byte 0" }, { "+/+/", "url", "byte 0" },
    { "Zm 9v", "std", "byte 2" },
  }
  for _, b in ipairs(bad) do
    it(("rejects %q (%s)"):format(b[1], b[2]), function()
      local v, err = core.base64_decode(b[1], b[2])
      assert.is_nil(v)
      assert.truthy(err:find(b[3], 1, true), err)
    end)
  end
  it("skips CR/LF line breaks", function()
    assert.are.equal("foobar", core.base64_decode("Zm9v\r\nYmFy"))
  end)
  it("round-trips every byte value", function()
    local t = {}
    for i = 0, 255 do t[#t + 1] = string.char(i) end
    local s = table.concat(t):rep(3)
    assert.are.equal(s, core.base64_decode(core.base64_encode(s)))
    assert.are.equal(s, core.base64_decode(core.base64_encode(s, "url"), "url"))
  end)
  it("raises on an unknown variant", function()
    assert.has_error(function() core.base64_encode("x", "mime") end)
  end)
end)

describe("canonical.number (JavaScript spelling)", function()
  local cases = {
    { 0, "0" }, { -0.0, "0" }, { 1, "1" }, { -1, "-1" }, { 1.5, "1.5" }, { 0.1, "0.1" }, { 100, "100" },
    { 1e21, "1e+21" }, { 1e20, "100000000000000000000" }, { 1e-7, "1e-7" }, { 1e-6, "0.000001" },
    { 123e-20, "1.23e-18" }, { 2 ^ 53, "9007199254740992" }, { 2 ^ 63, "9223372036854776000" },
    { 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" }, { 1 / 3, "0.3333333333333333" },
    { 123456789012345680000, "123456789012345680000" }, { 0.000001234, "0.000001234" }, { 1e-5, "0.00001" },
    { 12345.6789e-10, "0.00000123456789" }, { 9.999999999999999e22, "1e+23" }, { 4.35, "4.35" },
    { 0.30000000000000004, "0.30000000000000004" }, { 2 ^ 31, "2147483648" }, { -(2 ^ 53) - 2, "-9007199254740994" },
  }
  for _, c in ipairs(cases) do
    it(c[2], function() assert.are.equal(c[2], canonical.number(c[1])) end)
  end
  if math.type then
    it("spells a 64-bit integer as JavaScript's nearest double", function()
      assert.are.equal("9223372036854776000", canonical.number(math.maxinteger))
      assert.are.equal("42", canonical.number(42))
    end)
  end
  it("raises on NaN and infinities", function()
    assert.has_error(function() canonical.number(0 / 0) end)
    assert.has_error(function() canonical.number(math.huge) end)
  end)
end)

describe("canonical.encode", function()
  local cases = {
    { "sorted keys, no whitespace", { b = 1, a = { 1, 2, mcp.null } }, '{"a":[1,2,null],"b":1}' },
    { "empty object and marked empty array", { o = {}, a = mcp.array() }, '{"a":[],"o":{}}' },
    { "JSON.stringify escapes", { s = "a\"\\\n\r\t\b\f\1\31</>&\127" },
      '{"s":"a\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f</>&\127"}' },
    { "U+2028 passes through", "\226\128\168", '"\226\128\168"' },
    { "UTF-16 key order", { ["\239\191\191"] = 1, ["\240\144\128\128"] = 2, ["\195\169"] = true, z = 0 },
      '{"z":0,"\195\169":true,"\240\144\128\128":2,"\239\191\191":1}' },
    { "booleans and nested", { t = true, f = false, n = { x = { y = {} } } }, '{"f":false,"n":{"x":{"y":{}}},"t":true}' },
    { "undefined token", { title = canonical.UNDEFINED }, '{"title":undefined}' },
  }
  for _, c in ipairs(cases) do
    it(c[1], function() assert.are.equal(c[3], canonical.encode(c[2])) end)
  end
  it("raises on functions, mixed tables and cycles", function()
    assert.has_error(function() canonical.encode({ f = print }) end)
    assert.has_error(function() canonical.encode({ 1, 2, x = 3 }) end)
    local t = {}
    t.t = t
    assert.has_error(function() canonical.encode(t) end)
  end)
end)

describe("mcp.fingerprint_tools / mcp.detect_tool_drift", function()
  -- digests from Node (see the file header)
  it("matches the TypeScript digest (title undefined)", function()
    local fp = mcp.fingerprint_tools({ { name = "x", description = "d", input_schema = { type = "object" } } })
    assert.are.equal("fO-3Ppe1RQVHa13UtjLNHItprTKKmXlOEDsYzDC7lCo", fp.x)
  end)
  it("matches the TypeScript digest (no description, a title, escapes)", function()
    local fp = mcp.fingerprint_tools({ { name = "y", title = "T", input_schema = {
      type = "object", properties = { a = { type = "string", description = '\195\188n\195\175 "q" \n\7' } },
      additionalProperties = false, required = { "a" } } } })
    assert.are.equal("-s9oo3a6wJme_P7zRg0_H9527ZPedDxpjUAnofW-z0Y", fp.y)
  end)
  it("is independent of key order and equal for equal definitions", function()
    local a = mcp.json.decode('{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}}')
    local b = mcp.json.decode('{"inputSchema":{"properties":{"b":{"type":"number"},"a":{"type":"string"}},"type":"object"},"description":"d","name":"t"}')
    assert.are.equal(mcp.fingerprint_tools({ a }).t, mcp.fingerprint_tools({ b }).t)
  end)
  it("pins description, schema and title, nothing else", function()
    local base = { name = "t", description = "d", title = "T", input_schema = { type = "object" } }
    local fp = mcp.fingerprint_tools({ base }).t
    local function with(k, v)
      local c = {}
      for kk, vv in pairs(base) do c[kk] = vv end
      c[k] = v
      return mcp.fingerprint_tools({ c }).t
    end
    assert.are_not.equal(fp, with("description", "e"))
    assert.are_not.equal(fp, with("description", function() end))
    assert.are_not.equal(fp, with("title", "U"))
    assert.are_not.equal(fp, with("input_schema", { type = "object", properties = {} }))
    assert.are.equal(fp, with("annotations", { readOnlyHint = true }))
    assert.are.equal(fp, with("execute", function() end))
    -- no description and an empty description differ (TypeScript semantics)
    assert.are_not.equal(with("description", ""), with("description", nil))
  end)
  it("accepts a map name -> tool and a tools/list result", function()
    local t = { name = "a", description = "x" }
    local m = mcp.fingerprint_tools({ a = t })
    assert.are.same(m, mcp.fingerprint_tools({ tools = { t } }))
    assert.are.same(m, mcp.fingerprint_tools({ t }))
  end)
  it("reports added, removed and changed, sorted", function()
    local base = { a = "1", b = "2", c = "3", d = "4" }
    local cur = { d = "4", c = "X", e = "5", b = "2", f = "6" }
    assert.are.same({ added = { "e", "f" }, removed = { "a" }, changed = { "c" } }, mcp.detect_tool_drift(cur, base))
    assert.are.same({ added = {}, removed = {}, changed = {} }, mcp.detect_tool_drift(base, base))
    -- empty lists encode as JSON arrays, an empty fingerprint map as an object
    local enc = mcp.json.encode(mcp.detect_tool_drift(base, base))
    for _, k in ipairs({ "added", "changed", "removed" }) do assert.matches('"' .. k .. '":%[%]', enc) end
    enc = mcp.json.encode(mcp.detect_tool_drift(cur, base))
    assert.matches('"added":["e","f"]', enc, 1, true)
    assert.matches('"removed":["a"]', enc, 1, true)
    assert.are.equal("{}", mcp.json.encode(mcp.fingerprint_tools({})))
    assert.is_false(require("mcp.tools.drift").has_drift(mcp.detect_tool_drift(base, base)))
  end)
  it("fingerprints tool lists passed to detect_tool_drift", function()
    local d = mcp.detect_tool_drift({ { name = "a", description = "new" } }, { { name = "a", description = "old" } })
    assert.are.same({ "a" }, d.changed)
  end)
  it("raises on misuse", function()
    assert.has_error(function() mcp.fingerprint_tools("x") end)
    assert.has_error(function() mcp.fingerprint_tools({ { description = "no name" } }) end)
    assert.has_error(function() mcp.detect_tool_drift(nil, {}) end)
  end)
end)

-- LuaJIT 2.1.0-beta3 (Neovim 0.7's, and the system luajit here) compiled a trace of json_type
-- that, in Neovim under load, encoded a whole fingerprint input as "{}" or "[]": a pinned echo
-- came out as base64url(SHA-256("[]")) = "T1PN..." and was held as changed, while a second take
-- right after was right (spec/nvim/pins_stress.lua, MCP_PINS_STRESS=1). So canonical.lua runs
-- interpreted: no trace may start in it or record through it.
describe("canonical.lua under LuaJIT", function()
  it("is never compiled: no trace starts in it and none records through it", function()
    if not jit then
      pending("LuaJIT only")
      return
    end
    local drift = require("mcp.tools.drift")
    local json = require("mcp.json")
    local jutil = require("jit.util")
    local def = json.decode('{"name":"echo","title":"Echo","description":"Echoes.","inputSchema":{"type":"object",'
      .. '"properties":{"message":{"type":"string"},"n":{"type":"integer","minimum":0,"maximum":1000}},'
      .. '"required":["message"]}}')
    local want = drift.fingerprint_tool(def)
    -- a trace that recorded a bytecode of canonical.lua and was not aborted (the entry of a
    -- function the JIT may not compile is recorded, then aborts the trace)
    local seen, touching = {}, {}
    local function in_canonical(func)
      return func ~= nil and (jutil.funcinfo(func).source or ""):find("canonical.lua", 1, true) ~= nil
    end
    local on_trace = function(what, tr, func)
      if what == "start" and in_canonical(func) then touching[tr] = true end
      if what == "stop" and touching[tr] then seen[#seen + 1] = tr end
      if what ~= "start" then touching[tr] = nil end
    end
    local on_record = function(tr, func) if in_canonical(func) then touching[tr] = true end end
    jit.attach(on_trace, "trace")
    jit.attach(on_record, "record")
    local ok, err = pcall(function()
      for _ = 1, 3000 do
        local t = setmetatable({ server = "s", original_name = "echo" }, { __index = def })
        assert(drift.fingerprint_tool(t) == want)
      end
    end)
    jit.attach(on_trace)
    jit.attach(on_record)
    assert(ok, err)
    assert.are.equal(0, #seen, "traces compiled through canonical.lua")
  end)
end)
