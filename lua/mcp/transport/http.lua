--- HTTP transports: streamable HTTP (HTTPTransportConfig) and legacy HTTP+SSE (SSETransportConfig),
--- mapped onto the C core's libcurl transports.
local core = require("mcp.core")
local errors = require("mcp.errors")
local parse_header_lines = require("mcp.util.header_lines").parse
local options = require("mcp.util.options")
local protocol = require("mcp.protocol")
local native = require("mcp.transport.native")
local sched = require("mcp.sched")
local term = require("mcp.util.term")

local M = {}

M.REDIRECT_ERROR = "error"
M.REDIRECT_FOLLOW = "follow"

-- Per-transport Lua state, keyed by the transport's light userdata key (weakly, by the box).
local states = setmetatable({}, { __mode = "k" })
local by_key = setmetatable({}, { __mode = "v" })

local function state_of(key)
  local box = by_key[key]
  return box and states[box]
end

-- Transport events arrive here from the C core (inside a loop step): they only record and
-- queue; user callbacks run as tasks.
local function on_event(kind, value, key)
  local st = state_of(key)
  if not st then return end
  local cfg = st.cfg
  if kind == "session_id" then
    if cfg.on_session_id_change then sched.spawn_handler(st.fail, cfg.on_session_id_change, value) end
  elseif kind == "session_expired" then
    if cfg.on_session_expired then sched.spawn_handler(st.fail, cfg.on_session_expired, value) end
  elseif kind == "session_lost" then
    if st.on_lost then st.on_lost() end
  elseif kind == "endpoint_auth" then
    -- "<status>\n<header lines>" of a 401/403 on the legacy stream's GET (before endpoint_failed)
    local status, lines = value:match("^(%d+)\n(.*)$")
    st.endpoint_status, st.endpoint_headers = tonumber(status), parse_header_lines(lines or "")
  elseif kind == "endpoint" or kind == "endpoint_failed" then
    st.endpoint, st.endpoint_error = kind == "endpoint" and value or nil, kind ~= "endpoint" and value or nil
    if kind == "endpoint" then st.endpoint_status, st.endpoint_headers = nil, nil end
    local waiters = st.waiters
    st.waiters = {}
    for _, w in ipairs(waiters) do w() end
  elseif kind == "error" then
    if cfg.on_error then
      sched.spawn_handler(st.fail, cfg.on_error, errors.new(nil, value, nil, { kind = "transport" }))
    end
  end
end

local function check(cond, msg, level)
  if not cond then error("mcp: " .. msg, (level or 1) + 2) end
end

local function header_lines(headers)
  local out = {}
  if headers == nil then return out end
  check(type(headers) == "table", "headers must be a table {Name = value}", 2)
  for name, value in pairs(headers) do
    check(type(name) == "string" and name:match("^[!#$%%&'*+%-.^_`|~%w]+$") ~= nil,
      "invalid header name " .. tostring(name), 2)
    check(type(value) == "string" or type(value) == "number", "header " .. name .. " must be a string", 2)
    value = tostring(value)
    check(not value:find("[\r\n%z]"), "header " .. name .. " contains a line break or NUL", 2)
    out[#out + 1] = name .. ": " .. value
  end
  table.sort(out)
  return out
end

--- The HTTP and SSE transports' config keys (HTTPTransportConfig / SSETransportConfig). Another
--- key raises.
M.CONFIG_FIELDS = {
  url = true, headers = true, redirect = true, timeout_ms = true, connect_timeout_ms = true, idle_timeout_ms = true,
  oauth = true, bearer_token = true, auth_provider = true, initial_session_id = true, on_session_id_change = true,
  on_session_expired = true, terminate_session_on_close = true, on_error = true, max_message_size = true,
  max_reconnects = true, max_connections = true, max_reply_connections = true, max_queued_replies = true,
  curl_options = true,
}

local wait_ready

-- The largest timeout the transport takes, in ms (a C int: about 24.8 days).
local MAX_MS = 2147483647

--- The HTTP transport object (mcp.transport.native): the C handle's start and close under the
--- contract, its capabilities, and the host's methods passed on to the handle.
---@class mcp.HttpTransport
---@field handle userdata the C transport (the session is bound to it)
---@field capabilities table docs/API.md "Transports"
local Http = native.class({
  "is_open", "open_inbound", "session_id", "set_header", "resumption_token", "busy", "sending", "ready", "key",
  "set_request_hooks", "settle",
})

function Http:__tostring() return "mcp." .. M.kind(self) .. "_transport" end

--- Start: returns once messages can be sent (legacy SSE: after the endpoint event; a 401/403 on
--- its GET is authorized again inside the transport, and the wait goes on). start_opts.own: the
--- client's own start (a reconnection): a refusal of its GET may refresh, never log in.
---@return boolean|nil ok, mcp.Error|nil err
function Http:start(_, start_opts)
  local st = states[self.handle]
  local ok, err = self.handle:start(start_opts ~= nil and start_opts.own == true)
  if not ok then return nil, errors.new(nil, "failed to connect transport: " .. tostring(err), nil, { kind = "transport" }) end
  local timeout = start_opts and start_opts.timeout_ms or st.cfg.timeout_ms or protocol.DEFAULT_REQUEST_TIMEOUT_MS
  return wait_ready(self.handle, timeout)
end

--- Close; outside a task and a host's loop (sched.in_host_loop) wait up to wait_ms (default
--- 3000) until the exchanges still running (the session DELETE) ended. Idempotent.
function Http:close(wait_ms)
  local h = self.handle
  h:close()
  -- a start still waiting for the endpoint event (legacy SSE) ends now, and its timer with it
  local st = states[h]
  if st and not st.closed then
    st.closed = true
    local waiters = st.waiters
    st.waiters = {}
    for _, w in ipairs(waiters) do w() end
  end
  if (wait_ms == nil or wait_ms > 0) and not sched.in_host_loop() then
    sched.wait_until(function() return not h:busy() end, wait_ms or 3000)
  end
  return true
end

--- Outside a task and a host's loop (sched.in_host_loop), wait up to wait_ms until the
--- notifications and answers sent so far have gone out (their POSTs ended: notifications/initialized
--- reaches the server before connect returns); elsewhere they go on the loop's next steps. Whether
--- nothing is left to send.
---@param wait_ms number
---@return boolean
function Http:flush(wait_ms)
  local h = self.handle
  if not h:sending() then return true end
  if sched.in_host_loop() then return false end
  return sched.wait_until(function() return not h:sending() end, wait_ms) == true
end

--- fn() (the client's, which only queues work) when the server lost a session that had worked (a
--- request answered, a live GET stream): after on_session_expired, also when no call saw the refusal
--- (the GET stream reconnecting, a notification). nil stops it.
---@param fn fun()|nil
function Http:watch_session_lost(fn)
  states[self.handle].on_lost = fn
end

--- The protocol version, sent as MCP-Protocol-Version (nil: none).
---@param v string|nil
function Http:set_protocol_version(v)
  local st = states[self.handle]
  if st.auth then st.auth.protocol_version = v end -- the flow's discovery requests carry it too
  self.handle:set_protocol_version(v)
end

-- The config's numeric fields, checked (raises at the caller of make's caller).
local function check_numbers(cfg)
  for _, f in ipairs({ "max_connections", "max_reply_connections", "max_queued_replies" }) do
    local n = cfg[f]
    check(n == nil or (type(n) == "number" and n >= 1 and n <= 65536 and n % 1 == 0),
      f .. " must be an integer from 1 to 65536", 3)
  end
  -- (the C transport casts these to integers: a value past them would be undefined behaviour, and
  -- another type or a fraction was taken as the default without a word)
  for _, f in ipairs({ "timeout_ms", "connect_timeout_ms", "idle_timeout_ms" }) do
    local n = cfg[f]
    check(n == nil or (type(n) == "number" and n >= 0 and n <= MAX_MS),
      f .. " must be a number of milliseconds from 0 to 2147483647", 3)
  end
  local size = cfg.max_message_size
  check(size == nil or (type(size) == "number" and size >= 1 and size < 1e18),
    "max_message_size must be a positive number of bytes", 3)
  local tries = cfg.max_reconnects
  check(tries == nil or (type(tries) == "number" and tries >= 1 and tries <= 1000000 and tries % 1 == 0),
    "max_reconnects must be an integer from 1 to 1000000", 3)
end

local function make(cfg, legacy)
  check(type(cfg) == "table", "transport config table expected", 2)
  options.check(cfg, M.CONFIG_FIELDS, legacy and "mcp.sse_transport: config" or "mcp.http_transport: config", 3)
  check(type(cfg.url) == "string" and cfg.url:match("^https?://") ~= nil, "url must be an http(s) URL", 2)
  local redirect = cfg.redirect or M.REDIRECT_ERROR
  check(redirect == M.REDIRECT_ERROR or redirect == M.REDIRECT_FOLLOW,
    'redirect must be mcp.REDIRECT_ERROR ("error") or mcp.REDIRECT_FOLLOW ("follow")', 2)
  for _, f in ipairs({ "on_session_id_change", "on_session_expired", "on_error" }) do
    check(cfg[f] == nil or type(cfg[f]) == "function", f .. " must be a function", 2)
  end
  local token = cfg.bearer_token
  check(token == nil or require("mcp.auth.transport").check_token(token),
    "bearer_token: 1 to 65529 bytes of visible ASCII expected", 2)
  if cfg.oauth ~= nil then
    check(type(cfg.oauth) == "table", "oauth must be a table", 2)
    -- A typo (refresh_token_func) would otherwise leave the token unrefreshed without a word.
    options.check(cfg.oauth, require("mcp.auth.transport").OAUTH_FIELDS, "mcp: oauth", 3)
    -- One that cannot be sent fails the connect with nil, err (the auth layer's prepare).
    local at = cfg.oauth.access_token
    if require("mcp.auth.transport").check_token(at) then token = token or at end
  end
  if cfg.auth_provider ~= nil then
    check(type(cfg.auth_provider) == "table", "auth_provider must be a provider table (mcp.auth)", 2)
  end
  check_numbers(cfg)
  local timeout = cfg.timeout_ms
  local box = (legacy and core.sse_transport or core.http_transport)({
    url = cfg.url,
    headers = header_lines(cfg.headers),
    follow_redirects = redirect == M.REDIRECT_FOLLOW,
    connect_timeout_ms = cfg.connect_timeout_ms or timeout,
    idle_timeout_ms = cfg.idle_timeout_ms or timeout,
    terminate_on_close = cfg.terminate_session_on_close ~= false,
    initial_session_id = cfg.initial_session_id,
    bearer_token = token,
    max_message_size = cfg.max_message_size,
    max_reconnects = cfg.max_reconnects,
    max_connections = cfg.max_connections,
    max_reply_connections = cfg.max_reply_connections,
    max_queued_replies = cfg.max_queued_replies,
    curl_options = cfg.curl_options,
    on_event = on_event,
  })
  local st = {
    cfg = cfg,
    legacy = legacy,
    waiters = {},
    fail = function(e) io.stderr:write("mcp: transport callback failed: ", term.escape(e), "\n") end,
  }
  states[box] = st
  by_key[box:key()] = box
  -- Streamable HTTP probes server/discover and sends tool parameter headers (Mcp-Param-*);
  -- legacy SSE is a 2024-11-05 transport. Both have a session id or a stream to lose.
  local t = native.new(Http, box, {
    protocol_discovery = not legacy, tool_parameter_headers = not legacy, protocol_version = true,
    inbound = not legacy, session_id = true, session_lost = not legacy, flush = true,
  })
  -- OAuth (auth_provider, or the static oauth fields): lua/mcp/auth/transport.lua, a layer over
  -- the transport object and over every exchange of its handle.
  if cfg.auth_provider ~= nil or cfg.oauth ~= nil then
    local weak = setmetatable({ box = box }, { __mode = "v" })
    local a = require("mcp.auth.transport").new(cfg, function(tok)
      local b = weak.box
      if b then b:set_header("Authorization", "Bearer " .. tok) end
    end)
    if a then
      st.auth = a
      box:set_request_hooks(a:request_hooks(function(hold, again, memo, err)
        local b = weak.box
        if err ~= nil then st.auth_error = err end
        if b then b:settle(hold, again, memo, err) end
      end))
      t = require("mcp.auth.transport").layer(t, a)
    end
  end
  return t
end

--- Streamable HTTP transport (NewHTTPTransport). cfg: url, headers, redirect, timeout_ms,
--- connect_timeout_ms, idle_timeout_ms, oauth (OAuthConfig fields), auth_provider (mcp.auth), bearer_token, initial_session_id,
--- on_session_id_change(id), on_session_expired(id), terminate_session_on_close (default true),
--- on_error(err), max_message_size, max_reconnects, max_connections (request POSTs at once, default 64;
--- more wait in order), max_reply_connections (reply and notification POSTs at once, default 8),
--- max_queued_replies (more of them waiting, default 1000; later ones are dropped), curl_options {cainfo=, sslcert=, proxy=,
--- unix_socket_path=, ...}.
---@param cfg table
---@return mcp.HttpTransport
function M.http_transport(cfg)
  return make(cfg, false)
end

--- Legacy HTTP+SSE transport (NewSSETransport); the same cfg fields where they apply.
---@param cfg table
---@return mcp.HttpTransport
function M.sse_transport(cfg)
  return make(cfg, true)
end

--- max_reconnects when unset: the C transport's (MCP_HTTP_DEFAULT_MAX_RECONNECTS in
--- src/transports/http_transport.h), read from the core, never set here.
M.DEFAULT_MAX_RECONNECTS = core.http_default_max_reconnects

--- The max_reconnects of an HTTP or SSE transport (as the C transport keeps to it: asked of the
--- transport), and DEFAULT_MAX_RECONNECTS for another transport.
---@param t any the transport object (or its handle)
---@return integer
function M.max_reconnects(t)
  local box = type(t) == "table" and t.handle or t
  if states[box] then return box:max_reconnects() end
  return M.DEFAULT_MAX_RECONNECTS
end

--- "http" for a streamable HTTP transport, "sse" for a legacy HTTP+SSE one, else nil.
---@param t any the transport object (or its handle)
---@return string|nil
function M.kind(t)
  local st = states[type(t) == "table" and t.handle or t]
  if st == nil then return nil end
  return st.legacy and "sse" or "http"
end

-- The error of a legacy stream that failed before its endpoint event; a 401/403 on its GET
-- carries status_code and response_headers (WWW-Authenticate) for the OAuth layer.
local function stream_failed(st)
  if st.auth_error ~= nil and (st.endpoint_status == 401 or st.endpoint_status == 403) then return st.auth_error end
  local e = errors.new(nil, st.endpoint_error or "MCP SSE Transport Error: connection failed", nil,
    { kind = "transport", status_code = st.endpoint_status })
  e.response_headers = st.endpoint_headers
  return e
end

-- A start that ended because the transport was closed meanwhile (Http:close).
local function closed_while_starting()
  return nil, errors.new(nil, "MCP SSE Transport Error: the transport was closed before the endpoint event", nil,
    { kind = "closed" })
end

-- Legacy SSE: wait (bounded) for the endpoint event after start, or until the transport is
-- closed (Http:close wakes the wait: its timer must not outlive the transport). Returns true or
-- nil, err.
wait_ready = function(box, timeout_ms)
  local st = states[box]
  if not st or box:ready() == 1 then return true end
  if st.closed then return closed_while_starting() end
  if box:ready() == -1 then return nil, stream_failed(st) end
  local ok = sched.await(function(cb)
    local timer = core.timer(timeout_ms, function() cb(false) end)
    st.waiters[#st.waiters + 1] = function()
      timer:cancel()
      cb(true)
    end
  end)
  if st.closed then return closed_while_starting() end
  if box:ready() == 1 then return true end
  if not ok then
    return nil, errors.new(nil, "MCP SSE Transport Error: no endpoint event within " .. timeout_ms .. " ms", nil,
      { kind = "timeout" })
  end
  return nil, stream_failed(st)
end

--- Split the opts of create_http_client / create_sse_client into transport fields and client
--- config fields (an unknown key raises at level, as seen from the caller).
local TRANSPORT_KEYS = {
  headers = true, redirect = true, timeout_ms = true, connect_timeout_ms = true, idle_timeout_ms = true,
  oauth = true, bearer_token = true, auth_provider = true, initial_session_id = true, on_session_id_change = true,
  on_session_expired = true, terminate_session_on_close = true, max_message_size = true,
  max_reconnects = true, max_connections = true, max_reply_connections = true, max_queued_replies = true,
  curl_options = true, transport_on_error = true,
}

function M.split_options(url, opts, what, level)
  if opts ~= nil and type(opts) ~= "table" then error((what or "mcp") .. ": opts must be a table", (level or 2) + 1) end
  local known = {}
  for k in pairs(TRANSPORT_KEYS) do known[k] = true end
  for k in pairs(require("mcp.client").CONFIG_FIELDS) do known[k] = true end
  options.check(opts or {}, known, (what or "mcp") .. ": opts", (level or 2) + 1)
  local tcfg, ccfg = { url = url }, {}
  for k, v in pairs(opts or {}) do
    if TRANSPORT_KEYS[k] then tcfg[k] = v else ccfg[k] = v end
  end
  if tcfg.transport_on_error then
    tcfg.on_error, tcfg.transport_on_error = tcfg.transport_on_error, nil
  end
  return tcfg, ccfg
end

return M
