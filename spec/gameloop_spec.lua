-- Game loops: the host calls mcp.loop.step(0) once per frame and a frame never waits for MCP.
-- A 10 MB tool result must arrive over many step(0) calls, each returning at once with whatever
-- has arrived (often nothing), while other calls in flight keep completing.
local helper = require("helper")
local mcp = require("mcp")
local core = mcp.core

local function median(t)
  if #t == 0 then return 0 end
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  return s[math.floor((#s + 1) / 2)]
end

describe("game loop (mcp.loop.step(0) per frame)", function()
  local big, small

  before_each(function()
    big = assert(helper.test_server())
    small = assert(helper.test_server())
  end)

  after_each(function()
    if big then big:close() end
    if small then small:close() end
  end)

  it("receives a 10 MB result over many step(0) calls, none of which waits for data", function()
    local size = 10 * 1024 * 1024
    local result, err, done = nil, nil, false
    mcp.spawn(function()
      result, err = big:call_tool("big", { bytes = size })
      done = true
    end)
    -- Another connection keeps answering small calls meanwhile (several calls in flight).
    local echoes, echoes_during, echo_done = 0, 0, false
    mcp.spawn(function()
      while not done do
        local r = small:call_tool("echo", { message = "frame" })
        assert(r and r.content[1].text == "frame", "echo answered")
        echoes = echoes + 1
        if not done then echoes_during = echoes_during + 1 end
      end
      echo_done = true
    end)

    local frames, idle_frames, busy_frames = 0, 0, 0
    local max_ms, idle_ms = 0, {}
    local t0 = core.now_ms()
    local limit = t0 + helper.ms(60000)
    while not done and core.now_ms() < limit do
      local s = core.now_ms()
      local n = mcp.loop.step(0)
      local d = core.now_ms() - s
      frames = frames + 1
      if d > max_ms then max_ms = d end
      if n == 0 then
        idle_frames = idle_frames + 1
        idle_ms[#idle_ms + 1] = d
      else
        busy_frames = busy_frames + 1
      end
      -- ... a game would update and render here ...
    end
    local total = core.now_ms() - t0
    -- let the echo task see `done` and finish
    helper.wait_until(function() return echo_done end, helper.ms(10000))

    assert.is_true(done, "the big call finished within the time limit")
    assert.is_nil(err)
    local text = result.content[1].text
    assert.are.equal(size, #text)
    assert.are.equal("0123456789", text:sub(1, 10))

    local report = ("%d frames (%d idle, %d with events) in %d ms; slowest frame %d ms; median idle frame %d ms; %d echoes during the transfer")
      :format(frames, idle_frames, busy_frames, total, max_ms, median(idle_ms), echoes_during)
    -- The result came in pieces, over many frames.
    assert.is_true(busy_frames >= 3, "several frames carried data: " .. report)
    assert.is_true(frames >= 10, "many frames: " .. report)
    -- A frame returns at once when nothing has arrived: with nothing left in flight, step(0)
    -- finds nothing and returns 0 (a step that waited for data would never return here). Whether
    -- frames during the transfer found nothing depends on the two processes' speeds (under
    -- valgrind every frame finds data), so it is only reported.
    for _ = 1, 3 do
      assert.are.equal(0, mcp.loop.step(0), "an idle frame returned at once: " .. report)
    end
    -- How long frames took is a benchmark's business (a loaded machine stretches any frame), so
    -- only the shape is asserted here: the transfer spanned frames, and no single one held it all.
    assert.is_true(total > max_ms, "the transfer spanned frames: " .. report)
    assert.is_true(echo_done, "the echo task finished")
    assert.is_true(echoes_during >= 1, "calls on another connection completed meanwhile: " .. report)
  end)
end)
