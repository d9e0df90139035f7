--- mcp.nvim.login: OAuth logins of the plugin's HTTP servers through the browser. Each HTTP
--- server of a hub gets an mcp.auth interactive provider (mcp.hub's auth_provider hook): a 401
--- runs the login in the server's connect task, so the editor never waits for the browser. The
--- browser is opened with vim.ui.open (Neovim 0.10+), else the library's opener (xdg-open, open),
--- and the login shows in one notification updated in place: opening the browser, waiting for the
--- redirect, logged in (or why not). Tokens go to the token store: a file store under
--- stdpath("data") .. "/lua-mcp" by default, or the desktop keyring (`oauth = {store = "keyring"}`).
local M = {}

---@class mcp.nvim.Logins
local L = {}
L.__index = L

local function notify(msg, level)
  vim.notify("MCP: " .. msg, level or vim.log.levels.INFO)
end

-- The browser step: vim.ui.open when Neovim has it, else xdg-open/open.
local function open_browser(u)
  if type(vim.ui) == "table" and type(vim.ui.open) == "function" then
    local ok, res, err = pcall(vim.ui.open, u)
    if not ok then return nil, tostring(res) end
    if res == nil and err ~= nil then return nil, tostring(err) end
    return true
  end
  return require("mcp.auth").open_in_browser(u)
end

local function make_store(opt)
  if type(opt) == "table" then return opt end
  local auth = require("mcp.auth")
  if opt == "keyring" then
    local store, err = auth.keyring_store()
    if store then return store end
    notify("the keyring cannot be used (" .. tostring(err) .. "); tokens go to files", vim.log.levels.WARN)
  elseif opt ~= nil and opt ~= "file" then
    error('mcp.nvim.plugin: oauth.store must be "file", "keyring" or a token store', 0)
  end
  return auth.file_store({ dir = vim.fn.stdpath("data") .. "/lua-mcp" })
end

--- The logins of the plugin. opts: store ("file" default, "keyring", or a token store table),
--- client_name, authorization_timeout_ms (the wait for the redirect), log(line) (the plugin's log).
---@param opts table|nil
---@return mcp.nvim.Logins
function M.new(opts)
  opts = opts or {}
  return setmetatable({ opts = opts, providers = {}, progress = {}, log = opts.log or function() end }, L)
end

function L:_store()
  if self.store == nil then self.store = make_store(self.opts.store) end
  return self.store
end

-- The progress notification of a server's login (one at a time).
function L:_progress(name)
  local p = self.progress[name]
  if p == nil then
    p = require("mcp.nvim").progress("MCP: login " .. name)
    self.progress[name] = p
  end
  return p
end

function L:_finish(name, message, level)
  local p = self.progress[name]
  if p == nil then return end
  self.progress[name] = nil
  p.finish(message, level)
  self.log(name .. ": login: " .. message)
end

--- The provider of an HTTP server (mcp.hub's auth_provider hook): one per file, server and URL,
--- and the time a login may take (the server's connect waits that long).
---@param source string the config file
---@param name string
---@param spec table the server's entry (mcp.config)
---@return table provider, integer login_ms
function L:provider(source, name, spec)
  local key = source .. "\n" .. name .. "\n" .. tostring(spec.url)
  local login_ms = self.opts.authorization_timeout_ms or require("mcp.auth.interactive").DEFAULT_TIMEOUT_MS
  local p = self.providers[key]
  if p then return p, login_ms end
  p = require("mcp.auth").interactive_provider({
    client_name = self.opts.client_name or "lua-mcp.nvim",
    server_url = spec.url,
    store = self:_store(),
    authorization_timeout_ms = self.opts.authorization_timeout_ms,
    open = function(auth_url)
      local progress = self:_progress(name)
      progress.update("opening the browser…")
      local ok, err = open_browser(auth_url)
      if not ok then self.log(name .. ": the browser could not be opened: " .. tostring(err)) end
      progress.update("waiting for the redirect… (" .. (ok and "" or "open it yourself: ") .. auth_url .. ")")
    end,
    on_tokens = function() self:_finish(name, "logged in") end,
    print = function(line) self.log(name .. ": " .. line) end,
  })
  self.providers[key] = p
  return p, login_ms
end

--- Whether a server's login is under way.
---@param name string
---@return boolean
function L:busy(name) return self.progress[name] ~= nil end

--- A server's connection failed: an open login notification says why.
---@param name string
---@param err any
function L:failed(name, err)
  self:_finish(name, "failed: " .. tostring(err), vim.log.levels.WARN)
end

--- Log in to a server now (:McpLogin), in the calling task: the flow through the browser.
---@param source string
---@param name string
---@param spec table
---@return boolean|nil ok, any err
function L:login(source, name, spec)
  local p = self:provider(source, name, spec)
  self:_progress(name).update("starting…")
  local res, err = require("mcp.auth").auth(p, { server_url = spec.url })
  if res ~= "AUTHORIZED" then
    self:_finish(name, "failed: " .. tostring(err or res), vim.log.levels.WARN)
    return nil, err or res
  end
  self:_finish(name, "logged in")
  return true
end

--- Forget a server's tokens (:McpLogout); its client registration is kept.
---@param source string
---@param name string
---@param spec table
function L:logout(source, name, spec)
  self:provider(source, name, spec):invalidate_credentials("tokens")
  self.log(name .. ": logged out")
end

--- Stop every listener (a login in progress fails).
function L:close()
  for _, p in pairs(self.providers) do pcall(p.close, p) end
  self.providers = {}
  for name in pairs(self.progress) do self:_finish(name, "cancelled") end
end

return M
