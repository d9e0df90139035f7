-- What a soak and fault run found (issue 26): a closed client gives back what it holds at
-- close(), not when it is collected; the stdio read buffer shrinks after a large message.
local mcp = require("mcp")
local core = require("mcp.core")
local helper = require("helper")

-- This process's open descriptors (listed by ls, whose pipe adds the same one every time).
local function open_fds()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  local p = assert(io.popen("ls /proc/" .. pid .. "/fd"))
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

local function settle()
  for _ = 1, 3 do collectgarbage("collect") end
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
  end)

  it("the stdio read buffer shrinks after a large message, and close() frees it", function()
    if core._heap_bytes == nil or core._heap_bytes() == nil then pending("no mallinfo2 here") return end
    local c = assert(helper.test_server())
    assert(c:ping())
    settle()
    local base = core._heap_bytes()
    local r = assert(c:call_tool("big", { bytes = 24 * 1024 * 1024 }))
    assert.equal(24 * 1024 * 1024, #r.content[1].text)
    r = nil -- luacheck: ignore 311
    settle()
    local after = core._heap_bytes()
    -- the 24 MiB message needed a 32 MiB buffer; what stays is the 256 KiB the buffer keeps
    assert.is_true(after - base < 4 * 1024 * 1024, ("%d bytes kept after the result was dropped"):format(after - base))
    c:close()
    settle()
    assert.is_true(core._heap_bytes() - base < 4 * 1024 * 1024)
    assert.truthy(c) -- (still referenced: close() freed it)
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
end)
