-- core.run_program and core.run_program_async (the keyring store's runs): every buffer and
-- descriptor of a run has one owner that frees it on every path, out of memory while the result is
-- made included (core._alloc_fail_above, test builds); a helper thread that cannot start
-- (core._fail_thread_starts, test builds) is a plain nil, err.
local mcp = require("mcp")
local core = mcp.core
local open_fds = require("hostile.bounds").fd_count

-- 256 KiB on stdout and on stderr: each string of the result is larger than the allocator lets Lua
-- make under the limit below, so making the result fails with LUA_ERRMEM.
local BIG = 256 * 1024
local LIMIT = 64 * 1024
local ARGV = { "sh", "-c", ("head -c %d /dev/zero; head -c %d /dev/zero >&2"):format(BIG, BIG) }
local RUNS = 20 -- a leak of the output would be RUNS * 512 KiB

local function settle()
  for _ = 1, 3 do collectgarbage("collect") end
end

local function heap() return core._heap_bytes and core._heap_bytes() end

-- fn() with every Lua allocation over LIMIT bytes failing: pcall's results.
local function limited(fn)
  core._alloc_fail_above(LIMIT)
  local res = { pcall(fn) }
  core._alloc_fail_above(nil)
  return (table.unpack or unpack)(res) -- luacheck: ignore 143
end

-- The C heap grew by less than what RUNS leaked outputs would hold (when mallinfo2 is known here;
-- under ASan and valgrind their leak checks see the rest).
local function assert_no_output_leak(base)
  settle()
  local now = heap()
  if base == nil or now == nil or now == 0 then return end
  assert.is_true(now - base < RUNS * BIG / 4, ("the C heap grew by %d bytes over %d runs"):format(now - base, RUNS))
end

describe("core.run_program out of memory while the result is made", function()
  it("raises the memory error and frees the run's output and descriptors", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    assert(core.run_program(ARGV, nil, 10000)) -- (whatever a first run allocates for good)
    settle()
    local fds, base = open_fds(), heap()
    for _ = 1, RUNS do
      local ok, err = limited(function() return core.run_program(ARGV, nil, 10000) end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("memory", 1, true), tostring(err))
    end
    assert_no_output_leak(base)
    assert.equal(fds, open_fds())
    local r = assert(core.run_program(ARGV, nil, 10000)) -- and it goes on
    assert.equal(BIG, #r.stdout)
  end)

  it("run_program_async: fn gets nil and the memory error, once; the output is freed and the loop goes on", function()
    if not core._alloc_fail_above(nil) then
      pending("this Lua cannot swap its allocator")
      return
    end
    settle()
    local fds, base = open_fds(), heap()
    for _ = 1, RUNS do
      local got = {}
      local h = assert(core.run_program_async(ARGV, nil, 10000, function(r, err) got[#got + 1] = { r, err } end))
      local ok, err = limited(function()
        while #got == 0 do core.step(1000) end
      end)
      assert.is_true(ok, tostring(err))
      assert.equal(1, #got)
      assert.is_nil(got[1][1])
      assert.truthy(tostring(got[1][2]):find("memory", 1, true), tostring(got[1][2]))
      assert.is_false(h:running())
      core.step(0)
      assert.equal(1, #got)
    end
    assert_no_output_leak(base)
    assert.equal(fds, open_fds())
    local res
    assert(core.run_program_async(ARGV, nil, 10000, function(r) res = r end))
    while res == nil do core.step(1000) end
    assert.equal(BIG, #res.stderr)
  end)
end)

describe("core.run_program_async when its helper thread cannot start", function()
  it("returns nil and an error naming it; no program runs, fn is never called, nothing is left open", function()
    local marker = os.tmpname()
    os.remove(marker)
    local argv = { "sh", "-c", "touch '" .. marker .. "'" }
    settle()
    local fds, children = open_fds(), core.children()
    local called = 0
    core._fail_thread_starts(1)
    local h, err = core.run_program_async(argv, "input", 5000, function() called = called + 1 end)
    core._fail_thread_starts(0)
    assert.is_nil(h)
    assert.equal("cannot run sh: cannot start a helper thread: Resource temporarily unavailable", err)
    for _ = 1, 5 do core.step(10) end
    assert.equal(0, called)
    assert.is_nil(io.open(marker)) -- the program never ran
    assert.equal(children, core.children())
    settle()
    assert.equal(fds, open_fds())
    -- the next run gets its thread
    local res
    assert(core.run_program_async(argv, nil, 5000, function(r) res = r end))
    while res == nil do core.step(1000) end
    assert.equal(0, res.status)
    local f = assert(io.open(marker))
    f:close()
    os.remove(marker)
  end)
end)

describe("the argument vector of core.run_program, run_program_async and spawn_detached", function()
  -- exec takes a string up to its first NUL: "a\0b" would run with the argument "a", another than
  -- the one given (a keyring key, a URL for the browser)
  it("raises for an argument with a NUL byte, and runs nothing", function()
    local marker = os.tmpname()
    os.remove(marker)
    local argv = { "sh", "-c", "touch '" .. marker .. "'\0; echo never" }
    local children = core.children()
    for _, run in ipairs({
      function() return core.run_program(argv, nil, 5000) end,
      function() return core.run_program_async(argv, nil, 5000, function() end) end,
      function() return core.spawn_detached(argv) end,
    }) do
      local ok, err = pcall(run)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("arguments must not contain NUL bytes", 1, true), tostring(err))
    end
    for _ = 1, 3 do core.step(10) end
    assert.equal(children, core.children())
    assert.is_nil(io.open(marker)) -- no program ran
    -- the same argument without the NUL runs
    local res = assert(core.run_program({ "sh", "-c", "printf '%s' \"$1\"", "sh", "a b" }, nil, 5000))
    assert.equal("a b", res.stdout)
  end)
end)

describe("mcp.stdio_transport's command and cwd", function()
  -- (as an argument: exec and chdir take a string up to its first NUL, so "sh\0 x" ran sh, a
  -- program other than the one given, e.g. the one a trust question showed)
  it("raise with a NUL byte; its args and env did already", function()
    for _, cfg in ipairs({ { command = "sh\0 -c evil" }, { command = "sh", cwd = "/tmp\0/nowhere" },
      { command = "sh", working_dir = "/\0x" } }) do
      local ok, err = pcall(mcp.stdio_transport, cfg)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("must not contain NUL bytes", 1, true), tostring(err))
    end
    assert.is_false(pcall(mcp.stdio_transport, { command = "sh", args = { "a\0b" } }))
    assert.truthy(mcp.stdio_transport({ command = "sh", cwd = "/tmp" }))
  end)
end)
