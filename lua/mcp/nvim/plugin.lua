--- mcp.nvim.plugin: lua-mcp's Neovim plugin on mcp.hub and mcp.config (`:help lua-mcp-plugin`).
---
---   :Mcp                      the servers window: state, tools, resources, prompts, recent log
---                             (on a server's line: e enable, d disable, r restart, q close)
---   :McpCall {tool} [{json}]  call a tool (namespaced: server__tool), result in a scratch buffer
---   :McpRead {uri}            read a resource
---   :McpPrompt {name} [{json}] get a prompt
---   :McpRestart {server}      reconnect a server (the old connection serves until the new one is up)
---   :McpEnable / :McpDisable {server}  saved back to the server's file (mcp.config.write)
---   :McpLogin / :McpLogout {server}    OAuth login through the browser, or forget the tokens
---
--- Servers come from the user's file (the mcpServers format of mcphub.nvim's servers.json,
--- trusted) and the workspace's .vscode/mcp.json, .cursor/mcp.json and .mcp.json (each server
--- started only after a no/once/yes question through vim.ui.select, No first). Each file is one mcp.hub.
--- A tool call is approved first (allow once / always for this tool / deny) unless the
--- server's autoApprove says otherwise (ignored in a workspace file unless
--- honor_workspace_auto_approve). Every tool call, an auto-approved one too, is checked against
--- the tool's pinned definition (mcp.tools.pin_store: pinned at first use, silently; a tool whose
--- description, schema or title changed since is held until the user allows it again; setup{pins =
--- false} turns this off).
---
--- The commands' first start of the hubs is the user's and may log in (OAuth, in the browser); a
--- start no one asked for (the chat adapters', completion's: start{background = true}) and the
--- hubs' own restarts never do: a server that needs a login waits in "login_required" and a
--- warning says to run :McpLogin. Nor does such a start ask anything (the trust question of a
--- workspace file, an ${input:...}): such a server waits in "answer_required" and a warning says
--- to run :McpRestart, which asks.
local M = {}

local ui = require("mcp.nvim.ui")

local WORKSPACE_FILES = { ".vscode/mcp.json", ".cursor/mcp.json", ".mcp.json" }

---@class mcp.nvim.PluginConfig
---@field config_file? string the user's servers file (default stdpath("config") .. "/mcpservers.json")
---@field workspace? boolean|string[] read the workspace files (default true; a list replaces them)
---@field honor_workspace_auto_approve? boolean autoApprove of a workspace file counts (default false)
---@field approve? false|fun(call: table): string the approve hook (false: run tools unasked)
---@field trust? fun(entry: table, source: string|nil): boolean|string the trust hook
---@field on_input? fun(input: table): string|nil, string|nil asked for ${input:id}
---@field request_timeout_ms? integer per request (default 60000)
---@field on_elicitation? function the elicitation handler (default: one form in a floating buffer, mcp.nvim.form; URL mode with vim.ui)
---@field elicitation_url? boolean on_elicitation takes URL mode too (the default handler does)
---@field oauth? false|{store?: "file"|"keyring"|table, client_name?: string, authorization_timeout_ms?: integer} logins of HTTP servers (mcp.nvim.login; false: none)
---@field pins? boolean|{dir?: string|false, first_use?: "approve"|"hold"} tool pinning (default true: pins under stdpath("data")/lua-mcp, a tool pinned at its first use; false: off)
---@field hub? table more mcp.hub options
M.defaults = { workspace = true, honor_workspace_auto_approve = false, request_timeout_ms = 60000, pins = true }
M.config = {}
for k, v in pairs(M.defaults) do M.config[k] = v end

---@type {source: string, hub: mcp.Hub}[] one hub per config file, the user's first
M.hubs = {}
--- Recent messages (state changes, errors, server stderr), newest last, at most 200; one line
--- each (a message of several lines, such as a login's "open this URL" and the URL, is several).
M.log = {}
local started = false

local function log(msg)
  local stamp = os.date("%H:%M:%S ")
  for _, line in ipairs(ui.split_lines(msg)) do
    M.log[#M.log + 1] = stamp .. line
    stamp = "         " -- (the message's next lines, under its first's text)
  end
  while #M.log > 200 do table.remove(M.log, 1) end
end

local function notify(msg, level)
  vim.notify("MCP: " .. msg, level or vim.log.levels.INFO)
end

local function fail(msg) notify(msg, vim.log.levels.ERROR) end

local function readable(path)
  local fh = io.open(path, "rb")
  if fh then fh:close() end
  return fh ~= nil
end

--- The user's servers file.
---@return string
function M.config_path()
  return M.config.config_file or vim.g.mcp_config_file or (vim.fn.stdpath("config") .. "/mcpservers.json")
end

--- The workspace files present under the current directory.
---@return string[]
function M.workspace_files()
  local ws = M.config.workspace
  if ws == false then return {} end
  local out = {}
  for _, rel in ipairs(type(ws) == "table" and ws or WORKSPACE_FILES) do
    local path = vim.fn.getcwd() .. "/" .. rel
    if readable(path) then out[#out + 1] = path end
  end
  return out
end

-- The hub's verify hook: the tool pins (one store for every hub, made at the first use; a
-- changed tool's call is asked about with vim.ui.select, Deny first).
local function pin_hook()
  local p = type(M.config.pins) == "table" and M.config.pins or {}
  if M.pins == nil then
    local dir = p.dir
    if dir == nil then dir = vim.fn.stdpath("data") .. "/lua-mcp" end
    M.pins = require("mcp.tools").pin_store({ dir = dir })
  end
  return M.pins:verify_hook({ ask = ui.pins_ask(), first_use = p.first_use })
end

local function hub_opts(path, workspace, background)
  local c = M.config
  local opts = {
    wait = false,
    background_start = background,
    request_timeout_ms = c.request_timeout_ms,
    variables = { workspaceFolder = vim.fn.getcwd(), userHome = os.getenv("HOME") },
    on_input = c.on_input or require("mcp.config").nvim_input(),
    on_state = function(name, state, info)
      log(name .. ": " .. tostring(state))
      if state == "failed" and M.logins and M.logins:busy(name) then M.logins:failed(name, info.error) end
      -- a start or restart no one asked for needed a login or an answer, which it did not ask: the user's
      local hint = M.hint(name, state)
      if hint then notify(hint, vim.log.levels.WARN) end
    end,
    on_error = function(err) log("error: " .. tostring(err)) end,
    on_stderr = function(name, line) log(name .. " stderr: " .. tostring(line)) end,
    -- the default handler takes URL mode (shows the URL and its host, opens it on "Open"): declared
    client = { client_name = "lua-mcp.nvim",
      on_elicitation_request = c.on_elicitation or require("mcp.nvim.form").handler(),
      elicitation_url = c.on_elicitation == nil or c.elicitation_url == true },
  }
  if c.approve ~= false then opts.approve = c.approve or ui.approve_hook() end
  if c.pins == true or type(c.pins) == "table" then opts.verify = pin_hook() end
  if c.oauth ~= false then
    -- an HTTP server logs in through the browser when it answers 401 (mcp.nvim.login)
    opts.auth_provider = function(name, spec) return M.logins:provider(path, name, spec) end
  end
  if workspace then
    opts.trust = c.trust or ui.trust_hook()
    opts.honor_auto_approve = c.honor_workspace_auto_approve == true
  else
    opts.trusted = true
  end
  for k, v in pairs(c.hub or {}) do opts[k] = v end
  return opts
end

local function add_hub(path, workspace, background)
  local mcp = require("mcp")
  local hub, err = mcp.hub(path, hub_opts(path, workspace, background))
  if not hub then
    log(path .. ": " .. tostring(err))
    return fail(path .. ": " .. tostring(err))
  end
  M.hubs[#M.hubs + 1] = { source = path, hub = hub }
end

--- Start the hubs (once; the commands call it): the user's file, then the workspace files.
--- The commands' start is the user's: a server that needs a login logs in. With
--- opts.background (a start no one asked for: the chat adapters', usually from init.lua, and a
--- command line's completion) the servers connect as background work (mcp.hub's
--- background_start): a refresh, never a login; one that needs a login waits in "login_required"
--- with a warning to run :McpLogin. Once started, a later call does nothing either way.
---@param opts {background?: boolean}|nil
---@return table M
function M.start(opts)
  if started then return M end
  started = true
  local background = type(opts) == "table" and opts.background == true or nil
  require("mcp.nvim").setup()
  local oauth = type(M.config.oauth) == "table" and M.config.oauth or {}
  M.logins = require("mcp.nvim.login").new({ store = oauth.store, client_name = oauth.client_name,
    authorization_timeout_ms = oauth.authorization_timeout_ms, log = log })
  if readable(M.config_path()) then add_hub(M.config_path(), false, background) end
  for _, path in ipairs(M.workspace_files()) do add_hub(path, true, background) end
  return M
end

--- Wait (at most ms) until every server is ready or failed.
---@param ms integer|nil
function M.wait(ms)
  M.start()
  for _, h in ipairs(M.hubs) do h.hub:wait(ms or 30000) end
end

--- Close every hub and forget them (the next command starts them again, reading the files anew).
function M.stop()
  if M.logins then M.logins:close() end
  M.pins = nil -- (read from its files again at the next start)
  for _, h in ipairs(M.hubs) do pcall(h.hub.close, h.hub) end
  M.hubs = {}
  started = false
end

local function collect(method)
  local out = {}
  for _, h in ipairs(M.hubs) do
    for _, item in ipairs(h.hub[method](h.hub)) do out[#out + 1] = { hub = h.hub, item = item } end
  end
  return out
end

local function find(method, key, value)
  for _, e in ipairs(collect(method)) do
    if e.item[key] == value then return e.hub, e.item end
  end
end

local function find_server(name)
  for _, h in ipairs(M.hubs) do
    for _, s in ipairs(h.hub:servers()) do
      if s.name == name then return h.hub, s, h end
    end
  end
end

-- Run fn in an mcp task; an error in it becomes a notification.
local function task(fn)
  require("mcp").spawn(function()
    local ok, err = pcall(fn)
    if not ok then fail(tostring(err)) end
  end)
end

local function parse_args(args, usage)
  local name, rest = (args or ""):match("^%s*(%S+)%s*(.-)%s*$")
  if not name then return nil, usage end
  local arguments = {}
  if rest ~= "" then
    local json = require("mcp.json")
    local v, jerr = json.decode(rest)
    if type(v) ~= "table" or json.is_array(v) then
      return nil, "the arguments must be a JSON object" .. (jerr and (": " .. jerr) or "")
    end
    arguments = v
  end
  return name, arguments
end

-- What to run for the server waiting for the user (M.hint) whose prefix a namespaced name has, if any.
local function waits_for_user(name)
  for _, h in ipairs(M.hubs) do
    for _, s in ipairs(h.hub:servers()) do
      local p = s.prefix .. h.hub.sep
      local hint = M.hint(s.name, s.state)
      if hint and name:sub(1, #p) == p then return hint end
    end
  end
end

-- A command on a named tool or prompt ("{name} [{json}]"): the hub whose list (method) has it
-- runs run(hub, name, arguments) in a task.
local function named_command(args, usage, method, what, run)
  local name, arguments = parse_args(args, usage)
  if not name then return fail(arguments) end
  M.wait()
  local hub = find(method, "name", name)
  local waiting = not hub and waits_for_user(name)
  if waiting then return fail(waiting) end
  if not hub then return fail("no " .. what .. " named \"" .. name .. "\"") end
  task(function() run(hub, name, arguments) end)
end

--- :McpCall {tool} [{json}]
---@param args string
function M.cmd_call(args)
  named_command(args, "usage: :McpCall {server__tool} [{json arguments}]", "list_tools", "tool",
    function(hub, tool, arguments)
      local progress = require("mcp.nvim").progress("MCP: " .. tool)
      local result, err = hub:call_tool(tool, arguments, { on_progress = progress.on_progress })
      progress.finish(result and "done" or "failed", result and vim.log.levels.INFO or vim.log.levels.WARN)
      if not result then return fail(tool .. ": " .. tostring(err)) end
      ui.show("mcp://call/" .. tool, ui.result_lines(tool, result))
    end)
end

--- :McpRead {uri}
---@param uri string
function M.cmd_read(uri)
  uri = vim.trim(uri or "")
  if uri == "" then return fail("usage: :McpRead {uri}") end
  M.wait()
  task(function()
    local result, err
    for _, h in ipairs(M.hubs) do
      -- the hub that lists the URI or has a matching template; the others say not_found
      result, err = h.hub:read_resource(uri)
      if result or (err and err.kind ~= "not_found") then break end
    end
    if not result then return fail(uri .. ": " .. tostring(err or "no server lists it")) end
    local lines = { "# " .. uri, "" }
    for _, c in ipairs(result.contents or {}) do
      if c.text then
        for _, l in ipairs(ui.split_lines(c.text)) do lines[#lines + 1] = l end
      else
        lines[#lines + 1] = "[blob " .. tostring(c.mimeType) .. ", " .. #tostring(c.blob) .. " base64 bytes]"
      end
    end
    ui.show("mcp://read/" .. uri, lines)
  end)
end

--- :McpPrompt {name} [{json}]
---@param args string
function M.cmd_prompt(args)
  named_command(args, "usage: :McpPrompt {server__prompt} [{json arguments}]", "list_prompts", "prompt",
    function(hub, name, arguments)
      local result, err = hub:get_prompt(name, arguments)
      if not result then return fail(name .. ": " .. tostring(err)) end
      local lines = { "# " .. name .. (result.description and (": " .. result.description) or ""), "" }
      for _, m in ipairs(result.messages or {}) do
        lines[#lines + 1] = "## " .. tostring(m.role)
        ui.content_lines(lines, { m.content })
        lines[#lines + 1] = ""
      end
      ui.show("mcp://prompt/" .. name, lines)
    end)
end

-- Save a server's enabled state into the file it came from (mcp.config.write): the user's file,
-- or a workspace file whose server was trusted with a remembered yes; any other stays unsaved.
local function save(h, name, enabled)
  local ok, err = require("mcp.config.write").set_enabled(h.source, name, enabled,
    { trusted = h.hub.config.trusted == true, trust_dir = h.hub.opts.trust_dir })
  if ok then log(name .. ": " .. (enabled and "enabled" or "disabled") .. " in " .. h.source) end
  if ok == nil then
    log(tostring(err))
    notify(tostring(err), vim.log.levels.WARN)
  end
  return ok, err
end

-- In a task: enable, disable or restart server name of hub record h (a disabled server restarted
-- is enabled); an enabled state is saved to the file. then() runs after, in the same task.
local function change(h, name, what, after)
  task(function()
    local hub = h.hub
    local was = hub:state(name)
    if what == "restart" and was == "disabled" then what = "enable" end
    if what == "enable" then
      hub:enable(name)
      -- (a server waiting for an answer is enabled in its file already)
      if was == "disabled" then save(h, name, true) end
    elseif what == "disable" then
      hub:disable(name)
      save(h, name, false)
    else
      -- a ready server gets its new client before the old one goes (a call in flight finishes)
      local ok, err = hub:reconnect(name)
      if not ok then fail(name .. ": " .. tostring(err)) end
    end
    local state, err = hub:state(name)
    notify(name .. ": " .. state .. (err and (" (" .. tostring(err) .. ")") or ""))
    if after then after() end
  end)
end

local function server_cmd(name, what)
  name = vim.trim(name or "")
  M.start()
  local _, _, h = find_server(name)
  if not h then return fail("no server named \"" .. name .. "\"") end
  change(h, name, what)
end

-- The file record and entry of an HTTP server, or nil after a notification why not.
local function http_server(name)
  name = vim.trim(name or "")
  M.start()
  local _, s, h = find_server(name)
  if not h then return fail("no server named \"" .. name .. "\"") end
  -- (the entry as last read: the hub's config keeps the first read, an error for a server that
  -- waited for an answer until a restart asked)
  local spec = s.spec
  if spec.type == "stdio" or not spec.url then return fail(name .. " is not an HTTP server: it has no login") end
  if M.config.oauth == false then return fail("OAuth is off (setup{oauth = false})") end
  return h, name, spec
end

--- :McpLogin {server}: log in through the browser (one notification shows how far it got), then
--- reconnect the server with the new token.
---@param name string
function M.cmd_login(name)
  M.start()
  local _, s, owner = find_server(vim.trim(name or ""))
  -- its entry was not read (no trust question, no ${input:...} at a start no one asked for): the
  -- restart asks, then logs in where the server needs it
  if s and s.state == "answer_required" then return change(owner, s.name, "restart") end
  local h, spec
  h, name, spec = http_server(name)
  if not h then return end
  if M.logins:busy(name) then return notify(name .. ": a login is already under way", vim.log.levels.WARN) end
  task(function()
    if not M.logins:login(h.source, name, spec) then return end
    local hub = h.hub
    if hub:state(name) == "disabled" then hub:enable(name) else hub:reconnect(name) end
    local state, err = hub:state(name)
    notify(name .. ": " .. state .. (err and (" (" .. tostring(err) .. ")") or ""))
  end)
end

--- :McpLogout {server}: forget the server's tokens and stop it for this session (:McpLogin
--- starts it again).
---@param name string
function M.cmd_logout(name)
  local h, spec
  h, name, spec = http_server(name)
  if not h then return end
  M.logins:logout(h.source, name, spec)
  task(function()
    h.hub:disable(name)
    notify(name .. ": logged out")
  end)
end

--- Enable or disable a server (:McpEnable, :McpDisable, e and d in :Mcp), saved back to the
--- file it came from (mcp.config.write; a workspace file only when its server was trusted with
--- a remembered yes, else the change holds for this session and a warning says so).
---@param name string
---@param enabled boolean
function M.set_enabled(name, enabled) server_cmd(name, enabled and "enable" or "disable") end

--- :McpRestart {server}: a disabled server is enabled (and that is saved).
---@param name string
function M.cmd_restart(name) server_cmd(name, "restart") end

-- ---- the servers window ------------------------------------------------------------------------

--- What to do about a server in state "login_required" (the hub restarted it on its own and it
--- needs a login, which no restart of the hub's own starts).
---@param name string
---@return string
function M.login_hint(name)
  return name .. " needs a login: run :McpLogin " .. name
end

--- What to do about a server in state "answer_required" (a start no one asked for did not ask the
--- trust question of its workspace file or an ${input:...} of its entry, and did not start it).
---@param name string
---@return string
function M.answer_hint(name)
  return name .. " waits for your answer (trust, or an ${input:...}): run :McpRestart " .. name
end

--- What the user runs for a server that waits for them (M.login_hint, M.answer_hint), or nil for
--- a server in any other state: the warning, its line in :Mcp, a call of its tool and the
--- statusline's "!" all go by it.
---@param name string
---@param state string
---@return string|nil
function M.hint(name, state)
  if state == "login_required" then return M.login_hint(name) end
  if state == "answer_required" then return M.answer_hint(name) end
  return nil
end

local function server_lines(lines, lnum, h)
  for _, s in ipairs(h.hub:servers()) do
    local why = s.error and ("  " .. tostring(s.error):gsub("[\r\n]+", " ")) or ""
    local hint = M.hint(s.name, s.state)
    if hint then why = "  " .. hint end
    lines[#lines + 1] = ("%s  [%s]%s"):format(s.name, s.state, why)
    lnum[#lines] = { hub = h.hub, name = s.name, h = h }
    for _, e in ipairs(collect("list_tools")) do
      if e.hub == h.hub and e.item.server == s.name then
        lines[#lines + 1] = "    tool    " .. e.item.name .. (e.item.description and ("  " .. e.item.description:gsub("\n.*", "")) or "")
      end
    end
    for _, e in ipairs(collect("list_resources")) do
      if e.hub == h.hub and e.item.server == s.name then lines[#lines + 1] = "    resource " .. tostring(e.item.uri) end
    end
    for _, e in ipairs(collect("list_prompts")) do
      if e.hub == h.hub and e.item.server == s.name then lines[#lines + 1] = "    prompt  " .. e.item.name end
    end
  end
end

--- The lines of the servers window and, per line number, the server on it.
---@return string[] lines, table<integer, table> servers
function M.status_lines()
  local lines, lnum = { "MCP servers  (e enable, d disable, r restart, R refresh, q close)", "" }, {}
  if #M.hubs == 0 then lines[#lines + 1] = "no servers: put them in " .. M.config_path() end
  for _, h in ipairs(M.hubs) do
    lines[#lines + 1] = "## " .. h.source
    server_lines(lines, lnum, h)
    lines[#lines + 1] = ""
  end
  lines[#lines + 1] = "## recent log"
  for i = math.max(1, #M.log - 20), #M.log do lines[#lines + 1] = M.log[i] end
  return lines, lnum
end

local function act(buf, what)
  local entry = vim.b[buf].mcp_servers and M._lnum and M._lnum[vim.api.nvim_win_get_cursor(0)[1]]
  if what ~= "refresh" and not entry then return notify("not on a server's line", vim.log.levels.WARN) end
  if what == "refresh" then return M.cmd_servers() end
  change(entry.h, entry.name, what, function() M.cmd_servers() end)
end

--- :Mcp, the servers window.
function M.cmd_servers()
  M.start()
  local lines, lnum = M.status_lines()
  M._lnum = lnum
  local buf = ui.show("mcp://servers", lines)
  vim.b[buf].mcp_servers = true
  local keys = { e = "enable", d = "disable", r = "restart", R = "refresh" }
  for key, what in pairs(keys) do
    vim.keymap.set("n", key, function() act(buf, what) end, { buffer = buf, nowait = true })
  end
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true })
  return buf
end

--- A statusline component (lualine: `sections = { lualine_x = { require("mcp.nvim.plugin").statusline } }`):
--- "MCP ready/total", with "!" and the count of servers failed or waiting for the user (a login:
--- :McpLogin; an answer: :McpRestart) when there are any; "" before any command ran.
---@return string
function M.statusline()
  local ready, total, failed = 0, 0, 0
  for _, h in ipairs(M.hubs) do
    for _, s in ipairs(h.hub:servers()) do
      if s.state ~= "disabled" then total = total + 1 end
      if s.state == "ready" then
        ready = ready + 1
      elseif s.state == "failed" or M.hint(s.name, s.state) then
        failed = failed + 1
      end
    end
  end
  if total == 0 then return "" end
  return ("MCP %d/%d"):format(ready, total) .. (failed > 0 and (" !" .. failed) or "")
end

-- ---- completion --------------------------------------------------------------------------------

-- Completing a command line starts the servers (so that names come) as background work: a Tab
-- is not asking for a login (M.start).
local function names(method, key, lead)
  M.start({ background = true })
  local out = {}
  for _, e in ipairs(collect(method)) do
    local v = tostring(e.item[key])
    if v:sub(1, #lead) == lead then out[#out + 1] = v end
  end
  table.sort(out)
  return out
end

local function first_arg_only(fn)
  return function(lead, line)
    if line:match("^%s*%S+%s+%S+%s") then return {} end -- past the name: JSON
    return fn(lead)
  end
end

--- Complete tool names (for :McpCall).
---@param lead string
---@return string[]
function M.complete_tools(lead) return names("list_tools", "name", lead) end
--- Complete resource URIs (for :McpRead).
---@param lead string
---@return string[]
function M.complete_resources(lead) return names("list_resources", "uri", lead) end
--- Complete prompt names (for :McpPrompt).
---@param lead string
---@return string[]
function M.complete_prompts(lead) return names("list_prompts", "name", lead) end
--- Complete server names (for :McpRestart).
---@param lead string
---@return string[]
function M.complete_servers(lead)
  M.start({ background = true })
  local out = {}
  for _, h in ipairs(M.hubs) do
    for _, s in ipairs(h.hub:servers()) do
      if s.name:sub(1, #lead) == lead then out[#out + 1] = s.name end
    end
  end
  table.sort(out)
  return out
end

--- Define the commands (plugin/mcp.lua does at startup; nothing starts until one runs).
function M.define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd("Mcp", function() M.cmd_servers() end, { nargs = 0, desc = "MCP servers window" })
  cmd("McpCall", function(o) M.cmd_call(o.args) end,
    { nargs = "+", complete = first_arg_only(M.complete_tools), desc = "Call an MCP tool: :McpCall {tool} {json}" })
  cmd("McpRead", function(o) M.cmd_read(o.args) end,
    { nargs = 1, complete = M.complete_resources, desc = "Read an MCP resource" })
  cmd("McpPrompt", function(o) M.cmd_prompt(o.args) end,
    { nargs = "+", complete = first_arg_only(M.complete_prompts), desc = "Get an MCP prompt" })
  cmd("McpRestart", function(o) M.cmd_restart(o.args) end,
    { nargs = 1, complete = M.complete_servers, desc = "Restart an MCP server" })
  cmd("McpLogin", function(o) M.cmd_login(o.args) end,
    { nargs = 1, complete = M.complete_servers, desc = "Log in to an MCP server (OAuth, in the browser)" })
  cmd("McpLogout", function(o) M.cmd_logout(o.args) end,
    { nargs = 1, complete = M.complete_servers, desc = "Log out of an MCP server (forget its tokens)" })
  cmd("McpEnable", function(o) M.set_enabled(vim.trim(o.args), true) end,
    { nargs = 1, complete = M.complete_servers, desc = "Enable an MCP server (saved to its file)" })
  cmd("McpDisable", function(o) M.set_enabled(vim.trim(o.args), false) end,
    { nargs = 1, complete = M.complete_servers, desc = "Disable an MCP server (saved to its file)" })
  local group = vim.api.nvim_create_augroup("lua_mcp_plugin", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = function() M.stop() end })
end

--- Set options (see mcp.nvim.PluginConfig) and define the commands. Called again, it closes
--- running hubs so that the next command starts them with the new options.
---@param opts mcp.nvim.PluginConfig|nil
---@return table M
function M.setup(opts)
  if opts ~= nil and type(opts) ~= "table" then error("mcp.nvim.plugin.setup: opts must be a table", 2) end
  M.stop()
  M.config = {}
  for k, v in pairs(M.defaults) do M.config[k] = v end
  for k, v in pairs(opts or {}) do M.config[k] = v end
  M.define_commands()
  return M
end

return M
