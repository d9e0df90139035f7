-- src/term_escape.c, the C twin of mcp.util.term.escape: the C core writes a Lua error's text to
-- stderr when a callback raised (a timer, a session handler, a transport's callbacks, the redirect
-- listener), and such an error may quote a server's text. Its output must be mcp.util.term's for
-- every input (test hooks core._term_escape, core._term_report); and each of those lines reaches
-- stderr escaped (core._stderr_capture: the process's descriptor 2 into a file).
local mcp = require("mcp")
local core = mcp.core
local term = require("mcp.util.term")
local helper = require("helper")

local schar = string.char

-- The UTF-8 bytes of code point cp, surrogates and code points past U+10FFFF encoded as if valid.
local function enc(cp)
  if cp < 0x80 then return schar(cp) end
  if cp < 0x800 then return schar(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return schar(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return schar(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64, 0x80 + math.floor(cp / 64) % 64,
    0x80 + cp % 64)
end

-- A deterministic generator, the same on every Lua (no math.random: 5.1 and 5.4 differ).
local function lcg(seed)
  local x = seed
  return function(n)
    x = (x * 1103515245 + 12345) % 2147483648
    return math.floor(x / 65536) % n
  end
end

describe("src/term_escape.c", function()
  local mismatches

  -- Compare the C escape with mcp.util.term's, both newline modes; collect what differs.
  local function same(s)
    for _, keep in ipairs({ false, true }) do
      local want = term.escape(s, { keep_newlines = keep })
      local got = core._term_escape(s, keep)
      if got ~= want and #mismatches < 10 then
        mismatches[#mismatches + 1] = ("%q keep=%s: C %q, Lua %q"):format(s, tostring(keep), got, want)
      end
    end
  end

  local function none_differ()
    assert.same({}, mismatches)
  end

  before_each(function() mismatches = {} end)

  it("escapes every single byte and every pair of bytes as mcp.util.term does", function()
    same("")
    for a = 0, 255 do
      same(schar(a))
      same("x" .. schar(a) .. "y")
      for b = 0, 255 do same(schar(a, b)) end
    end
    none_differ()
  end)

  it("escapes every C1 and bidi control, and keeps the code points around them, as mcp.util.term does", function()
    local bidi = { 0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069 }
    for cp = 0x80, 0x9F do
      same(enc(cp))
      assert.equal(("\\u%04x"):format(cp), core._term_escape(enc(cp)))
    end
    for _, cp in ipairs(bidi) do
      same("a" .. enc(cp) .. "b")
      assert.equal(("a\\u%04xb"):format(cp), core._term_escape("a" .. enc(cp) .. "b"))
    end
    for cp = 0, 0x2FFF do same(enc(cp)) end
    for _, range in ipairs({ { 0xD700, 0xE100 }, { 0xFFF0, 0x10100 }, { 0x10FF00, 0x110100 } }) do
      for cp = range[1], range[2] do same(enc(cp) .. "z") end -- surrogates and past U+10FFFF: invalid
    end
    none_differ()
  end)

  it("escapes truncated sequences, overlong encodings and surrogates byte by byte, as mcp.util.term does", function()
    local overlong = { "\192\128", "\193\191", "\224\128\128", "\224\159\191", "\240\128\128\128", "\240\143\191\191",
      "\248\136\128\128\128", "\252\132\128\128\128\128" }
    for _, s in ipairs(overlong) do
      same(s)
      assert.is_nil(core._term_escape(s):find("[\128-\255]"))
    end
    for _, s in ipairs({ "\237\160\128", "\237\191\191", "\237\160\189\237\184\128" }) do -- surrogates (CESU-8)
      same(s)
      assert.equal(#s * 4, #core._term_escape(s))
    end
    for _, cp in ipairs({ 0x80, 0x9B, 0xA0, 0x7FF, 0x800, 0x202E, 0xFFFD, 0x10000, 0x1F600, 0x10FFFF }) do
      local s = enc(cp)
      for k = 1, #s - 1 do
        same(s:sub(1, k))
        same(s:sub(1, k) .. "a")
        same(s:sub(1, k) .. "\27")
        same(s:sub(1, k) .. s)
      end
    end
    none_differ()
  end)

  it("escapes random byte strings as mcp.util.term does", function()
    local rnd = lcg(20261202)
    local pieces = { "\27", "\n", "\r", "\t", "\0", "\127", "\155", "\194\155", "\226\128\174", "\226\129\169", "é",
      "€", "😀", "\194\160", "\216\156", "\237\160\128", "\244\144\128\128", "\226\128", "\240\159", "a", " " }
    for _ = 1, 3000 do
      local parts = {}
      for i = 1, rnd(24) do
        if rnd(3) == 0 then
          parts[i] = pieces[rnd(#pieces) + 1]
        else
          parts[i] = schar(rnd(2) == 0 and 128 + rnd(128) or rnd(256))
        end
      end
      same(table.concat(parts))
    end
    none_differ()
  end)

  it("writes a report line: the prefix, the text escaped on one line, a newline; a long one whole", function()
    local rnd = lcg(7)
    local long = {}
    for i = 1, 20000 do long[i] = schar(rnd(256)) end
    long = table.concat(long)
    for _, s in ipairs({ "", "plain", "a\nb\27]52;c;eA==\7 \226\128\174", long, ("\226\128\174"):rep(3000) }) do
      assert.equal("mcp: x failed: " .. term.escape(s) .. "\n", core._term_report("mcp: x failed: ", s))
    end
    assert.equal("p: (an error object that is not a string)\n", core._term_report("p: ", nil))
  end)
end)
