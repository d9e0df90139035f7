-- The resumable decoder (src/json_resume.c): a large message decoded over several host steps
-- gives what the one-shot decoder gives (core.json_decode), value for value, table for table (the
-- same iteration order), error for error, however it is sliced; and a large result decoded over
-- budgeted steps completes with the right value while other work runs.
local helper = require("helper")
local mcp = require("mcp")
local core = mcp.core

local has_integers = math.type ~= nil

-- Deep equality that also asks for the same number subtypes, the same metatables (or key order
-- metatables with the same keys) and the same iteration order of every table.
local function same(a, b, path)
  path = path or "$"
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) == "number" then
    if has_integers and math.type(a) ~= math.type(b) then return false, path .. ": number subtype" end
    if a ~= b and not (a ~= a and b ~= b) then return false, path .. ": " .. a .. " vs " .. b end
    return true
  end
  if type(a) ~= "table" then return a == b, path end
  local ma, mb = getmetatable(a), getmetatable(b)
  if ma ~= mb then
    if not (ma and mb and ma.__jsontype == mb.__jsontype and ma.__keyorder and mb.__keyorder) then
      return false, path .. ": metatable"
    end
    local ok, where = same(ma.__keyorder, mb.__keyorder, path .. ".__keyorder")
    if not ok then return false, where end
  end
  local ka, kb = next(a), next(b)
  while ka ~= nil or kb ~= nil do
    if ka ~= kb then return false, path .. ": keys in another order" end
    local ok, where = same(a[ka], b[kb], path .. "." .. tostring(ka))
    if not ok then return false, where end
    ka, kb = next(a, ka), next(b, kb)
  end
  return true
end

-- Decode s with the resumable decoder, `units` units of work per run; returns ok, value|err, runs.
local function sliced(s, limit, units)
  local d = core._json_decoder(s, limit)
  local ok, v = d:run(units)
  local runs = 1
  while ok == false do
    ok, v = d:run(units)
    runs = runs + 1
  end
  return ok, v, runs
end

local function check(s, limits, units_list)
  local v1, e1 = core.json_decode(s)
  for _, limit in ipairs(limits) do
    for _, units in ipairs(units_list) do
      local ok, v2 = sliced(s, limit, units)
      local label = ("limit %s, %d units a run, input %q"):format(limit, units, #s > 80 and s:sub(1, 80) .. "..." or s)
      if e1 ~= nil then
        assert.is_nil(ok, label)
        assert.are.equal(e1, v2, label)
      else
        assert.is_true(ok, label .. ": " .. tostring(v2))
        local eq, where = same(v1, v2)
        assert(eq, label .. ": differs at " .. tostring(where))
      end
    end
  end
end

-- A small deterministic generator (math.random differs between Lua versions), exact in doubles.
local function lcg(seed)
  local x = seed
  return function(n)
    x = (x * 16807) % 2147483647
    return x % n
  end
end

local STRINGS = { '""', '"a"', '"properties"', '"x\\ny"', '"\\u00e9\\ud83d\\ude00"', '"\\ud800"', '"\\/\\"\\\\"' }
local NUMBERS = { "0", "-0", "1", "-1", "1.5", "1e3", "-2.5E-3", "9007199254740993", "9223372036854775807",
  "-9223372036854775808", "9223372036854775808", "123456789012345678901234567890", "1e400", "0.1" }

local function gen(rand, depth)
  local k = rand(depth > 4 and 4 or 7)
  if k == 0 then return STRINGS[rand(#STRINGS) + 1] end
  if k == 1 then return NUMBERS[rand(#NUMBERS) + 1] end
  if k == 2 then return ({ "true", "false", "null" })[rand(3) + 1] end
  if k == 3 then return "[]" end
  local n, parts = rand(k == 6 and depth < 2 and 40 or 6), {}
  if k % 2 == 0 then
    for i = 1, n do parts[i] = gen(rand, depth + 1) end
    return "[" .. table.concat(parts, rand(2) == 0 and "," or " , ") .. "]"
  end
  for i = 1, n do
    local key = rand(4) == 0 and '"properties"' or ('"k' .. rand(n + 1) .. '"') -- duplicates too
    parts[i] = key .. ":" .. gen(rand, depth + 1)
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function items(n)
  local parts = {}
  for i = 1, n do
    parts[i] = ('{"i":%d,"name":"item %d","ok":true,"tags":["a","b\\n"],"w":%d.5}'):format(i, i, i % 97)
  end
  return '{"items":[' .. table.concat(parts, ",") .. "]}"
end

describe("resumable JSON decoding", function()
  local LIMITS = { 0, 1, 16, 100 }

  it("gives what the one-shot decoder gives on small documents, at every slice size", function()
    local docs = {
      "null", "true", "  12.5e3 ", "-0", '"abc"', "[]", "{}", "[[]]", "[{}]", '{"a":{}}', '{"a":[]}',
      '{"a":1,"a":2,"b":[1,2,3],"a":3}', '{"properties":{"z":1,"a":2,"z":3}}',
      '{"properties":[{"b":1,"a":2},{"c":3}],"x":{"properties":"s"}}',
      '{"p":{"properties":{"b":{"properties":{"y":1,"x":2}},"a":2}}}',
      '["\\ud83d\\ude00","\\udc00\\ud800","\\u0000",' .. table.concat(NUMBERS, ",") .. "]",
    }
    for _, s in ipairs(docs) do
      local units = {}
      for u = 1, 12 do units[#units + 1] = u end
      units[#units + 1] = 0
      check(s, LIMITS, units)
    end
  end)

  it("gives the same errors at the same bytes, for every prefix of a document", function()
    local doc = '{"a":[1,2.5,-3e2,{"b":"c\\n\\u00e9"},[],{}],"properties":{"y":true,"x":null},"s":"\\ud83d\\ude00"}'
    for i = 0, #doc do check(doc:sub(1, i), { 0, 8 }, { 1, 2, 0 }) end
    local bad = {
      "", " ", "[1 2]", "[1,]", "{,}", '{"a" 1}', '{"a":1,}', "{1:2}", '"a\\qb"', '"a\\u12"', '"a\\u12G4"',
      '"a\tb"', '"a\0b"', "[1] x", "01", "1.", "-", "1e", "tru", "nul", "[" .. string.rep(" ", 40) .. "x]",
      '{"a":' .. string.rep("1", 50) .. "x}", '["' .. string.rep("y", 300) .. '\\x"]',
      '["' .. string.rep("z", 300) .. '\\n', '["' .. string.rep("z", 300) .. "\1\"]",
    }
    for _, s in ipairs(bad) do check(s, LIMITS, { 1, 3, 0 }) end
  end)

  it("keeps the nesting limit of the one-shot decoder", function()
    for _, n in ipairs({ 31, 32, 33, 34, 511, 512, 513, 600 }) do
      check(string.rep("[", n) .. string.rep("]", n), { 0, 64 }, { 1, 7, 0 })
      check(string.rep('{"a":', n) .. "1" .. string.rep("}", n), { 0, 64 }, { 5, 0 })
      check(string.rep("[{\"k\":", math.floor(n / 2)) .. "0" .. string.rep("}]", math.floor(n / 2)), { 0 }, { 3 })
    end
  end)

  it("gives the same on generated documents: wide, deep, duplicate keys, many small objects", function()
    local rand = lcg(28)
    local sizes = 0
    for _ = 1, 60 do
      local doc = gen(rand, 0)
      sizes = sizes + #doc
      check(doc, LIMITS, { 1, 2, 5, 0 })
    end
    assert.is_true(sizes > 5000, "documents of some size: " .. sizes)
    check(items(300), { 0, 50, 16384 }, { 1, 4, 0 })
    local wide = {}
    for i = 1, 500 do wide[i] = ('"k%d":%d'):format(i % 300, i) end
    check("{" .. table.concat(wide, ",") .. "}", { 0, 64 }, { 1, 9, 0 })
  end)

  it("gives the same on long arrays made at a size guessed from their first members", function()
    local function ints(n, from) local t = {} for i = 1, n do t[i] = tostring(from + i) end return t end
    -- many short members: made at the guess (a large one, past 4096 slots) and filled
    local many = "[" .. table.concat(ints(20000, 0), ",") .. "]"
    check(many, { 0, 1000 }, { 7, 0 })
    check('{"a":' .. many .. ',"b":"' .. string.rep("x", 3000) .. '"}', { 0, 1000 }, { 50, 0 })
    -- short members first, then long ones (the guess too large), then more than it (too small)
    local mixed = ints(16, 0)
    for i = 1, 40 do mixed[#mixed + 1] = '"' .. string.rep("y", 2000 + i) .. '"' end
    for _, v in ipairs(ints(9000, 100)) do mixed[#mixed + 1] = v end
    check("[" .. table.concat(mixed, ",") .. "]", { 0, 500 }, { 11, 0 })
    -- the length operator sees the members, not the slots made for them
    local ok, v = sliced("[" .. table.concat(mixed, ",") .. "]", 0, 13)
    assert.is_true(ok)
    assert.are.equal(16 + 40 + 9000, #v)
    assert.is_nil(v[#v + 1])
  end)

  it("leaves the collector running when making a long array runs out of memory", function()
    local members = {}
    for i = 1, 20000 do members[i] = tostring(i) end
    local d = core._json_decoder("[" .. table.concat(members, ",") .. "]", 0)
    assert.is_false(d:run(8)) -- (the first members, in a batch on the stack)
    if not core._alloc_fail_above(64 * 1024) then return end -- (5.1, LuaJIT: no such hook)
    local ok, raised = pcall(d.run, d, 1000) -- its slots, guessed from the bytes left: ~110 KB
    core._alloc_fail_above(nil)
    assert.is_false(ok, "the run raised")
    assert.is_truthy(tostring(raised):find("memory"), tostring(raised))
    assert.is_true(collectgarbage("isrunning")) -- at once, not at the decoder's next run
    local v, err = d:run(1)
    assert.is_nil(v)
    assert.is_truthy(err:find("interrupted"), err)
    assert.is_true(collectgarbage("isrunning"))
  end)

  it("leaves the collector running when making a long string runs out of memory", function()
    local d = core._json_decoder('"' .. string.rep("x", 2 * 1024 * 1024) .. '"', 0)
    if not core._alloc_fail_above(64 * 1024) then return end -- (5.1, LuaJIT: no such hook)
    local ok, raised = pcall(d.run, d, 0) -- its block is refused, then the string itself
    core._alloc_fail_above(nil)
    assert.is_false(ok, "the run raised")
    assert.is_truthy(tostring(raised):find("memory"), tostring(raised))
    assert.is_true(collectgarbage("isrunning"))
    local v, err = d:run(1)
    assert.is_nil(v)
    assert.is_truthy(err:find("interrupted"), err)
  end)

  it("gives the same on long strings, with and without escapes, split in chunks", function()
    local plain = '"' .. string.rep("0123456789", 20000) .. '"'
    local escaped = '"' .. string.rep("line\\n\\\"q\\\" \\u00e9\\ud83d\\ude00 ", 5000) .. '"'
    check(plain, { 0, 10, 1000 }, { 1, 0 })
    check(escaped, { 0, 10, 1000 }, { 1, 0 })
    check("[" .. plain .. "," .. escaped .. "]", { 0, 100 }, { 2, 0 })
    check(plain:sub(1, -2), { 0, 100 }, { 3 }) -- unterminated
    check('"' .. string.rep("a", 5000) .. "\\z" .. string.rep("b", 5000) .. '"', { 0, 100 }, { 3 })
    check('"' .. string.rep("a", 5000) .. "\n" .. string.rep("b", 5000) .. '"', { 0, 100 }, { 3 })
  end)

  it("puts little of a decoder in Lua's heap (the collector's debt), and still opens 512 levels", function()
    -- its stack of open containers is malloc'd and grows as the message nests: held in the
    -- userdata (16 KB), it was paid to the collector at the start of every large message, in one
    -- step that swept a previous large result (~100,000 objects)
    local text = string.rep("[", 512) .. "1" .. string.rep("]", 512)
    core._json_decoder(text, 1) -- (the metatable, made once)
    collectgarbage("collect")
    collectgarbage("stop")
    local before = collectgarbage("count")
    local d = core._json_decoder(text, 1)
    local kb = collectgarbage("count") - before
    collectgarbage("restart")
    assert.is_true(kb < 2, ("%.1f KB in Lua's heap"):format(kb))
    local done, value
    repeat done, value = d:run(7) until done ~= false
    assert.is_true(done)
    for _ = 1, 511 do value = value[1] end
    assert.same({ 1 }, value)
    local too_deep = string.rep("[", 513) .. string.rep("]", 513)
    local dd = core._json_decoder(too_deep, 1)
    repeat done, value = dd:run(7) until done ~= false
    assert.is_nil(done)
    assert.truthy(tostring(value):find("nesting too deep", 1, true), tostring(value))
  end)

  it("makes a long string's copy in a run of its own, not after a run's worth of other work", function()
    -- a budgeted run (units) that could do it all at once stops once the string's block is ready;
    -- the next run starts with the copy (~1 ms for 10 MB), so it never lands after a full budget
    for _, text in ipairs({ string.rep("x", 1048576), string.rep("y", 300000) .. "\\n" .. string.rep("z", 300000) }) do
      local d = core._json_decoder('"' .. text .. '"', 1)
      local runs, done, value = 1, d:run(1000000)
      while not done and runs <= 10 do
        runs = runs + 1
        done, value = d:run(1000000)
      end
      assert.is_true(done)
      assert.equal(2, runs)
      assert.equal(core.json_decode('"' .. text .. '"'), value)
    end
  end)

  it("gives the same on long strings split inside an escape, a surrogate pair, a UTF-8 sequence", function()
    -- limit 1: the scan goes 16 bytes a unit, the decoding of escapes and the writing of the
    -- string's block 4 (json_resume.c); a prefix of every length up to 17 puts each piece across
    -- every kind of chunk boundary, and 4 KB of it makes the string in a block prepared ahead
    local pieces = { "\\n", "\\\\", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00\\ud800x", "\195\169",
      "\240\159\152\128", "\226\130", "\\/" }
    for _, piece in ipairs(pieces) do
      for k = 0, 17 do
        local body = string.rep("a", 4100 + k) .. piece .. string.rep("b", k) .. piece .. "c"
        check('"' .. body .. '"', { 1, 2 }, { 1, 0 })
        check('["' .. body .. '",' .. k .. "]", { 1 }, { 3 })
      end
    end
    for k = 0, 17 do -- refused escapes and an unterminated string at each boundary: the same errors
      local head = '"' .. string.rep("a", 4100 + k)
      check(head .. '\\x"', { 1 }, { 1, 0 })
      check(head .. '\\u12"', { 1 }, { 1 })
      check(head .. '\\ud83d\\u12"', { 1 }, { 1 })
      check(head .. "\\", { 1 }, { 1 })
    end
  end)

  it("frees a decoder dropped in the middle of a document", function()
    for _ = 1, 20 do
      local d = core._json_decoder(items(200), 0)
      for _ = 1, 50 do assert.is_false(d:run(3)) end
    end
    collectgarbage()
    collectgarbage()
  end)
end)

describe("a large result over budgeted host steps", function()
  local big, small

  before_each(function()
    big = assert(helper.test_server({ "--items-tool" }))
    small = assert(helper.test_server())
  end)

  after_each(function()
    if big then big:close() end
    if small then small:close() end
    mcp.loop.set_budget(2)
  end)

  -- Step like a host until done() holds; counts the steps after which big's session was still
  -- decoding a message.
  local function frames(done)
    local decoding = 0
    local limit = core.now_ms() + helper.ms(60000)
    while not done() and core.now_ms() < limit do
      mcp.loop.step(0)
      if big.session:decoding() then decoding = decoding + 1 end
    end
    return decoding
  end

  it("completes a 4 MB call decoded over several steps while other calls complete", function()
    local res, err, done = nil, nil, false
    mcp.spawn(function()
      res, err = big:call_tool("items", { count = 40000 })
      done = true
    end)
    local echoes_while_decoding, echo_done = 0, false
    mcp.spawn(function()
      while not done do
        local r = assert(small:call_tool("echo", { message = "frame" }))
        assert.are.equal("frame", r.content[1].text)
        if big.session:decoding() then echoes_while_decoding = echoes_while_decoding + 1 end
      end
      echo_done = true
    end)
    local decoding = frames(function() return done end)
    helper.wait_until(function() return echo_done end, helper.ms(10000))
    assert.is_nil(err)
    assert.is_true(done)
    local ok, where = same(core.json_decode(items(40000)), res.structuredContent)
    assert(ok, "the structured content differs at " .. tostring(where))
    assert.is_true(decoding >= 2, "decoded over several steps (" .. decoding .. ")")
    assert.is_true(echoes_while_decoding >= 1, "calls on another connection completed meanwhile")
    assert.is_false(big.session:decoding())
  end)

  it("completes long text results over several steps, with and without escapes, the same text", function()
    mcp.loop.set_budget(0.1)
    local n = 6 * 1024 * 1024 + 7 -- the read buffer grows into blocks it prepared (buf.h)
    local text, echoed, done = nil, nil, false
    local lines = string.rep(("%-63s\n"):format("a line of a log, \"quoted\", caf\195\169"), 40000)
    mcp.spawn(function()
      text = assert(big:call_tool("big", { bytes = n })).content[1].text
      echoed = assert(big:call_tool("echo", { message = lines })).content[1].text
      done = true
    end)
    local decoding = frames(function() return done end)
    assert.are.equal(n, #text)
    assert.is_true(text == string.rep("0123456789", math.floor(n / 10)) .. string.rep("x", n % 10), "the same text")
    assert.is_true(echoed == lines, "the same text, its escapes decoded")
    assert.is_true(decoding >= 2, "decoded over several steps (" .. decoding .. ")")
  end)

  it("leaves the host's collector settings as they were, the collector running", function()
    local host = collectgarbage("setstepmul", 300) -- a setting of the host's own
    local res
    mcp.spawn(function() res = assert(big:call_tool("items", { count = 20000 })) end)
    local decoding = frames(function() return res ~= nil end)
    assert.is_true(decoding >= 2, "decoded over several steps (" .. decoding .. ")")
    assert.are.equal(20000, #res.structuredContent.items)
    assert.are.equal(300, collectgarbage("setstepmul", host))
    if _VERSION ~= "Lua 5.1" or jit then assert.is_true(collectgarbage("isrunning")) end
  end)

  it("keeps the order of the messages that arrive behind the one being decoded", function()
    mcp.loop.set_budget(0.001) -- every step decodes a slice and stops
    local order = {}
    mcp.spawn(function()
      local r = assert(big:call_tool("items", { count = 3000 }))
      order[#order + 1] = "items " .. #r.structuredContent.items
    end)
    mcp.spawn(function()
      while not big.session:decoding() do mcp.sleep(1) end
      local r = assert(big:call_tool("echo", { message = "after" }))
      order[#order + 1] = r.content[1].text
    end)
    local decoding = frames(function() return #order == 2 end)
    assert.are.same({ "items 3000", "after" }, order)
    assert.is_true(decoding >= 2)
  end)

  -- key_order (mcp-lua --json) wants every object's order, which the sliced decoder does not record
  it("decodes in one go, every object with its key order, for a client with key_order", function()
    if big then big:close() end
    big = assert(helper.test_server({ "--items-tool" }, { key_order = true }))
    mcp.loop.set_budget(0.001)
    local res
    mcp.spawn(function() res = assert(big:call_tool("items", { count = 3000 })) end)
    assert.are.equal(0, frames(function() return res ~= nil end))
    assert.are.equal(3000, #res.structuredContent.items)
    local mt = getmetatable(res.structuredContent.items[1])
    assert.is_table(mt and mt.__keyorder)
  end)

  it("decodes in one go when the step has no budget, and in blocking calls", function()
    mcp.loop.set_budget(0)
    local res
    mcp.spawn(function() res = assert(big:call_tool("items", { count = 3000 })) end)
    assert.are.equal(0, frames(function() return res ~= nil end))
    assert.are.equal(3000, #res.structuredContent.items)
    mcp.loop.set_budget(2)
    local r = assert(big:call_tool("items", { count = 3000 })) -- blocking: mcp.run's path
    assert.is_true(same(res.structuredContent, r.structuredContent))
  end)

  -- A server of its own (a script) whose tools/call answers `n` items, then does what `after` says
  -- (Lua code run once the answer is written; it may add to the same write with `more`).
  local ITEMS_SERVER = [=[
local n = tonumber(arg[1])
local function out(...) io.stdout:write(...) io.stdout:flush() end
for line in io.stdin:lines() do
  local id = line:match('"id":%s*([^,}]+)')
  local method = line:match('"method":%s*"([^"]+)"')
  if id and method == "initialize" then
    local v = line:match('"protocolVersion":%s*"([^"]+)"') or "2025-06-18"
    out('{"jsonrpc":"2.0","id":', id, ',"result":{"protocolVersion":"', v,
      '","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"items","version":"1"}}}\n')
  elseif id and method == "tools/call" then
    local parts, more = {}, ""
    for i = 1, n do parts[i] = ('{"i":%d}'):format(i) end
    @MORE@
    out('{"jsonrpc":"2.0","id":', id, ',"result":{"content":[],"structuredContent":{"items":[',
      table.concat(parts, ","), ']}}}\n', more)
    @AFTER@
  elseif id and method then
    out('{"jsonrpc":"2.0","id":', id, ',"error":{"code":-32601,"message":"no"}}\n')
  end
end
]=]

  -- That server with n items started; then its tools/call with the budget cut (every step decodes
  -- a slice and stops), stepped until it is over. Returns the client, result and error. setup(c)
  -- runs before the call.
  local function sliced_call(n, more, after, setup)
    local path = os.tmpname()
    helper.write_file(path, (ITEMS_SERVER:gsub("@MORE@", function() return more end)
      :gsub("@AFTER@", function() return after end)))
    local c
    mcp.spawn(function() c = assert(mcp.create_stdio_client(helper.lua_cmd(), { path, tostring(n) }, { stderr = "discard" })) end)
    local limit = core.now_ms() + helper.ms(30000)
    while not c and core.now_ms() < limit do mcp.loop.step(0) end
    os.remove(path)
    if setup then setup(c) end
    mcp.loop.set_budget(0.001)
    local res, err, done = nil, nil, false
    mcp.spawn(function()
      res, err = c:call_tool("items", {})
      done = true
    end)
    while not done and core.now_ms() < limit do mcp.loop.step(0) end
    assert.is_true(done)
    return c, res, err
  end

  it("gives the result that came before the server exited, then the end of the connection", function()
    -- the answer, then the end of stdout and the exit, while it is being decoded
    local last, res, err = sliced_call(20000, "", "os.exit(0)")
    assert.is_nil(err)
    assert.are.equal(20000, #res.structuredContent.items)
    assert.are.equal(20000, res.structuredContent.items[20000].i)
    helper.wait_until(function() return not last.session:is_open() end, helper.ms(10000))
    assert.is_false(last.session:is_open())
    last:close()
  end)

  it("closes the connection with a clear error when the messages behind one in decoding exceed max_queued", function()
    -- the large answer, then a flood of large messages (4 MiB in all) while it is being decoded;
    -- a bound of two of them, so that the first reads that follow the answer (a pipe's worth
    -- each) pass it long before the answer's slices are all decoded
    local flood, res, err = sliced_call(100000, [[more = ('{"jsonrpc":"2.0","method":"notifications/message",'
      .. '"params":{"level":"info","data":"' .. ("x"):rep(64 * 1024) .. '"}}\n'):rep(64)]], "",
      function(c)
        assert.are.equal(64 * 1024 * 1024, c.session:max_queued(128 * 1024)) -- the default, then 128 KiB
      end)
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
    assert.truthy(helper.has(err.message, "the server sent more than 131072 bytes of messages while one was being decoded"),
      err.message)
    assert.is_false(flood.session:decoding())
    assert.is_false(flood.session:is_open())
    flood:close()
  end)

  it("fails the call and frees the message when the client closes in the middle of it", function()
    mcp.loop.set_budget(0.001)
    local res, err, done = nil, nil, false
    mcp.spawn(function()
      res, err = big:call_tool("items", { count = 3000 })
      done = true
    end)
    local limit = core.now_ms() + helper.ms(30000)
    while not big.session:decoding() and core.now_ms() < limit do mcp.loop.step(0) end
    assert.is_true(big.session:decoding())
    big:close()
    assert.is_false(big.session:decoding())
    frames(function() return done end)
    assert.is_nil(res)
    assert.are.equal("closed", err.kind)
    big = nil
    collectgarbage()
  end)
end)
