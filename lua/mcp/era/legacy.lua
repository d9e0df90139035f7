--- The legacy era (2024-11-05 .. 2025-11-25): one object per connection, made by Client:connect
--- (and the stand-in of a client that is not connected yet). The initialize handshake and
--- notifications/initialized, the session the transport keeps, the standalone GET stream,
--- logging/setLevel, resources/subscribe and unsubscribe, notifications/roots/list_changed, and
--- the task-augmented tool calls of 2025-11-25. It implements the era interface
--- (lua/mcp/era/init.lua) and reaches the client only through the client's internal interface
--- (docs/ARCHITECTURE.md, The protocol eras).
local core = require("mcp.core")
local errors = require("mcp.errors")
local modern = require("mcp.modern")
local protocol = require("mcp.protocol")
local sched = require("mcp.sched")
local tasks = require("mcp.tasks")

local M = {}

---@class mcp.LegacyEra
local Era = {}
Era.__index = Era

--- A legacy era object.
---@param client mcp.Client
---@param o table client_info ({name=, version=}), connect_timeout_ms (the bound on initialize)
---@return mcp.LegacyEra
function M.new(client, o)
  return setmetatable({
    name = "legacy",
    client = client,
    client_info = o.client_info,
    connect_timeout_ms = o.connect_timeout_ms,
    subscriptions = {}, -- uri -> true: subscribed again on a new session
    renewing = nil, -- while a lost session is initialized again: the calls waiting for it
    known_sid = nil, -- the session the client had (set by Era:start): once the transport drops it
    -- (the server refused it, for this call or another; or the last renewal failed), the next call
    -- makes a new one first
    sessions = nil, -- whether the transport has a session to lose (client:_has_sessions), asked once
  }, Era)
end

--- The ClientCapabilities declared in initialize (roots with listChanged).
---@return table
function Era:capabilities()
  return self.client:_advertised_capabilities({ listChanged = true }, nil)
end

-- 2025-11-25 URLElicitationRequiredError: the user completes the listed URL elicitations, then
-- the request goes again (lua/mcp/url_elicitation.lua), by the same path as any request (through
-- the session: a session lost meanwhile is made again). Its own function: a closure in
-- Era:request would keep LuaJIT from compiling every call's path (UCLO).
local function after_url_elicitation(self, client, method, params, opts, err, roundtrip)
  return require("mcp.url_elicitation").after_required(client, method, err,
    function() return roundtrip(self, client, method, params, opts) end, opts)
end

-- A call started while the session or connection is renewed waits for the renewal (closure kept
-- out of Era:request, as above).
local function await_renewal(self)
  sched.await(function(cb) self.renewing[#self.renewing + 1] = cb end)
end

-- client -> the era whose new connection (renew_connection) is under way. Its client:reconnect()
-- gives the client new era objects (connect's), which must hold a call until it is over too: a
-- call made through one of them would go out on the transport not started yet ("Not connected").
local reconnecting = setmetatable({}, { __mode = "k" })

-- The requests of a connect's own handshake, which a renewal waits for and must not hold.
local HANDSHAKE = { initialize = true, ["server/discover"] = true }

-- The renewal is over: the calls that waited for it go on.
local function end_renewal(self)
  local waiting = self.renewing
  self.renewing = nil
  for _, wake in ipairs(waiting) do wake() end
end

-- A round trip over a transport that has a session (HTTP) or a stream it can lose (legacy SSE):
-- a lost one is made again before the request, or after the server refused it for that reason.
local function session_roundtrip(self, client, method, params, opts)
  if self.renewing and method ~= "initialize" then await_renewal(self) end
  local earlier = reconnecting[client]
  if earlier ~= nil and earlier ~= self and earlier.renewing and not HANDSHAKE[method] then await_renewal(earlier) end
  if method ~= "initialize" and client:_stream_lost() and client:_auto_reinitialize() then
    -- legacy SSE: nothing was sent on the dead stream; a new connection takes the request
    local ok, rerr = self:renew_connection()
    if ok then return client:request(method, params, opts) end
    if rerr then return nil, rerr end -- (the server is still down: the next call tries again)
  end
  local sid = client:_session_id()
  if sid == nil and self.known_sid and method ~= "initialize" and client:_auto_reinitialize() then
    -- sent now, it would go without a session (400 "Mcp-Session-Id header is required")
    self:renew_session(self.known_sid)
    sid = client:_session_id()
  end
  local res, err = client:_roundtrip(method, params, opts)
  -- The server refused the request before any handler ran (an unknown session: the transport
  -- dropped its id); a new session is made once for every call that saw this, then it is sent again.
  if res == nil and sid ~= nil and method ~= "initialize" and (err.status_code == 404 or err.status_code == 400)
      and client:_session_id() ~= sid and client:_auto_reinitialize() then
    if self:renew_session(sid) then res, err = client:_roundtrip(method, params, opts) end
  end
  return res, err
end

-- A plain round trip (a transport without a session: stdio), in session_roundtrip's shape.
local function plain_roundtrip(_, client, method, params, opts)
  return client:_roundtrip(method, params, opts)
end

--- A request: one round trip through the session.
---@param method string
---@param params table|nil
---@param opts table the checked per-call options
---@return any result, mcp.Error|nil err
function Era:request(method, params, opts)
  local client = self.client
  local sessions = self.sessions
  if sessions == nil then
    sessions = client:_has_sessions()
    self.sessions = sessions
  end
  -- A transport with no session (stdio) has nothing to lose: the plain round trip, no checks.
  local roundtrip = (sessions or self.renewing) and session_roundtrip or plain_roundtrip
  local res, err = roundtrip(self, client, method, params, opts)
  if res == nil and err.code == -32042 then
    return after_url_elicitation(self, client, method, params, opts, err, roundtrip)
  end
  return res, err
end

--- A new connection after the legacy SSE stream ended (client:reconnect: a transport from the
--- transport_factory, initialize, a new era object), the subscriptions made again, then the
--- client's on_reconnect. Calls that start meanwhile wait for it. Whether it is connected; when
--- this call's try failed, why (the next call tries again).
---@return boolean ok, mcp.Error|nil err
function Era:renew_connection()
  local client = self.client
  if self.renewing then
    await_renewal(self)
    return client:_connected() and not client:_stream_lost()
  end
  self.renewing = {}
  reconnecting[client] = self
  local subs = client:_lost_subscriptions() or self.subscriptions -- (a failed try's era had them)
  local ok, err = client:reconnect()
  if reconnecting[client] == self then reconnecting[client] = nil end
  end_renewal(self)
  if not ok then
    -- the next call tries again; unless the client's user closed it meanwhile (which failed the
    -- connect): it stays closed, and the calls waiting fail as closed, with nothing to report
    if not client:_reconnect_failed(subs) then return false end
    local e = errors.new(nil, "the SSE stream closed and a new connection failed: " .. tostring(err and err.message),
      nil, { kind = err and err.kind or "transport", cause = err })
    client:_report(e)
    return false, e
  end
  for uri in pairs(subs) do
    local _, serr = client:subscribe_resource(uri)
    if serr then client:_report(serr) end
  end
  client:_session_renewed(client:initialize_result(), "stream_closed")
  return true
end

-- The legacy SSE stream ended: a new connection by itself after RETRY_FIRST_MS, then 1.5 times
-- longer after each failed try up to RETRY_MAX_MS, so that a client that only listens
-- (subscriptions, list_changed) comes back without a call, as the streamable HTTP GET stream does.
-- A try is a ping, which takes the path of any call (session_roundtrip: renew_connection on the
-- client's era of the moment, a try under way awaited, the ping sent on the new connection); a
-- call meanwhile renews at once the same way. A timer, not a task, waits between tries, and the
-- client is held weakly (nothing here keeps a dropped client alive). As the GET stream's
-- reconnects, the first tries keep the loop alive: the transport's max_reconnects of them
-- (client:_max_reconnects(), default 5), so that mcp.run() or a blocking wait with a task waiting
-- for a notification waits through a server's restart. Once they have all failed, the next ones
-- wait on a weak timer (core.timer's third argument): they go on while the loop is stepped (a
-- host's loop, mcp.run() or a call with work in flight) but no longer hide "nothing in flight"
-- from mcp.run() or a blocking wait, which would otherwise wait for ever while the server stays
-- down. close() (or auto_reinitialize = false) ends them, and so does a try whose login failed.
local RETRY_FIRST_MS, RETRY_MAX_MS = 1000, 30000
-- client -> the token of its current series of tries: { strong = how many of them keep the loop
-- alive, made = how many were scheduled, timer = the wait for the next one }
local tries = setmetatable({}, { __mode = "k" })

-- Whether err (or what caused it) is an OAuth failure: a login denied, timed out or refused.
local function login_failed(err)
  return errors.in_cause_chain(err, function(e) return e.kind == "oauth" end)
end

local function renew_in_background(client, delay, token)
  local weak = setmetatable({ client = client }, { __mode = "v" })
  token.made = token.made + 1
  token.timer = core.timer(delay, function()
    local c = weak.client
    local function wanted() return tries[c] == token and c:_stream_lost() and c:_auto_reinitialize() end
    if c == nil or not wanted() then return end
    sched.spawn_handler(function(e) c:_report(errors.new(nil, tostring(e), nil, { kind = "handler" })) end,
      function()
        if not wanted() then return end
        -- (its error, when the new connection failed, was reported by renew_connection; a try
        -- of the client's own never starts a login: Client:_in_background)
        local _, err = c:_in_background(c.ping, c)
        -- a login that failed (denied, timed out) is not asked again with no one calling: the
        -- next call may (each try's transport is new, with no memory of the denial)
        if wanted() and not login_failed(err) then
          renew_in_background(c, math.min(delay * 1.5, RETRY_MAX_MS), token)
        end
      end)
  end, token.made > token.strong)
end

--- The connection closed (the transport's close event, reason its text): a legacy SSE stream
--- that ended while connected is connected again in the background (renew_in_background).
---@param reason string|nil
function Era:connection_closed(reason)
  local client = self.client
  if reason == client:_stream_closed_reason() and client:_auto_reinitialize() then
    -- a later loss starts a series of its own (its first tries keep the loop alive again); this
    -- one's tries then stop
    local token = { strong = client:_max_reconnects(), made = 0 }
    tries[client] = token
    renew_in_background(client, RETRY_FIRST_MS, token)
  end
end

-- The server lost a session that had worked: a new session at once, in a task, whether or not a
-- call saw the refusal (a client that only listens makes none: its GET stream, reconnecting, or a
-- notification met it), so the GET stream, the subscriptions and their notifications come back; a
-- call that saw it waits for this renewal (renew_session). The transport's state reaches the era
-- weakly (it must not keep the client alive).
local function watch_session_lost(self)
  local weak = setmetatable({ era = self }, { __mode = "v" })
  self.client:_watch_session_lost(function()
    local era = weak.era
    if era == nil or era.renewing or era.known_sid == nil then return end
    local client, lost = era.client, era.known_sid
    if client:_session_id() ~= nil then return end
    if not client:_auto_reinitialize() then return client:_session_left_lost() end
    sched.spawn_handler(function(e) client:_report(errors.new(nil, tostring(e), nil, { kind = "handler" })) end,
      function()
        if client:_auto_reinitialize() then client:_in_background(era.renew_session, era, lost) end
      end)
  end)
end

--- A new session after the server lost lost_sid (it restarted, or expired it): initialize again
--- (capabilities refreshed), notifications/initialized, the GET stream, the subscriptions, then
--- the client's on_reconnect. Calls that start meanwhile wait for it. Whether there is a session.
---@param lost_sid string
---@return boolean
function Era:renew_session(lost_sid)
  local client = self.client
  if self.renewing then
    await_renewal(self)
    return client:_session_id() ~= nil
  end
  local now = client:_session_id()
  if now ~= nil then return now ~= lost_sid end -- another call already made a new one
  self.renewing = {}
  local init, err = self:initialize(client:protocol_version() or protocol.PROTOCOL_VERSION)
  local ok = init ~= nil
  if ok then ok, err = self:start(init, false) end
  end_renewal(self)
  if not ok then
    self.known_sid = lost_sid -- the next call tries again
    client:_report(errors.new(nil, "the server lost the session and a new one failed: " .. tostring(err and err.message),
      nil, { kind = err and err.kind or "transport", cause = err }))
    return false
  end
  for uri in pairs(self.subscriptions) do
    local _, serr = client:_roundtrip("resources/subscribe", { uri = uri }, {})
    if serr then client:_report(serr) end
  end
  client:_session_renewed(init, "session_expired")
  return true
end

---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Era:ping(opts)
  return self.client:request("ping", nil, opts)
end

---@param level string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Era:set_logging_level(level, opts)
  return self.client:request("logging/setLevel", { level = level }, opts)
end

---@param uri string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Era:subscribe(uri, opts)
  local res, err = self.client:request("resources/subscribe", { uri = uri }, opts)
  if res ~= nil then self.subscriptions[uri] = true end
  return res, err
end

---@param uri string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Era:unsubscribe(uri, opts)
  self.subscriptions[uri] = nil
  return self.client:request("resources/unsubscribe", { uri = uri }, opts)
end

--- Every notification is delivered (the session carries only this connection's).
---@return boolean
function Era:on_notification(method, params)
  return true
end

--- Notifications arrive without asking: nothing to do.
function Era:handlers_changed() end

--- The roots changed: tell a connected server (notifications/roots/list_changed).
---@return boolean|nil ok, mcp.Error|nil err
function Era:roots_changed()
  if not self.client:_connected() then return true end
  return self.client:notify("notifications/roots/list_changed")
end

-- A 2025-11-25 CreateTaskResult ({task = Task}, no content).
local function is_create_task_result(res)
  return type(res) == "table" and res.content == nil and type(res.task) == "table"
end

--- Whether a result of method is a task that call_tool follows (its progress token stays valid):
--- a tools/call sent with opts.task answered with a CreateTaskResult.
---@param method string
---@param res any
---@param opts table
---@return boolean
function Era:is_task_result(method, res, opts)
  return method == "tools/call" and opts.task ~= nil and is_create_task_result(res)
end

--- A tools/call's params: with a task ({ttl = ms}), ask the server to run the call as a task.
---@param params table
---@param task table|nil
---@return table
function Era:tool_call_params(params, task)
  if task ~= nil then params.task = task end
  return params
end

--- A tools/call's result (a table): a CreateTaskResult is followed to the tool's result
--- (tasks.lua); any other comes back as it is.
---@param res table
---@param opts table
---@return table|nil result, mcp.Error|nil err
function Era:tool_result(res, opts)
  -- is_create_task_result, on a table, with no call (every tools/call's path)
  if res.content ~= nil or type(res.task) ~= "table" then return res end
  return tasks.await_legacy(self.client, "tools/call", res, opts)
end

--- A tools/list page, as the server sent it.
---@param res table
---@param first boolean
---@return table
function Era:tools_page(res, first)
  return res
end

--- The server's tasks (tasks/list).
---@param opts table|nil
---@return table[]|nil tasks, mcp.Error|nil err
function Era:list_tasks(opts)
  local res, err = self.client:request("tasks/list", nil, opts)
  if res == nil then return nil, err end
  if type(res) ~= "table" or type(res.tasks) ~= "table" then
    return nil, errors.new(nil, "invalid tasks/list result: missing 'tasks'", res, { kind = "protocol", method = "tasks/list" })
  end
  return res.tasks
end

-- ---- lifecycle ---------------------------------------------------------------------------------

--- The initialize handshake (or, with reattach, the InitializeResult of a session that is already
--- initialized): the server's InitializeResult, or nil, err.
---@param version string the protocol version to ask for
---@param reattach table|nil
---@return table|nil init, mcp.Error|nil err
function Era:initialize(version, reattach)
  local res, err = reattach, nil
  if reattach == nil then
    res, err = self.client:request("initialize", {
      protocolVersion = version,
      capabilities = self:capabilities(),
      clientInfo = { name = self.client_info.name, version = self.client_info.version },
    }, self.connect_timeout_ms and { timeout_ms = self.connect_timeout_ms } or nil)
  end
  if res ~= nil and (type(res) ~= "table" or type(res.protocolVersion) ~= "string") then
    return nil, errors.new(nil, "invalid initialize result", res, { kind = "protocol", method = "initialize" })
  end
  if res ~= nil and (not protocol.is_supported(res.protocolVersion) or modern.is_modern_version(res.protocolVersion)) then
    return nil, errors.new(nil, "server's protocol version is not supported: " .. res.protocolVersion, res,
      { kind = "protocol", method = "initialize" })
  end
  return res, err
end

--- The connection is up: the transport takes the version, the server hears
--- notifications/initialized (not on a reattach), and streamable HTTP opens its GET stream for
--- server-initiated messages (a 405 is fine).
---@param init table the InitializeResult
---@param reattached boolean
---@return boolean|nil ok, mcp.Error|nil err
function Era:start(init, reattached)
  local client = self.client
  -- the session this connection starts with (initialized or reattached): once the transport
  -- drops it, the next call makes a new one (session_request)
  self.known_sid = client:_session_id()
  client:_set_transport_version(init.protocolVersion)
  if not reattached then
    local ok, err = client:notify("notifications/initialized")
    if not ok then return nil, err end
    -- a blocking connect returns once it went out (over HTTP a POST of the loop's next steps)
    client:_flush(self.connect_timeout_ms or client:_timeout_ms({}))
  end
  client:_open_inbound()
  watch_session_lost(self)
  return true
end

--- No result cache in this era.
function Era:clear_cache() end

--- The client was closed (by its user: not by a new connection of its own, renew_connection's
--- reconnect): its background tries stop, and the wait for the next one ends now (a timer that
--- keeps the loop alive would hold mcp.run() or a blocking wait until it fired, for nothing). A
--- close of the user's during a renewal, which this cannot tell from the reconnect's, fails the
--- try's new connection, and the client, which knows its user closed it, stays closed
--- (client:_reconnect_failed): no call or try finds it lost, so none follows.
function Era:close()
  local client = self.client
  local token = tries[client]
  if token ~= nil and reconnecting[client] == nil then
    tries[client] = nil
    token.timer:cancel()
  end
end

return M
