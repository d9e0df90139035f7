-- examples/gameloop.lua: it connects inside a task (so the first frames run while the server
-- starts) and finishes its eight calls; its pacing is visible in the frame counts it prints.
local helper = require("helper")

describe("examples/gameloop.lua", function()
  it("connects inside a task and answers its calls while frames run", function()
    local cmd = ("cd %q && LUA_PATH=%q LUA_CPATH=%q MCP_DEMO_LUA=%q %s examples/gameloop.lua 2>&1"):format(
      helper.root, "./lua/?.lua;./lua/?/init.lua;;", package.cpath .. ";;", helper.lua_cmd(), helper.lua_cmd())
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    local at, by, sums = out:match("connected at frame (%d+); 8 calls answered by frame (%d+): ([%d ]+)")
    assert.is_not_nil(at, out)
    -- the connection completed during a frame (frames ran while the server started); the old
    -- example connected before its first frame
    assert.is_true(tonumber(at) >= 1, out)
    assert.is_true(tonumber(by) >= tonumber(at), out)
    local list = {}
    for n in sums:gmatch("%d+") do list[#list + 1] = tonumber(n) end
    table.sort(list)
    assert.are.same({ 2, 4, 6, 8, 10, 12, 14, 16 }, list)
  end)
end)
