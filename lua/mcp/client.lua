--- The MCP client: the reference's MCPClient in Lua. Requests go through the C session; this
--- layer builds params, checks results, and runs server requests and notifications as tasks.
local core = require("mcp.core")
local contract = require("mcp.transport")
local eras = require("mcp.era")
local errors = require("mcp.errors")
local handlers = require("mcp.handlers")
local json = require("mcp.json")
local options = require("mcp.util.options")
local protocol = require("mcp.protocol")
local sched = require("mcp.sched")
local tasks = require("mcp.tasks")
local term = require("mcp.util.term")

local M = {}

M.VERSION = "0.1.0"
M.DEFAULT_CLIENT_NAME = "lua-mcp"

---@class mcp.Client
local Client = {}
Client.__index = Client
M.Client = Client

local function new_error(code, message, data, opts)
  return errors.new(code, message, data, opts)
end

local function shallow_copy(t)
  local c = {}
  if t then
    for k, v in pairs(t) do c[k] = v end
  end
  return setmetatable(c, getmetatable(t))
end

-- ---- configuration ---------------------------------------------------------------------------

--- Client config keys and their types (MCPClientConfig in snake_case). Another key raises.
local CONFIG_FIELDS = {
  client_name = "string", name = "string", client_version = "string", capabilities = "table",
  request_timeout_ms = "number", enable_logging = "boolean", max_retries = "number",
  on_error = "function", on_elicitation_request = "function", on_sampling_request = "function",
  on_roots_list = "function", roots = "table", protocol_version_discovery = "boolean",
  on_close = "function", protocol_version = "string", initialize_result = "table",
  on_message = "function", connect_timeout_ms = "number", transport_factory = "function",
  max_pages = "number",
  max_input_rounds = "number", protocol_discovery_timeout_ms = "number",
  protocol_discovery_startup_ms = "number",
  -- 2025-11-25: what the handlers can do (elicitation.url, sampling.tools capabilities)
  elicitation_url = "boolean", sampling_tools = "boolean",
  -- trace context (SEP-414) and spans: lua/mcp/span.lua
  trace_context = "any", on_span_start = "function", on_span_end = "function",
  auto_reinitialize = "boolean", on_reconnect = "function", on_session_lost = "function",
  key_order = "boolean", -- every decoded object keeps the server's key order (__keyorder)
}
M.CONFIG_FIELDS = CONFIG_FIELDS

--- Per-call option keys (the opts of request, notify, call_tool, list_*, ...). Another key raises.
local CALL_OPTIONS = {
  timeout_ms = "number", on_progress = "function", cancel = "table", meta = "table", headers = "table",
  reset_timeout_on_progress = "boolean", max_total_timeout_ms = "number", -- lua/mcp/deadline.lua
  max_pages = "number", -- list_all_*: a bound on the pages followed
  cache = "boolean", -- false: bypass the 2026-07-28 result cache (lua/mcp/cache.lua)
  task = "table", -- call_tool, legacy era: run the call as a 2025-11-25 task (lua/mcp/tasks.lua)
  validate_output = "boolean", -- call_tool: check structuredContent against the tool's outputSchema
}
M.CALL_OPTIONS = CALL_OPTIONS

--- Pages a list_all_* call reads at most before it fails (a server can hand out new cursors forever).
M.DEFAULT_MAX_PAGES = 1000

local function normalize_config(config)
  config = config or {}
  if type(config) ~= "table" then error("mcp: client config must be a table", 3) end
  options.check(config, CONFIG_FIELDS, "mcp.new_client: config", 3)
  for k, want in pairs(CONFIG_FIELDS) do
    local v = config[k]
    if v ~= nil and want ~= "any" and type(v) ~= want then
      error(("mcp: client config '%s' must be a %s, got %s"):format(k, want, type(v)), 3)
    end
  end
  if config.max_pages ~= nil and not (config.max_pages >= 1) then
    error("mcp: client config 'max_pages' must be a positive number", 3)
  end
  local tc = config.trace_context
  if tc ~= nil and type(tc) ~= "table" and type(tc) ~= "function" then
    error("mcp: client config 'trace_context' must be a table or a function, got " .. type(tc), 3)
  end
  local max_retries = config.max_retries or 0
  if max_retries ~= math.floor(max_retries) then
    error("mcp: client config 'max_retries' must be an integer", 3)
  end
  return {
    client_name = config.client_name or config.name or M.DEFAULT_CLIENT_NAME,
    client_version = config.client_version or M.VERSION,
    capabilities = config.capabilities,
    request_timeout_ms = config.request_timeout_ms or protocol.DEFAULT_REQUEST_TIMEOUT_MS,
    enable_logging = config.enable_logging or false,
    max_retries = max_retries,
    on_error = config.on_error,
    on_close = config.on_close,
    protocol_version = config.protocol_version,
    initialize_result = config.initialize_result,
    on_message = config.on_message,
    connect_timeout_ms = config.connect_timeout_ms,
    transport_factory = config.transport_factory,
    max_pages = config.max_pages or M.DEFAULT_MAX_PAGES,
    protocol_version_discovery = config.protocol_version_discovery ~= false,
    max_input_rounds = config.max_input_rounds or protocol.DEFAULT_MAX_INPUT_ROUNDS,
    protocol_discovery_timeout_ms = config.protocol_discovery_timeout_ms
      or protocol.DEFAULT_PROTOCOL_DISCOVERY_TIMEOUT_MS,
    protocol_discovery_startup_ms = config.protocol_discovery_startup_ms
      or protocol.DEFAULT_PROTOCOL_DISCOVERY_STARTUP_MS,
    trace_context = config.trace_context,
    on_span_start = config.on_span_start,
    on_span_end = config.on_span_end,
    auto_reinitialize = config.auto_reinitialize ~= false,
    on_reconnect = config.on_reconnect,
    on_session_lost = config.on_session_lost,
    key_order = config.key_order or false,
  }
end

--- Create a client without connecting (the reference's NewMCPClient). Call client:connect().
---@param transport userdata|table a transport: mcp.stdio_transport, mcp.http_transport,
--- mcp.sse_transport, or any object that implements the contract (docs/API.md, Transports);
--- connect() checks it
---@param config mcp.ClientConfig|nil MCPClientConfig fields in snake_case
---@return mcp.Client
function M.new(transport, config)
  if transport == nil or (type(transport) ~= "userdata" and type(transport) ~= "table") then
    error("mcp.new_client: transport expected", 2)
  end
  local cfg = normalize_config(config)
  local self = setmetatable({
    transport = transport,
    config = cfg,
    state = "new", -- new | connecting | connected | closed
    session = nil,
    handlers = {
      elicitation = config and config.on_elicitation_request,
      sampling = config and config.on_sampling_request,
      roots = config and config.on_roots_list,
    },
    -- what the handlers can do beyond the 2025-06-18 basics (declared as capabilities)
    handler_caps = {
      elicitation_url = config ~= nil and config.elicitation_url == true,
      sampling_tools = config ~= nil and config.sampling_tools == true,
    },
    roots = config and config.roots,
    notification_handlers = {},
    progress = {},
    init_result = nil,
    era = nil, -- the protocol era object (lua/mcp/era/), decided by connect; legacy until then
    tasks = {}, -- taskId -> the task's last known fields (tasks.lua)
    task_progress = {}, -- taskId -> the progress token of the call that created it, while followed
  }, Client)
  self.era = eras.legacy(self, self:_era_settings())
  return self
end

-- What an era object is made with (lua/mcp/era/init.lua): the client's settings it needs.
-- The bound on initialize: connect_timeout_ms, else for the first connect of a spawned (stdio)
-- server at least DEFAULT_STDIO_CONNECT_TIMEOUT_MS, else nil (request_timeout_ms).
function Client:_connect_timeout()
  local cfg = self.config
  if cfg.connect_timeout_ms then return cfg.connect_timeout_ms end
  if not self.connected_once and self:_can_respawn() then
    return math.max(protocol.DEFAULT_STDIO_CONNECT_TIMEOUT_MS, cfg.request_timeout_ms)
  end
  return nil
end

function Client:_era_settings()
  local cfg = self.config
  return {
    client_info = { name = cfg.client_name, version = cfg.client_version },
    connect_timeout_ms = self:_connect_timeout(),
    max_input_rounds = cfg.max_input_rounds,
    tool_headers = self.tool_headers,
  }
end

-- ---- reporting -------------------------------------------------------------------------------

--- Non-fatal diagnostics go to config.on_error (in a task of its own), else to stderr when
--- enable_logging is set, escaped (mcp.util.term): the text may be the server's, whose terminal
--- controls must not reach the host's terminal.
function Client:_report(err)
  local on_error = self.config.on_error
  if on_error then
    sched.spawn_handler(function(e)
      io.stderr:write("mcp: on_error handler failed: ", term.escape(e), "\n")
    end, on_error, err)
  elseif self.config.enable_logging then
    io.stderr:write("mcp: ", term.escape(err), "\n")
  end
end

-- ---- the session's event handler -------------------------------------------------------------

-- A server request: answered by the handler of its method (lua/mcp/handlers/init.lua, the table
-- both eras use), in a task of its own; -32601 when the client has none.
function Client:_on_request(id, method, params)
  local session = self.session
  local h = handlers.SERVER_REQUESTS[method]
  if h == nil or (h.enabled and not h.enabled(self)) then
    session:respond_error(id, errors.ERROR_CODES.METHOD_NOT_FOUND, "Method not found: " .. method)
    return
  end
  local answered = false
  local function fail(err)
    if answered then return end
    answered = true
    local e = errors.is_error(err) and err
      or new_error(errors.ERROR_CODES.INTERNAL_ERROR, tostring(err), nil, { kind = "handler", method = method })
    self:_report(e)
    if self.session == session then
      -- A code the error carries (the server's, or -32602 for malformed params) goes back as is.
      session:respond_error(id, e.code or errors.ERROR_CODES.INTERNAL_ERROR, e.message, e.data)
    end
  end
  sched.spawn_handler(function(msg)
    fail(new_error(errors.ERROR_CODES.INTERNAL_ERROR, "the " .. method .. " handler raised: " .. tostring(msg),
      nil, { kind = "handler", method = method }))
  end, function()
    local result, err = h.run(self, type(params) == "table" and params or {})
    if result == nil then
      fail(err or new_error(errors.ERROR_CODES.INTERNAL_ERROR, "the " .. method .. " handler returned nothing",
        nil, { kind = "handler", method = method }))
      return
    end
    answered = true
    if self.session == session then session:respond(id, result) end
  end)
end

function Client:_on_notification(method, params)
  params = type(params) == "table" and params or {}
  if not self.era:on_notification(method, params) then return end
  if method == "notifications/elicitation/complete" then
    require("mcp.url_elicitation").completed(self, params) -- a -32042 retry may wait for it
  elseif method == "notifications/tools/list_changed" and self.tool_schemas then
    require("mcp.output_schema").forget(self.tool_schemas) -- validate_output reads the tool list again
  end
  if method == "notifications/progress" then
    local cb = self.progress[params.progressToken]
    if cb then
      sched.spawn_handler(function(e)
        self:_report(new_error(nil, "on_progress raised: " .. tostring(e), nil, { kind = "handler" }))
      end, cb, params)
    end
  end
  local list = self.notification_handlers
  for _, key in ipairs({ method, "*" }) do
    local hs = list[key]
    if hs then
      for i = 1, #hs do
        sched.spawn_handler(function(e)
          self:_report(new_error(nil, "notification handler for " .. method .. " raised: " .. tostring(e),
            nil, { kind = "handler", method = method }))
        end, hs[i], params, method)
      end
    end
  end
end

-- The core's diagnostic kinds, folded into the documented error kinds.
local CORE_ERROR_KINDS = {
  invalid_message = "protocol", protocol = "protocol", message_too_large = "protocol",
  callback = "handler", out_of_memory = "transport", transport = "transport",
}

function Client:_on_event(kind, a, b, c)
  if self.probing and kind ~= "closed" then self.probing:alive() end -- the probe's deadline (mcp.probe)
  if self.config.on_message then require("mcp.trace").incoming(self, kind, a, b, c) end
  if kind == "request" then
    self:_on_request(a, b, c)
  elseif kind == "notification" then
    self:_on_notification(a, b)
  elseif kind == "error" then
    self:_report(new_error(nil, a, nil, { kind = CORE_ERROR_KINDS[b] or "transport" }))
  elseif kind == "closed" then
    self.closed_reason = a
    -- a -32042 retry waiting for a completion stops waiting (lua/mcp/url_elicitation.lua)
    if self.url_elicitations then require("mcp.url_elicitation").closed(self.url_elicitations) end
    if self.config.on_close and not self.probing then
      sched.spawn_handler(function(e) self:_report(new_error(nil, tostring(e), nil, { kind = "handler" })) end,
        self.config.on_close, a)
    end
    self.era:connection_closed(a)
  end
end

-- ---- requests --------------------------------------------------------------------------------

local NO_OPTIONS = {} -- read only: the options of a call that passed none
local deadline = require("mcp.deadline")

local HEADER_NAME = "^[!#$%%&'*+%-.^_`|~%w]+$"

--- Check per-call options (misuse raises at level, as seen from the caller of this function).
local function check_call_options(opts, level)
  if type(opts) ~= "table" then error("mcp: request options must be a table", level + 1) end
  for k, v in pairs(opts) do
    local want = CALL_OPTIONS[k]
    if want == nil then
      options.check({ [k] = true }, CALL_OPTIONS, "mcp: per-call options", level + 1)
    elseif type(v) ~= want then
      error(("mcp: %s must be a %s"):format(tostring(k), want), level + 1)
    end
  end
  deadline.check_options(opts, level + 1)
  local headers = opts.headers
  if headers ~= nil then
    for name, value in pairs(headers) do
      if type(name) ~= "string" or not name:match(HEADER_NAME) then
        error("mcp: per-call option 'headers': invalid header name " .. tostring(name), level + 1)
      end
      if value ~= false and type(value) ~= "string" and type(value) ~= "number" then
        error("mcp: per-call option 'headers': header " .. name .. " must be a string (or false to omit it)", level + 1)
      end
      if type(value) == "string" and value:find("[\r\n%z]") then
        error("mcp: per-call option 'headers': header " .. name .. " contains a line break or NUL", level + 1)
      end
    end
  end
end

-- The send options' headers for the session: the protocol's (era) under the caller's per-call
-- ones, values as strings (or false: send without that header); nil when there are none.
local function send_headers(era_headers, call_headers)
  if call_headers == nil then return era_headers end
  local out = {}
  for k, v in pairs(era_headers or {}) do out[k] = v end
  for k, v in pairs(call_headers) do out[k] = type(v) == "number" and tostring(v) or v end
  return out
end

-- The cancel token's hook for request rid (a function of its own: the closure's upvalues would
-- make start_request end in UCLO, which LuaJIT 2.1's trace compiler cannot compile).
local function attach_cancel(self, session, rid, cancel)
  cancel:_attach(function(reason) session:cancel(rid, reason) end)
end

-- Sends a request for send_attempt (sched.await_call's start: its state comes as arguments, so a
-- call makes no closure here); cb gets the answer, or the send error at once. A request of the
-- client's own work (Client:_in_background, in the calling task) carries the mark "own".
local function start_request(cb, self, session, method, params, timeout, id, headers, dl, cancel)
  local own = self.own_work ~= nil and self:_own_work() and "own" or nil
  local rid, err = session:request(method, params, timeout, cb, id, headers, own)
  if not rid then
    cb(nil, nil, err, nil, self.closed_reason and "closed" or "transport")
    return
  end
  if dl then dl:start(rid) end
  if cancel then attach_cancel(self, session, rid, cancel) end
end

-- Tell the transport (its OAuth layer, which declares the capability) that a call was answered.
local function answered(t)
  local caps = t ~= nil and t.capabilities
  if type(caps) == "table" and caps.answered == true then t:answered() end
end

-- One attempt of one round trip: send the request and wait for its answer.
local function send_attempt(self, session, method, params, opts, headers, timeout)
  local cancel = opts.cancel
  local id
  local on_progress = opts.on_progress
  -- reset_timeout_on_progress / max_total_timeout_ms: the call's timers live in the deadline
  local dl = opts ~= NO_OPTIONS and deadline.new(session, opts, timeout, self) or nil
  if dl then
    on_progress = dl:progress_handler(on_progress)
    timeout = 0
  end
  if on_progress then
    id = session:next_id()
    params = shallow_copy(params)
    local meta = shallow_copy(params._meta)
    meta.progressToken = id
    params._meta = meta
    self.progress[id] = on_progress
  end
  -- (with on_progress, id is already the request's id; without, it is not needed below)
  local res, code, message, data, kind, status, rheaders, rbody, cause =
    sched.await_call(start_request, self, session, method, params, timeout, id, headers, dl, cancel)
  if on_progress then
    -- a tools/call answered with a task that call_tool follows keeps its progress token for the
    -- task's life (tasks.lua releases it); anything else releases it now
    local task = res ~= nil and self.era:is_task_result(method, res, opts) and tasks.task_of(res)
    if task then self.task_progress[task.taskId] = id else self.progress[id] = nil end
  end
  if cancel then cancel:_attach(nil) end
  if dl then kind, message = dl:finish(kind, message) end
  -- (the OAuth layer: the server took the call's authorization, answering with a result or with a
  -- JSON-RPC error in a response that was not refused; a login waited for is not needed)
  if kind == nil or (code ~= nil and cause == nil and (status == nil or status < 400)) then answered(self.transport) end
  if kind ~= nil then
    if cause ~= nil then return nil, cause end -- the transport's own error for it (its auth layer's)
    if kind == "closed" and self.closed_reason and not message:find(self.closed_reason, 1, true) then
      message = message .. ": " .. self.closed_reason
    end
    local e = new_error(code, message, data, { kind = kind, method = method, status_code = status })
    e.response_headers = rheaders
    e.response_body = rbody
    return nil, e
  end
  return res
end

-- One round trip: send the request and wait for its answer (headers: this request's HTTP
-- headers, the modern era's Mcp-Method, Mcp-Name and Mcp-Param-*, under the per-call ones).
-- (Authorization is the transport's: it re-authorizes a refused exchange and sends it again.)
function Client:_roundtrip(method, params, opts, headers)
  local session = self.session
  if session == nil or self.state == "closed" then
    return nil, new_error(nil, self.state == "closed" and "the client is closed" or "the client is not connected",
      nil, { kind = "closed", method = method })
  end
  local timeout = opts.timeout_ms or self.config.request_timeout_ms
  local cancel = opts.cancel
  if cancel and cancel.cancelled then
    return nil, new_error(nil, "request cancelled: " .. tostring(cancel.reason), nil,
      { kind = "cancelled", method = method })
  end
  if opts.headers ~= nil then headers = send_headers(headers, opts.headers) end
  return send_attempt(self, session, method, params, opts, headers, timeout)
end

-- SEP-414: traceparent/tracestate in _meta, the request as a span (lua/mcp/span.lua). Its own
-- function: a closure in Client:request would keep LuaJIT from compiling every call's path (UCLO).
local function span_request(self, method, params, opts)
  return require("mcp.span").request(self, method, params,
    function(p) return self.era:request(method, p, opts) end)
end

--- Send a raw request and wait for its result. In the 2026-07-28 era the request carries the
--- per-request `_meta`, and a tools/call, prompts/get or resources/read the server answers with
--- input_required is fulfilled and sent again until it completes (the caller sees one call).
---@param method string
---@param params table|nil
---@param opts mcp.CallOptions|nil timeout_ms (0 = no timeout), on_progress(params), cancel (mcp.cancel_token()),
---  reset_timeout_on_progress, max_total_timeout_ms (lua/mcp/deadline.lua), headers, meta, max_pages
---@return any result, mcp.Error|nil err
function Client:request(method, params, opts)
  if type(method) ~= "string" then error("mcp: method must be a string", 2) end
  if params ~= nil and type(params) ~= "table" then error("mcp: params must be a table", 2) end
  if opts == nil then
    opts = NO_OPTIONS
  elseif opts ~= NO_OPTIONS then
    check_call_options(opts, 2)
  end
  local cfg = self.config
  if cfg.trace_context or cfg.on_span_start or cfg.on_span_end then return span_request(self, method, params, opts) end
  return self.era:request(method, params, opts)
end

--- Send a notification.
---@param method string
---@param params table|nil
---@param opts table|nil headers
---@return boolean|nil ok, mcp.Error|nil err
function Client:notify(method, params, opts)
  if type(method) ~= "string" then error("mcp: method must be a string", 2) end
  if opts ~= nil then check_call_options(opts, 2) end
  if self.session == nil or self.state == "closed" then
    return nil, new_error(nil, self.state == "closed" and "the client is closed" or "the client is not connected",
      nil, { kind = "closed", method = method })
  end
  local ok, err = self.session:notify(method, params, send_headers(nil, opts and opts.headers))
  if not ok then
    return nil, new_error(nil, err, nil, { kind = self.closed_reason and "closed" or "transport", method = method })
  end
  return true
end

local function expect_table(res, field, method)
  if type(res) ~= "table" or (field and type(res[field]) ~= "table") then
    return nil, new_error(nil, "invalid " .. method .. " result" .. (field and (": missing '" .. field .. "'") or ""),
      res, { kind = "protocol", method = method })
  end
  return res
end

-- ---- lifecycle -------------------------------------------------------------------------------

-- mcp.skills.EXTENSION, named here so that declaring it does not load lua/mcp/skills/.
local SKILLS_EXTENSION = "io.modelcontextprotocol/skills"

--- The ClientCapabilities this client declares, for the era object to send (in initialize, or in
--- every modern request): the config's, plus those of the registered handlers (roots: the era's
--- roots capability, made fresh for each call) and the extensions this client implements (the
--- era's extra ones: extra_extensions, ids).
---@param roots table the roots capability when roots are served
---@param extra_extensions string[]|nil
---@return table
function Client:_advertised_capabilities(roots, extra_extensions)
  local caps = shallow_copy(self.config.capabilities or {})
  setmetatable(caps, core.object_mt)
  if self.handlers.elicitation and caps.elicitation == nil then
    caps.elicitation = json.object({ form = json.object() })
    if self.handler_caps.elicitation_url then caps.elicitation.url = json.object() end
  end
  if (self.handlers.roots or self.roots) and caps.roots == nil then
    caps.roots = roots
  end
  if self.handlers.sampling and caps.sampling == nil then
    caps.sampling = json.object()
    if self.handler_caps.sampling_tools then caps.sampling.tools = json.object() end
  end
  -- Extensions this client implements (SEP-2133: ClientCapabilities.extensions, id -> settings;
  -- a value the config gives for an id is sent instead).
  local ext = json.object(shallow_copy(type(caps.extensions) == "table" and caps.extensions or nil))
  -- skills (SEP-2640, lua/mcp/skills/): no client settings are defined, so an empty object
  if ext[SKILLS_EXTENSION] == nil then ext[SKILLS_EXTENSION] = json.object() end
  for _, id in ipairs(extra_extensions or {}) do
    if ext[id] == nil then ext[id] = json.object() end
  end
  caps.extensions = ext
  return caps
end

-- Whether the transport declares an optional capability in t.capabilities (docs/API.md,
-- Transports): what it supports (protocol_discovery, tool_parameter_headers) and which optional
-- methods it offers (protocol_version, inbound, respawn, session_id, authorizing, answered). The client
-- calls no optional method a transport does not declare.
local function capable(t, name)
  local caps = t.capabilities
  return type(caps) == "table" and caps[name] == true
end

-- Attach the transport to a new session and start it under the contract (contract.start
-- closes a transport that fails or breaks the contract). The handler reaches the client
-- weakly: a dropped client stays collectable (its session's finalizer then closes the
-- transport, which stops the server). A session the client replaced (a server restarted after
-- the discovery probe) is not heard any more.
function Client:_start_transport()
  local weak = setmetatable({ client = self }, { __mode = "v" })
  local gen = (self.session_gen or 0) + 1
  self.session_gen = gen
  local session, events = contract.attach(self.transport, function(kind, a, b, c)
    local client = weak.client
    if client and client.session_gen == gen then client:_on_event(kind, a, b, c) end
  end)
  if not session then
    self.state = "new"
    return nil, events
  end
  self.session = session
  if self.config.key_order then session:key_order(true) end
  self.session_traced = false
  if self.config.on_message then
    self.session = require("mcp.trace").wrap(self, self.session)
    self.session_traced = true
  end
  -- The transport may wait until it can carry messages (legacy SSE: the endpoint event).
  local ok, err = contract.start(self.transport, events,
    { timeout_ms = self:_connect_timeout() or self.config.request_timeout_ms, own = self:_own_work() })
  if not ok then
    self.state = "closed"
    self.closed_reason = err.message
    session:close(err.message)
    return nil, err
  end
  return true
end

-- The transport's protocol version (sent as MCP-Protocol-Version on HTTP), when it takes one.
function Client:_set_transport_version(v)
  local t = self.transport
  if capable(t, "protocol_version") then t:set_protocol_version(v) end
end

-- A stdio server that died or closed on the probe: start it again (once) for the legacy era.
function Client:_restart_after_probe(cause)
  local fresh = self.transport:respawn() -- optional capability: a new transport for the same server
  self.session:close("the server closed on the server/discover probe")
  self.session, self.closed_reason = nil, nil
  self.transport = fresh
  local ok, err = self:_start_transport()
  if not ok then return nil, err end
  self:_report(new_error(nil, "the server closed on the server/discover probe (" .. tostring(cause.message)
    .. "); restarted it once and fell back to initialize", nil, { kind = "transport", method = "server/discover" }))
  return true
end

-- What connect needs before it starts anything (lua/mcp/era/init.lua's decide takes it), or nil,
-- err (kind "config").
function Client:_connect_settings()
  local cfg = self.config
  if cfg.max_retries < 0 then
    return nil, new_error(nil, "maxRetries must be >= 0", nil, { kind = "config" })
  end
  local want = cfg.protocol_version
  local version, verr = protocol.requestable(want)
  if not version then
    return nil, new_error(nil, verr, want, { kind = "config" })
  end
  local reattach = cfg.initialize_result
  if reattach ~= nil and (type(reattach.protocolVersion) ~= "string"
      or not protocol.is_supported(reattach.protocolVersion)) then
    return nil, new_error(nil, "initialize_result needs a supported protocolVersion", reattach, { kind = "config" })
  end
  -- Optional capabilities (the reference's ProtocolVersionDiscoveryTransport and
  -- MCPToolParameterHeadersTransport): asked once per connection.
  local discovery = capable(self.transport, "protocol_discovery")
  self.tool_headers = capable(self.transport, "tool_parameter_headers")
  local o = self:_era_settings()
  o.want, o.version, o.reattach = want, version, reattach
  o.discovery = cfg.protocol_version_discovery and discovery
  o.discovery_timeout_ms = cfg.protocol_discovery_timeout_ms
  o.discovery_startup_ms = cfg.protocol_discovery_startup_ms
  return o
end

-- End the connection (idempotent): the era ends, the session and the transport close. Both the
-- user's close() and the client's own ends of a connection (a connect that failed, reconnect
-- starting over: a lost legacy SSE stream's new connection, renew_connection, is one) come here;
-- only close() marks the client closed by its user.
local function end_connection(self)
  self.stream_lost_again = nil -- (a lost SSE connection is not tried again after a close)
  if self.state == "closed" and self.transport_closed then return end
  self.state = "closed"
  self.transport_closed = true
  self.era:close()
  if self.session then self.session:close("the client was closed") end
  contract.close(self.transport)
end

--- Start the transport and decide the protocol era: the server/discover probe (stdio and
--- streamable HTTP, unless protocol_version_discovery is false or a legacy protocol_version was
--- asked for), then either the stateless 2026-07-28 lifecycle or the initialize handshake.
---@return boolean|nil ok, mcp.Error|nil err
function Client:connect()
  if self.state == "connected" then
    if self.session:is_open() then return true end
    return nil, new_error(nil, "the connection is closed" .. (self.closed_reason and (": " .. self.closed_reason) or ""),
      nil, { kind = "closed" })
  end
  if self.state == "closed" then
    return nil, new_error(nil, "the client is closed", nil, { kind = "closed" })
  end
  local o, cerr = self:_connect_settings()
  if not o then return nil, cerr end
  self.era:close()
  self.era = eras.legacy(self, o)
  self.state = "connecting"
  local ok, err = self:_start_transport()
  if not ok then return nil, err end
  local era, init = eras.decide(self, o)
  if era == nil then
    end_connection(self)
    return nil, init
  end
  self.era, self.init_result, self.state = era, init, "connected"
  ok, err = era:start(init, o.reattach ~= nil)
  if not ok then
    end_connection(self)
    return nil, err
  end
  self.connected_once = true
  return true
end

-- ---- the client's internal interface (docs/ARCHITECTURE.md, The protocol eras) --------------
-- What the era objects (lua/mcp/era/), listen.lua and tasks.lua may use of the client, besides
-- its public methods, _roundtrip, _report, _advertised_capabilities and _restart_after_probe.

-- The era that answers the client's calls from now on; probing: the server/discover probe's
-- watch (mcp.probe) while the era is the probe's (a close meanwhile is not the connection's,
-- on_close is not called; every event is a sign of the server's life), else nil.
function Client:_use_era(era, probing)
  self.era, self.probing = era, probing
end

-- Whether the transport can make a new transport for the same server (a stdio server closed on
-- the probe is started again).
function Client:_can_respawn()
  return capable(self.transport, "respawn")
end

-- The transport's authorizing() (its OAuth layer: a login in progress, when the last ended) as
-- a function, or nil for a transport without one (the probe's deadline leaves logins out).
function Client:_authorizing()
  local t = self.transport
  if t == nil or not capable(t, "authorizing") then return nil end
  return function() return t:authorizing() end
end

-- On the blocking path (outside a task and a host's loop), wait up to ms until what was sent has
-- gone out, on a transport that can tell (flush: HTTP's notifications are POSTs the loop runs);
-- elsewhere it goes out on the loop's next steps.
function Client:_flush(ms)
  local t = self.transport
  if capable(t, "flush") and not sched.in_host_loop() then t:flush(ms) end
end

-- Streamable HTTP: the standalone GET stream for server-initiated messages (405 is fine).
function Client:_open_inbound()
  local t = self.transport
  if capable(t, "inbound") then t:open_inbound() end
end

-- Whether the transport has a session id or a stream it can lose (HTTP, legacy SSE; not stdio):
-- it declares session_id.
function Client:_has_sessions()
  return capable(self.transport, "session_id")
end

-- The transport's session id (streamable HTTP), when it has one and says so (session_id()); from
-- initialize's answer on (the era keeps it to know a session was lost).
function Client:_session_id()
  local t = self.transport
  local state = self.state
  if (state ~= "connected" and state ~= "connecting") or not capable(t, "session_id") then return nil end
  return t:session_id()
end

local STREAM_CLOSED = "the SSE stream closed" -- (the legacy SSE transport's close reason)

local MAIN = {} -- the key of the code outside any task (a blocking call) in Client.own_work

-- fn(...) as the client's own work, which no call asked for (a reconnection, a new session): the
-- requests it sends, in this task, on this transport or on a new one made meanwhile (reconnect),
-- and the start of that one, carry the mark "own" (session:request's background, the start's
-- own), so they may refresh a token but never start a login (lua/mcp/auth/transport.lua); the
-- next call does. The mark is the task's, not a time window: a user's call made meanwhile (in
-- its own task, also one that waited for this work) is never the client's own, and two of these
-- at once (or one inside another) each keep theirs. Returns fn's results.
function Client:_in_background(fn, ...)
  local key = sched.current() or MAIN
  local marks = self.own_work
  if marks == nil then
    marks = setmetatable({}, { __mode = "k" })
    self.own_work = marks
  end
  marks[key] = (marks[key] or 0) + 1
  local ok, a, b = sched.pcall(fn, ...)
  local n = marks[key] - 1
  marks[key] = n > 0 and n or nil
  if not ok then error(a, 0) end
  return a, b
end

-- Whether the calling task (or blocking code) runs the client's own work (_in_background).
function Client:_own_work()
  local marks = self.own_work
  return marks ~= nil and marks[sched.current() or MAIN] ~= nil
end

-- The legacy SSE stream ended (the server restarted, or dropped the connection): the connection
-- is gone, and a new one (transport_factory, initialize) is what brings the client back.
function Client:_stream_lost()
  if self.stream_lost_again then return self.state == "closed" end
  return self.state == "connected" and self.closed_reason == STREAM_CLOSED
    and self.session ~= nil and not self.session:is_open()
end

-- The close reason of a legacy SSE stream that ended (see _stream_lost).
function Client:_stream_closed_reason()
  return STREAM_CLOSED
end

-- How many background tries after a legacy SSE stream ended keep the loop alive: the transport's
-- max_reconnects, as for the streamable HTTP GET stream's reconnects (default 5).
function Client:_max_reconnects()
  return require("mcp.transport.http").max_reconnects(self.transport)
end

-- Streamable HTTP: fn() when the server lost a session that had worked, whether or not a call saw
-- the refusal (the transport's watch_session_lost: it declares session_lost); others have none.
function Client:_watch_session_lost(fn)
  local t = self.transport
  if t ~= nil and capable(t, "session_lost") then t:watch_session_lost(fn) end
end

-- The new connection made after the legacy SSE stream ended failed (the server is still down):
-- the client is lost, not closed for good, so that the next call tries again (close() ends that);
-- subs (uri -> true) are the subscriptions to make on the connection that works. Unless its user
-- closed the client while the new connection was being made (it failed for that): then it stays
-- closed, and no call or background try connects it again. Whether the client is lost (false:
-- closed by its user).
---@param subs table
---@return boolean
function Client:_reconnect_failed(subs)
  if self.closed_by_user then return false end
  self.stream_lost_again = subs
  return true
end

-- The subscriptions a failed reconnection left to make (see _reconnect_failed), or nil.
function Client:_lost_subscriptions()
  return self.stream_lost_again
end

-- The server lost a session that had worked and the client makes no new one by itself
-- (auto_reinitialize = false): config on_session_lost(client), in a handler task, when set.
function Client:_session_left_lost()
  local fn = self.config.on_session_lost
  if fn then
    sched.spawn_handler(function(e) self:_report(new_error(nil, tostring(e), nil, { kind = "handler" })) end, fn, self)
  end
end

-- Whether a lost session is initialized again by itself (config auto_reinitialize, default true).
function Client:_auto_reinitialize()
  return self.config.auto_reinitialize and (self.state == "connected" or self.stream_lost_again ~= nil)
end

-- The era initialized a new session (the old one was lost): init is the server's new
-- InitializeResult (its capabilities replace the old ones); then on_reconnect(client, reason).
function Client:_session_renewed(init, reason)
  self.init_result = init
  local fn = self.config.on_reconnect
  if fn then
    sched.spawn_handler(function(e) self:_report(new_error(nil, tostring(e), nil, { kind = "handler" })) end,
      fn, self, reason)
  end
end

-- Connected, with a session to send on.
function Client:_connected()
  return self.state == "connected" and self.session ~= nil
end

-- Send a request that nobody waits for (subscriptions/listen): no timeout; done(result, code,
-- message, data, kind) when it ends. The request id, or nil, err.
-- background: it is the client's own work, which no call asked for (a listen opened again on a
-- timer): the transport treats it as it does a notification (OAuth: it may refresh, never log in).
function Client:_send_detached(method, params, done, headers, background)
  return self.session:request(method, params, 0, done, nil, headers, background == true)
end

-- Cancel a request _send_detached sent (notifications/cancelled, or its HTTP stream closed).
function Client:_cancel_request(id, reason)
  if self.session then self.session:cancel(id, reason) end
end

-- Whether a notification handler (or a "*" one) is registered for method.
function Client:_has_notification_handler(method)
  local hs = self.notification_handlers
  return (hs[method] ~= nil and #hs[method] > 0) or (hs["*"] ~= nil and #hs["*"] > 0)
end

-- A call's timeout: its timeout_ms, else the client's request_timeout_ms.
function Client:_timeout_ms(opts)
  return opts.timeout_ms or self.config.request_timeout_ms
end

-- Merge a task's fields into what the client knows of it (list_tasks in the 2026-07-28 era).
function Client:_remember_task(task)
  local known = self.tasks[task.taskId] or {}
  for k, v in pairs(task) do known[k] = v end
  self.tasks[task.taskId] = known
end

-- The tasks the client knows, by id, as an array.
function Client:_known_tasks()
  local out, ids = json.array(), {}
  for id in pairs(self.tasks) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do out[#out + 1] = self.tasks[id] end
  return out
end

-- The progress token a tools/call that became task task_id kept (send_attempt), handed over once:
-- token, its on_progress; nil when the call had none.
function Client:_claim_task_progress(task_id)
  local token = self.task_progress[task_id]
  if token == nil then return nil end
  self.task_progress[task_id] = nil
  return token, self.progress[token]
end

-- Set (or, with nil, release) the on_progress of a progress token.
function Client:_set_progress(token, fn)
  self.progress[token] = fn
end

-- For the modules beside the eras (url_elicitation.lua, output_schema.lua, span.lua, trace.lua,
-- handlers/, elicitation/): each one's state is its own object the client holds, made when first
-- used, and what they read of the client's goes through these.

-- The state object of module held in self[field], made (module.new()) when first asked for.
local function held(self, field, module)
  local s = self[field]
  if s == nil then
    s = require(module).new()
    self[field] = s
  end
  return s
end

-- The URL elicitations' completions and waiters (url_elicitation.lua).
function Client:_url_elicitations()
  return held(self, "url_elicitations", "mcp.url_elicitation")
end

-- The tools/list pages validate_output checks against (output_schema.lua).
function Client:_tool_schemas()
  return held(self, "tool_schemas", "mcp.output_schema")
end

-- What each server request handler declares beyond the basics (the handler_caps key).
local HANDLER_EXTENSION = { elicitation = "elicitation_url", sampling = "sampling_tools" }

-- The registered handler of kind ("elicitation", "sampling", "roots") or nil, and whether it takes
-- its extension (elicitation: URL mode; sampling: tools).
function Client:_handler(kind)
  local ext = HANDLER_EXTENSION[kind]
  return self.handlers[kind], ext ~= nil and self.handler_caps[ext] == true
end

-- The roots set_roots (or the config) gave, nil when none.
function Client:_roots()
  return self.roots
end

-- A hook of the config (on_span_start, on_span_end, trace_context, on_message), nil when unset.
function Client:_hook(name)
  return self.config[name]
end

--- Close the connection and stop the server (idempotent). Outside a task it waits, bounded,
--- until the transport is done (the server process reaped, the session DELETE sent); inside a
--- task, or when a host drives the loop (mcp.nvim, a replaced scheduler block), it returns at
--- once and the loop finishes that in the background (a step closes one stdio server's stdin,
--- whose exit may take the step's CPU for a while: eight closes are spread over eight steps).
---@return boolean
function Client:close()
  -- (read by _reconnect_failed: a new connection of the client's own under way fails now, and
  -- the client stays closed; a reconnect() of the user's clears it)
  self.closed_by_user = true
  -- a connection the client ended itself (a background try's connect that failed) left its era
  -- open: it ends now (the tries' wait for the next one with it)
  if self.state == "closed" and self.transport_closed then self.era:close() end
  end_connection(self)
  return true
end
Client.__close = Client.close

--- Start over on a fresh transport: close what is left of the current connection, then connect
--- again with a new initialize handshake. For hosts that manage lifecycles themselves (a
--- crashed server, an HTTP session the server forgot). The transport is `transport` when given,
--- else one made by the config's `transport_factory` (set by mcp.create_stdio_client,
--- create_http_client and create_sse_client). Handlers and notification handlers are kept.
---@param transport userdata|table|nil
---@return boolean|nil ok, mcp.Error|nil err
function Client:reconnect(transport)
  if transport == nil then
    local factory = self.config.transport_factory
    if factory == nil then
      return nil, new_error(nil, "reconnect needs a transport: pass one, or create the client with a "
        .. "transport_factory", nil, { kind = "config" })
    end
    local ok, t = pcall(factory)
    if not ok or t == nil then
      return nil, new_error(nil, "transport_factory failed: " .. tostring(t), nil, { kind = "transport" })
    end
    transport = t
  elseif type(transport) ~= "userdata" and type(transport) ~= "table" then
    error("mcp.reconnect: transport expected", 2)
  end
  if self.state ~= "new" then end_connection(self) end
  self.closed_by_user = nil
  self.transport = transport
  self.state = "new"
  self.session = nil
  self.init_result = nil
  self.closed_reason = nil
  self.transport_closed = nil
  self.progress = {}
  self.task_progress = {}
  self.config.initialize_result = nil -- a reattach is for the first connection only
  return self:connect()
end

--- Trace every message sent and received (see client config on_message); nil stops tracing.
---@param fn fun(direction: string, message: table)|nil
function Client:on_message(fn)
  if fn ~= nil and type(fn) ~= "function" then error("mcp: handler must be a function", 2) end
  self.config.on_message = fn
  if fn and self.session and not self.session_traced then
    self.session = require("mcp.trace").wrap(self, self.session)
    self.session_traced = true
  end
end

--- The current state of a task (tasks/get): {taskId, status, statusMessage, createdAt, ...}.
---@param task_id string
---@param opts table|nil
---@return table|nil task, mcp.Error|nil err
function Client:get_task(task_id, opts)
  if type(task_id) ~= "string" then error("mcp.get_task: task_id must be a string", 2) end
  local o = shallow_copy(opts)
  o.cache = false
  local res, err = self:request("tasks/get", { taskId = task_id }, o)
  if res == nil then return nil, err end
  local t = tasks.task_of(res)
  if t == nil then
    return nil, new_error(nil, "invalid tasks/get result", res, { kind = "protocol", method = "tasks/get" })
  end
  self.tasks[t.taskId] = t
  return t
end

--- The tasks this client knows: in the 2026-07-28 era (no tasks/list) the ones its calls created,
--- with their last known state; in the legacy era the server's tasks/list.
---@param opts table|nil
---@return table[]|nil tasks, mcp.Error|nil err
function Client:list_tasks(opts)
  return self.era:list_tasks(opts)
end

--- Forget every cached result (2026-07-28 ttlMs caching); the next calls go to the server.
function Client:clear_cache()
  self.era:clear_cache()
end

---@return boolean
---@return boolean
function Client:is_connected()
  return self.state == "connected" and self.session ~= nil and self.session:is_open()
end

-- ---- getters ---------------------------------------------------------------------------------

--- The raw initialize result (a default one before connect).
---@return table
function Client:initialize_result()
  return self.init_result or {
    protocolVersion = protocol.PROTOCOL_VERSION, capabilities = json.object(), serverInfo = json.object(),
  }
end

---@return table
function Client:server_capabilities()
  local r = self.init_result
  return r and type(r.capabilities) == "table" and r.capabilities or json.object()
end

--- {name=, version=, title=} as the server reported it.
---@return table
function Client:server_info()
  local r = self.init_result
  return r and type(r.serverInfo) == "table" and r.serverInfo or json.object()
end

---@return string
function Client:server_instructions()
  local r = self.init_result
  return r and type(r.instructions) == "string" and r.instructions or ""
end

--- The negotiated protocol version, nil before connect.
---@return string|nil
function Client:protocol_version()
  return self.init_result and self.init_result.protocolVersion or nil
end

-- ---- pagination ------------------------------------------------------------------------------

local function page(self, method, field, cursor, opts)
  if cursor ~= nil and type(cursor) ~= "string" then error("mcp: cursor must be a string", 3) end
  local params = (cursor ~= nil and cursor ~= "") and { cursor = cursor } or nil
  local res, err = self:request(method, params, opts)
  if res == nil then return nil, err end
  res, err = expect_table(res, field, method)
  -- the 2026-07-28 era over HTTP drops a tool whose x-mcp-header bindings are invalid
  if res ~= nil and method == "tools/list" then
    res = self.era:tools_page(res, params == nil)
    require("mcp.output_schema").learn(self:_tool_schemas(), res.tools, params == nil) -- for validate_output
  end
  return res, err
end

--- Every item of a paginated method over all its pages (the list_all_* methods, skills/list,
--- resources/directory/read): fetch(cursor) -> one page's result (field already checked to be an
--- array) | nil, err. At most opts.max_pages pages (default the client's); a repeated cursor, or a
--- page past the bound, is kind "protocol". A bad max_pages raises at level.
---@param method string
---@param field string the result's array field
---@param fetch fun(cursor: string|nil): table|nil, mcp.Error|nil
---@param opts table|nil per-call options (max_pages)
---@param level integer|nil the error level of a bad max_pages, counted from here (default 3: the
--- caller of a list_all_* method)
---@param where string|nil who asks (in that error; default "mcp")
---@return table|nil items, mcp.Error|nil err
function Client:_all_pages(method, field, fetch, opts, level, where)
  local out, seen, cursor, pages = json.array(), {}, nil, 0
  local max_pages = opts and opts.max_pages or self.config.max_pages
  if type(max_pages) ~= "number" or not (max_pages >= 1) then
    error((where or "mcp") .. ": max_pages must be a positive number", level or 3)
  end
  repeat
    -- a server that sends a fresh cursor on every page must not keep the caller forever
    if pages >= max_pages then
      return nil, new_error(nil, ("the server sent more than %d pages (max_pages)"):format(max_pages), cursor,
        { kind = "protocol", method = method })
    end
    pages = pages + 1
    local res, err = fetch(cursor)
    if res == nil then return nil, err end
    for _, item in ipairs(res[field]) do out[#out + 1] = item end
    cursor = res.nextCursor
    if type(cursor) ~= "string" or cursor == "" then cursor = nil end
    if cursor ~= nil then
      if seen[cursor] then
        return nil, new_error(nil, "the server repeated a pagination cursor", cursor, { kind = "protocol", method = method })
      end
      seen[cursor] = true
    end
  until cursor == nil
  return out
end

local LISTS = {
  { name = "tools", method = "tools/list", field = "tools" },
  { name = "resources", method = "resources/list", field = "resources" },
  { name = "resource_templates", method = "resources/templates/list", field = "resourceTemplates" },
  { name = "prompts", method = "prompts/list", field = "prompts" },
}

-- list_tools_with_cursor(cursor, opts), list_all_tools(opts), and the same for resources,
-- resource_templates and prompts (declared for LuaLS in types/mcp.lua).
for _, l in ipairs(LISTS) do
  local method, field = l.method, l.field
  --- One page: the server's result ({<field>=..., nextCursor=...}).
  Client["list_" .. l.name .. "_with_cursor"] = function(self, cursor, opts)
    return page(self, method, field, cursor, opts)
  end
  --- Every item over all pages, as one array.
  Client["list_all_" .. l.name] = function(self, opts)
    return self:_all_pages(method, field, function(cursor) return page(self, method, field, cursor, opts) end,
      opts, 3)
  end
end

--- First page of tools, as an array (ListTools).
---@param opts mcp.CallOptions|nil per-call options (timeout_ms, cancel)
---@return mcp.Tool[]|nil tools, mcp.Error|nil err
function Client:list_tools(opts)
  local res, err = self:list_tools_with_cursor(nil, opts)
  if res == nil then return nil, err end
  return res.tools
end

--- The raw first tools/list page, for storing or fingerprinting (GetSerializableTools).
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:get_serializable_tools(opts)
  return self:list_tools_with_cursor(nil, opts)
end

--- First page of resources, as an array (ListResources).
---@param opts mcp.CallOptions|nil
---@return mcp.Resource[]|nil resources, mcp.Error|nil err
function Client:list_resources(opts)
  local res, err = self:list_resources_with_cursor(nil, opts)
  if res == nil then return nil, err end
  return res.resources
end

--- First page of resource templates: the result table (ListResourceTemplates).
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:list_resource_templates(opts)
  return self:list_resource_templates_with_cursor(nil, opts)
end

--- First page of prompts, as an array (ListPrompts).
---@param opts mcp.CallOptions|nil
---@return mcp.Prompt[]|nil prompts, mcp.Error|nil err
function Client:list_prompts(opts)
  local res, err = self:list_prompts_with_cursor(nil, opts)
  if res == nil then return nil, err end
  return res.prompts
end

-- ---- tools -----------------------------------------------------------------------------------

local function retryable(err)
  local s = err.status_code
  if s ~= nil then return s == 408 or s == 409 or s == 429 or s >= 500 end
  if err.code ~= nil then return false end
  return err.kind == "transport"
end

local function retry_delay_ms(attempt)
  local d = 2000 * 2 ^ (attempt - 1)
  return d > 60000 and 60000 or d
end

-- call_tool's retries after a first attempt failed with err: attempts, res, err.
local function retry_call(self, params, opts, err)
  local attempts, res = 1, nil
  while attempts <= self.config.max_retries and retryable(err) do
    sched.sleep(retry_delay_ms(attempts))
    attempts = attempts + 1
    res, err = self:request("tools/call", params, opts)
    if res ~= nil then break end
  end
  return attempts, res, err
end

-- The error of a call that failed after retries: err is the last attempt's.
local function retries_failed(attempts, err)
  local msg = retryable(err) and ("Failed after " .. attempts .. " attempts. Last error: " .. err.message)
    or ("Failed after " .. attempts .. " attempts with non-retryable error: '" .. err.message .. "'")
  return new_error(err.code, msg, err.data,
    { kind = err.kind, method = "tools/call", status_code = err.status_code, cause = err })
end

-- A tools/call result without content, as the era returns it: the legacy era follows a
-- CreateTaskResult (2025-11-25) to the tool's result, which is checked in turn (a result the era
-- returns as it came is checked already).
local function era_tool_result(self, res, opts)
  local final, err = self.era:tool_result(res, opts or NO_OPTIONS)
  if final == res or final == nil then return final, err end
  return expect_table(final, nil, "tools/call")
end

--- Call a tool (CallTool). arguments is a table (or nil for none).
---@param name string
---@param arguments table|nil
---@param opts mcp.CallOptions|nil timeout_ms, on_progress, cancel, meta (sent as _meta), ...
---@return mcp.CallToolResult|nil result, mcp.Error|nil err, table[]|nil unchecked (validate_output: what a pattern could not check)
function Client:call_tool(name, arguments, opts)
  if type(name) ~= "string" then error("mcp.call_tool: name must be a string", 2) end
  if arguments ~= nil and type(arguments) ~= "table" then
    error("mcp.call_tool: arguments must be a table", 2)
  end
  local params = { name = name, arguments = arguments or json.object() }
  if opts and opts.meta then params._meta = opts.meta end
  local task = opts and opts.task
  if task ~= nil and type(task) ~= "table" then error("mcp.call_tool: task must be a table ({ttl = ms})", 2) end
  -- the legacy era's task augmentation (2025-11-25): ask the server to run the call as a task
  -- (without a task, no era changes the params: not asked)
  if task ~= nil then params = self.era:tool_call_params(params, task) end
  local attempts, res, err = 1, self:request("tools/call", params, opts)
  -- (the retries in a function of their own: a loop here would be an inner loop of every
  -- caller's, which LuaJIT's trace compiler does not follow)
  if res == nil and self.config.max_retries > 0 and retryable(err) then
    attempts, res, err = retry_call(self, params, opts, err)
  end
  if res == nil then return nil, attempts > 1 and retries_failed(attempts, err) or err end
  res, err = expect_table(res, nil, "tools/call")
  if res == nil then return nil, err end
  -- A result with content is the tool's in every era: the era is asked only without (a method
  -- call less on every call's path).
  if res.content == nil then
    res, err = era_tool_result(self, res, opts)
    if res == nil then return nil, err end
  end
  if res.content == nil and res.structuredContent ~= nil then
    -- As the reference: a result with only structuredContent gets a text rendering of it.
    local ok, text = pcall(json.encode, res.structuredContent)
    if not ok then
      return nil, new_error(nil, "invalid tools/call result: structuredContent cannot be rendered as text: "
        .. tostring(text), nil, { kind = "protocol", method = "tools/call" })
    end
    res.content = json.array({ { type = "text", text = text } })
  end
  if res.content == nil and res.toolResult ~= nil then
    return res -- the 2024-11-05 shape, passed through
  end
  if type(res.content) ~= "table" then
    return nil, new_error(nil, "invalid tools/call result: 'content' must be an array", res,
      { kind = "protocol", method = "tools/call" })
  end
  if opts and opts.validate_output then return require("mcp.output_schema").check(self, name, res, opts) end
  return res
end

-- ---- resources, prompts, completion, utilities -----------------------------------------------

--- Read a resource (ReadResource).
---@param uri string
---@param opts mcp.CallOptions|nil
---@return mcp.ReadResourceResult|nil result, mcp.Error|nil err
function Client:read_resource(uri, opts)
  if type(uri) ~= "string" then error("mcp.read_resource: uri must be a string", 2) end
  local res, err = self:request("resources/read", { uri = uri }, opts)
  if res == nil then
    -- Not found: -32002 up to 2025-11-25, -32602 with data.uri in 2026-07-28.
    if err.code == errors.ERROR_CODES.RESOURCE_NOT_FOUND or (err.code == errors.ERROR_CODES.INVALID_PARAMS
        and type(err.data) == "table" and err.data.uri == uri) then
      err.resource_not_found = true
    end
    return nil, err
  end
  return expect_table(res, "contents", "resources/read")
end

-- ---- skills (SEP-2640; lua/mcp/skills/init.lua) -------------------------------------------------

--- Every skill entry of the server (skills/list, all pages); an error when the server does not
--- advertise the io.modelcontextprotocol/skills extension. Reads no file.
---@param opts table|nil per-call options (timeout_ms, cancel)
---@return table[]|nil entries, mcp.Error|nil err
function Client:list_skills(opts)
  return require("mcp.skills").list(self, opts)
end

--- One skill's entry by the URI of its SKILL.md (skills/get).
---@param uri string
---@param opts table|nil
---@return table|nil entry, mcp.Error|nil err
function Client:get_skill(uri, opts)
  if type(uri) ~= "string" then error("mcp.get_skill: uri must be a string", 2) end
  return require("mcp.skills").get(self, uri, opts)
end

--- Read a skill's SKILL.md now, verify it against its entry (size, digest, frontmatter) and
--- return an mcp.Skill (skill:read(path) for its supporting files).
---@param uri_or_entry string|table a skills/list entry, or a SKILL.md URI (entry from skills/get)
---@param opts table|nil timeout_ms, cancel, allow_unverified
---@return mcp.Skill|nil skill, mcp.Error|nil err
function Client:load_skill(uri_or_entry, opts)
  local t = type(uri_or_entry)
  if t ~= "string" and t ~= "table" then error("mcp.load_skill: expected a SKILL.md URI or a skill entry", 2) end
  return require("mcp.skills").load(self, uri_or_entry, opts)
end

--- Every direct child of a directory resource over all pages (resources/directory/read, the
--- skills extension's optional method): an array of Resource objects, subdirectories with mimeType
--- "inode/directory". Kind "protocol" unless the server declares directoryRead: true.
---@param uri string the directory's URI (no trailing slash)
---@param opts table|nil per-call options (timeout_ms, cancel, max_pages)
---@return table[]|nil resources, mcp.Error|nil err
function Client:read_directory(uri, opts)
  if type(uri) ~= "string" then error("mcp.read_directory: uri must be a string", 2) end
  return require("mcp.skills").read_directory(self, uri, opts)
end

--- One page of resources/directory/read: {resources = ..., nextCursor = ...}.
---@param uri string the directory's URI
---@param cursor string|nil a nextCursor of the previous page
---@param opts table|nil per-call options (timeout_ms, cancel)
---@return table|nil result, mcp.Error|nil err
function Client:read_directory_with_cursor(uri, cursor, opts)
  if type(uri) ~= "string" then error("mcp.read_directory_with_cursor: uri must be a string", 2) end
  if cursor ~= nil and type(cursor) ~= "string" then error("mcp.read_directory_with_cursor: cursor must be a string", 2) end
  return require("mcp.skills").read_directory_with_cursor(self, uri, cursor, opts)
end

--- Get a prompt with its arguments filled in (GetPrompt).
---@param name string
---@param arguments table|nil
---@param opts mcp.CallOptions|nil
---@return mcp.GetPromptResult|nil result, mcp.Error|nil err
function Client:get_prompt(name, arguments, opts)
  if type(name) ~= "string" then error("mcp.get_prompt: name must be a string", 2) end
  if arguments ~= nil and type(arguments) ~= "table" then
    error("mcp.get_prompt: arguments must be a table", 2)
  end
  local res, err = self:request("prompts/get", { name = name, arguments = arguments }, opts)
  if res == nil then return nil, err end
  return expect_table(res, "messages", "prompts/get")
end

--- Ask for argument completions (Complete). params: {ref=...} or Go-style {prompt_ref=, resource_ref=},
--- plus argument={name=, value=} and optional context={arguments={...}}.
---@param params table
---@param opts table|nil
---@return table|nil result {completion={values=, total=, hasMore=}}, mcp.Error|nil err
function Client:complete(params, opts)
  if type(params) ~= "table" then error("mcp.complete: params must be a table", 2) end
  local ref = params.ref
  if ref == nil and params.prompt_ref then
    ref = { type = "ref/prompt", name = params.prompt_ref.name }
  elseif ref == nil and params.resource_ref then
    ref = { type = "ref/resource", uri = params.resource_ref.uri }
  end
  if type(ref) ~= "table" or type(params.argument) ~= "table" then
    error("mcp.complete: params need ref (or prompt_ref/resource_ref) and argument", 2)
  end
  if self.init_result and self:server_capabilities().completions == nil then
    return nil, new_error(nil, "Server does not support completions", nil, { kind = "protocol", method = "completion/complete" })
  end
  local p = { ref = ref, argument = params.argument }
  if params.context ~= nil then p.context = params.context end
  local res, err = self:request("completion/complete", p, opts)
  if res == nil then return nil, err end
  return expect_table(res, "completion", "completion/complete")
end

---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:ping(opts)
  -- (2026-07-28 has no ping: the modern era sends server/discover)
  return self.era:ping(opts)
end

---@param level string one of mcp.LOGGING_LEVELS
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:set_logging_level(level, opts)
  local valid = false
  for _, l in ipairs(protocol.LOGGING_LEVELS) do valid = valid or l == level end
  if not valid then error("mcp.set_logging_level: unknown level " .. tostring(level), 2) end
  -- (2026-07-28: no logging/setLevel; every later request asks for this level in its _meta)
  return self.era:set_logging_level(level, opts)
end

---@param uri string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:subscribe_resource(uri, opts)
  if type(uri) ~= "string" then error("mcp.subscribe_resource: uri must be a string", 2) end
  -- (2026-07-28: the uri joins the subscriptions/listen request, replaced at once; no wait)
  return self.era:subscribe(uri, opts)
end

---@param uri string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Client:unsubscribe_resource(uri, opts)
  if type(uri) ~= "string" then error("mcp.unsubscribe_resource: uri must be a string", 2) end
  return self.era:unsubscribe(uri, opts)
end

-- ---- handlers --------------------------------------------------------------------------------

--- Register the elicitation handler: fn(request) -> result | nil, err, where request has
--- message, requested_schema, meta, mode ("form"|"url"), url, url_host, elicitation_id, server (the
--- asking server's title or name, for the handler to show) and params.
--- With opts.url the handler takes URL-mode requests too (the client declares elicitation.url,
--- 2025-11-25); without, a URL-mode request is refused with -32602. Takes effect on the next
--- connect (the capabilities are declared in initialize).
---@param fn fun(request: table): table|nil, any
---@param opts table|nil url (boolean)
function Client:on_elicitation_request(fn, opts)
  if fn ~= nil and type(fn) ~= "function" then error("mcp: handler must be a function", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("mcp: handler options must be a table", 2) end
  self.handlers.elicitation = fn
  if opts ~= nil and opts.url ~= nil then self.handler_caps.elicitation_url = opts.url == true end
end

--- fn(params) -> CreateMessageResult | nil, err. With opts.tools the handler takes requests with
--- tools and toolChoice (the client declares sampling.tools, 2025-11-25) and may answer with
--- tool_use blocks (mcp.sampling.tool_use); without, such a request is refused with -32602.
---@param fn fun(params: table): table|nil, any
---@param opts table|nil tools (boolean)
function Client:on_sampling_request(fn, opts)
  if fn ~= nil and type(fn) ~= "function" then error("mcp: handler must be a function", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("mcp: handler options must be a table", 2) end
  self.handlers.sampling = fn
  if opts ~= nil and opts.tools ~= nil then self.handler_caps.sampling_tools = opts.tools == true end
end

--- fn() -> array of roots ({uri=, name=}) | nil, err
---@param fn fun(): table[]|nil, any
function Client:on_roots_list(fn)
  if fn ~= nil and type(fn) ~= "function" then error("mcp: handler must be a function", 2) end
  self.handlers.roots = fn
end

--- Set the roots served to roots/list and tell a connected server they changed.
---@param roots table[] {uri=, name=} entries
---@return boolean|nil ok, mcp.Error|nil err
function Client:set_roots(roots)
  if type(roots) ~= "table" then error("mcp.set_roots: roots must be an array", 2) end
  self.roots = roots
  -- (a connected legacy era sends notifications/roots/list_changed; 2026-07-28 has none)
  return self.era:roots_changed()
end

--- fn(params, method) for a notification method, or "*" for every notification.
---@param method string
---@param fn fun(params: table, method: string)
function Client:on_notification(method, fn)
  if type(method) ~= "string" or type(fn) ~= "function" then
    error("mcp.on_notification: (method, fn) expected", 2)
  end
  local list = self.notification_handlers[method]
  if not list then
    list = {}
    self.notification_handlers[method] = list
  end
  list[#list + 1] = fn
  self.era:handlers_changed() -- 2026-07-28: ask the listen request for it
end

local SHORTCUTS = {
  on_tools_list_changed = "notifications/tools/list_changed",
  on_resources_list_changed = "notifications/resources/list_changed",
  on_prompts_list_changed = "notifications/prompts/list_changed",
  on_resource_updated = "notifications/resources/updated",
  on_log_message = "notifications/message",
  on_cancelled = "notifications/cancelled",
  on_progress = "notifications/progress",
}
for name, method in pairs(SHORTCUTS) do
  Client[name] = function(self, fn) return self:on_notification(method, fn) end
end

return M
