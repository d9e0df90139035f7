-- Server-Sent Events parser of mcp.core (src/transports/sse_parser.c), driven through the
-- test hook core._sse_parse(chunks [, max_event_bytes [, abort_after]]) -> results, failed, last_id.
-- WHATWG HTML "event stream interpretation"; a chunk `false` means mcp_sse_reset (new connection).
local core = require("mcp.core")

local BOM = "\239\187\191"

local function parse(chunks, max, abort_after)
  if type(chunks) == "string" then
    chunks = { chunks }
  end
  return core._sse_parse(chunks, max, abort_after)
end

local function ev(data, type_, id)
  return { type = type_ or "message", data = data, id = id or "" }
end

local function retry(ms)
  return { retry = ms }
end

-- Every case: chunks (a string is one chunk), expected results, optional max / failed / last_id.
local function run_cases(cases)
  for _, c in ipairs(cases) do
    it(c[1], function()
      local results, failed, last_id = parse(c[2], c.max)
      assert.same(c[3], results)
      assert.equal(c.failed or false, failed)
      if c.last_id ~= nil then
        assert.equal(c.last_id, last_id)
      end
    end)
  end
end

describe("sse parser", function()
  describe("data", function()
    run_cases({
      { "one event", "data: hello\n\n", { ev("hello") } },
      { "data lines joined with LF, final LF removed", "data: a\ndata: b\ndata: c\n\n", { ev("a\nb\nc") } },
      { "an empty data line adds an empty line", "data: a\ndata:\ndata: b\n\n", { ev("a\n\nb") } },
      { "trailing empty data line", "data: a\ndata:\n\n", { ev("a\n") } },
      { "a lone empty data line dispatches an empty event", "data:\n\n", { ev("") } },
      { "two events", "data: 1\n\ndata: 2\n\n", { ev("1"), ev("2") } },
      { "several blank lines between events", "data: 1\n\n\n\ndata: 2\n\n\n", { ev("1"), ev("2") } },
      { "NUL and other bytes pass through", "data: a\0b\255\n\n", { ev("a\0b\255") } },
      { "colon inside the value kept", "data: a: b:c\n\n", { ev("a: b:c") } },
      { "JSON payload", 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
        { ev('{"jsonrpc":"2.0","id":1,"result":{}}') } },
    })
  end)

  describe("event type", function()
    run_cases({
      { "event sets the type", "event: ping\ndata: x\n\n", { ev("x", "ping") } },
      { "type is reset after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", { ev("1", "a"), ev("2") } },
      { "empty event value means message", "event:\ndata: x\n\n", { ev("x") } },
      { "event alone on a line means message", "event: a\nevent\ndata: x\n\n", { ev("x") } },
      { "last event line wins", "event: a\nevent: b\ndata: x\n\n", { ev("x", "b") } },
      { "type is reset by a blank line without data", "event: a\n\ndata: x\n\n", { ev("x") } },
      { "event after data in the same block", "data: x\nevent: late\n\n", { ev("x", "late") } },
    })
  end)

  describe("id", function()
    run_cases({
      { "id is reported with the event", "id: 1\ndata: a\n\n", { ev("a", nil, "1") }, last_id = "1" },
      { "id persists across later events",
        "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\ndata: d\n\n",
        { ev("a", nil, "1"), ev("b", nil, "1"), ev("c", nil, "2"), ev("d", nil, "2") }, last_id = "2" },
      { "id after data in the same block still applies", "data: a\nid: 9\n\n", { ev("a", nil, "9") } },
      { "empty id resets it", "id: 1\ndata: a\n\nid\ndata: b\n\nid: 3\n\nid:\ndata: c\n\n",
        { ev("a", nil, "1"), ev("b"), ev("c") }, last_id = "" },
      { "id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n",
        { ev("a", nil, "1"), ev("b", nil, "1") }, last_id = "1" },
      { "id without data updates the last event id (priming event)", "id: prime-1\n\n",
        {}, last_id = "prime-1" },
      { "priming id with an empty data field", "id: prime-1\ndata:\n\ndata: x\n\n",
        { ev("", nil, "prime-1"), ev("x", nil, "prime-1") }, last_id = "prime-1" },
      { "id of a priming event is reported with the next event", "id: p\n\ndata: x\n\n",
        { ev("x", nil, "p") }, last_id = "p" },
      { "id of an incomplete event is not the last event id", "id: 1\n\nid: 2\ndata: x\n",
        {}, last_id = "1" },
      { "spaces kept in ids except the first", "id:  a b \ndata: x\n\n", { ev("x", nil, " a b ") } },
    })
  end)

  describe("retry", function()
    run_cases({
      { "digits call on_retry", "retry: 1500\n", { retry(1500) } },
      { "zero", "retry: 0\n", { retry(0) } },
      { "no space", "retry:250\n", { retry(250) } },
      { "leading zeros", "retry: 007\n", { retry(7) } },
      { "in order with events", "data: a\nretry: 10\n\nretry: 20\ndata: b\n\n",
        { retry(10), ev("a"), retry(20), ev("b") } },
      { "invalid values ignored",
        "retry: 15x\nretry: -1\nretry: 1.5\nretry:\nretry\nretry:  10\nretry: 10 \nretry: +5\nretry: \239\188\145\n",
        {} },
      { "overflow saturates", "retry: 99999999999999999999999999\n", { retry(18446744073709551615) } },
      { "retry alone does not dispatch", "retry: 5\n\n", { retry(5) } },
    })
  end)

  describe("comments and unknown fields", function()
    run_cases({
      { "comment lines ignored", ": hello\ndata: x\n:\n: more\n\n", { ev("x") } },
      { "comment-only block dispatches nothing", ": keepalive\n\n: keepalive\n\n", {} },
      { "unknown fields ignored", "foo: bar\nDATA: no\nData: no\ndatax: no\ndat: no\ndata: yes\n\n", { ev("yes") } },
      { "long unknown field name", ("x"):rep(1000) .. ": v\ndata: y\n\n", { ev("y") } },
      { "unknown field alone does not dispatch", "foo: bar\n\n", {} },
      { "field name with a space is unknown", "data : x\n data: y\n\n", {} },
    })
  end)

  describe("field without colon", function()
    run_cases({
      { "data alone is an empty data line", "data\ndata\n\n", { ev("\n") } },
      { "data alone dispatches an empty event", "data\n\n", { ev("") } },
      { "id alone resets the id", "id: 1\ndata: a\n\nid\ndata: b\n\n", { ev("a", nil, "1"), ev("b") } },
    })
  end)

  describe("space after the colon", function()
    run_cases({
      { "no space", "data:x\n\n", { ev("x") } },
      { "one space stripped", "data: x\n\n", { ev("x") } },
      { "only one space stripped", "data:  x\n\n", { ev(" x") } },
      { "tab kept", "data:\tx\n\n", { ev("\tx") } },
      { "trailing space kept", "data: x \n\n", { ev("x ") } },
      { "a lone space is an empty value", "data: \n\n", { ev("") } },
      { "two spaces give one", "data:  \n\n", { ev(" ") } },
      { "type keeps extra spaces", "event:  t\ndata: x\n\n", { ev("x", " t") } },
      { "space split from the colon", { "data:", " x\n\n" }, { ev("x") } },
      { "second space split from the first", { "data: ", " x\n\n" }, { ev(" x") } },
      { "colon at a chunk end, then LF", { "data:", "\n\n" }, { ev("") } },
      { "event colon at a chunk end", { "event:", " t\ndata: x\n\n" }, { ev("x", "t") } },
    })
  end)

  describe("line endings", function()
    run_cases({
      { "LF", "data: a\ndata: b\n\n", { ev("a\nb") } },
      { "CR", "data: a\rdata: b\r\r", { ev("a\nb") } },
      { "CRLF", "data: a\r\ndata: b\r\n\r\n", { ev("a\nb") } },
      { "mixed", "data: a\rdata: b\ndata: c\r\n\r", { ev("a\nb\nc") } },
      { "LF CR is two line ends", "data: a\n\rdata: b\n\n", { ev("a"), ev("b") } },
      { "CR CR is two line ends", "data: a\r\rdata: b\r\r", { ev("a"), ev("b") } },
      { "CRLF split across chunks is one line end", { "data: a\r", "\ndata: b\r\n\r\n" }, { ev("a\nb") } },
      { "blank CRLF split across chunks", { "data: a\r\n\r", "\ndata: b\r\n\r\n" }, { ev("a"), ev("b") } },
      { "CR, empty chunk, LF", { "data: a\r", "", "\ndata: b\r\n\r\n" }, { ev("a\nb") } },
      { "CR at a chunk end then CR", { "data: a\r", "\rdata: b\r\r" }, { ev("a"), ev("b") } },
      { "CRLF in comments", ": c\r\ndata: x\r\n\r\n", { ev("x") } },
      { "CR ends a retry line", "retry: 5\rretry: 6\r", { retry(5), retry(6) } },
    })
  end)

  describe("byte order mark", function()
    run_cases({
      { "leading BOM skipped", BOM .. "data: a\n\n", { ev("a") } },
      { "BOM only at the stream start", BOM .. "data: a\n\n" .. BOM .. "data: b\n\n", { ev("a") } },
      { "second BOM makes an unknown field", BOM .. BOM .. "data: a\n\ndata: b\n\n", { ev("b") } },
      { "BOM split across chunks", { "\239", "\187", "\191data: a\n\n" }, { ev("a") } },
      { "BOM in its own chunk", { BOM, "data: a\n\n" }, { ev("a") } },
      { "partial BOM is not skipped", "\239\187data: a\n\ndata: b\n\n", { ev("b") } },
      { "partial BOM across chunks is not skipped", { "\239\187", "data: a\n\n", "data: b\n\n" }, { ev("b") } },
      { "BOM prefix then a line end", { "\239", "\n", "data: a\n\n" }, { ev("a") } },
      { "BOM before a comment", BOM .. ": c\ndata: a\n\n", { ev("a") } },
    })
  end)

  describe("dispatch", function()
    run_cases({
      { "blank lines without data dispatch nothing", "\n\n\r\n\r", {} },
      { "event type without data dispatches nothing", "event: x\n\n", {} },
      { "incomplete event at the end is not dispatched", "data: a\n\ndata: b\n", { ev("a") } },
      { "incomplete line at the end is not dispatched", "data: a\n\ndata: b", { ev("a") } },
      { "a CR at the very end completes the line, not the event", "data: a\r", {} },
    })
  end)

  describe("max_event_bytes", function()
    run_cases({
      { "an event at the limit passes", "data: 123456789\n\n", { ev("123456789") }, max = 10 },
      { "an event over the limit is dropped and the parser resynchronises",
        "data: 0123456789ab\n\ndata: ok\n\n", { ev("ok") }, max = 10, failed = true },
      { "the limit counts all data lines", "data: 12345\ndata: 67890\n\ndata: ok\n\n",
        { ev("ok") }, max = 10, failed = true },
      { "lines after the overflow are skipped until a blank line",
        "data: 0123456789ab\nevent: x\nretry: 5\ndata: c\n\nevent: y\ndata: ok\n\n",
        { ev("ok", "y") }, max = 10, failed = true },
      { "an id in the dropped event does not count",
        "id: 1\ndata: a\n\nid: 2\ndata: 0123456789ab\n\ndata: b\n\n",
        { ev("a", nil, "1"), ev("b", nil, "1") }, max = 10, failed = true, last_id = "1" },
      { "an overflow split across chunks", { "data: 0123", "456789", "ab\n", "\ndata: ok\n\n" },
        { ev("ok") }, max = 10, failed = true },
      { "an oversized event type", "event: " .. ("e"):rep(11) .. "\ndata: x\n\ndata: ok\n\n",
        { ev("ok") }, max = 10, failed = true },
      { "an oversized id", "id: " .. ("7"):rep(11) .. "\ndata: x\n\ndata: ok\n\n",
        { ev("ok") }, max = 10, failed = true, last_id = "" },
      { "comments are not limited", ": " .. ("c"):rep(100) .. "\ndata: ok\n\n", { ev("ok") }, max = 10 },
      { "unknown fields are not limited", "x: " .. ("c"):rep(100) .. "\ndata: ok\n\n", { ev("ok") }, max = 10 },
      { "each event has its own budget", "data: 12345678\n\ndata: 12345678\n\n",
        { ev("12345678"), ev("12345678") }, max = 10 },
      { "0 means unlimited", "data: " .. ("z"):rep(5000) .. "\n\n", { ev(("z"):rep(5000)) }, max = 0 },
    })

    it("reports each overflow only through the return value", function()
      local results, failed = parse({ "data: 0123456789ab\n\n", "data: ok\n\n" }, 10)
      assert.same({ ev("ok") }, results)
      assert.is_true(failed)
    end)
  end)

  describe("splits", function()
    local sample = BOM .. ": comment\r\nretry: 3000\r\nid: 42\r\nevent: note\r\ndata: first\r\n"
      .. "data:  second line\r\n\r\n" .. "data: {\"a\":1}\n\n" .. "id: 43\rdata: cr\r\r"
      .. "event: x\n\n" .. "id: 44\n\n" .. "data\n\n" .. "id:4\0005\ndata: nul id\n\n"
      .. "unknown: field\ndata:x\r\n\r\n" .. "data: tail without end"
    local expected = {
      retry(3000),
      ev("first\n second line", "note", "42"),
      ev('{"a":1}', nil, "42"),
      ev("cr", nil, "43"),
      ev("", nil, "44"),
      ev("nul id", nil, "44"),
      ev("x", nil, "44"),
    }

    it("the sample stream as one chunk", function()
      assert.same(expected, (parse(sample)))
    end)

    it("every 2-chunk split gives the same events", function()
      for i = 0, #sample do
        local results, failed = parse({ sample:sub(1, i), sample:sub(i + 1) })
        assert.same(expected, results, "split at " .. i)
        assert.is_false(failed)
      end
    end)

    it("one byte per chunk gives the same events", function()
      local chunks = {}
      for i = 1, #sample do
        chunks[i] = sample:sub(i, i)
      end
      assert.same(expected, (parse(chunks)))
    end)

    it("every 3-chunk split of a short CRLF stream gives the same events", function()
      local s = BOM .. "id: 1\r\ndata: a\r\n\r\ndata: b\r\r"
      local want = { ev("a", nil, "1"), ev("b", nil, "1") }
      for i = 0, #s do
        for j = i, #s do
          assert.same(want, (parse({ s:sub(1, i), s:sub(i + 1, j), s:sub(j + 1) })), i .. "," .. j)
        end
      end
    end)

    it("every 2-chunk split with an oversized event gives the same events", function()
      local s = "id: 1\ndata: a\n\nid: 2\ndata: 0123\ndata: 456789\n\nevent: big\nretry: 1\n\ndata: ok\n\n"
      local want = { ev("a", nil, "1"), retry(1), ev("ok", nil, "1") }
      for i = 0, #s do
        local results, failed, last_id = parse({ s:sub(1, i), s:sub(i + 1) }, 10)
        assert.same(want, results, "split at " .. i)
        assert.is_true(failed)
        assert.equal("1", last_id)
      end
    end)
  end)

  describe("reset and abort", function()
    it("reset forgets a partial event but keeps the last event id", function()
      local results, _, last_id = parse({ "id: 7\ndata: a\n\nid: 8\nevent: e\ndata: partial", false, "data: b\n\n" })
      assert.same({ ev("a", nil, "7"), ev("b", nil, "7") }, results)
      assert.equal("7", last_id)
    end)

    it("reset forgets a pending CR", function()
      assert.same({ ev("a"), ev("b") }, (parse({ "data: a\n\r", false, "\ndata: b\n\n" })))
    end)

    it("reset checks for a BOM again", function()
      assert.same({ ev("a"), ev("b") }, (parse({ BOM .. "data: a\n\n", false, BOM .. "data: b\n\n" })))
    end)

    it("reset ends the resynchronisation after an overflow", function()
      local results, failed = parse({ "data: 0123456789ab\n", false, "data: ok\n\n" }, 10)
      assert.same({ ev("ok") }, results)
      assert.is_true(failed)
    end)

    it("abort stops the rest of the feed and later feeds", function()
      local results = parse({ "data: 1\n\ndata: 2\n\n", "data: 3\n\n" }, nil, 1)
      assert.same({ ev("1") }, results)
    end)

    it("abort from the retry callback", function()
      assert.same({ retry(1) }, (parse({ "retry: 1\ndata: x\n\n" }, nil, 1)))
    end)

    it("reset clears an abort", function()
      local results = parse({ "data: 1\n\ndata: 2\n\n", false, "data: 3\n\n" }, nil, 1)
      assert.same({ ev("1"), ev("3") }, results)
    end)
  end)

  describe("large events", function()
    local MB = 1024 * 1024

    it("a 50 MB event in one chunk", function()
      local big = string.rep("x", 50 * MB)
      local results, failed = parse({ "data: " .. big .. "\n\n" })
      assert.is_false(failed)
      assert.equal(1, #results)
      assert.equal(50 * MB, #results[1].data)
      assert.is_true(results[1].data == big)
    end)

    it("a 50 MB event in 64 KiB chunks, CRLF, with a second data line", function()
      local big = string.rep("y", 50 * MB)
      local stream = "event: big\r\ndata: " .. big .. "\r\ndata: end\r\n\r\n"
      local chunks, step = {}, 64 * 1024
      for i = 1, #stream, step do
        chunks[#chunks + 1] = stream:sub(i, i + step - 1)
      end
      stream = nil -- luacheck: ignore 311 (free the 50 MB string before parsing)
      local results, failed = parse(chunks)
      assert.is_false(failed)
      assert.equal(1, #results)
      assert.equal("big", results[1].type)
      assert.is_true(results[1].data == big .. "\nend")
    end)

    it("a 50 MB event over a 1 MB limit is dropped", function()
      local results, failed = parse({ "data: " .. string.rep("z", 50 * MB) .. "\n\ndata: ok\n\n" }, MB)
      assert.same({ ev("ok") }, results)
      assert.is_true(failed)
    end)
  end)
end)
