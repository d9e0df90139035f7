-- Headless Neovim spec of a start no one asked for (the chat adapters' start, called from
-- init.lua at Neovim's startup), run by `make test-nvim`: it asks nothing. Neither the trust
-- prompt of a workspace file (vim.ui.select) nor an ${input:...} of the user's file
-- (vim.fn.input / inputsecret, which would block the startup) is asked; those servers wait in
-- "answer_required" with one warning each, and the user's :McpRestart / :McpLogin then asks.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local slow = T.slow()

local server_lua = os.getenv("MCP_TEST_LUA")
if server_lua == nil or server_lua == "" then server_lua = "lua5.4" end
local server = root .. "/examples/servers/example_server.lua"

local notes = {}
vim.notify = function(msg, level, opts)
  notes[#notes + 1] = { msg = tostring(msg), level = level, opts = opts }
  return {}
end
local function noted(text, from)
  local n = 0
  for i = from or 1, #notes do
    if notes[i].msg == text then n = n + 1 end
  end
  return n
end

-- Every question the plugin could ask, counted: the trust prompt (vim.ui.select, answered "Yes
-- (remember for this file)") and the default on_input handler's vim.fn.input / inputsecret.
local selects, typed = {}, {}
vim.ui.select = function(items, opts, cb)
  selects[#selects + 1] = tostring(opts.prompt)
  vim.defer_fn(function() cb(items[3], 3) end, 20)
end
vim.fn.input = function(...)
  typed[#typed + 1] = { "input", ... }
  return "typed"
end
vim.fn.inputsecret = function(...)
  typed[#typed + 1] = { "inputsecret", ... }
  return "typed-secret"
end

local function write(path, text)
  local fh = assert(io.open(path, "wb"))
  fh:write(text)
  fh:close()
end

local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp .. "/ws", "p")
vim.env.XDG_DATA_HOME = tmp .. "/data"
local user_file = tmp .. "/servers.json"
write(user_file, ([[{
  "inputs": [ { "id": "token", "type": "promptString", "description": "API token", "password": true } ],
  "mcpServers": {
    "example": { "command": %q, "args": [%q] },
    "keyed": { "command": %q, "args": [%q], "env": { "TOKEN": "${input:token}" } }
  }
}]]):format(server_lua, server, server_lua, server))
write(tmp .. "/ws/.mcp.json", ([[{ "mcpServers": { "ws": { "command": %q, "args": [%q] } } }]]):format(server_lua, server))
vim.cmd("cd " .. vim.fn.fnameescape(tmp .. "/ws"))

local plugin
local function setup()
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow,
    hub = { trust_dir = tmp .. "/trust" } })
end
local function state(i, name) return plugin.hubs[i].hub:state(name) end

T.test("the chat adapters' start asks nothing: the trust prompt and ${input:...} wait, one warning each", function()
  setup()
  local cc = require("mcp.nvim.chat").codecompanion()
  T.eq(0, #selects, "no trust prompt")
  T.eq(0, #typed, "no input asked")
  T.eq(2, #plugin.hubs, "the user's file and the workspace file")
  T.eq("ready", state(1, "example"))
  T.eq("answer_required", state(1, "keyed"), tostring(select(2, state(1, "keyed"))))
  T.eq("answer_required", state(2, "ws"), tostring(select(2, state(2, "ws"))))
  T.truthy(cc.example__echo, "the ready server's tool")
  T.eq(nil, cc.keyed__echo, "no tool of a server waiting for an answer")
  T.eq(nil, cc.ws__echo, "no tool of the workspace server")
  T.wait_for(function() return noted("MCP: ws waits for your answer (trust, or an ${input:...}): run :McpRestart ws") > 0 end,
    5000 * slow, "the warning")
  T.eq(1, noted("MCP: keyed waits for your answer (trust, or an ${input:...}): run :McpRestart keyed"), "one warning")
  T.eq(1, noted("MCP: ws waits for your answer (trust, or an ${input:...}): run :McpRestart ws"), "one warning")
  T.eq("MCP 1/3 !2", plugin.statusline())
  local line
  for _, l in ipairs(plugin.status_lines()) do
    if l:find("^keyed  ") then line = l end
  end
  T.eq("keyed  [answer_required]  keyed waits for your answer (trust, or an ${input:...}): run :McpRestart keyed", line)
end)

T.test("a call of its tool says what to run, and asks nothing", function()
  local from = #notes + 1
  vim.cmd("McpCall keyed__echo {}")
  T.eq(1, noted("MCP: keyed waits for your answer (trust, or an ${input:...}): run :McpRestart keyed", from))
  T.eq(0, #selects + #typed, "nothing asked")
end)

T.test(":McpRestart asks the ${input:...} (a password: inputsecret) and starts the server", function()
  vim.cmd("McpRestart keyed")
  T.wait_for(function() return state(1, "keyed") ~= "answer_required" and state(1, "keyed") ~= "connecting" end,
    20000 * slow, "the restart")
  T.eq("ready", state(1, "keyed"), tostring(select(2, state(1, "keyed"))))
  T.eq(1, #typed, "asked once")
  T.eq("inputsecret", typed[1][1])
  T.truthy(tostring(typed[1][2]):find("API token", 1, true), tostring(typed[1][2]))
  T.eq(0, #selects)
end)

T.test(":McpLogin of the workspace server asks the trust question, starts it, and the yes is remembered", function()
  vim.cmd("McpLogin ws")
  T.wait_for(function() return state(2, "ws") == "ready" or state(2, "ws") == "failed" end, 20000 * slow, "the restart")
  T.eq("ready", state(2, "ws"), tostring(select(2, state(2, "ws"))))
  T.eq(1, #selects, "asked once")
  T.truthy(selects[1]:find("Server 'ws' wants to run", 1, true), selects[1])
  T.eq("MCP 3/3", plugin.statusline())
  -- the next Neovim: the workspace server starts without a question, the input waits again
  plugin.stop()
  setup()
  require("mcp.nvim.chat").codecompanion()
  T.eq(1, #selects, "not asked again")
  T.eq(1, #typed, "not asked")
  T.eq("ready", state(2, "ws"), tostring(select(2, state(2, "ws"))))
  T.eq("answer_required", state(1, "keyed"))
end)

T.test("a command the user types is the user's start: it asks", function()
  plugin.stop()
  setup()
  vim.cmd("Mcp")
  plugin.wait(20000 * slow)
  T.eq("ready", state(1, "keyed"), tostring(select(2, state(1, "keyed"))))
  T.eq(2, #typed, "asked at the user's start")
  vim.cmd("close")
end)

plugin.stop()
T.wait_for(function() return require("mcp").core.children() == 0 end, 10000 * slow, "the servers reaped")
vim.fn.delete(tmp, "rf")
T.finish()
