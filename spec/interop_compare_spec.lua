-- The comparison of the differential interop suite (interop/compare.lua, make interop), without
-- servers: a difference fails, a rule takes away only what its path names, and the checks that
-- keep a pass from being vacuous see what they are meant to see.
package.path = "./interop/?.lua;" .. package.path
local compare = require("compare")
local json = require("mcp.json")

local function doc(text) return json.decode(text) end

describe("interop: canonical comparison", function()
  it("the same document in another key order is the same", function()
    local same, diffs = compare.compare(doc('{"a":1,"b":[1,{"x":"é","y":null}]}'), doc('{"b":[1,{"y":null,"x":"é"}],"a":1.0}'))
    assert.is_true(same)
    assert.are.same({}, diffs)
  end)

  it("a missing field, an empty array for an empty object, another string: each a difference with its path", function()
    local a = doc('{"tools":[{"name":"t","annotations":{"readOnlyHint":true}}],"s":{},"v":"x"}')
    local b = doc('{"tools":[{"name":"t"}],"s":[],"v":"y"}')
    local same, diffs = compare.compare(a, b)
    assert.is_false(same)
    assert.are.equal(3, #diffs)
    assert.is_truthy(diffs[1]:find("^  s\n"))
    assert.is_truthy(diffs[2]:find("^  tools%.0%.annotations\n"))
    assert.is_truthy(diffs[2]:find("TS SDK:  %(absent%)"))
    assert.is_truthy(diffs[3]:find("^  v\n"))
  end)

  it("lists the differing indices in numeric order", function()
    local a, b = json.array(), json.array()
    for i = 1, 12 do a[i], b[i] = i, i + 100 end
    local _, diffs = compare.compare({ r = a }, { r = b }, 3)
    assert.are.equal(3, #diffs)
    assert.is_truthy(diffs[1]:find("^  r%.0\n"))
    assert.is_truthy(diffs[2]:find("^  r%.1\n"))
    assert.is_truthy(diffs[3]:find("^  r%.2\n"))
  end)
end)

describe("interop: rules", function()
  it("a drop or a mask touches only the path it names, on both sides, and counts what it touched", function()
    local rules = {
      { path = "resources.*.text", action = "drop", why = "stripped by the TS SDK" },
      { path = "calls.1.result.when", action = "mask", why = "a time" },
    }
    local a = doc('{"resources":[{"uri":"u1","text":"t"},{"uri":"u2"}],"calls":[{"result":{}},{"result":{"when":"1","x":2}}]}')
    local b = doc('{"resources":[{"uri":"u1"},{"uri":"u2"}],"calls":[{"result":{}},{"result":{"when":"2","x":3}}]}')
    local ua, ub = compare.normalise(a, rules), compare.normalise(b, rules)
    assert.are.equal(1, ua[rules[1]])
    assert.are.equal(0, ub[rules[1]])
    assert.are.equal(1, ua[rules[2]])
    assert.are.equal("<masked>", a.calls[2].result.when)
    local same, diffs = compare.compare(a, b)
    assert.is_false(same) -- x still differs: the mask took only "when"
    assert.are.equal(1, #diffs)
    assert.is_truthy(diffs[1]:find("^  calls%.1%.result%.x\n"))
  end)

  it("a rule needs a path, drop or mask, and its reason", function()
    assert.is_nil(compare.bad_rule({ path = "a", action = "drop", why = "because" }))
    assert.is_truthy(compare.bad_rule({ path = "a", action = "drop" }):find("reason"))
    assert.is_truthy(compare.bad_rule({ path = "a", action = "ignore", why = "x" }):find("drop or mask"))
    assert.is_truthy(compare.bad_rule({ action = "drop", why = "x" }):find("path"))
  end)

  it("get reads a dotted path, indices from 0", function()
    local d = doc('{"a":[{"b":"x"},{"b":"y"}]}')
    assert.are.equal("y", compare.get(d, "a.1.b"))
    assert.is_nil(compare.get(d, "a.2.b"))
  end)
end)

describe("interop: no vacuous pass", function()
  local calls = {
    { method = "tools/call", name = "echo" },
    { method = "tools/call", name = "no-such-tool", fails = true },
    { method = "resources/read", uri = "x://missing", fails = true },
  }

  it("calls that end as the list says are no problem", function()
    local d = doc('{"calls":[{"result":{"content":[]}},{"result":{"content":[],"isError":true}},'
      .. '{"error":{"code":-32002,"message":"not found"}}]}')
    assert.are.same({}, compare.outcomes("lua-mcp", d, calls))
  end)

  it("a call meant to succeed that failed (both clients agreeing) is a problem, and so is the reverse", function()
    local d = doc('{"calls":[{"result":{"content":[],"isError":true}},{"result":{"content":[]}},'
      .. '{"error":{"code":-32002,"message":"not found"}}]}')
    local problems = compare.outcomes("TS SDK", d, calls)
    assert.are.equal(2, #problems)
    assert.is_truthy(problems[1]:find("call 0 (tools/call echo) was meant to succeed and failed", 1, true))
    assert.is_truthy(problems[2]:find("call 1 (tools/call no-such-tool) was meant to fail and succeeded", 1, true))
  end)

  it("a call with no outcome at all is a problem", function()
    assert.are.equal(3, #compare.outcomes("lua-mcp", doc('{"calls":[]}'), {
      { method = "tools/call", name = "a" }, { method = "tools/call", name = "b" }, { method = "tools/call", name = "c" },
    }))
  end)

  it("on_error reports: each must be known, each known one must happen", function()
    local known = { { match = "closed on the server/discover probe", why = "rmcp" } }
    assert.are.same({}, compare.reports({ "the server closed on the server/discover probe (...)" }, known))
    local p = compare.reports({ "server/discover got no answer; fell back to initialize" }, known)
    assert.are.equal(2, #p)
    assert.is_truthy(p[1]:find("no entry of reports explains", 1, true))
    assert.is_truthy(p[2]:find("did not happen", 1, true))
    assert.are.same({}, compare.reports({}, {}))
  end)
end)
