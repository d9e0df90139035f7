-- mcp.util.term: server-, file- and network-controlled text made safe for a terminal; and URLs
-- with control characters refused by mcp.auth.url.parse (an authorization URL is printed).
local term = require("mcp.util.term")
local url = require("mcp.auth.url")

describe("mcp.util.term.escape", function()
  it("escapes C0 controls, DEL, C1 controls (UTF-8 and raw), bidi controls and invalid UTF-8; keeps text, tabs and, asked, newlines", function()
    assert.equals("a\\x1b]0;t\\x07b", term.escape("a\27]0;t\7b"))
    assert.equals("x\\x0d\\x1b[2Ky", term.escape("x\r\27[2Ky"))
    assert.equals("\\x00\\x08\\x7f", term.escape("\0\8\127"))
    assert.equals("\\u009b31m \\x9b", term.escape("\194\155" .. "31m \155"))
    assert.equals("é € 😀 \194\160", term.escape("é € 😀 \194\160"))
    assert.equals("\\xed\\xa0\\x80 \\xc0\\xaf", term.escape("\237\160\128 \192\175")) -- surrogate, overlong
    assert.equals("l1\\x0al2\tc", term.escape("l1\nl2\tc"))
    assert.equals("l1\nl2", term.escape_text("l1\nl2"))
    assert.equals("42", term.escape(42))
    -- bidi overrides and isolates (a command that reads otherwise than it runs); RTL text itself stays
    assert.equals("run: x \\u202egpj.exe \\u2066y\\u2069 \\u200f", term.escape("run: x \226\128\174gpj.exe \226\129\166y\226\129\169 \226\128\143"))
    assert.equals("مرحبا", term.escape("مرحبا"))
    local once = term.escape("\27[1m")
    assert.equals(once, term.escape(once))
  end)
end)

describe("mcp.auth.url.parse", function()
  it("refuses URLs with control characters", function()
    assert.truthy(url.parse("https://as.example/authorize?x=1"))
    for _, bad in ipairs({ "https://as.example/\27]52;c;eA==\7", "https://as.example/a\8b", "https://as.example/\127",
        "https://as.example/\194\155" .. "2K" }) do
      local u, err = url.parse(bad)
      assert.is_nil(u)
      assert.equals("contains control characters", err)
    end
    -- a raw C1 byte (CSI to a terminal that is not UTF-8) or any other byte that is not UTF-8
    for _, bad in ipairs({ "https://as.example/\155" .. "2K", "https://as.example/\157" .. "0;t", "https://as.example/\255",
        "https://as.example/\226\128\174moc.live" }) do
      local u, err = url.parse(bad)
      assert.is_nil(u)
      assert.equals("contains bytes that are not UTF-8 or bidirectional controls", err)
    end
    -- text in a URL as a browser shows it stays allowed
    assert.truthy(url.parse("https://münchen.example/straße"))
  end)
end)

-- What lua-mcp writes to stderr on its own quotes errors, and an error may carry a server's text:
-- it reaches the terminal escaped.
describe("lines lua-mcp writes to stderr", function()
  local mcp = require("mcp")
  local EVIL = "\27]0;x\7 \226\128\174txt" -- a window title (OSC) and a right-to-left override

  -- What fn writes to io.stderr, concatenated.
  local function stderr_of(fn)
    local written, real = {}, io.stderr
    io.stderr = { write = function(_, ...) -- luacheck: ignore 122 (the line goes to io.stderr; catch it)
      for _, s in ipairs({ ... }) do written[#written + 1] = s end
    end }
    local ok, err = pcall(fn)
    io.stderr = real -- luacheck: ignore 122
    assert(ok, err)
    return table.concat(written)
  end

  local function escaped(out, prefix)
    assert.truthy(out:find(prefix, 1, true), out)
    assert.truthy(out:find("\\x1b]0;x\\x07 \\u202etxt", 1, true), out)
    assert.equal("\n", out:sub(-1))
    assert.is_nil(out:sub(1, -2):find("[%z\1-\8\10-\31\127]"), out) -- one line, no control but tabs
    assert.is_nil(out:find("\226\128\174", 1, true), out)
  end

  it("the default task error hook", function()
    mcp.on_task_error(nil)
    local out = stderr_of(function()
      mcp.spawn(function() error("the server said: " .. EVIL, 0) end)
      mcp.run()
    end)
    escaped(out, "mcp: a task failed: the server said: ")
  end)

  it("a stdio stderr handler that raised", function()
    local deliver = require("mcp.transport.stdio").stderr_queue(function(line) error("bad line: " .. line, 0) end)
    local out = stderr_of(function()
      deliver(EVIL)
      mcp.run()
    end)
    escaped(out, "mcp: stderr handler failed: bad line: ")
  end)
end)
