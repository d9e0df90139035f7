--- mcp_example: a small Neovim plugin on top of lua-mcp (examples/nvim/README.md).
---
---   :McpConnect {name}        connect to server {name} of the mcpServers config (becomes current)
---   :McpDisconnect [{name}]   close a connection (default: the current one)
---   :McpTools [{name}]        list a server's tools in a scratch buffer
---   :McpCall {tool} [{json}]  call a tool of the current server; the result goes to a scratch buffer
---
--- The config is the JSON file most MCP hosts use (Claude Desktop's format):
---   { "mcpServers": { "name": { "command": "...", "args": [...], "env": {...} },
---                     "web":  { "url": "https://...", "headers": {...} } } }
--- Every command runs in an mcp task, so Neovim stays responsive while a server works; progress
--- notifications are shown as they come and elicitation asks through vim.ui.select/vim.ui.input.
local M = {}

local mcp -- require("mcp"), after the adapter has located the core

---@class mcp_example.Config
---@field config_file? string path of the mcpServers JSON (default: g:mcp_config_file, else stdpath("config")/mcp.json)
---@field request_timeout_ms? integer per request (default 60000)
---@field client_name? string sent in initialize (default "mcp_example.nvim")
M.config = { request_timeout_ms = 60000, client_name = "mcp_example.nvim" }

---@type table<string, table> name -> connected mcp.Client
M.clients = {}
---@type table<string, table[]> name -> tools of the last tools/list
M.tools = {}
---@type string|nil the server :McpCall and :McpTools use by default
M.current = nil

local function notify(msg, level)
  vim.notify("MCP: " .. msg, level or vim.log.levels.INFO)
end

local function fail(msg) notify(msg, vim.log.levels.ERROR) end

--- Path of the mcpServers config file.
---@return string
function M.config_path()
  return M.config.config_file or vim.g.mcp_config_file or (vim.fn.stdpath("config") .. "/mcp.json")
end

--- The mcpServers table of the config file.
---@return table|nil servers, string|nil err
function M.read_config()
  local path = M.config_path()
  local fh, err = io.open(path, "rb")
  if not fh then return nil, "cannot read the config " .. path .. ": " .. tostring(err) end
  local text = fh:read("*a")
  fh:close()
  local doc, derr = mcp.json.decode(text)
  if type(doc) ~= "table" then return nil, path .. ": not a JSON object (" .. tostring(derr) .. ")" end
  local servers = doc.mcpServers or doc.servers
  if type(servers) ~= "table" then return nil, path .. ": no \"mcpServers\" object" end
  return servers
end

local function server_names()
  local servers = M.read_config()
  local names = {}
  for name in pairs(servers or {}) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- A plain copy of a JSON string map (args, env, headers), checked.
local function strings(v, what, as_array)
  if v == nil or v == mcp.null then return nil end
  if type(v) ~= "table" then error(what .. " must be " .. (as_array and "an array" or "an object") .. " of strings", 0) end
  local out = {}
  for k, s in pairs(v) do
    if type(s) ~= "string" then error(what .. ": every value must be a string", 0) end
    out[k] = s
  end
  return out
end

--- Connect to server `name` of the config (waits: call it from a task, or it waits with vim.wait).
---@param name string
---@return table|nil client, string|nil err
function M.connect(name)
  local servers, err = M.read_config()
  if not servers then return nil, err end
  local entry = servers[name]
  if type(entry) ~= "table" then return nil, "no server named \"" .. tostring(name) .. "\" in " .. M.config_path() end
  if M.clients[name] then M.clients[name]:close() end
  local opts = {
    client_name = M.config.client_name,
    request_timeout_ms = M.config.request_timeout_ms,
    stderr = "discard",
    on_elicitation_request = mcp.elicitation.nvim_handler(),
    on_error = function(e) notify(name .. ": " .. tostring(e), vim.log.levels.WARN) end,
    on_close = function(reason)
      if M.clients[name] then
        M.clients[name] = nil
        notify(name .. ": connection closed (" .. tostring(reason) .. ")", vim.log.levels.WARN)
      end
    end,
  }
  local ok, client, cerr = pcall(function()
    if type(entry.command) == "string" then
      opts.env = strings(entry.env, "env")
      opts.cwd = type(entry.cwd) == "string" and entry.cwd or nil
      return mcp.create_stdio_client(entry.command, strings(entry.args, "args", true) or {}, opts)
    elseif type(entry.url) == "string" then
      local create = entry.type == "sse" and mcp.create_sse_client or mcp.create_http_client
      if create == nil then
        return nil, "url servers need lua-mcp's HTTP transport, which this build does not have"
      end
      opts.stderr = nil
      opts.headers = strings(entry.headers, "headers")
      return create(entry.url, opts)
    end
    return nil, "server \"" .. name .. "\" has neither \"command\" nor \"url\""
  end)
  if not ok then return nil, name .. ": " .. tostring(client) end
  if not client then return nil, name .. ": " .. tostring(cerr) end
  M.clients[name] = client
  M.current = name
  return client
end

--- Close the connection to `name` (default: the current server).
---@param name string|nil
function M.disconnect(name)
  name = name or M.current
  local c = name and M.clients[name]
  if not c then return false end
  M.clients[name] = nil
  M.tools[name] = nil
  if M.current == name then M.current = next(M.clients) end
  c:close()
  return true
end

local function client_for(name)
  name = (name and name ~= "") and name or M.current
  if not name then return nil, nil, "not connected: :McpConnect {name} first" end
  local c = M.clients[name]
  if not c then return nil, name, "not connected to \"" .. name .. "\"" end
  return c, name
end

-- ---- output ----------------------------------------------------------------------------------

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

--- Indented JSON text of a decoded value (keys sorted), as lines.
---@param v any
---@return string[]
function M.pretty(v)
  local lines, cur = {}, {}
  local function emit(s) cur[#cur + 1] = s end
  local function newline(ind)
    lines[#lines + 1] = table.concat(cur)
    cur = { string.rep("  ", ind) }
  end
  local function walk(x, ind)
    if type(x) ~= "table" then emit(mcp.json.encode(x)); return end
    local arr = mcp.json.is_array(x) or (#x > 0 and next(x, #x) == nil)
    if next(x) == nil then emit(arr and "[]" or "{}"); return end
    emit(arr and "[" or "{")
    local keys = arr and nil or sorted_keys(x)
    local n = arr and #x or #keys
    for i = 1, n do
      newline(ind + 1)
      if arr then walk(x[i], ind + 1) else
        emit(mcp.json.encode(tostring(keys[i])) .. ": ")
        walk(x[keys[i]], ind + 1)
      end
      if i < n then emit(",") end
    end
    newline(ind)
    emit(arr and "]" or "}")
  end
  walk(v, 0)
  lines[#lines + 1] = table.concat(cur)
  return lines
end

local function split_lines(s)
  local out = {}
  for line in (tostring(s) .. "\n"):gmatch("(.-)\r?\n") do out[#out + 1] = line end
  return out
end

--- Show lines in the scratch buffer named `title` (reused), in a split when not visible.
---@param title string
---@param lines string[]
---@return integer bufnr
function M.show(title, lines)
  local buf = vim.fn.bufnr(title)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, title)
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].filetype = "markdown"
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

--- Lines for a CallToolResult: the text of its content, then structuredContent as JSON.
---@param tool string
---@param result table
---@return string[]
function M.result_lines(tool, result)
  local lines = { "# " .. tool .. (result.isError and " (the tool reports an error)" or ""), "" }
  for _, item in ipairs(result.content or {}) do
    if item.type == "text" then
      for _, l in ipairs(split_lines(item.text)) do lines[#lines + 1] = l end
    elseif item.type == "resource" and type(item.resource) == "table" and item.resource.text then
      lines[#lines + 1] = "[resource " .. tostring(item.resource.uri) .. "]"
      for _, l in ipairs(split_lines(item.resource.text)) do lines[#lines + 1] = l end
    else
      lines[#lines + 1] = "[" .. tostring(item.type) .. (item.mimeType and (" " .. item.mimeType) or "")
        .. (item.uri and (" " .. item.uri) or "") .. "]"
    end
  end
  if result.structuredContent ~= nil then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "structuredContent:"
    lines[#lines + 1] = "```json"
    for _, l in ipairs(M.pretty(result.structuredContent)) do lines[#lines + 1] = l end
    lines[#lines + 1] = "```"
  end
  return lines
end

-- ---- commands --------------------------------------------------------------------------------

-- Run fn in an mcp task; an error in it becomes a notification.
local function task(fn)
  mcp.spawn(function()
    local ok, err = pcall(fn)
    if not ok then fail(tostring(err)) end
  end)
end

function M.cmd_connect(name)
  if name == nil or name == "" then return fail("usage: :McpConnect {name}") end
  task(function()
    notify("connecting to " .. name .. " ...")
    local c, err = M.connect(name)
    if not c then return fail(err) end
    local info = c:server_info() or {}
    local tools = (c:server_capabilities() or {}).tools and c:list_all_tools() or {}
    M.tools[name] = tools
    notify(("connected to %s (%s %s), %d tools"):format(name, tostring(info.name), tostring(info.version), #tools))
  end)
end

function M.cmd_disconnect(name)
  name = (name and name ~= "") and name or M.current
  task(function()
    if not M.disconnect(name) then return fail("not connected" .. (name and (" to \"" .. name .. "\"") or "")) end
    notify("disconnected from " .. name)
  end)
end

function M.cmd_tools(name)
  task(function()
    local c, sname, err = client_for(name)
    if not c then return fail(err) end
    local tools, lerr = c:list_all_tools()
    if not tools then return fail(sname .. ": " .. tostring(lerr)) end
    M.tools[sname] = tools
    local lines = { "# tools of " .. sname, "" }
    for _, t in ipairs(tools) do
      lines[#lines + 1] = "- " .. t.name .. (t.title and (" (" .. t.title .. ")") or "")
        .. (t.description and (": " .. t.description) or "")
      local schema = t.inputSchema
      if type(schema) == "table" and type(schema.properties) == "table" then
        for _, p in ipairs(sorted_keys(schema.properties)) do
          local ps = schema.properties[p]
          lines[#lines + 1] = "    " .. p .. ": " .. tostring(type(ps) == "table" and ps.type or "?")
            .. ((type(ps) == "table" and ps.description) and (" - " .. ps.description) or "")
        end
      end
    end
    M.show("mcp://" .. sname .. "/tools", lines)
  end)
end

function M.cmd_call(args)
  local tool, json = (args or ""):match("^%s*(%S+)%s*(.-)%s*$")
  if not tool then return fail("usage: :McpCall {tool} [{json arguments}]") end
  local arguments = {}
  if json ~= "" then
    local v, jerr = mcp.json.decode(json)
    if type(v) ~= "table" or mcp.json.is_array(v) then
      return fail("the arguments must be a JSON object" .. (jerr and (": " .. jerr) or ""))
    end
    arguments = v
  end
  task(function()
    local c, sname, err = client_for(nil)
    if not c then return fail(err) end
    -- one notification for the call's progress, updated in place, closed when the call ends
    local progress = require("mcp.nvim").progress("MCP: " .. tool)
    local result, cerr = c:call_tool(tool, arguments, { on_progress = progress.on_progress })
    progress.finish(result and "done" or "failed", result and vim.log.levels.INFO or vim.log.levels.WARN)
    if not result then return fail(sname .. ": " .. tool .. ": " .. tostring(cerr)) end
    M.show("mcp://" .. sname .. "/" .. tool, M.result_lines(tool, result))
  end)
end

local function complete_servers(lead)
  local out = {}
  for _, n in ipairs(server_names()) do
    if n:sub(1, #lead) == lead then out[#out + 1] = n end
  end
  return out
end

local function complete_connected(lead)
  local out = {}
  for n in pairs(M.clients) do
    if n:sub(1, #lead) == lead then out[#out + 1] = n end
  end
  table.sort(out)
  return out
end

local function complete_tools(lead, line)
  if line:match("^%s*%S+%s+%S+%s") then return {} end -- past the tool name: JSON
  local out = {}
  for _, t in ipairs(M.current and M.tools[M.current] or {}) do
    if t.name:sub(1, #lead) == lead then out[#out + 1] = t.name end
  end
  return out
end

--- Set up the plugin: options, the commands, and closing every connection when Neovim exits.
---@param opts mcp_example.Config|nil
function M.setup(opts)
  for k, v in pairs(opts or {}) do M.config[k] = v end
  -- the adapter first: it finds the core of a checkout that has not run `make nvim`
  require("mcp.nvim").setup()
  mcp = require("mcp")
  local cmd = vim.api.nvim_create_user_command
  cmd("McpConnect", function(o) M.cmd_connect(o.args) end,
    { nargs = 1, complete = complete_servers, desc = "Connect to an MCP server of the mcpServers config" })
  cmd("McpDisconnect", function(o) M.cmd_disconnect(o.args) end,
    { nargs = "?", complete = complete_connected, desc = "Close an MCP connection" })
  cmd("McpTools", function(o) M.cmd_tools(o.args) end,
    { nargs = "?", complete = complete_connected, desc = "List an MCP server's tools" })
  cmd("McpCall", function(o) M.cmd_call(o.args) end,
    { nargs = "+", complete = complete_tools, desc = "Call a tool: :McpCall {tool} {json}" })
  local group = vim.api.nvim_create_augroup("mcp_example", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      for name in pairs(M.clients) do pcall(M.disconnect, name) end
    end,
  })
  return M
end

return M
