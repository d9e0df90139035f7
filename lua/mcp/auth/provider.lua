--- Ready-made OAuth client providers for mcp.auth: a provider keeps the client's registration,
--- tokens and PKCE verifier (in a token store: memory or a file), and says how the user gets to
--- the authorization URL. `mcp.auth.provider{...}` is the general one; the browser step is its
--- `on_authorize(url)` function, which returns the redirect URL the authorization server sent the
--- browser to (the flow then completes in the same call) or nil (the host finishes later with
--- mcp.auth.finish).
local core = require("mcp.core")
local fetch = require("mcp.fetch")
local sched = require("mcp.sched")
local url = require("mcp.auth.url")

local M = {}

--- How long a provider waits for the store's lock (another process refreshing) before giving up.
M.LOCK_WAIT_MS = 30000

local unpack = table.unpack or unpack -- luacheck: ignore 143
local function pack(...) return { n = select("#", ...), ... } end

local function check(cond, msg)
  if not cond then error("mcp.auth: " .. msg, 3) end
end

---@class mcp.auth.Provider
local Provider = {}
Provider.__index = Provider

-- The record in the store: a table, or nil, err when the store refuses to read it.
local function load(self)
  local r, err = self.store:load(self.key)
  if r == nil and err ~= nil then return nil, err end
  return r or {}
end

local function record(self)
  local r = self._record
  if r == nil then
    if self.key == nil then
      error("mcp.auth: the provider is not bound to a server yet (give server_url, or use it with one client)", 3)
    end
    local err
    r, err = load(self)
    if r == nil then error("mcp.auth: the token store cannot be read: " .. tostring(err), 3) end
    self._record = r
  end
  return r
end

-- Who holds the lock: the task (or the main thread), so the holder's own saves do not wait for it.
local MAIN = {}
local function holder() return sched.current() or coroutine.running() or MAIN end

-- Runs fn() holding the store's lock on this provider's key, when the store has one (try_lock),
-- waiting (on the loop, M.LOCK_WAIT_MS at most) while another process or provider holds it.
-- Returns fn's results, or nil, err when the lock cannot be had.
local function with_lock(self, fn)
  local store, me = self.store, holder()
  if type(store.try_lock) ~= "function" or self._lock_holder == me then return fn() end
  local deadline = core.now_ms() + M.LOCK_WAIT_MS
  local lock, err = store:try_lock(self.key)
  while lock == false do
    if core.now_ms() >= deadline then
      return nil, require("mcp.errors").new(nil, ("mcp.auth: the token store %s stayed locked for %d ms (another "
        .. "process refreshing?)"):format(tostring(store), M.LOCK_WAIT_MS), nil, { kind = "timeout" })
    end
    sched.sleep(20)
    lock, err = store:try_lock(self.key)
  end
  if not lock then return nil, err end
  self._lock_holder = me
  local res = pack(sched.pcall(fn)) -- (a task may yield through it: the refresh is a request)
  self._lock_holder = nil
  lock:unlock()
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- A change of the record saved under the store's lock, applied to the record read again from
-- the store: another process may have saved a newer one, which a stale copy never overwrites.
local function update(self, change)
  local ok, err = with_lock(self, function()
    local stored, lerr = load(self)
    if stored == nil then return nil, lerr end
    change(stored)
    self._record = stored
    local sok, serr = self.store:save(self.key, stored)
    if sok == nil and serr ~= nil then return nil, serr end
    return true
  end)
  if not ok then error("mcp.auth: the token store cannot save: " .. tostring(err), 3) end
end

-- Is the stored value the one this provider holds (so that forgetting it forgets nothing newer)?
-- (Nothing usable stored counts as the same: there is nothing newer to keep.)
local function same_tokens(stored, mine)
  if type(stored) ~= "table" then return true end
  return type(mine) == "table" and stored.access_token == mine.access_token
    and stored.refresh_token == mine.refresh_token
end

local function same_client(stored, mine)
  if type(stored) ~= "table" then return true end
  return type(mine) == "table" and stored.client_id == mine.client_id
end

--- The MCP server this provider's credentials are for (the store key). The flow and the HTTP
--- transports call it; a provider serves one server: binding it to another raises.
function Provider:bind_server(server_url)
  if self.key == nil then
    self.key = server_url
  elseif self.key ~= server_url and not self._explicit_key then
    error("mcp.auth: this provider holds credentials for " .. fetch.redact_url(self.key)
      .. "; create one provider per server", 3)
  end
end

function Provider:redirect_url() return self._redirect_url end
function Provider:client_metadata() return self._client_metadata end
function Provider:client_metadata_url() return self._client_metadata_url end

function Provider:client_information()
  return self._client_information or record(self).client_information
end

function Provider:save_client_information(info)
  if self._client_information then return end -- pre-registered: kept as given
  record(self)
  update(self, function(r) r.client_information = info end)
end

function Provider:tokens() return record(self).tokens end

function Provider:save_tokens(tokens)
  record(self)
  update(self, function(r) r.tokens = tokens end)
  if self._on_tokens then self._on_tokens(tokens) end
end

--- Can the store be read? (The flow and the HTTP transports ask first.) true, or nil, err when
--- the store refuses the record (a file store's owner, mode and symlink checks). The record read
--- becomes this provider's copy only when it had none: its copy holds the tokens it sent, which
--- locked_refresh compares with the stored ones.
---@return boolean|nil ok, mcp.Error|nil err
function Provider:check_store()
  if self.key == nil then return true end
  local r, err = load(self)
  if r == nil then return nil, err end
  if self._record == nil then self._record = r end
  return true
end

--- The flow's refresh of `tokens` (grant(tokens) -> its results) under the store's lock, with the
--- record read again first. When another process (or provider) has rotated the tokens meanwhile,
--- the stored ones are taken: as they are ("AUTHORIZED", no request) while their access token
--- is not known to have expired, else refreshed with their refresh token; never ours, which the
--- authorization server may treat as a reused refresh token.
---@param tokens table the tokens the flow would refresh
---@param grant fun(tokens: table): any
---@return any
function Provider:locked_refresh(tokens, grant)
  record(self)
  return with_lock(self, function()
    local stored, err = load(self)
    if stored == nil then return nil, err end
    self._record = stored
    local t = stored.tokens
    if same_tokens(t, tokens) then return grant(tokens) end
    if t.expires_at == nil or (tonumber(t.expires_at) or 0) > os.time() or type(t.refresh_token) ~= "string" then
      return "AUTHORIZED"
    end
    return grant(t)
  end)
end

function Provider:save_code_verifier(v) self._verifier = v end
function Provider:code_verifier() return self._verifier end
function Provider:save_state(s) self._state = s end
function Provider:stored_state() return self._state end

--- scope: "all" | "client" | "tokens" | "verifier". Forgets what this provider holds; what another
--- process saved since (newer tokens, another registration) stays in the store and is taken.
function Provider:invalidate_credentials(scope)
  local mine = record(self)
  if scope == "all" or scope == "client" or scope == "tokens" then
    update(self, function(r)
      local client = scope ~= "tokens" and same_client(r.client_information, mine.client_information)
      if client then r.client_information = nil end
      if (scope == "all" and client) or ((scope == "all" or scope == "tokens") and same_tokens(r.tokens, mine.tokens)) then
        r.tokens = nil
      end
    end)
  end
  if scope == "all" or scope == "verifier" then
    self._verifier, self._state = nil, nil
  end
end

function Provider:redirect_to_authorization(auth_url)
  if self._on_authorize == nil then return nil end
  return self._on_authorize(auth_url)
end

function Provider:__tostring()
  return "mcp.auth.provider(" .. (self.key and fetch.redact_url(self.key) or "unbound") .. ")"
end

local function is_issuer_list(v)
  if type(v) ~= "table" or v[1] == nil then return false end
  for _, s in ipairs(v) do
    if type(s) ~= "string" or s == "" then return false end
  end
  return true
end

--- Credentials that must not reach another authorization server (a client secret, a private
--- key, a workload token) need an `issuer` or an `allowed_issuers` list: a malicious MCP server
--- could otherwise name its own authorization server and receive them. Raises on misuse.
---@param info table|nil client information (client_secret?, issuer?, allowed_issuers?)
---@param what string the option's name for the message
---@param always boolean|nil pinned even without a client_secret
function M.check_pinned(info, what, always)
  if type(info) ~= "table" then return end
  local secret = type(info.client_secret) == "string" and info.client_secret ~= ""
  if not (secret or always) then return end
  check(info.issuer == nil or (type(info.issuer) == "string" and info.issuer ~= ""), what .. ": issuer must be a string")
  check(info.allowed_issuers == nil or is_issuer_list(info.allowed_issuers),
    what .. ": allowed_issuers must be a non-empty list of issuer URLs")
  if info.issuer == nil and info.allowed_issuers == nil then
    error("mcp.auth: " .. what .. ": credentials need an issuer (or allowed_issuers): they are sent "
      .. "only to that authorization server", 4)
  end
end

--- A provider. opts: redirect_url (string, required), client_metadata (table: client_name,
--- redirect_uris, scope, ...; defaults from client_name), client_information (pre-registered
--- {client_id, client_secret?, issuer?, allowed_issuers?}; used only with that authorization
--- server, and with a client_secret the issuer or allowed_issuers list is required), client_metadata_url (an https URL serving this client's metadata
--- document, used when the server supports Client ID Metadata Documents), store (a token store,
--- default mcp.auth.memory_store()), server_url (the server the credentials are for; else the
--- first one the provider is used with), key (the store key, default server_url),
--- on_authorize(url) -> redirect URL | nil, on_tokens(tokens).
---@param opts table
---@return mcp.auth.Provider
function M.new(opts)
  check(type(opts) == "table", "provider options table expected")
  check(type(opts.redirect_url) == "string" and url.parse(opts.redirect_url) ~= nil,
    "redirect_url must be an http(s) URL")
  check(opts.client_information == nil or (type(opts.client_information) == "table"
    and type(opts.client_information.client_id) == "string"), "client_information needs a client_id")
  check(opts.on_authorize == nil or type(opts.on_authorize) == "function", "on_authorize must be a function")
  M.check_pinned(opts.client_information, "client_information")
  check(opts.client_metadata_url == nil or type(opts.client_metadata_url) == "string", "client_metadata_url must be a string")
  local metadata = {}
  for k, v in pairs(opts.client_metadata or {}) do metadata[k] = v end
  metadata.client_name = metadata.client_name or opts.client_name or "lua-mcp"
  metadata.redirect_uris = metadata.redirect_uris or { opts.redirect_url }
  return setmetatable({
    _redirect_url = opts.redirect_url,
    _client_metadata = metadata,
    _client_metadata_url = opts.client_metadata_url,
    _client_information = opts.client_information,
    _on_authorize = opts.on_authorize,
    _on_tokens = opts.on_tokens,
    store = opts.store or require("mcp.auth.store").memory(),
    key = opts.key or opts.server_url,
    _explicit_key = opts.key ~= nil,
  }, Provider)
end

M.Provider = Provider

--- Headless authorization for tests and CI: GET the authorization URL without a browser and
--- without following redirects, and return the Location the server redirected to (the redirect
--- URL with the code), or nil and an error. Works with servers that approve at once (the MCP
--- conformance suite's, the project's fixture).
---@param auth_url string
---@param opts table|nil timeout_ms
---@return string|nil redirect, mcp.Error|string|nil err
function M.follow_authorization(auth_url, opts)
  local res, err = fetch.request({ url = auth_url, timeout_ms = opts and opts.timeout_ms })
  if not res then return nil, err end
  local loc = res.headers.location
  if res.status < 300 or res.status >= 400 or loc == nil then
    return nil, ("the authorization endpoint answered HTTP %d without a redirect"):format(res.status)
  end
  return url.resolve(auth_url, loc)
end

--- A provider that authorizes headlessly (M.follow_authorization): for tests and CI.
---@param opts table the options of M.new (on_authorize is set)
---@return mcp.auth.Provider
function M.headless(opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.on_authorize = function(auth_url) return M.follow_authorization(auth_url) end
  return M.new(o)
end

return M
