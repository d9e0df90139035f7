-- JSON codec of mcp.core (src/json_encode.c, src/json_decode.c): exact numbers, [] vs {}, null, strict parsing.
local core = require("mcp.core")

local encode, decode, null = core.json_encode, core.json_decode, core.null
local has_integers = math.type ~= nil -- Lua 5.3+
local array_mt = getmetatable(decode("[]"))

local function array(t)
  return setmetatable(t or {}, array_mt)
end

-- encode must raise; returns the message.
local function encode_error(v)
  local ok, err = pcall(encode, v)
  assert.is_false(ok, "expected encode to raise")
  return tostring(err)
end

-- decode must return nil, message (never raise).
local function decode_error(s)
  local ok, v, err = pcall(decode, s)
  assert.is_true(ok, "decode raised: " .. tostring(v))
  assert.is_nil(v, "expected nil for " .. string.format("%q", s))
  assert.is_string(err)
  assert.matches("^JSON parse error at byte %d+: ", err)
  return err
end

local function is_negative_zero(x)
  return x == 0 and 1 / x < 0
end

describe("json numbers", function()
  it("encodes and decodes 2^53 and -2^53 exactly", function()
    assert.are.equal("9007199254740992", encode(2 ^ 53))
    assert.are.equal("-9007199254740992", encode(-(2 ^ 53)))
    assert.are.equal(2 ^ 53, decode("9007199254740992"))
    assert.are.equal(-(2 ^ 53), decode("-9007199254740992"))
    assert.are.equal("[9007199254740992,-9007199254740992]", encode(decode("[9007199254740992,-9007199254740992]")))
  end)

  it("keeps integer literals beyond 2^53 exact on 5.3+", function()
    local v = decode("9007199254740993")
    if has_integers then
      assert.are.equal("integer", math.type(v))
      assert.are.equal("9007199254740993", string.format("%d", v))
      assert.are.equal("9007199254740993", encode(v))
      assert.are.equal("integer", math.type(decode("-9223372036854775808")))
      assert.are.equal(math.mininteger, decode("-9223372036854775808"))
      assert.are.equal(math.maxinteger, decode("9223372036854775807"))
      assert.are.equal("9223372036854775807", encode(math.maxinteger))
      assert.are.equal("-9223372036854775808", encode(math.mininteger))
      -- one past int64 becomes the nearest double
      assert.are.equal("float", math.type(decode("9223372036854775808")))
      assert.are.equal(2 ^ 63, decode("9223372036854775808"))
    else
      assert.are.equal(2 ^ 53, v) -- nearest double (ties to even)
    end
  end)

  it("decodes integers as integers on 5.3+ and floats otherwise", function()
    if has_integers then
      assert.are.equal("integer", math.type(decode("1")))
      assert.are.equal("integer", math.type(decode("-42")))
      assert.are.equal("float", math.type(decode("1.0")))
      assert.are.equal("float", math.type(decode("1e2")))
    end
    assert.are.equal(1, decode("1"))
    assert.are.equal(100, decode("1e2"))
    assert.are.equal(-42, decode("-42"))
  end)

  it("prints integral floats like JavaScript below 1e21", function()
    assert.are.equal("1000000000000000", encode(1e15))
    assert.are.equal("100000000000000000000", encode(1e20))
    assert.are.equal("9223372036854775808", encode(2 ^ 63))
    assert.are.equal("1e+21", encode(1e21))
    assert.are.equal("3", encode(3.0))
    assert.are.equal("-7", encode(-7.0))
  end)

  it("prints other floats with the shortest of 15/16/17 digits that round-trips", function()
    assert.are.equal("0.1", encode(0.1))
    assert.are.equal("1.5", encode(1.5))
    assert.are.equal("1.5e+300", encode(1.5e300))
    assert.are.equal("0.30000000000000004", encode(0.1 + 0.2))
    assert.are.equal("0.3333333333333333", encode(1 / 3))
    assert.are.equal("1e-07", encode(1e-7))
    for _, x in ipairs({ 0.1, 1 / 3, 2 / 3, 1.5e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
      123.456, -9.87654321e-5, math.pi, 1e21, 1e22, 4.35, 0.1 + 0.2 }) do
      assert.are.equal(x, decode(encode(x)))
    end
  end)

  it("keeps the sign of -0.0", function()
    -- computed at run time: Lua 5.1 folds the constants -0.0 and 0.0 of one function into one
    local negative_zero = -tonumber("0.0")
    assert.is_true(is_negative_zero(negative_zero))
    assert.are.equal("-0", encode(negative_zero))
    assert.is_true(is_negative_zero(decode("-0")))
    assert.is_true(is_negative_zero(decode("-0.0")))
    assert.is_true(is_negative_zero(decode(encode(negative_zero))))
    assert.are.equal("0", encode(0.0))
  end)

  it("decodes floats to the correctly rounded double", function()
    -- tonumber uses the C library's strtod, the reference here.
    for _, s in ipairs({ "0.1", "1.5", "-2.5e-3", "1e-7", "3.141592653589793", "123456789012345678901234567890",
      "0.000001234", "9007199254740993.0", "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308",
      "1e22", "1e23", "12345678901234567890e-30", "0.30000000000000004", "1E+2", "1e-0", "0e10" }) do
      assert.are.equal(tonumber(s), decode(s), s)
    end
    assert.are.equal(math.huge, decode("1e400"))
    assert.are.equal(0, decode("1e-400"))
  end)

  it("rejects numbers outside the RFC 8259 grammar", function()
    for _, s in ipairs({ "01", "-01", "+1", ".5", "-.5", "1.", "1.e3", "0x10", "NaN", "Infinity", "-Infinity",
      "-", "--1", "1e", "1e+", "1E-", "[1.]", "[01]", "1.5.2" }) do
      decode_error(s)
    end
  end)

  it("refuses NaN and infinities", function()
    assert.matches("cannot encode NaN", encode_error(0 / 0))
    assert.matches("cannot encode infinity", encode_error(math.huge))
    assert.matches("cannot encode infinity", encode_error({ x = -math.huge }))
  end)
end)

describe("json strings", function()
  it("passes UTF-8 and '/' through untouched", function()
    local s = "héllo ✓ 😀 a/b"
    assert.are.equal('"' .. s .. '"', encode(s))
    assert.are.equal(s, decode(encode(s)))
    assert.are.equal("\255\254\127", decode(encode("\255\254\127"))) -- not UTF-8, DEL: still bytes
    assert.are.equal('"\255\127"', encode("\255\127"))
  end)

  it("escapes quotes, backslashes and control characters", function()
    assert.are.equal([["a\"b\\c"]], encode('a"b\\c'))
    assert.are.equal([["\b\f\n\r\t"]], encode("\b\f\n\r\t"))
    assert.are.equal([["\u0000\u0001\u000b\u001f "]], encode("\0\1\11\31 "))
    local all = {}
    for i = 0, 255 do
      all[#all + 1] = string.char(i)
    end
    all = table.concat(all)
    assert.are.equal(all, decode(encode(all)))
    assert.are.equal(all:rep(10), decode(encode(all:rep(10))))
  end)

  it("decodes every escape", function()
    assert.are.equal('"\\/\b\f\n\r\t', decode([["\"\\\/\b\f\n\r\t"]]))
    assert.are.equal("é", decode([["\u00e9"]]))
    assert.are.equal("é", decode([["\u00E9"]]))
    assert.are.equal("\0", decode([["\u0000"]]))
    assert.are.equal("✓", decode([["\u2713"]]))
    assert.are.equal("😀", decode([["\ud83d\ude00"]]))
    assert.are.equal("a long plain prefix 😀 and a long plain suffix",
      decode([["a long plain prefix \uD83D\uDE00 and a long plain suffix"]]))
  end)

  it("keeps lone surrogates as 3-byte sequences", function()
    assert.are.equal("\237\160\128", decode([["\ud800"]]))
    assert.are.equal("\237\176\128x", decode([["\udc00x"]]))
    assert.are.equal("\237\160\189A", decode([["\ud83d\u0041"]]))
    assert.are.equal("\237\160\189", decode([["\ud83d"]]))
  end)

  it("rejects bad strings", function()
    decode_error('"abc')
    decode_error('"abc\\')
    decode_error('"abc\\"')
    decode_error('"\\x"')
    decode_error('"\\u12"')
    decode_error('"\\u12G4"')
    decode_error('"\\U0041"')
    decode_error("'single'")
    -- one pass over an escaped string reports what two did: an unterminated string or a control
    -- character anywhere after the first backslash before a bad escape
    assert.matches("at byte 8: unterminated string", decode_error('"ab\\x cd'))
    assert.matches("at byte 7: control character", decode_error('"ab\\x c\1"'))
    assert.matches("at byte 3: invalid escape", decode_error('"ab\\x c"'))
    assert.matches("at byte 5: invalid \\u escape", decode_error('"ab\\n\\u12x"'))
    assert.matches("at byte 10: unterminated string", decode_error('"ab\\n\\u12x'))
    -- the same after valid escapes of every kind (the check starts at the bad escape)
    assert.matches("at byte 29: unterminated string", decode_error('"a\\n\\"b\\u0041\\ud83d\\ude00\\x c'))
    assert.matches("at byte 28: control character", decode_error('"a\\n\\"b\\u0041\\ud83d\\ude00\\x \1"'))
    assert.matches("at byte 25: invalid escape", decode_error('"a\\n\\"b\\u0041\\ud83d\\ude00\\x c"'))
    assert.matches("control character", decode_error('"a\nb"'))
    assert.matches("control character", decode_error('"\\n escaped, then raw:\t"'))
    assert.matches("at byte 3: control character", decode_error('"ab\1"'))
  end)
end)

describe("json large strings", function()
  -- A string of 4 MiB or more may have the collector run a full cycle first (json_decode.c
  -- push_string), so that an earlier large result nobody holds is freed before the new one is
  -- made; never when the host stopped the collector.
  it("decodes a 5 MiB escaped string, and leaves a stopped collector stopped", function()
    local text = ('line "%d"\n'):rep(1):rep(500000):sub(1, 5 * 1024 * 1024)
    local json = encode(text)
    assert.are.equal(text, decode(json))
    if pcall(collectgarbage, "isrunning") then -- not on Lua 5.1
      collectgarbage("stop")
      local ok, v = pcall(decode, json)
      local running = collectgarbage("isrunning")
      collectgarbage("restart")
      assert.is_true(ok)
      assert.are.equal(text, v)
      assert.is_false(running)
    end
  end)
end)

describe("json tables", function()
  it("tells [] from {}", function()
    assert.are.equal("[]", encode(decode("[]")))
    assert.are.equal("{}", encode(decode("{}")))
    assert.are.equal("{}", encode({}))
    assert.are.equal("[]", encode(array()))
    assert.are.equal('{"a":[]}', encode(decode('{"a":[]}')))
    assert.are.equal('[{},[]]', encode(decode('[{},[]]')))
    assert.are.equal("array", array_mt.__jsontype)
    assert.is_nil(getmetatable(decode("{}")))
    assert.are.equal(array_mt, getmetatable(decode('[[1]]')[1]))
  end)

  it("honours __jsontype markers read raw", function()
    local as_array = setmetatable({ 1, 2, n = 2 }, { __jsontype = "array" })
    assert.are.equal("[1,2]", encode(as_array))
    assert.are.equal("{}", encode(setmetatable({}, { __jsontype = "object" })))
    assert.are.equal('{"1":"a"}', encode(setmetatable({ [1] = "a" }, { __jsontype = "object" })))
    -- __index on the metatable is not consulted
    local via_index = setmetatable({}, { __index = { __jsontype = "array" } })
    assert.are.equal("{}", encode(via_index))
    -- an array-marked table with a nil inside encodes null there
    local holes = array({ 1 })
    holes[3] = 3
    holes[2] = nil
    local text = encode(holes)
    assert.is_true(text == "[1]" or text == "[1,null,3]", text)
  end)

  it("round-trips large arrays", function()
    local t = {}
    for i = 1, 100000 do
      t[i] = i * 3
    end
    local text = encode(t)
    assert.are.equal("[" .. table.concat(t, ",") .. "]", text)
    local back = decode(text)
    assert.are.equal(100000, #back)
    for i = 1, 100000 do
      if back[i] ~= t[i] then
        assert.are.equal(t[i], back[i])
      end
    end
  end)

  it("round-trips nested objects", function()
    local src = '{"a":{"b":{"c":[1,{"d":true,"e":false,"f":null}],"g":"x"}},"h":-1.25}'
    local v = decode(src)
    assert.are.equal(1, v.a.b.c[1])
    assert.is_true(v.a.b.c[2].d)
    assert.is_false(v.a.b.c[2].e)
    assert.are.equal(null, v.a.b.c[2].f)
    assert.are.equal("x", v.a.b.g)
    assert.are.equal(-1.25, v.h)
    assert.are.same(v, decode(encode(v)))
    assert.are.same({ a = { b = { 1, 2, { c = "d" } } } }, decode(encode({ a = { b = { 1, 2, { c = "d" } } } })))
  end)

  it("lets the last duplicate key win", function()
    assert.are.equal(2, decode('{"a":1,"a":2}').a)
  end)

  -- The decoder keeps the first 16 members of a container on the stack and creates its table at
  -- the end (or at the 16th member, then adds the rest): every size around that edge, in order.
  it("decodes containers of every size around the pre-sizing edge, members in order", function()
    for n = 0, 40 do
      local items, members = {}, {}
      for i = 1, n do
        items[i] = tostring(i * 7)
        members[i] = ('"k%d":%d'):format(i, i * 7)
      end
      local arr = decode("[" .. table.concat(items, ",") .. "]")
      assert.are.equal(array_mt, getmetatable(arr))
      assert.are.equal(n, #arr)
      local obj = decode("{" .. table.concat(members, ",") .. "}")
      assert.is_nil(getmetatable(obj))
      local count = 0
      for _ in pairs(obj) do count = count + 1 end
      assert.are.equal(n, count)
      for i = 1, n do
        assert.are.equal(i * 7, arr[i])
        assert.are.equal(i * 7, obj["k" .. i])
      end
    end
  end)

  it("lets the last duplicate key win on both sides of the pre-sizing edge", function()
    local members = {}
    for i = 1, 40 do members[i] = ('"k%d":%d'):format(i % 5, i) end
    local obj = decode("{" .. table.concat(members, ",") .. "}")
    assert.are.same({ k0 = 40, k1 = 36, k2 = 37, k3 = 38, k4 = 39 }, obj)
    assert.are.same({ a = 3 }, decode('{"a":1,"a":2,"a":3}'))
  end)

  it("decodes wide containers nested deeper than the pre-sized levels", function()
    -- 40 levels, each an object of 20 members whose last one holds the next level
    local text = "1"
    for d = 1, 40 do
      local members = {}
      for i = 1, 19 do members[i] = ('"m%d":[%d,"s"]'):format(i, d) end
      members[20] = '"next":' .. text
      text = "{" .. table.concat(members, ",") .. "}"
    end
    local v = decode(text)
    for d = 40, 1, -1 do
      assert.are.equal(d, v.m19[1])
      assert.are.equal(array_mt, getmetatable(v.m1))
      v = v.next
    end
    assert.are.equal(1, v)
  end)

  it("accepts integral float keys as array indices", function()
    assert.are.equal('["a","b"]', encode({ [1.0] = "a", [2] = "b" }))
  end)

  it("refuses sparse arrays and mixed or invalid keys", function()
    assert.matches("sparse array", encode_error({ [1] = 1, [3] = 3 }))
    assert.matches("sparse array", encode_error({ [2] = 1 }))
    assert.matches("sparse array", encode_error({ [1e9] = 1 }))
    assert.matches("mixed/invalid keys", encode_error({ 1, a = 2 }))
    assert.matches("mixed/invalid keys", encode_error({ a = 1, [1] = 2 }))
    assert.matches("mixed/invalid keys", encode_error({ [0] = 1 }))
    assert.matches("mixed/invalid keys", encode_error({ [-1] = 1 }))
    assert.matches("mixed/invalid keys", encode_error({ [1.5] = 1 }))
    assert.matches("mixed/invalid keys", encode_error({ [true] = 1 }))
    assert.matches("mixed/invalid keys", encode_error({ [{}] = 1 }))
  end)
end)

describe("json null and other values", function()
  it("round-trips null", function()
    assert.are.equal(null, decode("null"))
    assert.are.equal("null", encode(null))
    assert.are.equal("null", encode(nil))
    assert.are.equal("null", encode())
    assert.are.equal("[null,1]", encode({ null, 1 }))
    assert.are.equal(null, decode("[null]")[1])
    assert.are.equal('{"a":null}', encode(decode('{"a":null}')))
  end)

  it("encodes booleans and literals exactly", function()
    assert.are.equal("true", encode(true))
    assert.are.equal("false", encode(false))
    assert.is_true(decode("true"))
    assert.is_false(decode("false"))
    decode_error("tru")
    decode_error("nul")
    decode_error("True")
    decode_error("truex")
  end)

  it("encodes the registry null alias as null", function()
    local reg = debug.getregistry()
    local sentinel = setmetatable({}, { __tostring = function() return "NIL" end })
    reg["mcp.json.null_alias"] = sentinel
    local ok, text = pcall(encode, { sentinel, { x = sentinel } })
    reg["mcp.json.null_alias"] = nil
    assert.is_true(ok, text)
    assert.are.equal('[null,{"x":null}]', text)
    assert.are.equal("{}", encode(sentinel)) -- no alias any more: a plain empty table
  end)

  it("refuses functions, threads and userdata", function()
    assert.matches("cannot encode function", encode_error(print))
    assert.matches("cannot encode function", encode_error({ f = function() end }))
    assert.matches("cannot encode thread", encode_error(coroutine.create(function() end)))
    assert.matches("cannot encode userdata", encode_error(io.stdout))
  end)
end)

describe("json structure and errors", function()
  it("allows whitespace around values only", function()
    assert.are.same({ 1, 2 }, decode(" \t\r\n[ 1 ,\n2 ] \n"))
    assert.are.same({ a = 1 }, decode('{ "a" : 1 }'))
    decode_error("")
    decode_error("   ")
    decode_error("\f1") -- form feed is not JSON whitespace
  end)

  it("returns errors for trailing garbage", function()
    assert.matches("at byte 3: trailing garbage", decode_error("{} x"))
    decode_error("[1]]")
    decode_error("1 2")
    decode_error('"a""b"')
    decode_error("[1]\0")
  end)

  it("names the offending byte", function()
    assert.are.equal("JSON parse error at byte 5: expected ':'", select(2, decode('{"a" 1}')))
    assert.are.equal("JSON parse error at byte 3: unexpected character ']'", select(2, decode("[1,]")))
    assert.are.equal("JSON parse error at byte 6: unexpected end of input", select(2, decode('{"a":1')))
    assert.matches("expected ',' or '}'", decode_error('{"a":1 "b":2}'))
    assert.matches("expected ',' or ']'", decode_error("[1 2]"))
    assert.matches("expected string key", decode_error("{a:1}"))
    assert.matches("expected string key", decode_error('{"a":1,}'))
  end)

  it("returns errors for every truncation of a document", function()
    local doc = '{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\ud83d\\ude00y",{"b":[]}],"c":{}}'
    assert.is_table(decode(doc))
    for i = 0, #doc - 1 do
      decode_error(doc:sub(1, i))
    end
  end)

  it("survives mutated documents", function()
    local doc = '{"k":[1,2.5,"s\\n",{"t":null}],"u":true}'
    local bytes = { "", "{", "}", "[", "]", '"', "\\", ",", ":", "0", "-", "e", ".", "\0", "\255" }
    for i = 1, #doc do
      for _, b in ipairs(bytes) do
        local ok, err = pcall(decode, doc:sub(1, i - 1) .. b .. doc:sub(i + 1))
        assert.is_true(ok, err)
      end
    end
  end)

  it("raises only for a non-string argument", function()
    assert.has_error(function() decode({}) end)
  end)
end)

describe("json depth limit", function()
  local function nested(n)
    local t = {}
    for _ = 2, n do
      t = { t }
    end
    return t
  end

  it("encodes 512 levels and refuses 513", function()
    local ok = encode(nested(512))
    assert.are.equal(string.rep("[", 511) .. "{}" .. string.rep("]", 511), ok)
    assert.matches("nesting too deep", encode_error(nested(513)))
  end)

  it("refuses cycles", function()
    local t = {}
    t[1] = t
    assert.matches("nesting too deep", encode_error(t))
    local o = {}
    o.self = o
    assert.matches("nesting too deep", encode_error(o))
  end)

  it("decodes 512 levels and refuses 513", function()
    assert.is_table(decode(string.rep("[", 512) .. string.rep("]", 512)))
    assert.matches("nesting too deep", decode_error(string.rep("[", 513) .. string.rep("]", 513)))
    assert.matches("nesting too deep", decode_error(string.rep('{"a":', 513) .. "1" .. string.rep("}", 513)))
    assert.matches("nesting too deep", decode_error(string.rep("[", 100000)))
  end)
end)

describe("json under a comma decimal-point locale", function()
  local old = os.setlocale(nil, "numeric")
  local loc
  for _, name in ipairs({ "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE", "fr_FR" }) do
    if os.setlocale(name, "numeric") then
      loc = name
      break
    end
  end
  os.setlocale(old, "numeric")

  local run = loc and it or pending
  run("encodes and decodes with '.' anyway", function()
    os.setlocale(loc, "numeric")
    local ok, err = pcall(function()
      assert.are.equal("[0.5,1.5e+300,0.1]", encode({ 0.5, 1.5e300, 0.1 }))
      assert.are.equal(0.5, decode("0.5"))
      assert.are.equal(12345678901234567890.5, decode("12345678901234567890.5")) -- strtod path
      assert.are.equal(0.30000000000000004, decode("0.30000000000000004"))
      assert.are.equal(0.1 + 0.2, decode(encode(0.1 + 0.2)))
      decode_error("0,5")
    end)
    os.setlocale(old, "numeric")
    assert.is_true(ok, err)
  end)
end)

describe("json key order of schema properties", function()
  it("records the wire order of every \"properties\" object, and only of those", function()
    local v = decode('{"type":"object","properties":{"zeta":{"type":"string"},' ..
      '"alpha":{"properties":{"y":1,"x":2}},"mid":3},"other":{"b":1,"a":2},"p":{"properties":7}}')
    local mt = getmetatable(v.properties)
    assert.are.same({ "zeta", "alpha", "mid" }, mt.__keyorder)
    assert.are.equal("object", mt.__jsontype)
    assert.are.same({ "y", "x" }, getmetatable(v.properties.alpha.properties).__keyorder)
    assert.is_nil(getmetatable(v))
    assert.is_nil(getmetatable(v.other))
    assert.are.equal(7, v.p.properties)
    assert.are.same({ zeta = { type = "string" }, alpha = { properties = { y = 1, x = 2 } }, mid = 3 }, v.properties)
    assert.are.equal("{}", encode(decode('{"properties":{}}').properties))
    -- duplicate keys: the last value wins, the order lists each key once, where it first
    -- appeared (JSON.parse's order), so a form never asks a field twice
    local d = decode('{"properties":{"a":1,"b":2,"a":3,"c":null,"c":4,"b":null}}').properties
    assert.are.equal(3, d.a)
    assert.are.equal(4, d.c)
    assert.are.equal(null, d.b)
    assert.are.same({ "a", "b", "c" }, getmetatable(d).__keyorder)
    -- a round trip keeps the value
    assert.are.same(v, decode(encode(v)))
  end)
  it("fails cleanly in the middle of a properties object", function()
    local v, err = decode('{"properties":{"a":1,"b":')
    assert.is_nil(v)
    assert.truthy(err)
    v, err = decode('{"properties":{"a":1,"b"]}')
    assert.is_nil(v)
    assert.truthy(err)
  end)
end)

describe("json key order on request (decode(s, true), mcp.json.decode(s, {key_order = true}))", function()
  local text = '{"zeta":1,"alpha":{"y":[{"q":1,"b":2},[]],"c":null,"a":{}},"mid":"x","beta":true}'

  it("records every object's key order, and encode writes it again byte for byte", function()
    local v = decode(text, true)
    assert.are.same({ "zeta", "alpha", "mid", "beta" }, getmetatable(v).__keyorder)
    assert.are.same({ "y", "c", "a" }, getmetatable(v.alpha).__keyorder)
    assert.are.same({ "q", "b" }, getmetatable(v.alpha.y[1]).__keyorder)
    assert.are.equal(text, encode(v))
    assert.are.equal(text, require("mcp.json").encode(require("mcp.json").decode(text, { key_order = true })))
  end)

  it("is off by default: plain tables, no order (only \"properties\" keeps one)", function()
    local v = decode(text)
    assert.is_nil(getmetatable(v))
    assert.is_nil(getmetatable(v.alpha))
    assert.is_nil(getmetatable(require("mcp.json").decode(text, {})))
    assert.has_error(function() require("mcp.json").decode(text, true) end)
  end)

  it("duplicate keys are written once, at their first place, with the last value", function()
    assert.are.equal('{"b":3,"a":2}', encode(decode('{"b":1,"a":2,"b":3}', true)))
  end)

  it("keys added after decoding follow the listed ones; removed keys are left out", function()
    local v = decode('{"c":1,"b":2,"a":3}', true)
    v.b = nil
    v.d = 4
    assert.are.equal('{"c":1,"a":3,"d":4}', encode(v))
    -- a list naming a key twice, or a key that is not a string, writes each key once
    local t = setmetatable({ x = 1, y = 2, [1] = "n" }, { __jsontype = "object", __keyorder = { "y", 5, "y", "x" } })
    assert.are.equal('{"y":2,"x":1,"1":"n"}', encode(t))
  end)

  it("round-trips generated documents byte for byte (nested objects and arrays, unsorted keys)", function()
    local seed = 12345
    local function rand(n) -- a small LCG: the same documents on every Lua
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local function gen(depth)
      local r = rand(depth > 3 and 3 or 6)
      if r == 0 then return tostring(rand(1000)) end
      if r == 1 then return '"s' .. rand(100) .. '"' end
      if r == 2 then return ({ "true", "false", "null" })[rand(3) + 1] end
      if r == 3 then
        local items = {}
        for i = 1, rand(4) do items[i] = gen(depth + 1) end
        return "[" .. table.concat(items, ",") .. "]"
      end
      local members, used = {}, {}
      for _ = 1, rand(7) do
        local k = "k" .. rand(50)
        if not used[k] then
          used[k] = true
          members[#members + 1] = '"' .. k .. '":' .. gen(depth + 1)
        end
      end
      return "{" .. table.concat(members, ",") .. "}"
    end
    for _ = 1, 200 do
      local doc = '{"root":' .. gen(0) .. ',"z":1,"a":2}'
      assert.are.equal(doc, encode(decode(doc, true)))
    end
  end)

  it("a failure inside an ordered object leaves nothing behind", function()
    local v, err = decode('{"a":{"b":1,"c":', true)
    assert.is_nil(v)
    assert.truthy(err)
    local t = setmetatable({ a = function() end }, { __jsontype = "object", __keyorder = { "a" } })
    assert.has_error(function() encode(t) end, "cannot encode function")
  end)
end)
