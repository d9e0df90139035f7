--- OAuth on the HTTP transports: what `auth_provider` and `oauth` in a transport config do.
--- The transport carries `Authorization: Bearer <token>` (installed with transport:set_header)
--- and the provider's per-exchange headers (a DPoP proof), and every exchange it makes that is
--- refused with 401, with 403 and a Bearer `insufficient_scope` challenge, or with a DPoP nonce
--- challenge (a POST of a request, a notification or an answer, a GET stream, a redirect hop, the
--- session DELETE) comes here (A:request_hooks, the C transport's request hooks): it is
--- authorized again and sent again in its place, at most MAX_REAUTHORIZE times. The client knows
--- nothing of it.
---
--- With auth_provider, reauthorize runs the flow of mcp.auth (as the TypeScript transports do):
--- the challenge's resource_metadata and scope, and on a 403 the union of the scope asked for
--- before and the challenged one (step-up), at most MAX_STEP_UP authorizations per call.
--- With the static `oauth` config (the reference's OAuthConfig), an expired access token is
--- refreshed before the connection starts, and a 401 triggers one refresh (refresh_token_fn, or
--- the refresh grant at token_url with client_id/client_secret) and one retry; a failed refresh
--- is an mcp.OAuthError, also given to on_error; from the background it runs once, then waits for a call
--- as the flow does (login_required).
local core = require("mcp.core")
local discovery = require("mcp.auth.discovery")
local fetch = require("mcp.fetch")
local flow = require("mcp.auth.flow")
local json = require("mcp.json")
local oerr = require("mcp.auth.errors")
local parse_header_lines = require("mcp.util.header_lines").parse
local sched = require("mcp.sched")
local term = require("mcp.util.term")

local M = {}

M.MAX_STEP_UP = 3
--- How many times one exchange (and what it carries) is authorized again and sent again.
M.MAX_REAUTHORIZE = 3

---@class mcp.auth.Authenticator
local A = {}
A.__index = A

function A:__tostring() return "mcp.auth.authenticator" end

--- The longest token sent: the transport's header value limit (64 KB) less "Bearer ".
M.MAX_TOKEN = 65536 - 7

--- Whether a token can go into an Authorization header: 1 to MAX_TOKEN bytes of visible ASCII
--- (a CR or LF would split the header, a longer one would be refused by the transport).
---@param token any
---@return boolean|nil ok, string|nil why
function M.check_token(token)
  if type(token) ~= "string" or token == "" then return nil, "the access token is not a non-empty string" end
  if #token > M.MAX_TOKEN then return nil, ("the access token is %d bytes (at most %d)"):format(#token, M.MAX_TOKEN) end
  if token:find("[^\33-\126]") then return nil, "the access token has a byte that is not visible ASCII" end
  return true
end

-- Install a token on the transport: true, or nil, err when it cannot go into a header.
local function install(self, token)
  local ok, why = M.check_token(token)
  if not ok then return nil, oerr.new(oerr.INVALID_REQUEST, why .. "; not sent") end
  if self.set_token then self.set_token(token) end
  return true
end

local function report(self, err)
  if self.on_error then
    sched.spawn_handler(function(e) io.stderr:write("mcp: on_error handler failed: ", term.escape(e), "\n") end,
      self.on_error, err)
  end
end

-- ---- the static OAuthConfig -------------------------------------------------------------------

local function expired(cfg)
  local at = cfg.expires_at
  return type(at) == "number" and os.time() >= at
end

-- The refresh grant at the static config's token_url: token, expires_in, or nil, nil, err.
local function refresh_grant(cfg)
  local token, expires_in, err
  local params = { grant_type = "refresh_token", refresh_token = cfg.refresh_token }
  local headers = { Accept = "application/json" }
  if cfg.scopes and #cfg.scopes > 0 then params.scope = table.concat(cfg.scopes, " ") end
  if cfg.client_secret then
    params.client_id, params.client_secret = cfg.client_id, cfg.client_secret
  elseif cfg.client_id then
    params.client_id = cfg.client_id
  end
  local res, ferr = fetch.request({ method = "POST", url = cfg.token_url, form = params, headers = headers })
  if not res then
    err = oerr.wrap(ferr, "token refresh")
  elseif res.status < 200 or res.status >= 300 then
    err = oerr.from_response(res.status, res.body)
  else
    local doc = json.decode(res.body)
    if type(doc) == "table" and type(doc.access_token) == "string" and doc.access_token ~= "" then
      token, expires_in = doc.access_token, tonumber(doc.expires_in)
      if type(doc.refresh_token) == "string" and doc.refresh_token ~= "" then cfg.refresh_token = doc.refresh_token end
    else
      err = oerr.new(oerr.SERVER_ERROR, "the token endpoint's answer has no access_token", { status_code = res.status })
    end
  end
  return token, expires_in, err
end

--- Refresh the static config's token (single-flight). Returns true or nil, err.
function A:refresh_static()
  local cfg = self.oauth
  local token, expires_in, err
  if cfg.refresh_token_fn then
    local ok, t, e, x = sched.pcall(cfg.refresh_token_fn, cfg)
    if not ok then
      err = oerr.new(oerr.SERVER_ERROR, "refresh_token_fn raised: " .. tostring(t))
    elseif type(t) == "string" and t ~= "" then
      token, expires_in = t, e
    else
      err = (oerr.is_oauth_error(e) and e) or oerr.new(oerr.SERVER_ERROR, "refresh_token_fn gave no token"
        .. (e ~= nil and (": " .. tostring(e and e.message or e)) or ""), { cause = x or e })
    end
  elseif type(cfg.refresh_token) == "string" and cfg.refresh_token ~= "" and type(cfg.token_url) == "string" then
    token, expires_in, err = refresh_grant(cfg)
  else
    err = oerr.new(oerr.INVALID_GRANT,
      "the access token cannot be refreshed: set refresh_token_fn, or refresh_token with token_url")
  end
  if not token then return nil, err end
  expires_in = tonumber(expires_in)
  if not expires_in or expires_in <= 0 then expires_in = 3600 end
  local ok, ierr = install(self, token)
  if not ok then return nil, ierr end
  cfg.access_token, cfg.expires_at = token, os.time() + math.floor(expires_in)
  return true
end

-- ---- single flight ----------------------------------------------------------------------------

-- Concurrent failures share one authorization: the later ones wait for its outcome.
local function once(self, fn)
  if self.busy then
    return sched.await(function(cb) self.waiters[#self.waiters + 1] = cb end)
  end
  self.busy = true
  local ok, a, b = sched.pcall(fn) -- a task may yield through it (also on PUC 5.1)
  self.busy, self.ended_ms = false, core.now_ms()
  local waiters = self.waiters
  self.waiters = {}
  if not ok then
    for _, w in ipairs(waiters) do w(nil, oerr.new(oerr.SERVER_ERROR, tostring(a))) end
    error(a, 0)
  end
  for _, w in ipairs(waiters) do w(a, b) end
  return a, b
end

-- ---- the seams the transport and the client call -----------------------------------------------

--- Whether an authorization (a login, a refresh) is running now, and when the last one ended
--- (core.now_ms(), nil before the first): a deadline for a held exchange leaves that time out.
---@return boolean busy, number|nil ended_ms
function A:authorizing()
  return self.busy == true, self.ended_ms
end

--- Before the transport starts: the token to send first (a stored one, or the static one
--- refreshed when expired). Returns true, or nil, err when a refresh failed.
function A:prepare()
  if self.oauth then
    if expired(self.oauth) then
      local ok, err = once(self, function() return self:refresh_static() end)
      if not ok then
        report(self, err)
        return nil, err
      end
    elseif self.oauth.access_token then
      local ok, err = install(self, self.oauth.access_token)
      if not ok then
        report(self, err)
        return nil, err
      end
    end
  elseif self.provider then
    local p = self.provider
    if type(p.check_store) == "function" then -- (a token store that refuses to be read: nil, err)
      local ok, err = p:check_store()
      if not ok then
        report(self, err)
        return nil, err
      end
    end
    local t = p.tokens and p:tokens()
    -- A stored token that cannot be sent is forgotten: the flow gets a new one.
    if type(t) == "table" and type(t.access_token) == "string" and not install(self, t.access_token)
        and type(p.invalidate_credentials) == "function" then
      p:invalidate_credentials("tokens")
    end
  end
  return true
end

local NONCE_RETRIED = 1 -- the memo bit: this message was sent again once for a DPoP nonce

-- The provider settles the failure itself (a DPoP nonce challenge: true, retry as is)?
local function nonce_settles(self, status, hdrs, body)
  local p = self.provider
  if type(p.resource_response) ~= "function" then return false end
  local ok, again = pcall(p.resource_response, p, status, hdrs, body, self.server_url)
  if not ok then
    report(self, oerr.new(oerr.SERVER_ERROR, "resource_response raised: " .. tostring(again)))
    return false
  end
  return again == true
end

-- The scope to ask for: the challenge's, on a 403 united with the one asked for before (step-up).
local function wanted_scope(self, status, ch)
  if status ~= 403 then return ch.scope end
  local t = self.provider.tokens and self.provider:tokens()
  local prior = flow.last_scope(self.provider) or (type(t) == "table" and t.scope or nil)
  return flow.union_scopes(prior, ch.scope)
end

-- Whether a refused exchange is the background's, which may refresh but never log in: no caller
-- waits on it (awaited false: the GET stream reconnecting, a notification, an answer, the session
-- DELETE, a listen opened again), or it is the client's own work (own: a request or a start of a
-- reconnection or a new session no call asked for, marked by Client:_in_background). An exchange
-- a user's call awaits is never the background's, whatever else runs at the time.
local function in_background(awaited, own)
  return awaited == false or own == true
end

-- Whether a refused exchange stops at the last failed flow (the user denied the login, or it
-- timed out) instead of running the flow again: a message sent before that flow ended (a 401 of
-- the same burst arriving after it: no second login), and anything of the background. The
-- user's next call (sent after it) may log in again.
local function stops_at_failure(failed, sent_ms, background)
  if failed == nil then return false end
  return background or (sent_ms ~= nil and sent_ms <= failed.at)
end

-- The flow, single-flight; interactive false: nothing shown (a refresh, a grant without a user).
local function flow_once(self, status, ch, interactive)
  return once(self, function()
    return flow.auth(self.provider, {
      server_url = self.server_url, resource_metadata_url = ch.resource_metadata,
      scope = wanted_scope(self, status, ch), step_up = status == 403, protocol_version = self.protocol_version,
      interactive = interactive,
    })
  end)
end

-- A token was installed after a flow: the standalone GET stream parked for want of a login (see
-- request_hooks) is sent again with it, and the background may authorize again.
local function authorized(self)
  self.failed, self.login_needed = nil, nil
  local parked = self.parked
  self.parked = {}
  for _, p in ipairs(parked) do self.settle(p.hold, true, p.memo) end
end

--- A call's request was answered (lua/mcp/client.lua, through the layer's answered): the server
--- took its authorization, so what waits for a login needs none now (a provider that signs each
--- request, such as DPoP, with tokens another client or process got; a token that still works
--- after the background's refresh failed). When something waits (login_needed, parked
--- exchanges), they go again and the background may authorize again, as after a flow
--- (authorized). Otherwise nothing: a failed login alone stays the answer for the refusals of
--- its burst (a step-up the user denied is not undone by another call that needed no scope).
function A:answered()
  if self.login_needed == nil and self.parked[1] == nil then return end
  authorized(self)
end

local function is_login_required(err)
  return type(err) == "table" and err.oauth_error == oerr.LOGIN_REQUIRED
end

-- Whether the background stopped at err for want of a login: none may start from there
-- (login_required), or the last login failed (denied, timed out) and only a call may try again.
local function waits_for_login(self, err)
  return is_login_required(err) or (self.failed ~= nil and err == self.failed.err)
end

-- The provider's flow again for a refused exchange whose message was sent at sent_ms, or the last
-- failed flow's error (stops_at_failure). The background's (in_background) never logs in: it may
-- refresh; when that cannot do, the authenticator records that a login is needed
-- (self.login_needed, the error login_required) and the background asks nothing more (no token
-- request per GET reconnect) until a call's flow (a login as usual) installed a token.
-- Returns true or nil, err.
local function run_flow(self, status, ch, sent_ms, background)
  local failed = self.failed
  if stops_at_failure(failed, sent_ms, background) then return nil, failed.err end
  if background and self.login_needed then return nil, self.login_needed end
  local res, aerr = flow_once(self, status, ch, not background)
  -- a call that joined the background's try, which found a login needed, logs in itself
  if not background and res == nil and is_login_required(aerr) then
    res, aerr = flow_once(self, status, ch, true)
  end
  if res == flow.AUTHORIZED then
    local t = self.provider:tokens()
    local ok, ierr = install(self, type(t) == "table" and t.access_token or nil)
    if ok then
      authorized(self)
      return true
    end
    aerr = ierr
  elseif res == flow.REDIRECT then
    aerr = oerr.new(oerr.UNAUTHORIZED, "Unauthorized: the user must authorize in the browser, then the host "
      .. "calls mcp.auth.finish(provider, server_url, redirect_url) and retries")
  end
  if background then
    -- (a failed login the background joined was recorded by the call that ran it)
    if is_login_required(aerr) and not self.login_needed then
      self.login_needed = aerr
      report(self, aerr)
    end
    return nil, aerr
  end
  self.failed = { err = aerr, at = self.ended_ms or core.now_ms() } -- (when the flow ended: once)
  report(self, aerr)
  return nil, aerr
end

-- The static config's one refresh for a 401 (refresh_token_fn, or the refresh grant). The
-- background's (in_background) runs it as the flow's does: once; when it fails, a login is needed
-- (self.login_needed, the error login_required, reported once with the refresh's failure as its
-- cause) and the background asks nothing more (no refresh per GET reconnect) until a call's
-- refresh installed a token. A call's refresh runs whatever the background found; its failure is
-- reported as before. Returns true or nil, err.
local function static_again(self, background)
  if background and self.login_needed then return nil, self.login_needed end
  local ok, rerr = once(self, function() return self:refresh_static() end)
  if ok then
    authorized(self)
    return true
  end
  if not background then
    report(self, rerr)
    return nil, rerr
  end
  if not self.login_needed then
    self.login_needed = oerr.new(oerr.LOGIN_REQUIRED, "the access token could not be refreshed for an exchange "
      .. "no call waits on (" .. tostring(type(rerr) == "table" and rerr.message or rerr)
      .. "); nothing more is asked until the next call refreshes it", { cause = rerr })
    report(self, self.login_needed)
  end
  return nil, self.login_needed
end

-- The error of a refused exchange that could not be authorized again keeps what the server said:
-- its status (a token endpoint's own status, when there was one, stays) and its WWW-Authenticate.
local function refusal(err, status, hdrs)
  if type(err) == "table" then
    if err.status_code == nil then err.status_code = status end
    if err.www_authenticate == nil then err.www_authenticate = hdrs["www-authenticate"] end
  end
  return err
end

--- An exchange was refused (err: status_code, response_headers, response_body, sent_ms: when
--- its message was first sent, core.now_ms(); awaited: false when no caller waits on it, which
--- then never starts a login, nor does own, the client's own work (Client:_in_background): they
--- may refresh, else fail with login_required): authorize again? true to
--- send it again. attempt: 1 for the first refusal of what it carries; memo: what the last call
--- gave back for it (0 at first), returned updated.
---@param err table
---@param attempt integer|nil
---@param memo integer|nil
---@return boolean|nil ok, mcp.OAuthError|nil err, integer memo
function A:reauthorize(err, attempt, memo)
  local status = type(err) == "table" and err.status_code
  attempt, memo = attempt or 1, memo or 0
  local hdrs = err.response_headers or {}
  local ch = discovery.parse_www_authenticate(hdrs["www-authenticate"]) or {}
  if self.oauth then
    if status ~= 401 or attempt > 1 then return nil, nil, memo end
    local ok, rerr = static_again(self, in_background(err.awaited, err.own))
    if not ok then refusal(rerr, status, hdrs) end
    return ok, rerr, memo
  end
  if not self.provider or attempt > M.MAX_STEP_UP then return nil, nil, memo end
  -- The provider may settle the failure itself (a DPoP nonce challenge): sent again as is, once
  -- per message (memo), so that a server that asks for a new nonce every time is not followed.
  local nonce = type(self.provider.resource_response) == "function"
    and require("mcp.auth.dpop").is_nonce_challenge(status, hdrs, err.response_body)
  if memo % 2 ~= NONCE_RETRIED and nonce_settles(self, status, hdrs, err.response_body) then
    return true, nil, memo + NONCE_RETRIED
  end
  -- A nonce challenge is not a bad token (and a 400 is no challenge): no flow.
  if nonce or status == 400 or (status == 403 and ch.error ~= "insufficient_scope") then return nil, nil, memo end
  local ok, rerr = run_flow(self, status, ch, err.sent_ms, in_background(err.awaited, err.own))
  if not ok then refusal(rerr, status, hdrs) end
  return ok, rerr, memo
end

-- Whether a refusal is one to take at all (decided at once, inside the transport's step).
local function takes(self, status, hdrs, attempt)
  if attempt > M.MAX_REAUTHORIZE then return false end
  if status == 401 then return true end
  if status == 400 then return self.provider ~= nil and type(self.provider.resource_response) == "function" end
  if status ~= 403 or self.oauth then return false end
  local ch = discovery.parse_www_authenticate(hdrs["www-authenticate"]) or {}
  return ch.error == "insufficient_scope"
end

--- The provider's headers for one MCP request (provider:request_headers(method, url), e.g.
--- `Authorization: DPoP <token>` and a fresh proof), or nil when it has none.
---@param method string the HTTP method
---@param url string|nil the exchange's URL (default: the server's)
---@return table|nil
function A:request_headers(method, url)
  local p = self.provider
  if p == nil or type(p.request_headers) ~= "function" then return nil end
  return p:request_headers(method, url or self.server_url)
end

--- The C transport's request hooks (t:set_request_hooks): headers(method, url) for every
--- exchange (the provider's request_headers; nil when it has none: then the transport asks
--- nothing), and refused(hold, method, url, status, header_lines, body, attempt, memo, sent_ms,
--- awaited, request_id, own), which takes a refusal worth authorizing again: the authorization runs in
--- a task, then settle(hold, again, memo, err) tells the transport to send the exchange again or
--- to let it fail (a request with err, the OAuth error, when there is one). What no caller waits
--- on that is a stream (the standalone GET stream, a request of the client's own such as a listen
--- opened again: awaited false, a GET or a request_id) refused for want of a login
--- (login_required, or after a failed one) is neither: it stays held, parked, so that it does not
--- come back into 401s again and again, and is sent again once a token was installed (the next
--- call's login or refresh); close() drops it. Notifications and answers fail as before.
---@param settle fun(hold: number, again: boolean, memo: integer, err: table|nil)
---@return function|nil headers, function refused
function A:request_hooks(settle)
  local p = self.provider
  local headers
  if p ~= nil and type(p.request_headers) == "function" then
    headers = function(method, url) return self:request_headers(method, url) end
  end
  self.settle = settle
  local function refused(hold, method, url, status, lines, body, attempt, memo, sent_ms, awaited, request_id, own)
    local hdrs = parse_header_lines(lines)
    if not takes(self, status, hdrs, attempt) then return false end
    sched.spawn_handler(function(e)
      settle(hold, false, memo)
      io.stderr:write("mcp: re-authorization failed: ", term.escape(e), "\n")
    end, function()
      local ok, err, m = self:reauthorize({ status_code = status, response_headers = hdrs, response_body = body,
        url = url, sent_ms = sent_ms, awaited = awaited, own = own }, attempt, memo)
      if ok ~= true and awaited == false and (method == "GET" or request_id ~= nil) and waits_for_login(self, err) then
        self.parked[#self.parked + 1] = { hold = hold, memo = m or memo } -- (until authorized())
        return
      end
      settle(hold, ok == true, m or memo, ok ~= true and err or nil)
    end)
    return true
  end
  return headers, refused
end

-- ---- the layer over the transport object ----------------------------------------------------

--- The OAuth layer over a transport object (composition): its start first installs (or
--- refreshes) the token; set_protocol_version and everything else are the transport's. The
--- handle is the transport's too (the session binds to that handle), and so are the
--- capabilities, with `authorizing` and `answered` added (Layer:authorizing, Layer:answered).
local Layer = {}

function Layer.__index(self, k)
  local v = Layer[k]
  if v ~= nil then return v end
  local inner = rawget(self, "inner")
  v = inner[k]
  if type(v) == "function" then
    local f = v
    v = function(s, ...)
      if s == self then return f(inner, ...) end
      return f(s, ...)
    end
    rawset(self, k, v) -- once per name and object
  end
  return v
end

function Layer.__tostring(self) return tostring(rawget(self, "inner")) end

--- The authenticator's authorizing() (A:authorizing): a login in progress, and when the last ended.
---@return boolean busy, number|nil ended_ms
function Layer:authorizing() return self.auth:authorizing() end

--- A call's request was answered (A:answered): what waits for a login goes again.
function Layer:answered() self.auth:answered() end

--- Start: the token first (a stored one, or the static one refreshed when expired), then the
--- transport's start.
function Layer:start(events, start_opts)
  local ok, err = self.auth:prepare()
  if not ok then return nil, err end
  return self.inner:start(events, start_opts)
end

--- t under the OAuth layer of authenticator a.
---@param t table a transport object (mcp.transport.native)
---@param a mcp.auth.Authenticator
---@return table
function M.layer(t, a)
  local caps = { authorizing = true, answered = true }
  for k, v in pairs(type(t.capabilities) == "table" and t.capabilities or {}) do caps[k] = v end
  return setmetatable({ inner = t, auth = a, handle = t.handle, capabilities = caps }, Layer)
end

--- The keys of the static `oauth` config (the reference's OAuthConfig); any other raises.
M.OAUTH_FIELDS = {
  access_token = true, refresh_token = true, expires_at = true, token_url = true, client_id = true,
  client_secret = true, scopes = true, refresh_token_fn = true,
}

--- The authenticator of a transport config (nil when it has neither auth_provider nor oauth).
--- set_token(token) installs a token on the transport.
---@param cfg table the transport config
---@param set_token fun(token: string)
---@return mcp.auth.Authenticator|nil
function M.new(cfg, set_token)
  if cfg.auth_provider == nil and (cfg.oauth == nil or next(cfg.oauth) == nil) then return nil end
  local oauth
  if cfg.oauth ~= nil and cfg.auth_provider == nil then
    local o = cfg.oauth
    oauth = {}
    for k, v in pairs(o) do oauth[k] = v end
    if oauth.refresh_token_fn ~= nil and type(oauth.refresh_token_fn) ~= "function" then
      error("mcp: oauth.refresh_token_fn must be a function", 4)
    end
  end
  if cfg.auth_provider ~= nil and type(cfg.auth_provider.bind_server) == "function" then
    cfg.auth_provider:bind_server(cfg.url)
  end
  return setmetatable({
    provider = cfg.auth_provider,
    oauth = oauth,
    server_url = cfg.url,
    set_token = set_token,
    on_error = cfg.on_error,
    waiters = {},
    parked = {}, -- the GET stream's holds {hold=, memo=} waiting for a login (request_hooks)
  }, A)
end

return M
