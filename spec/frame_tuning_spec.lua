-- mcp.loop.tune_for_frames (lua/mcp/frame_tuning.lua, src/malloc_tune.c): process-wide, so each
-- case runs spec/fixtures/frame_tuning_probe.lua in a process of its own.
local helper = require("helper")

local is54 = _VERSION == "Lua 5.4" and rawget(_G, "jit") == nil
local luajit = rawget(_G, "jit") ~= nil

local function probe(opts, mode)
  local cmd = ("cd %q && LUA_PATH=%q LUA_CPATH=%q %s spec/fixtures/frame_tuning_probe.lua %q %s 2>&1"):format(
    helper.root, "./lua/?.lua;./lua/?/init.lua;;", package.cpath .. ";;", helper.lua_cmd(), opts or "nil",
    mode or "incremental")
  local p = assert(io.popen(cmd))
  local out = p:read("*a")
  p:close()
  local r = { out = out }
  r.before, r.after, r.mode = out:match("before=(%d+) after=(%d+) mode=(%S+)")
  for k, v in out:gmatch("(%a+)=([^\n]*)\n") do
    if k ~= "before" then r[k] = v end
  end
  return r
end

describe("mcp.loop.tune_for_frames", function()
  it("makes Lua 5.4's collector steps smaller and turns glibc's fastbins off", function()
    local r = probe()
    assert.is_nil(r.error, r.out)
    if is54 then
      -- the same cycle over 400,000 dropped tables takes ~8 times as many steps (2^10-byte steps
      -- instead of 2^13: each sweeps ~6,000 objects instead of ~50,000)
      local before, after = tonumber(r.before), tonumber(r.after)
      assert.is_true(before >= 2 and after >= 4 * before, r.out)
      assert.are.equal("incremental", r.mode, r.out)
      assert.are.equal("incremental, step 2^10 bytes (was incremental)", r.collector, r.out)
    else
      assert.truthy(r.collector:find("^unchanged: .* collects in small steps"), r.out)
    end
    if luajit then
      assert.are.equal("unchanged: LuaJIT's heap has its own allocator", r.malloc, r.out)
    elseif helper.sanitizer() == "asan" then
      -- the probe's malloc is ASan's (LD_PRELOAD), whose mallopt does nothing and says so
      assert.are.equal("unchanged: mallopt(M_MXFAST, 0) refused: malloc is not glibc's own", r.malloc, r.out)
    else
      assert.are.equal("glibc malloc without fastbins", r.malloc, r.out) -- Debian: glibc
    end
  end)

  it("switches Lua 5.4's generational mode to incremental, and leaves parts not asked for", function()
    local r = probe("{ malloc = false }", "generational")
    assert.is_nil(r.error, r.out)
    assert.are.equal("unchanged: not asked", r.malloc, r.out)
    if is54 then
      assert.are.equal("incremental", r.mode, r.out)
      assert.are.equal("incremental, step 2^10 bytes (was generational)", r.collector, r.out)
      r = probe("{ collector = false }", "generational")
      assert.are.equal("generational", r.mode, r.out)
      assert.are.equal("unchanged: not asked", r.collector, r.out)
    end
    if luajit then
      r = probe("{ malloc = true }")
      assert.are.equal("glibc malloc without fastbins", r.malloc, r.out)
    end
  end)

  it("raises on options that are not what it takes", function()
    for _, opts in ipairs({ "{ step_size = 3 }", "{ step_size = 10.5 }", "{ collector = 'yes' }", "'fast'" }) do
      local r = probe(opts)
      assert.truthy(r.error and r.error:find("mcp.loop.tune_for_frames: ", 1, true), r.out)
      assert.truthy(r.error:find("frame_tuning_probe.lua", 1, true), r.out) -- the caller's line
    end
  end)
end)
