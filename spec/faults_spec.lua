-- What a soak and fault run found (issue 26): a closed client gives back what it holds at
-- close(), not when it is collected; the stdio read buffer shrinks after a large message.
local mcp = require("mcp")
local core = require("mcp.core")
local helper = require("helper")

local open_fds = require("hostile.bounds").fd_count

local function settle()
  for _ = 1, 3 do collectgarbage("collect") end
end

-- c takes a 24 MiB result and drops it: the C heap before (after a ping and a collection), and
-- what the client still holds of it afterwards.
local function heap_after_big_result(c)
  assert(c:ping())
  settle()
  local base = core._heap_bytes()
  local r = assert(c:call_tool("big", { bytes = 24 * 1024 * 1024 }))
  assert.equal(24 * 1024 * 1024, #r.content[1].text)
  r = nil -- luacheck: ignore 311
  settle()
  return base, core._heap_bytes() - base
end

describe("faults in the wild", function()
  it("a closed stdio client holds no descriptor of its server (the pidfd) until it is collected", function()
    local before = open_fds()
    local kept = {}
    for i = 1, 5 do
      local c = assert(helper.test_server())
      assert(c:ping())
      c:close()
      kept[i] = c -- not collected: close() alone must give everything back
    end
    assert.equal(before, open_fds())
    assert.equal(5, #kept)
    for i = 1, #kept do kept[i] = nil end -- (collected now: the core forgets the reaped servers)
    collectgarbage()
    collectgarbage()
  end)

  it("the stdio read buffer shrinks after a large message, and close() frees it", function()
    if core._heap_bytes == nil or core._heap_bytes() == nil then pending("no mallinfo2 here") return end
    local c = assert(helper.test_server())
    local base, kept = heap_after_big_result(c)
    -- the 24 MiB message needed a 32 MiB buffer; what stays is the 256 KiB the buffer keeps
    assert.is_true(kept < 4 * 1024 * 1024, ("%d bytes kept after the result was dropped"):format(kept))
    c:close()
    settle()
    assert.is_true(core._heap_bytes() - base < 4 * 1024 * 1024)
    assert.truthy(c) -- (still referenced: close() freed it)
  end)
end)

-- Run fn with every Lua allocation over n bytes failing (core._alloc_fail_above, test builds);
-- false when this Lua cannot swap its allocator.
local function with_alloc_limit(n, fn)
  if not core._alloc_fail_above(n) then return false end
  local ok, a, b = pcall(fn)
  core._alloc_fail_above(nil)
  assert(ok, a)
  return true, a, b
end

describe("out of memory while a response is decoded", function()
  it("fails that call at once (kind protocol), and nothing else", function()
    if not core._alloc_fail_above(nil) then pending("this Lua cannot swap its allocator") return end
    local reports = {}
    local c = assert(helper.test_server(nil, { on_error = function(e) reports[#reports + 1] = e end }))
    assert(c:ping())
    local other_done
    mcp.spawn(function() other_done = c:call_tool("sleep", { ms = 300 }) end)
    local ran, res, err = with_alloc_limit(4 * 1024 * 1024, function()
      return c:call_tool("big", { bytes = 8 * 1024 * 1024 })
    end)
    if not ran then pending("this Lua cannot swap its allocator") return end
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
    assert.truthy(err.message:find("could not be decoded", 1, true))
    helper.wait_until(function() return other_done ~= nil and #reports > 0 end, helper.ms(10000))
    assert.truthy(other_done, "the other call was answered")
    assert.truthy(tostring(reports[1].message):find("memory", 1, true))
    assert(c:call_tool("echo", { message = "still here" }))
    c:close()
  end)

  it("finds the id of a response that writes it last (as the TypeScript SDK does)", function()
    if not core._alloc_fail_above(nil) then pending("this Lua cannot swap its allocator") return end
    -- a stdio server that answers every request with {"result":...,"jsonrpc":"2.0","id":N}
    local path = os.tmpname()
    helper.write_file(path, [[
      io.stdout:setvbuf("no")
      for line in io.lines() do
        local id, method = line:match('"id":(%d+)'), line:match('"method":"([^"]+)"')
        local result = '{}'
        if method == "initialize" then
          result = '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}'
        elseif method == "tools/call" and line:find('"big"', 1, true) then
          result = '{"content":[{"type":"text","text":"' .. string.rep("x", 8 * 1024 * 1024) .. '"}]}'
        elseif method == "tools/call" then
          result = '{"content":[{"type":"text","text":"small"}]}'
        end
        if id and not line:find('"method":"notifications/', 1, true) then
          io.stdout:write('{"result":', result, ',"jsonrpc":"2.0","id":', id, '}\n')
        end
      end
    ]])
    local c = assert(mcp.create_stdio_client(helper.lua_cmd(), { path },
      { stderr = "discard", request_timeout_ms = helper.ms(30000), protocol_version = "2025-06-18" }))
    local ran, res, err = with_alloc_limit(4 * 1024 * 1024, function() return c:call_tool("big", {}) end)
    if not ran then c:close() os.remove(path) pending("this Lua cannot swap its allocator") return end
    assert.is_nil(res)
    assert.equal("protocol", err.kind)
    assert.equal("small", assert(c:call_tool("small", {})).content[1].text)
    c:close()
    os.remove(path)
  end)
end)

describe("faults in the wild over HTTP #http", function()
  local H = require("http_helper")
  local srv = H.serve()
  if not srv then return end

  it("a large HTTP result is not kept once it is dropped, nor after close()", function()
    if core._heap_bytes == nil or core._heap_bytes() == nil then pending("no mallinfo2 here") return end
    local c = assert(mcp.create_http_client(srv.url, { request_timeout_ms = helper.ms(20000) }))
    assert(c:ping())
    settle()
    local base = core._heap_bytes()
    for _, mode in ipairs({ "json", "sse" }) do
      H.control(srv, { mode = mode })
      local r = assert(c:call_tool("big", { bytes = 24 * 1024 * 1024 }))
      assert.equal(24 * 1024 * 1024, #r.content[1].text)
      r = nil -- luacheck: ignore 311
      settle()
      local kept = core._heap_bytes() - base
      assert.is_true(kept < 4 * 1024 * 1024, ("%s: %d bytes kept after the result was dropped"):format(mode, kept))
    end
    c:close()
    settle()
    assert.is_true(core._heap_bytes() - base < 4 * 1024 * 1024)
  end)

  -- legacy SSE carries every response on its one long-lived GET stream: its buffer of delivered
  -- events kept the largest one's size until the stream ended (32 MiB after a 24 MiB result)
  it("a large result over legacy SSE is not kept by the stream once it is dropped", function()
    if core._heap_bytes == nil or core._heap_bytes() == nil then pending("no mallinfo2 here") return end
    local c = assert(mcp.create_sse_client(srv.base .. "/sse", { request_timeout_ms = helper.ms(20000) }))
    local _, kept = heap_after_big_result(c)
    assert(c:ping()) -- (the stream is still open)
    c:close()
    assert.is_true(kept < 4 * 1024 * 1024, ("%d bytes kept after the result was dropped"):format(kept))
  end)
end)

describe("at the hard descriptor limit", function()
  local HTTP_CHILD = [=[
    local mcp = require("mcp")
    local url = "http://127.0.0.1:1/mcp" -- nothing listens: only the socket's creation matters
    local keep = mcp.http_transport({ url = url }) -- libcurl is loaded and its context kept
    mcp.create_http_client(url, { request_timeout_ms = 5000 })
    local files = {}
    while true do -- every descriptor taken
      local f = io.open("/dev/null", "r")
      if not f then break end
      files[#files + 1] = f
    end
    local _, err = mcp.create_http_client(url, { request_timeout_ms = 5000 })
    for _, f in ipairs(files) do f:close() end
    print("kind=" .. tostring(err and err.kind))
    print("err=" .. tostring(err))
    local _, again = mcp.create_http_client(url, { request_timeout_ms = 5000 })
    print("again=" .. tostring(again))
    assert(keep)
  ]=]

  local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

  it("an HTTP call fails naming the limit, not only libcurl's \"Couldn't connect\"", function()
    local f = io.open("/proc/self/limits")
    if not f then pending("no /proc/self/limits") return end
    f:close()
    local script = os.tmpname()
    helper.write_file(script, HTTP_CHILD)
    local cmd = ("ulimit -n 64; LUA_PATH=%s LUA_CPATH=%s exec %s %s 2>&1"):format(shq(package.path .. ";;"),
      shq(package.cpath .. ";;"), helper.lua_cmd(), shq(script))
    local p = assert(io.popen("sh -c " .. shq(cmd), "r"))
    local out = p:read("*a")
    p:close()
    os.remove(script)
    local r = {}
    for k, v in out:gmatch("([%w_]+)=([^\n]*)") do r[k] = r[k] or v end
    assert.equal("transport", r.kind, out)
    assert.truthy(helper.has(r.err, "out of file descriptors (soft limit 64, hard 64)"), out)
    -- with descriptors free again, the same failure says nothing of a limit
    assert.truthy(r.again and not helper.has(r.again, "file descriptors"), out)
  end)
end)
