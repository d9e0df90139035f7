-- A game-style loop: the frame never blocks on MCP. Calls run in tasks (mcp.spawn); each frame
-- calls mcp.loop.step(0), which dispatches whatever has arrived and returns at once.
local mcp = require("mcp")

local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local lua = os.getenv("MCP_DEMO_LUA") or "lua5.4"

local client = assert(mcp.create_stdio_client(lua, { here .. "/servers/example_server.lua" }, { stderr = "discard" }))

local results, frames = {}, 0
for i = 1, 8 do
  mcp.spawn(function()
    local r, err = client:call_tool("add", { a = i, b = i })
    results[#results + 1] = r and r.structuredContent.sum or tostring(err)
  end)
end

-- The frame loop: simulate work per frame; never wait on the MCP fd.
while #results < 8 do
  frames = frames + 1
  mcp.loop.step(0)
  -- ... update and render the game here ...
end
print(("8 calls answered over %d frames: %s"):format(frames, table.concat(results, " ")))
client:close()
