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

-- The lines the C core writes to stderr when a Lua callback raised: each quotes the error, which
-- here carries a window title (OSC) and a right-to-left override, as a server's text could.
describe("lines the C core writes to stderr", function()
  local EVIL = "\27]0;x\7 \226\128\174txt"
  local WAIT = helper.ms(10000)

  -- What the C core writes to descriptor 2 while fn runs.
  local function stderr_of(fn)
    local path = os.tmpname()
    core._stderr_capture(path)
    local ok, err = pcall(fn)
    core._stderr_restore()
    local out = helper.read_file(path)
    os.remove(path)
    assert(ok, err)
    return out
  end

  -- Every line of out is one line with no terminal control, and the one starting with prefix
  -- carries EVIL escaped. (Messages are escaped too: a failure must not reach the terminal raw.)
  local function escaped(out, prefix)
    local shown = term.escape_text(out)
    assert.truthy(out:find(prefix .. "\\x1b]0;x\\x07 \\u202etxt\n", 1, true), shown)
    assert.is_nil(out:find("[%z\1-\8\11-\31\127]"), shown)
    assert.is_nil(out:find("\226\128\174", 1, true), shown)
    assert.equal("\n", out:sub(-1), shown)
  end

  local function wait(pred) assert.is_true(helper.wait_until(pred, WAIT)) end

  -- A stdio transport running sh -c script (its own stderr handler or "discard").
  local function sh(script, stderr)
    return core.stdio_transport({ command = "/bin/sh", args = { "-c", script }, stderr = stderr or "discard" })
  end

  local function stop(t)
    t:close()
    wait(function() return t:reaped() end)
  end

  it("a core.timer callback that raised", function()
    local fired = false
    local out = stderr_of(function()
      core.timer(0, function()
        fired = true
        error("tick: " .. EVIL, 0)
      end)
      wait(function() return fired end)
    end)
    escaped(out, "mcp: timer callback failed: tick: ")
  end)

  it("a core.timer callback that raised an error that is not a string", function()
    local fired = false
    local out = stderr_of(function()
      core.timer(0, function()
        fired = true
        error({ EVIL })
      end)
      wait(function() return fired end)
    end)
    assert.equal("mcp: timer callback failed: (an error object that is not a string)\n", out)
  end)

  it("a session handler that raised", function()
    local calls = 0
    local t = sh([[printf '{"jsonrpc":"2.0","method":"notifications/message"}\n'; exec cat]])
    local out = stderr_of(function()
      local s = core.session(t, function(kind)
        calls = calls + 1
        error(kind .. ": " .. EVIL, 0)
      end)
      assert(t:start())
      wait(function() return calls > 0 end)
      s:close()
      stop(t)
    end)
    escaped(out, "mcp: session handler failed: notification: ")
  end)

  it("a stdio stderr callback that raised, on the server's line", function()
    local seen = false
    local t = sh([[printf '\033]0;x\007 \342\200\256txt\n' >&2; exec cat]], function(line)
      seen = true
      error("bad line: " .. line, 0)
    end)
    local out = stderr_of(function()
      assert(t:start())
      wait(function() return seen end)
      stop(t)
    end)
    escaped(out, "mcp: stderr callback failed: bad line: ")
  end)

  it("a stdio start callback that raised", function()
    local done = false
    local t = sh("exec cat")
    local out = stderr_of(function()
      assert(t:start(function()
        done = true
        error("started: " .. EVIL, 0)
      end))
      wait(function() return done end)
      stop(t)
    end)
    escaped(out, "mcp: start callback failed: started: ")
  end)

  it("a core.run_program_async callback that raised", function()
    local done = false
    local out = stderr_of(function()
      assert(core.run_program_async({ "true" }, "", WAIT, function()
        done = true
        error("ran: " .. EVIL, 0)
      end))
      wait(function() return done end)
    end)
    escaped(out, "mcp: run_program_async callback failed: ran: ")
  end)

  -- The redirect listener stands in for an HTTP server: it answers a GET with 404 (its callback
  -- says nothing else) and anything but a GET with 400.
  describe("HTTP", function()
    local listener, base, reported
    before_each(function()
      reported = nil
      listener = assert(core.redirect_listener(0, function(target)
        if reported ~= nil then
          reported = true
          error("target " .. target .. ": " .. EVIL, 0)
        end
        return false
      end))
      base = "http://127.0.0.1:" .. listener:port()
    end)
    after_each(function() listener:close() end)

    it("a redirect listener callback that raised", function()
      local done = false
      reported = false
      local out = stderr_of(function()
        core.http_fetch({ url = base .. "/callback" }, function() done = true end)
        wait(function() return done and reported end)
      end)
      escaped(out, "mcp: redirect listener callback failed: target /callback: ")
    end)

    it("an HTTP fetch callback that raised", function()
      local status
      local out = stderr_of(function()
        core.http_fetch({ url = base .. "/x" }, function(res)
          status = res and res.status or -1
          error("fetched: " .. EVIL, 0)
        end)
        wait(function() return status ~= nil end)
      end)
      assert.equal(404, status)
      escaped(out, "mcp: HTTP fetch callback failed: fetched: ")
    end)

    -- A POST the listener refuses with 400, sent by s:send(s) under a session on t; until done().
    local function post(t, send, done)
      local s = core.session(t, function() end)
      assert(t:start())
      send(s)
      wait(done)
      s:close()
      t:close(0)
    end

    it("an HTTP transport event handler that raised", function()
      local events = 0
      local out = stderr_of(function()
        local t = core.http_transport({ url = base .. "/mcp", on_event = function(kind)
          events = events + 1
          error("event " .. kind .. ": " .. EVIL, 0)
        end })
        -- a notification refused: an "error" event (a request's failure goes to its caller)
        post(t, function(s) s:notify("notifications/initialized") end, function() return events > 0 end)
      end)
      escaped(out, "mcp: HTTP transport event handler failed: event error: ")
    end)

    it("an HTTP transport request hook that raised", function()
      local refused
      local out = stderr_of(function()
        local t = core.http_transport({ url = base .. "/mcp" })
        t:set_request_hooks(nil, function(_, method, _, status)
          refused = method .. " " .. status
          error("refused: " .. EVIL, 0)
        end)
        local answered = false
        post(t, function(s) s:request("initialize", {}, WAIT, function() answered = true end) end,
          function() return answered end)
      end)
      assert.equal("POST 400", refused)
      escaped(out, "mcp: HTTP transport request hook failed: refused: ")
    end)
  end)
end)
