-- Headless Neovim spec of the plugin's OAuth logins (lua/mcp/nvim/login.lua), run by
-- `make test-nvim`: an HTTP server of the user's file behind the project's OAuth fixture
-- (spec/fixtures/oauth_server.mjs: the MCP server and its authorization server). The browser is
-- a fake vim.ui.open that follows the authorization URL to the redirect and visits it, which is
-- the interactive provider's 127.0.0.1 listener; vim.notify records the login's notification.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local T = dofile(root .. "/spec/nvim/harness.lua")
local slow = T.slow()

if vim.fn.executable("node") == 0 then
  T.skip("OAuth login through the browser", "node is needed to run the OAuth fixture")
  T.finish()
  return
end

local notes = {}
vim.notify = function(msg, level, opts)
  local rec = { n = #notes + 1 }
  notes[#notes + 1] = { msg = tostring(msg), level = level, opts = opts or {}, record = rec }
  return rec
end
local function noted(pattern, from)
  for i = from or 1, #notes do
    if notes[i].msg:find(pattern) then return notes[i], i end
  end
end

-- The browser: follows the authorization URL (the fixture approves at once) and visits the
-- redirect, in a task so that Neovim's loop runs on.
local mcp_mod
local opened = {}
vim.ui.open = function(u)
  opened[#opened + 1] = u
  mcp_mod.spawn(function()
    local landed = assert(mcp_mod.auth.follow_authorization(u))
    mcp_mod.http_request({ url = landed })
  end)
  return {}
end

local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp, "p")
vim.env.XDG_DATA_HOME = tmp .. "/data" -- the token store under stdpath("data")

local port
local job = vim.fn.jobstart({ "node", root .. "/spec/fixtures/oauth_server.mjs", "--quiet" }, {
  on_stdout = function(_, data)
    for _, l in ipairs(data) do port = port or tonumber(l:match('"port"%s*:%s*(%d+)')) end
  end,
})
T.wait_for(function() return port ~= nil end, 20000 * slow, "the OAuth fixture")
local url = "http://127.0.0.1:" .. port .. "/mcp"

local user_file = tmp .. "/servers.json"
local fh = assert(io.open(user_file, "wb"))
fh:write(([[{
  // an HTTP server behind OAuth
  "mcpServers": { "secure": { "url": %q } }
}]]):format(url))
fh:close()

local plugin
local function state() return plugin.hubs[1].hub:state("secure") end
-- The login's notifications from index `from` on: their texts, and whether they share one id.
local function login_notes(from)
  local texts, ids = {}, {}
  for i = from, #notes do
    if notes[i].msg:find("^MCP: login secure: ") then
      texts[#texts + 1] = notes[i].msg:gsub("^MCP: login secure: ", "")
      ids[notes[i].opts.id or "?"] = true
    end
  end
  local n = 0
  for _ in pairs(ids) do n = n + 1 end
  return texts, n
end

T.test("a 401 at connect logs in through the browser, one notification updated in place", function()
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow })
  mcp_mod = require("mcp.nvim").setup() and require("mcp")
  T.eq(tmp .. "/data/nvim", vim.fn.stdpath("data"))
  plugin.start()
  T.wait_for(function() return state() == "ready" end, 30000 * slow, "the server ready")
  T.eq(1, #opened, "the browser opened once")
  T.truthy(opened[1]:find("code_challenge=", 1, true), opened[1])
  local texts, ids = login_notes(1)
  T.eq(1, ids, "one notification")
  T.eq("opening the browser…", texts[1])
  T.truthy(texts[2]:find("^waiting for the redirect…"), texts[2])
  T.eq("logged in", texts[#texts])
  T.truthy(plugin.hubs[1].hub:list_tools()[1].name == "secure__whoami", "the server's tools")
end)

T.test("the tokens are in the file store under stdpath('data')", function()
  local store = mcp_mod.auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" })
  local rec = T.truthy(store:load(url), "a record for the server")
  T.truthy(rec.tokens and rec.tokens.access_token, "an access token")
  T.eq(384, mcp_mod.core.file_mode(store:path(url)), "mode 0600")
end)

T.test(":Mcp opens after a login, the login's message of two lines (the URL on its own) two lines of the log", function()
  local at
  for i, l in ipairs(plugin.log) do
    T.truthy(not l:find("[\r\n]"), "one line per entry: " .. l)
    if l:find("to authorize, open this URL", 1, true) then at = i end
  end
  T.truthy(at, "the login's message in the log")
  T.truthy(plugin.log[at + 1]:find("^%s+http://127%.0%.0%.1:%d+/authorize%?"), plugin.log[at + 1])
  vim.cmd("Mcp")
  local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr("mcp://servers"), 0, -1, false)
  local found
  for _, l in ipairs(lines) do found = found or l == "secure  [ready]" end
  T.truthy(found, table.concat(lines, "\n"))
  vim.cmd("close")
end)

T.test("a restart of the plugin starts logged in: no browser", function()
  plugin.stop()
  plugin.start()
  T.wait_for(function() return state() == "ready" end, 30000 * slow, "the server ready")
  T.eq(1, #opened, "no new login")
end)

T.test(":McpLogout forgets the tokens and stops the server; :McpLogin logs in again", function()
  vim.cmd("McpLogout secure")
  T.wait_for(function() return state() == "disabled" end, 10000 * slow, "stopped")
  local store = mcp_mod.auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" })
  T.eq(nil, (store:load(url) or {}).tokens, "no tokens kept")
  T.truthy(noted("secure: logged out"))
  local from = #notes + 1
  vim.cmd("McpLogin secure")
  T.wait_for(function() return state() == "ready" end, 30000 * slow, "ready again")
  T.eq(2, #opened, "the browser opened again")
  local texts, ids = login_notes(from)
  T.eq(1, ids, "one notification")
  T.eq("starting…", texts[1])
  T.eq("opening the browser…", texts[2])
  T.eq("logged in", texts[#texts])
  T.truthy((store:load(url) or {}).tokens, "tokens kept again")
end)

T.test("a login slower than a request: the connect waits for the browser", function()
  plugin.stop()
  mcp_mod.auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" }):delete(url)
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 300 })
  local browser = vim.ui.open
  vim.ui.open = function(u) vim.defer_fn(function() browser(u) end, 1000) end -- a person, slower
  local from = #notes + 1
  plugin.start()
  T.wait_for(function() return state() == "ready" or state() == "failed" end, 30000 * slow, "settled")
  vim.ui.open = browser
  T.eq("ready", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
  local texts = login_notes(from)
  T.eq("logged in", texts[#texts])
end)

T.test(":McpLogin of an unknown server says why not", function()
  vim.cmd("McpLogin nosuch")
  T.truthy(noted('no server named "nosuch"'))
end)

T.test("a login that gets no redirect fails in its notification", function()
  plugin.stop()
  local store = mcp_mod.auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" })
  store:delete(url)
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow,
    oauth = { authorization_timeout_ms = 300 } })
  local browser = vim.ui.open
  vim.ui.open = function(u) opened[#opened + 1] = u end -- a browser nobody uses
  local from = #notes + 1
  plugin.start()
  T.wait_for(function() return noted("^MCP: login secure: failed", from) end, 20000 * slow, "the failure")
  vim.ui.open = browser
  local texts, ids = login_notes(from)
  T.eq(1, ids, "one notification")
  T.truthy(texts[#texts]:find("within 300 ms (authorization_timeout_ms)", 1, true), texts[#texts])
end)

T.test("oauth = {store = ...}: the tokens go to the store given", function()
  plugin.stop()
  local store = mcp_mod.auth.memory_store()
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, oauth = { store = store } })
  plugin.start()
  T.wait_for(function() return state() == "ready" or state() == "failed" end, 30000 * slow, "settled")
  T.eq("ready", state())
  T.truthy((store:load(url) or {}).tokens, "tokens in the given store")
end)

T.test("oauth = false: no login, the 401 fails the server", function()
  plugin.stop()
  local n = #opened
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, oauth = false })
  plugin.start()
  T.wait_for(function() return state() == "failed" end, 30000 * slow, "failed")
  T.eq(n, #opened, "no browser")
  vim.cmd("McpLogin secure")
  T.truthy(noted("OAuth is off"))
end)

-- The fixture's control endpoint (spec/fixtures/oauth_server.mjs).
local function control(t)
  local res = assert(mcp_mod.http_request({ url = "http://127.0.0.1:" .. port .. "/control", json = t }))
  T.eq(200, res.status, res.body)
end

T.test("a restart no one asked for that needs a login opens no browser; :Mcp says :McpLogin, which brings it back",
  function()
    plugin.stop()
    control({ sessions = true, get_stream_close = true, get_retry_ms = 100 }) -- (no reset: it forgets the client)
    plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow })
    plugin.start()
    T.wait_for(function() return state() == "ready" or state() == "failed" end, 30000 * slow, "settled")
    T.eq("ready", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
    local n, from = #opened, #notes + 1
    -- the server loses the session (met by the event stream, no call) and, with it, every token:
    -- the plugin's hub reconnects on its own, and the refresh cannot do
    control({ lose_sessions = true, expire_on_lost = true })
    T.wait_for(function() return state() == "login_required" or #opened > n end, 20000 * slow, "login_required")
    T.eq(n, #opened, "no browser opened")
    T.eq("login_required", state())
    T.truthy(noted("^MCP: secure needs a login: run :McpLogin secure", from), "the notification")
    local lines = plugin.status_lines()
    local line
    for _, l in ipairs(lines) do
      if l:find("^secure  ") then line = l end
    end
    T.eq("secure  [login_required]  secure needs a login: run :McpLogin secure", line)
    T.eq("MCP 0/1 !1", plugin.statusline())
    -- a call of its tool says the same (its tools left the lists), and logs in nowhere
    local before = #notes
    vim.cmd("McpCall secure__whoami")
    T.truthy(noted("^MCP: secure needs a login: run :McpLogin secure", before + 1), "the call's error")
    T.eq(n, #opened, "no browser opened for the call")
    vim.cmd("McpLogin secure")
    T.wait_for(function() return state() == "ready" end, 30000 * slow, "ready again")
    T.eq(n + 1, #opened, "the browser opened for :McpLogin")
    T.eq("MCP 1/1", plugin.statusline())
    control({ reset = true })
  end)

-- A start no one asked for: the chat adapters' (called from init.lua, at Neovim's startup) and a
-- command line's completion. The plugin starts its hubs there as background work: no browser.
local function fresh_plugin()
  plugin.stop()
  control({ reset = true })
  mcp_mod.auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" }):delete(url)
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow })
end

T.test("the chat adapters' start (init.lua) opens no browser: login_required, the warning, then :McpLogin", function()
  fresh_plugin()
  local n, from = #opened, #notes + 1
  local cc = require("mcp.nvim.chat").codecompanion()
  T.eq("login_required", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
  T.eq(n, #opened, "no browser opened")
  T.eq(nil, cc.secure__whoami, "no tool of the server waiting for its login")
  T.eq(0, #cc.groups.mcp.tools)
  T.truthy(noted("^MCP: secure needs a login: run :McpLogin secure", from), "the warning")
  T.eq("MCP 0/1 !1", plugin.statusline())
  vim.cmd("McpLogin secure")
  T.wait_for(function() return state() == "ready" end, 30000 * slow, "ready after :McpLogin")
  T.eq(n + 1, #opened, "the browser opened for :McpLogin")
  T.truthy(require("mcp.nvim.chat").codecompanion().secure__whoami, "its tool, once logged in")
end)

T.test("the chat adapters' start refreshes an expired token by itself: ready, no browser", function()
  plugin.stop() -- (the tokens of the test before are stored)
  control({ expire_access_tokens = true })
  plugin = require("mcp.nvim.plugin").setup({ config_file = user_file, request_timeout_ms = 30000 * slow })
  local n = #opened
  local list = require("mcp.nvim.chat").tools_for("openai")
  T.eq("ready", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
  T.eq(n, #opened, "no browser opened")
  T.eq(1, #list)
  T.eq("secure__whoami", list[1]["function"].name)
end)

T.test("completing a command line starts the servers without a login; :McpRestart logs in", function()
  fresh_plugin()
  local n, from = #opened, #notes + 1
  vim.fn.getcompletion("McpCall sec", "cmdline")
  T.wait_for(function() return state() ~= "connecting" end, 30000 * slow, "settled")
  T.eq("login_required", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
  T.eq(n, #opened, "no browser opened")
  T.truthy(noted("^MCP: secure needs a login: run :McpLogin secure", from), "the warning")
  vim.cmd("McpRestart secure")
  T.wait_for(function() return state() == "ready" end, 30000 * slow, "ready after :McpRestart")
  T.eq(n + 1, #opened, "the browser opened for :McpRestart")
  T.eq("secure__whoami", vim.fn.getcompletion("McpCall sec", "cmdline")[1])
end)

T.test("a command the user types is the user's start: it logs in", function()
  fresh_plugin()
  local n = #opened
  vim.cmd("Mcp")
  T.wait_for(function() return state() == "ready" or state() == "failed" end, 30000 * slow, "settled")
  T.eq("ready", state(), tostring(select(2, plugin.hubs[1].hub:state("secure"))))
  T.eq(n + 1, #opened, "the browser opened")
  vim.cmd("close")
end)

plugin.stop()
vim.fn.jobstop(job)
vim.fn.delete(tmp, "rf")
T.finish()
