-- A game-style loop: no frame ever waits on MCP, not even to connect. The client connects
-- inside a task (mcp.spawn), calls run in tasks, and each frame calls mcp.loop.step(0), which
-- dispatches whatever has arrived, runs the tasks it woke and returns at once. Between frames
-- the loop sleeps until the next frame is due (mcp.loop.step(ms) sleeps in the kernel and wakes
-- early only to dispatch MCP traffic), so it paces at 60 frames a second instead of spinning.
--
--   lua5.4 examples/gameloop.lua        (from a checkout, after make; see README.md "Quick example")
local mcp = require("mcp")
-- Once at start: smaller collector steps (Lua 5.4) and glibc's malloc without fastbins, so that
-- the frame where a large dropped result is swept stays near the step budget (docs/GAMELOOPS.md).
-- Process-wide settings: the game's choice. On LuaJIT (LÖVE) it leaves both alone.
mcp.loop.tune_for_frames()

local here = (arg and arg[0] or ""):match("^(.*)/") or "."
local lua = os.getenv("MCP_DEMO_LUA") or "lua5.4"
local FRAME_MS = 1000 / 60
local MAX_FRAMES = 60 * 30 -- give up after 30 s worth of frames

local status, client = "connecting", nil
local results = {}
local connected_at
local frames = 0

mcp.spawn(function()
  local c, err = mcp.create_stdio_client(lua, { here .. "/servers/example_server.lua" }, { stderr = "discard" })
  if not c then
    status = "failed: " .. tostring(err)
    return
  end
  client, status = c, "connected"
  connected_at = frames -- frames had already run while the server started
  for i = 1, 8 do
    mcp.spawn(function()
      local r, cerr = c:call_tool("add", { a = i, b = i })
      results[#results + 1] = r and r.structuredContent.sum or tostring(cerr)
    end)
  end
end)

while #results < 8 and not status:match("^failed") and frames < MAX_FRAMES do
  local frame_start = mcp.core.now_ms()
  frames = frames + 1
  mcp.loop.step(0) -- dispatch what has arrived; never waits
  -- ... update and render the game here ...

  -- Pace: sleep until the next frame is due, waking early only to dispatch MCP events.
  local deadline = frame_start + FRAME_MS
  local now = mcp.core.now_ms()
  while now < deadline do
    mcp.loop.step(math.ceil(deadline - now))
    now = mcp.core.now_ms()
  end
end

if #results < 8 then
  io.stderr:write("gameloop: ", status, " after ", frames, " frames\n")
  if client then client:close() end
  os.exit(1)
end
print(("connected at frame %d; 8 calls answered by frame %d: %s"):format(connected_at, frames,
  table.concat(results, " ")))
client:close()
