-- What a soak and fault run found (issue 26): a closed client gives back what it holds at
-- close(), not when it is collected; the stdio read buffer shrinks after a large message.
local mcp = require("mcp")
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

end)
