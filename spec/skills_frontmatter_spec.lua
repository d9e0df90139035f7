-- mcp.skills.frontmatter: the strict YAML reader for SKILL.md frontmatter, and the split of a
-- SKILL.md into frontmatter and body.
local mcp = require("mcp")
local fm = mcp.skills.frontmatter
local J = mcp.json.encode

local function parse(src)
  local v, err = fm.parse_yaml(src)
  assert(v, err)
  return v
end

local function refuses(src, pattern)
  local v, err = fm.parse_yaml(src)
  assert.is_nil(v)
  assert.matches(pattern, err, 1, true)
end

describe("skills frontmatter: the YAML subset", function()
  it("reads plain mappings and core-schema scalars", function()
    local v = parse("name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n")
    assert.are.same({ name = "pdf-processing", description = "Extract, fill, and assemble PDF documents" }, v)
    v = parse("a: 0x1F\nb: 0o17\nc: -5\nd: +3\ne: 1e3\nf: .5\ng: 1.2.3\nh: null\ni: ~\nj: yes\nk: true\nl: FALSE\nm: 2.1\n")
    assert.are.same({ a = 31, b = 15, c = -5, d = 3, e = 1000, f = 0.5, g = "1.2.3", h = mcp.null, i = mcp.null,
      j = "yes", k = true, l = false, m = 2.1 }, v)
    assert.are.equal(mcp.null, parse("empty:\n").empty)
  end)

  it("reads nested mappings, block and flow sequences", function()
    local v = parse("metadata:\n  author: x\n  nested:\n    deep: 1\n  after: y\nlist:\n- a\n- b: 1\n  c: 2\n- - x\n  - y\n" ..
      "tools:\n  - Bash\n  - \"Read\"\nflow: [a, 'b c', 3, {k: v}]\nmap: {k: v, n: [1, 2]}\nempty: []\n")
    assert.are.same({ author = "x", nested = { deep = 1 }, after = "y" }, v.metadata)
    assert.are.same({ "a", { b = 1, c = 2 }, { "x", "y" } }, v.list)
    assert.are.same({ "Bash", "Read" }, v.tools)
    assert.are.same({ "a", "b c", 3, { k = "v" } }, v.flow)
    assert.are.same({ k = "v", n = { 1, 2 } }, v.map)
    assert.are.equal("[]", J(v.empty))
    assert.are.same({ 1, 2 }, parse("b: [\n  1,\n  2\n]\n").b)
  end)

  it("reads quoted scalars with escapes and folding", function()
    local v = parse("a: \"tab\\there \\\"q\\\" \\u00e9\\x41\\uD83D\\uDE00\"\nb: 'it''s: fine'\n" ..
      "c: \"multi\n  line\\\n  joined\"\nd: 'one\n\n  two'\n\"quoted key\": w\nkey with spaces: v\n")
    assert.are.equal("tab\there \"q\" \195\169A\240\159\152\128", v.a)
    assert.are.equal("it's: fine", v.b)
    assert.are.equal("multi linejoined", v.c)
    assert.are.equal("one\ntwo", v.d)
    assert.are.equal("w", v["quoted key"])
    assert.are.equal("v", v["key with spaces"])
  end)

  it("reads literal and folded block scalars with chomping", function()
    local v = parse("lit: |\n  a\n   b\n\n  c\nstrip: |-\n  x\n  y\nkeep: |+\n  k\n\nfold: >\n  one\n  two\n\n  para\n" ..
      "   indented\n  end\nfoldstrip: >-\n  a\n  b\nind: |2\n    two extra\nnext: 1\n")
    assert.are.equal("a\n b\n\nc\n", v.lit)
    assert.are.equal("x\ny", v.strip)
    assert.are.equal("k\n\n", v.keep)
    assert.are.equal("one two\npara\n indented\nend\n", v.fold)
    assert.are.equal("a b", v.foldstrip)
    assert.are.equal("  two extra\n", v.ind)
    assert.are.equal(1, v.next)
  end)

  it("folds multi-line plain scalars and drops comments", function()
    local v = parse("# leading comment\ndescription: Extract text and tables. Use when\n  working with PDFs # trailing\n" ..
      "license: MIT # SPDX\nurl: http://x/#frag\n")
    assert.are.equal("Extract text and tables. Use when working with PDFs", v.description)
    assert.are.equal("MIT", v.license)
    assert.are.equal("http://x/#frag", v.url)
  end)

  it("refuses what it does not support, naming the line", function()
    refuses("a: &x 1\n", "line 1: anchors")
    refuses("a: 1\nb: *x\n", "line 2: aliases")
    refuses("a: !!str 1\n", "tags")
    refuses("a: b: c\n", "cannot hold ': '")
    refuses("a: 1\na: 2\n", "line 2: duplicate key 'a'")
    refuses("\ta: 1\n", "tabs")
    refuses("? a\n: b\n", "complex keys")
    refuses("<<: {a: 1}\n", "merge keys")
    refuses("%YAML 1.2\na: 1\n", "directives")
    refuses("- a\n", "must be a mapping")
    refuses("a: 1\n---\nb: 2\n", "one YAML document")
    refuses("a: x\n b: y\n", "line 2")
    refuses("a: [1, 2\n", "unterminated")
    refuses("a: \"open\n", "unterminated")
    refuses("a: \"\\q\"\n", "unknown escape")
    refuses("a:\n  b: 1\n c: 2\n", "bad indentation")
    refuses("a: @x\n", "cannot start with '@'")
  end)

  it("numbers lines from the file when given the first line's number", function()
    local _, err = fm.parse_yaml("a: 1\na: 2\n", 2)
    assert.matches("line 3:", err, 1, true)
  end)
end)

describe("skills frontmatter: split", function()
  it("splits frontmatter and body, with a BOM and CRLF", function()
    local v, body = fm.split("---\nname: a\ndescription: b\n---\n\nBody.\n")
    assert.are.same({ name = "a", description = "b" }, v)
    assert.are.equal("\nBody.\n", body)
    v, body = fm.split("\239\187\191---\r\nname: a\r\n---\r\nBody")
    assert.are.same({ name = "a" }, v)
    assert.are.equal("Body", body)
    v, body = fm.split("---\nname: a\n---")
    assert.are.same({ name = "a" }, v)
    assert.are.equal("", body)
  end)

  it("refuses a SKILL.md without a frontmatter block", function()
    local v, err = fm.split("# no frontmatter\n")
    assert.is_nil(v)
    assert.matches("does not begin with a '---'", err, 1, true)
    v, err = fm.split("---\nname: a\n")
    assert.is_nil(v)
    assert.matches("no closing '---'", err, 1, true)
    v, err = fm.split("---\nname: [\n---\n")
    assert.is_nil(v)
    assert.matches("SKILL.md frontmatter line 2", err, 1, true)
  end)
end)

describe("mcp.skills helpers", function()
  it("digest, verify and compare_frontmatter", function()
    local d = mcp.skills.digest("abc")
    assert.are.equal("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", d)
    assert.is_true(mcp.skills.verify("abc", { uri = "u", digest = d, size = 3 }))
    assert.is_true(mcp.skills.verify("abc", { uri = "u", digest = d:upper():gsub("^SHA256", "sha256") }))
    local ok, err = mcp.skills.verify("abd", { uri = "u", digest = d })
    assert.is_nil(ok)
    assert.are.equal("verification", err.kind)
    ok, err = mcp.skills.verify("abc", { uri = "u", digest = d, size = 4 })
    assert.is_nil(ok)
    assert.matches("3 bytes read", err.message, 1, true)
    ok, err = mcp.skills.verify("abc", { uri = "u" })
    assert.is_nil(ok)
    assert.matches("no digest", err.message, 1, true)
    assert.is_true(mcp.skills.compare_frontmatter({ a = 1, m = { x = "y" }, n = mcp.null }, { a = 1.0, m = { x = "y" } }))
    local same, field = mcp.skills.compare_frontmatter({ a = "1" }, { a = 1 })
    assert.is_nil(same)
    assert.are.equal("a", field)
    same, field = mcp.skills.compare_frontmatter({ a = { 1, 2 } }, { a = { 2, 1 } })
    assert.is_nil(same)
    assert.are.equal("a", field)
  end)
end)

describe("mcp.skills.for_agent", function()
  it("qualifies colliding names by path, then by URI", function()
    local function e(uri, name)
      return { uri = uri, frontmatter = { name = name, description = "d" }, resources = {} }
    end
    local out = mcp.skills.for_agent({ e("skill://a/x/SKILL.md", "x"), e("skill://b/x/SKILL.md", "x"),
      e("github://b/x/SKILL.md", "x"), e("skill://y/SKILL.md", "y") })
    assert.are.same({ "a/x", "skill://b/x/SKILL.md", "github://b/x/SKILL.md", "y" },
      { out[1].name, out[2].name, out[3].name, out[4].name })
    assert.are.equal("skill://y/", out[4].root)
    assert.has_error(function() mcp.skills.for_agent("x") end)
  end)
end)

describe("skills frontmatter: hostile input", function()
  it("refuses deep nesting and stays linear on long unterminated collections", function()
    refuses("a: " .. ("["):rep(100) .. ("]"):rep(100) .. "\n", "nested too deeply")
    local deep = {}
    for i = 0, 80 do deep[#deep + 1] = (" "):rep(i) .. "k" .. i .. ":" end
    refuses(table.concat(deep, "\n") .. " 1\n", "nested too deeply")
    local lines = { "a: [" }
    for i = 1, 20000 do lines[#lines + 1] = "  x" .. i .. "," end
    refuses(table.concat(lines, "\n") .. "\n", "unterminated flow collection")
    lines[#lines + 1] = "]"
    assert.are.equal(20000, #parse(table.concat(lines, "\n") .. "\n").a)
  end)
end)
