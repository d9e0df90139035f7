-- Diagnostic (pending unless MCP_PINS_STRESS=1; not in `make test-nvim`'s list): the tool pins'
-- fingerprint is stable through the plugin's real call paths. Under load, headless Neovim 0.7
-- (LuaJIT 2.1.0-beta3) now and then fingerprints an unchanged tool as SHA-256("{}") or ("[]")
-- (echo "RBNvo1..." / "T1PN...": the canonical encoder was handed an empty table), and a second
-- fingerprint of the same definition right after is right; never seen with the JIT off.
--   MCP_PINS_STRESS=1 make test-nvim NVIM_SPECS=spec/nvim/pins_stress.lua   (several at once, under load)
-- With MCP_PINS_STRESS_ROUNDS=400 little load is needed: with canonical.lua's jit.off removed, 16
-- of 19 runs had wrong fingerprints (2 cores, beside two other niced spec loops; Debian 12's
-- libluajit 2.1.0~beta3+git20220320, which also fails the test case of LuaJIT issue #827, pairs()
-- loops that end early); with it, none. A watcher wrapped around drift.fingerprint_tool must not
-- run interpreted (jit.off): every trace through it would abort, and the fault no longer shows.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")

if os.getenv("MCP_PINS_STRESS") ~= "1" then
  T.skip("pins: a tool's fingerprint is the same at every verify", "a stress diagnostic: set MCP_PINS_STRESS=1")
  T.finish()
  return
end

local server_lua = os.getenv("MCP_TEST_LUA")
if server_lua == nil or server_lua == "" then server_lua = "lua5.4" end
local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp, "p")
local fh = assert(io.open(tmp .. "/servers.json", "wb"))
fh:write(([[{ "mcpServers": { "example": { "command": %q, "args": [%q], "autoApprove": ["slow_count"] } } }]])
  :format(server_lua, root .. "/examples/servers/example_server.lua"))
fh:close()
vim.notify = function() end
vim.ui.select = function(items, _, cb) vim.defer_fn(function() cb(items[1], 1) end, 5) end -- Allow once / Deny

-- Each verify-time fingerprint taken twice: a pair that differs is the glitch.
local drift = require("mcp.tools.drift")
local fingerprint, glitches = drift.fingerprint_tool, {}
drift.fingerprint_tool = function(tool)
  local d, err = fingerprint(tool)
  local again = fingerprint(tool)
  if d ~= again then glitches[#glitches + 1] = ("%s: %s, then %s"):format(tostring(tool.name), tostring(d), tostring(again)) end
  return d, err
end

T.test("pins: a tool's fingerprint is the same at every verify (McpCall, chat tasks, restarts)", function()
  local plugin = require("mcp.nvim.plugin").setup({ config_file = tmp .. "/servers.json", workspace = false,
    hub = { trust_dir = tmp .. "/trust" }, pins = { dir = tmp .. "/pins" } })
  plugin.wait(20000)
  local chat = require("mcp.nvim.chat")
  local done = 0
  for round = 1, tonumber(os.getenv("MCP_PINS_STRESS_ROUNDS") or "40") do
    vim.cmd(([[McpCall example__echo {"message": "round %d"}]]):format(round))
    vim.cmd([[McpCall example__slow_count {"n": 2}]])
    for _, t in ipairs(chat.tools_for("avante")) do
      if t.name == "example__echo" then t.func({ message = "async" }, { on_complete = function() done = done + 1 end }) end
    end
    if round % 10 == 0 then vim.cmd("McpRestart example") end
    T.wait_for(function() return done >= round end, 20000, "round " .. round)
  end
  plugin.stop()
  T.eq("", table.concat(glitches, "; "), "fingerprints that changed between two takes")
end)

T.finish()
