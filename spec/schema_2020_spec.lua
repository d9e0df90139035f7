-- JSON Schema 2020-12 keywords that need annotations or a dynamic scope: unevaluatedProperties,
-- unevaluatedItems, $dynamicRef/$dynamicAnchor; and a pattern no engine here can run: our own
-- cases, modelled on the suite's groups, one describe per keyword. The official test suite's
-- draft2020-12 cases run in `make schema-suite` (from Debian's libtest-json-schema-acceptance-perl;
-- no npm package ships them: json-schema-test-suite 0.0.10 has draft3/draft4 only,
-- @json-schema-org/tests pulls them from a git host).
local schema = require("mcp.schema")
local json = require("mcp.json")

local function valid(s, v) return #schema.errors(s, v) == 0 end
local function valid_with(s, v, docs) return #schema.errors(s, v, { schemas = docs }) == 0 end
local function keywords(s, v)
  local out = {}
  for _, e in ipairs(schema.errors(s, v)) do out[#out + 1] = e.path .. " " .. e.keyword end
  return out
end

describe("unevaluatedProperties", function()
  it("false rejects properties no keyword evaluated, and names them", function()
    local s = { type = "object", properties = { a = { type = "string" } }, unevaluatedProperties = false }
    assert.is_true(valid(s, { a = "x" }))
    assert.same({ "/b unevaluatedProperties" }, keywords(s, { a = "x", b = 1 }))
  end)
  it("sees through allOf and $ref (what additionalProperties cannot)", function()
    local s = {
      ["$defs"] = { base = { properties = { id = { type = "integer" } } } },
      allOf = { { ["$ref"] = "#/$defs/base" }, { properties = { name = { type = "string" } } } },
      unevaluatedProperties = false,
    }
    assert.is_true(valid(s, { id = 1, name = "n" }))
    assert.same({ "/extra unevaluatedProperties" }, keywords(s, { id = 1, name = "n", extra = true }))
  end)
  it("counts every valid anyOf branch and only the valid oneOf branch", function()
    local s = { anyOf = { { properties = { a = true }, required = { "a" } }, { properties = { b = true }, required = { "b" } } },
      unevaluatedProperties = false }
    assert.is_true(valid(s, { a = 1, b = 2 }))
    assert.same({ "/c unevaluatedProperties" }, keywords(s, { a = 1, c = 3 }))
    local o = { oneOf = { { properties = { a = true }, required = { "a" } }, { properties = { b = { type = "string" } }, required = { "b" } } },
      unevaluatedProperties = false }
    -- b fails its branch, so only a's branch is valid and b stays unevaluated
    assert.same({ "/b unevaluatedProperties" }, keywords(o, { a = 1, b = 2 }))
  end)
  it("counts if when it holds, then/else as applied, never not", function()
    local s = { ["if"] = { properties = { kind = { const = "x" } }, required = { "kind" } },
      ["then"] = { properties = { x = true } }, ["else"] = { properties = { y = true } },
      unevaluatedProperties = false }
    assert.is_true(valid(s, { kind = "x", x = 1 }))
    assert.same({ "/y unevaluatedProperties" }, keywords(s, { kind = "x", y = 1 }))
    assert.same({ "/kind unevaluatedProperties" }, keywords(s, { kind = "z", y = 1 }))
    local n = { ["not"] = { properties = { a = { type = "string" } }, required = { "a" } }, unevaluatedProperties = false }
    assert.same({ "/a unevaluatedProperties" }, keywords(n, { a = 1 }))
  end)
  it("a schema validates the unevaluated ones; patternProperties and additionalProperties evaluate", function()
    local s = { patternProperties = { ["^x_"] = true }, unevaluatedProperties = { type = "integer" } }
    assert.is_true(valid(s, { x_a = "s", n = 1 }))
    assert.same({ "/n type" }, keywords(s, { x_a = "s", n = "s" }))
    assert.is_true(valid({ additionalProperties = true, unevaluatedProperties = false }, { any = 1 }))
  end)
  it("nested: an inner unevaluatedProperties does not see the outer properties", function()
    local s = { properties = { foo = true }, allOf = { { unevaluatedProperties = false } } }
    assert.same({ "/foo unevaluatedProperties" }, keywords(s, { foo = 1 }))
  end)
  it("dependentSchemas evaluate when their property is present", function()
    local s = { dependentSchemas = { a = { properties = { b = true } } }, properties = { a = true },
      unevaluatedProperties = false }
    assert.is_true(valid(s, { a = 1, b = 2 }))
    assert.same({ "/b unevaluatedProperties" }, keywords(s, { b = 2 }))
  end)
end)

describe("unevaluatedItems", function()
  it("false after prefixItems rejects the rest", function()
    local s = { prefixItems = { { type = "string" } }, unevaluatedItems = false }
    assert.is_true(valid(s, { "a" }))
    assert.same({ "/1 unevaluatedItems" }, keywords(s, { "a", "b" }))
  end)
  it("sees prefixItems through allOf, and items evaluates everything", function()
    local s = { allOf = { { prefixItems = { true, true } } }, unevaluatedItems = { type = "integer" } }
    assert.is_true(valid(s, { "a", "b", 3 }))
    assert.same({ "/2 type" }, keywords(s, { "a", "b", "c" }))
    assert.is_true(valid({ allOf = { { items = true } }, unevaluatedItems = false }, { 1, 2, 3 }))
  end)
  it("contains evaluates the items it matched", function()
    local s = { contains = { type = "string" }, unevaluatedItems = { type = "integer" } }
    assert.is_true(valid(s, { "a", 1, "b" }))
    assert.same({ "/1 type" }, keywords(s, { "a", true }))
  end)
  it("an empty array is valid", function()
    assert.is_true(valid({ unevaluatedItems = false }, json.array()))
  end)
end)

describe("$dynamicRef / $dynamicAnchor", function()
  local tree = {
    ["$id"] = "https://example.com/tree", ["$dynamicAnchor"] = "node", type = "object",
    properties = { data = true, children = { type = "array", items = { ["$dynamicRef"] = "#node" } } },
  }
  local strict = {
    ["$id"] = "https://example.com/strict-tree", ["$dynamicAnchor"] = "node",
    ["$ref"] = "tree", unevaluatedProperties = false, ["$defs"] = { tree = tree },
  }
  it("resolves to the outermost resource declaring the anchor (the strict tree extends the tree)", function()
    assert.is_true(valid(strict, { children = { { data = 1 } } }))
    assert.same({ "/children/0/daat unevaluatedProperties" }, keywords(strict, { children = { { daat = 1 } } }))
  end)
  it("the tree alone stays loose", function()
    assert.is_true(valid(tree, { children = { { daat = 1 } } }))
  end)
  it("without a matching $dynamicAnchor at the first target it acts as $ref", function()
    local s = { ["$defs"] = { n = { ["$anchor"] = "n", type = "integer" } }, ["$dynamicRef"] = "#n" }
    assert.is_true(valid(s, 1))
    assert.same({ " type" }, keywords(s, "x"))
  end)
  it("a $ref into a subschema of another resource enters that resource's dynamic scope", function()
    -- root -> a#/$defs/go -> b#/$defs/go -> $dynamicRef "#limit": a declares no anchor, b does
    -- (the outermost in scope that declares it), b's target's own anchor would allow more
    local s = {
      ["$id"] = "https://example.com/root", ["$ref"] = "a#/$defs/go",
      ["$defs"] = {
        a = { ["$id"] = "a", ["$defs"] = { go = { ["$ref"] = "b#/$defs/go" }, limit = { maxLength = 1 } } },
        b = { ["$id"] = "b", ["$defs"] = { go = { ["$ref"] = "c#/$defs/go" }, limit = { ["$dynamicAnchor"] = "limit", maxLength = 2 } } },
        c = { ["$id"] = "c", ["$defs"] = { go = { ["$dynamicRef"] = "#limit" }, limit = { ["$dynamicAnchor"] = "limit", maxLength = 3 } } },
      },
    }
    assert.is_true(valid(s, "hi"))
    assert.same({ " maxLength" }, keywords(s, "hey"))
  end)
  it("an unresolvable $dynamicRef is an error naming it", function()
    assert.same({ " $dynamicRef" }, keywords({ ["$dynamicRef"] = "#nowhere" }, 1))
  end)
end)

describe("multipleOf", function()
  it("a quotient that overflows to infinity is not a multiple", function()
    assert.same({ " multipleOf" }, keywords({ type = "integer", multipleOf = 0.123456789 }, 1e308))
  end)
end)

describe("$id bases", function()
  it("a relative $ref resolves against the enclosing $id", function()
    local s = { ["$id"] = "https://example.com/root.json",
      ["$defs"] = { a = { ["$id"] = "item.json", type = "string" } },
      properties = { x = { ["$ref"] = "item.json" } } }
    assert.is_true(valid(s, { x = "s" }))
    assert.same({ "/x type" }, keywords(s, { x = 1 }))
  end)

  it("an $id or anchor inside an unknown keyword identifies nothing; a pointer into it still resolves", function()
    local fake = { ["$id"] = "https://example.com/fake.json", ["$anchor"] = "fake", type = "string" }
    local errs = schema.errors({ x_unknown = fake, ["$ref"] = "https://example.com/fake.json" }, "text")
    assert.equals(1, #errs)
    assert.matches('cannot resolve $ref "https://example.com/fake.json"', errs[1].message, 1, true)
    assert.same({ " $ref" }, keywords({ x_unknown = fake, ["$ref"] = "#fake" }, "text"))
    assert.is_true(valid({ x_unknown = { type = "string" }, ["$ref"] = "#/x_unknown" }, "text"))
    assert.is_false(valid({ x_unknown = { type = "string" }, ["$ref"] = "#/x_unknown" }, 1))
    -- the real resource of that name wins over the one in the unknown keyword (suite: unknownKeyword.json)
    local both = json.decode([[{"$defs": {"a": {"x_unknown": [{"$id": "https://example.com/my.json", "type": "null"}]},
      "real": {"$id": "https://example.com/my.json", "type": "string"}}, "$ref": "https://example.com/my.json"}]])
    assert.is_true(valid(both, "text"))
    assert.is_false(valid(both, json.null))
  end)
end)

describe("opts.schemas: documents a $ref names by URI", function()
  local defs = { ["$id"] = "https://example.com/defs.json",
    ["$defs"] = { name = { type = "string", minLength = 1 } } }
  local s = { ["$id"] = "https://example.com/root.json", properties = {
    a = { ["$ref"] = "defs.json#/$defs/name" },
    b = { ["$ref"] = "https://example.com/int.json" } } }
  local docs = { ["https://example.com/defs.json"] = defs, ["https://example.com/int.json"] = { type = "integer" } }

  it("resolves a relative or absolute $ref into them; nothing is fetched without them", function()
    assert.same({}, schema.errors(s, { a = "x", b = 1 }, { schemas = docs }))
    assert.same({ "/a minLength", "/b type" }, (function()
      local out = {}
      for _, e in ipairs(schema.errors(s, { a = "", b = "1" }, { schemas = docs })) do
        out[#out + 1] = e.path .. " " .. e.keyword
      end
      table.sort(out)
      return out
    end)())
    local errs = schema.errors(s, { a = "x" })
    assert.equals(1, #errs)
    assert.matches('cannot resolve $ref "defs.json#/$defs/name"', errs[1].message, 1, true)
    assert.is_true(schema.validate(s, { a = "x", b = 2 }, { schemas = docs }))
  end)

  it("a document is a resource of its own: its URI is the base of its relative references (../ resolved)", function()
    local list = { ["$id"] = "https://example.com/list.json", type = "array",
      items = { ["$ref"] = "nested/item.json" } }
    local item = { type = "object", properties = { v = { ["$ref"] = "../defs.json#/$defs/name" },
      w = { ["$ref"] = "./../nested/./item.json#/properties/v" } } }
    local more = { ["https://example.com/defs.json"] = defs, ["https://example.com/nested/item.json"] = item }
    assert.is_true(valid_with(list, { { v = "ok", w = "ok" } }, more))
    assert.is_false(valid_with(list, { { v = "" } }, more))
    assert.is_false(valid_with(list, { { w = "" } }, more))
  end)

  it("rejects a schemas option that is not a table", function()
    assert.has_error(function() schema.errors({}, 1, { schemas = "https://example.com" }) end)
  end)
end)

-- mcp.schema loaded afresh with require("rex_pcre2") failing: the path of a machine without it.
local function without_pcre2(fn)
  local saved_lib, saved_schema = package.loaded.rex_pcre2, package.loaded["mcp.schema"]
  package.loaded.rex_pcre2, package.loaded["mcp.schema"] = nil, nil
  package.preload.rex_pcre2 = function() error("hidden by the spec") end
  local ok, err = pcall(fn, require("mcp.schema"))
  package.preload.rex_pcre2 = nil
  package.loaded.rex_pcre2, package.loaded["mcp.schema"] = saved_lib, saved_schema
  if not ok then error(err, 0) end
end

describe("a pattern the regex engine cannot run", function()
  local backref = { type = "string", pattern = "^(a)\\1$" }
  it("is not passed silently without lrexlib-pcre2: the value is reported as unchecked", function()
    without_pcre2(function(s)
      local errs, unchecked = s.errors(backref, "ab")
      assert.same({}, errs)
      assert.equals(1, #unchecked)
      assert.equals("pattern", unchecked[1].keyword)
      assert.matches("not checked against the pattern", unchecked[1].message)
      local ok, err, skipped = s.validate(backref, "ab")
      assert.is_true(ok)
      assert.is_nil(err)
      assert.equals("pattern", skipped[1].keyword)
      local _, perr = s.errors({ patternProperties = { ["(?<=a)b"] = false } }, { ab = 1 })
      assert.equals("patternProperties", perr[1].keyword)
      assert.equals("/ab", perr[1].path)
    end)
  end)
  it("is run by lrexlib-pcre2 when installed", function()
    if not pcall(require, "rex_pcre2") then
      pending("lrexlib-pcre2 (Debian: lua-rex-pcre2) is not installed for this Lua")
      return
    end
    assert.is_true(valid(backref, "aa"))
    assert.same({ " pattern" }, keywords(backref, "ab"))
    assert.same({ "/ab false" }, keywords({ patternProperties = { ["(?<=a)b"] = false } }, { ab = 1 }))
    assert.same({}, select(2, schema.errors(backref, "ab")))
  end)
  it("an unknown patternProperties match is not judged by additionalProperties: unchecked, no false error", function()
    without_pcre2(function(s)
      local sch = { patternProperties = { ["(?<=a)b"] = { type = "integer" } }, additionalProperties = false }
      local errs, unchecked = s.errors(sch, { ab = 1 })
      assert.same({}, errs)
      local kw = {}
      for _, u in ipairs(unchecked) do kw[#kw + 1] = u.path .. " " .. u.keyword end
      table.sort(kw)
      assert.same({ "/ab additionalProperties", "/ab patternProperties" }, kw)
      -- a property that a plain key matches is judged as before
      assert.same({ "/n type" }, (function()
        local out = {}
        for _, e in ipairs(s.errors({ properties = { n = { type = "integer" } }, patternProperties = sch.patternProperties,
          additionalProperties = false }, { n = "x" })) do out[#out + 1] = e.path .. " " .. e.keyword end
        return out
      end)())
    end)
  end)
  it("ECMAScript's long property names reach lrexlib-pcre2 by their short names", function()
    if not pcall(require, "rex_pcre2") then
      pending("lrexlib-pcre2 (Debian: lua-rex-pcre2) is not installed for this Lua")
      return
    end
    local function ran(pat, str)
      local errs, unchecked = schema.errors({ type = "string", pattern = pat }, str)
      assert.same({}, unchecked, pat)
      return #errs == 0
    end
    assert.is_true(ran("^\\p{Letter}cole$", "\195\169cole"))
    assert.is_false(ran("^\\p{Letter}cole$", "1cole"))
    assert.is_true(ran("^\\p{digit}+$", "42\224\167\170")) -- BENGALI DIGIT FOUR
    assert.is_true(ran("^\\p{gc=Lu}\\P{General_Category=Uppercase_Letter}$", "Ab"))
    assert.is_true(ran("^\\p{Script=Greek}+$", "\206\177\206\178"))
    assert.is_false(ran("^\\p{sc=Greek}+$", "ab"))
  end)
  it("a valid value with a pattern that ran returns true alone", function()
    assert.same({ true }, { schema.validate({ pattern = "^a" }, "abc") })
  end)
end)
