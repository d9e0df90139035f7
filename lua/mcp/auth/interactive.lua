--- mcp.auth.interactive_provider: OAuth logins for people. The provider listens for the
--- browser's redirect on 127.0.0.1 (its own socket on the core's loop, RFC 8252 loopback
--- redirect), opens the authorization URL with xdg-open or open (never through a shell) and
--- prints it, waits for the redirect, and keeps registrations and tokens in a token store
--- (the file store by default, so the next run needs no login). Hosts that own the browser
--- step pass on_url (the Neovim adapter shows the URL itself); tests and CI pass headless, a
--- function that takes the authorization URL and returns the redirect URL.
local term = require("mcp.util.term")
local core = require("mcp.core")
local provider = require("mcp.auth.provider")
local sched = require("mcp.sched")
local url = require("mcp.auth.url")
local oerr = require("mcp.auth.errors")

local M = {}

M.DEFAULT_TIMEOUT_MS = 300000

local function check(cond, msg)
  if not cond then error("mcp.auth.interactive_provider: " .. msg, 3) end
end

local function in_path(prog)
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    local f = io.open(dir .. "/" .. prog, "rb")
    if f then
      f:close()
      return true
    end
  end
  return false
end

--- Open url in the user's browser: xdg-open, else open (macOS), run without a shell.
---@param u string an http(s) URL
---@return boolean|nil, string|nil
function M.open_in_browser(u)
  local parsed = url.parse(u)
  if not parsed then return nil, "not an http(s) URL" end
  for _, prog in ipairs({ "xdg-open", "open" }) do
    if in_path(prog) then return core.spawn_detached({ prog, u }) end
  end
  return nil, "neither xdg-open nor open is installed"
end

---@class mcp.auth.InteractiveProvider : mcp.auth.Provider
local I = setmetatable({}, { __index = provider.Provider })
I.__index = I
I.__tostring = provider.Provider.__tostring

-- What the listener answers a request for target with: true (the redirect the login waits
-- for: its path and this login's state), 400 (the path, but no login waiting or another state)
-- or 404 (another path: /favicon.ico, a probe). Only the first ends the wait; the others are
-- ignored, so a stray request cannot end a login (nor a forged one feed it a code).
local function on_request(self, target)
  local path, query = target:match("^([^?#]*)%??([^#]*)")
  if path ~= self._path then return 404 end
  if not self._waiter then return 400 end
  if self._state ~= nil and url.parse_query(query).state ~= self._state then return 400 end
  local w = self._waiter
  self._waiter = nil
  w(target)
  return true
end

-- The listener is opened with the first redirect_url() (the port must be known to register),
-- kept until the redirect arrived, and bound to the same port again for the next login.
local function listen(self)
  if self._listener and self._listener:port() then return true end
  local l, err = core.redirect_listener(self._port or 0, function(target) return on_request(self, target) end)
  if not l then return nil, err end
  self._listener = l
  self._port = l:port()
  return true
end

local function stop(self)
  if self._listener then
    self._listener:close()
    self._listener = nil
  end
end

-- The port of the stored registration's loopback redirect URI with this provider's path, if any.
local function stored_port(self)
  if self.key == nil then return nil end
  local info = self:client_information()
  for _, u in ipairs(type(info) == "table" and type(info.redirect_uris) == "table" and info.redirect_uris or {}) do
    local port, path = tostring(u):match("^http://127%.0%.0%.1:(%d+)(/[^?#]*)$")
    if port and path == self._path and tonumber(port) > 0 and tonumber(port) <= 65535 then return tonumber(port) end
  end
  return nil
end

function I:redirect_url()
  if self._headless then return self._fixed_redirect or ("http://127.0.0.1:" .. (self._port or 8976) .. self._path) end
  if self._fixed_redirect then return self._fixed_redirect end
  if not self._port then
    -- a stored registration names its redirect port: listen there again (a server that matches
    -- redirect URIs exactly refuses another port); any free port when that one is taken
    self._port = stored_port(self)
    if self._port and not listen(self) then self._port = nil end
    -- the port must be known to register: listen now (kept open for the login that follows)
    local ok, err = listen(self)
    if not ok then error("mcp.auth.interactive_provider: " .. tostring(err), 2) end
  end
  return "http://127.0.0.1:" .. self._port .. self._path
end

-- Why a login that waited authorization_timeout_ms for the redirect gave up, and what to do.
local function timeout_message(self, auth_url)
  return ("no redirect arrived at http://127.0.0.1:%d%s within %d ms (authorization_timeout_ms). The login "
    .. "starts at %s; if the authorization server showed an error page there instead of sending the browser "
    .. "back, it may have refused the redirect URI (a registration naming another port or path)")
    :format(self._port or 0, self._path, math.floor(self._timeout), auth_url)
end

function I:redirect_to_authorization(auth_url)
  if self._headless then return self._headless(auth_url) end
  local ok, err = listen(self)
  if not ok then return nil, err end
  local printed = false
  if self._on_url then self._on_url(auth_url) end
  local nvim = type(vim) == "table" and type(vim.ui) == "table" and type(vim.ui.open) == "function"
  if type(self._open) == "function" then
    self._open(auth_url)
  elseif self._open == "auto" and nvim and not self._on_url then
    -- inside Neovim: its own opener, and the URL as a notification (no stderr)
    vim.schedule(function()
      vim.ui.open(auth_url)
      vim.notify("mcp: authorize in your browser (opened): " .. auth_url, vim.log.levels.INFO)
    end)
    printed = true
  elseif self._open == "auto" then
    local opened, why = M.open_in_browser(auth_url)
    if not opened and not self._on_url then
      self._print(("mcp: could not open a browser (%s)."):format(term.escape(why)))
    end
  end
  if not printed and not self._on_url and self._open ~= false then
    self._print("mcp: to authorize, open this URL in a browser:\n" .. term.escape(auth_url))
    printed = true
  end
  local target, werr = sched.await(function(cb)
    local timer
    self._waiter = function(t, why)
      if timer then timer:cancel() end
      cb(t, why)
    end
    timer = core.timer(self._timeout, function()
      self._waiter = nil
      cb(nil, oerr.new(oerr.AUTHORIZATION_TIMEOUT, timeout_message(self, auth_url)))
    end)
  end)
  stop(self)
  if not target then return nil, werr end
  if printed and not nvim then self._print("mcp: authorization received.") end
  return "http://127.0.0.1:" .. self._port .. target
end

--- Stop listening (a login in progress fails).
function I:close()
  if self._waiter then
    local w = self._waiter
    self._waiter = nil
    w(nil, oerr.new(oerr.LOGIN_CANCELLED, "the login was cancelled (the provider was closed) before the redirect came"))
  end
  stop(self)
end

--- The provider. opts: client_name, client_metadata, client_information, client_metadata_url,
--- server_url (the store key), store (default mcp.auth.file_store()), port (default 0: any free
--- one, then kept), path (default "/callback"), redirect_url (a fixed one instead of the
--- listener's), open ("auto" default: xdg-open/open and print; false: only on_url; or a
--- function(url)), on_url(url) (the host shows the URL), headless(url) -> redirect URL | nil, err
--- (no listener, no browser), authorization_timeout_ms (how long a login waits for the redirect,
--- default 300000; timeout_ms is the older name), print(line) (default stderr).
---@param opts table|nil
---@return mcp.auth.InteractiveProvider
function M.new(opts)
  opts = opts or {}
  check(type(opts) == "table", "options table expected")
  check(opts.headless == nil or type(opts.headless) == "function", "headless must be a function")
  check(opts.on_url == nil or type(opts.on_url) == "function", "on_url must be a function")
  check(opts.open == nil or opts.open == "auto" or opts.open == false or type(opts.open) == "function",
    'open must be "auto", false or a function')
  check(opts.port == nil or (type(opts.port) == "number" and opts.port >= 0 and opts.port <= 65535), "port must be 0..65535")
  local path = opts.path or "/callback"
  check(type(path) == "string" and path:sub(1, 1) == "/", "path must start with /")
  local timeout = opts.authorization_timeout_ms or opts.timeout_ms or M.DEFAULT_TIMEOUT_MS
  check(type(timeout) == "number" and timeout > 0, "authorization_timeout_ms must be a positive number")
  local base = {}
  for k, v in pairs(opts) do base[k] = v end
  base.redirect_url = opts.redirect_url or ("http://127.0.0.1:" .. (opts.port or 0) .. path)
  base.store = opts.store or require("mcp.auth.store").file()
  base.on_authorize = nil
  local self = provider.new(base)
  self._fixed_redirect = opts.redirect_url
  self._port = opts.port ~= 0 and opts.port or nil
  self._path = path
  self._headless = opts.headless
  self._on_url = opts.on_url
  self._open = opts.open == nil and "auto" or opts.open
  self._timeout = timeout
  self._print = opts.print or function(line) io.stderr:write(line, "\n") end
  -- the client's registered redirect URIs follow the listener's port
  self._client_metadata.redirect_uris = opts.client_metadata and opts.client_metadata.redirect_uris or nil
  return setmetatable(self, I)
end

return M
