-- core.spawn_detached (the browser opener): the program inherits none of the host's descriptors,
-- the same sweep as a stdio server's spawn (docs/SECURITY.md "Spawned servers").
local mcp = require("mcp")
local helper = require("helper")

describe("core.spawn_detached", function()
  it("a 'browser' that lists its open descriptors sees only 0-2 (and the one ls itself opens)", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(mcp.core.mkdir_private(dir))
    local script, out = dir .. "/browser", dir .. "/fds"
    helper.write_file(script, "#!/bin/sh\nls -l /proc/self/fd > \"$1.tmp\" 2>&1 && mv \"$1.tmp\" \"$1\"\n")
    os.execute("chmod +x " .. script)
    -- Descriptors the host holds without close-on-exec: a file from io.open and a popen pipe.
    local held = assert(io.open(dir .. "/held", "w"))
    local pipe = assert(io.popen("cat >/dev/null", "w"))
    assert(mcp.core.spawn_detached({ script, out }))
    assert.is_true(helper.wait_until(function()
      local f = io.open(out)
      if f then f:close() end
      return f ~= nil
    end, helper.ms(5000)))
    held:close()
    pipe:close()
    local fds = {}
    for line in io.lines(out) do
      local fd, target = line:match(" (%d+) %-> (.*)$")
      -- the directory ls reads is its own descriptor
      if fd and not target:match("^/proc/%d+/fd$") then fds[#fds + 1] = tonumber(fd) end
    end
    table.sort(fds)
    assert.same({ 0, 1, 2 }, fds)
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)
