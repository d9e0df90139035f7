--- mcp.hub: many servers at once, described by a config file (mcp.config). Every enabled server
--- connects in a task of its own, so a slow or failing one never delays the others; their tools,
--- resources and prompts are aggregated under stable namespaced names (`server__tool`) and calls
--- are routed back; list_changed notifications are followed; a crashed stdio server is restarted
--- with exponential backoff up to a limit; an HTTP server that lost the session (404, or a 400
--- naming the session) is reconnected with a fresh initialize and the call retried once; tool
--- calls go through an approval hook.
---
---   local hub = assert(mcp.hub("mcp.json", { on_state = function(name, state) print(name, state) end }))
---   for _, t in ipairs(hub:list_tools()) do print(t.name) end      -- e.g. "github__search_issues"
---   local res, err = hub:call_tool("github__search_issues", { q = "bug" })
---   hub:close()
local config = require("mcp.config")
local core = require("mcp.core")
local errors = require("mcp.errors")
local files = require("mcp.util.file")
local json = require("mcp.json")
local sched = require("mcp.sched")
local term = require("mcp.util.term")

local M = {}

---@class mcp.Hub
local Hub = {}
Hub.__index = Hub
M.Hub = Hub

local STATES = { "connecting", "ready", "failed", "restarting", "disabled", "login_required", "answer_required" }
M.STATES = STATES

local function hub_error(kind, msg, opts)
  local e = errors.new(nil, msg, nil, { kind = kind, method = opts and opts.method, cause = opts and opts.cause })
  if opts then e.server = opts.server end
  return e
end

-- ---- names -------------------------------------------------------------------------------------

-- A 6-hex-digit digest (djb2), to keep cut names apart.
local function short_hash(s)
  local h = 5381
  for i = 1, #s do h = (h * 33 + s:byte(i)) % 4294967296 end
  return ("%06x"):format(h % 16777216)
end

local function sanitize(s)
  s = s:gsub("[^%w_%-]", "_")
  if s == "" then s = "_" end
  return s
end

-- A server's prefix: its name with every character outside [A-Za-z0-9_-] made "_" and no "__"
-- (so the first "__" of a namespaced name always ends the prefix), unique within the hub.
local function assign_prefixes(names, sep)
  local used, out = {}, {}
  for _, name in ipairs(names) do
    local p = sanitize(name)
    if sep == "__" then
      while p:find("__", 1, true) do p = p:gsub("__", "_") end
    end
    local base, k = p, 2
    while used[p] do
      p = base .. "_" .. k
      k = k + 1
    end
    used[p] = true
    out[name] = p
  end
  return out
end

-- ---- construction ------------------------------------------------------------------------------

-- A config file's oauth object may carry other clients' keys (callback_port, ...): only the
-- static OAuthConfig fields go to the transport, which refuses any other key.
local function static_oauth(o)
  if type(o) ~= "table" then return o end
  local fields, c = require("mcp.auth.transport").OAUTH_FIELDS, {}
  for k, v in pairs(o) do
    if fields[k] then c[k] = v end
  end
  return c
end

-- A server's (new) config entry, and what the hub derives from it.
local function set_spec(rec, spec)
  rec.spec = spec
  rec.auto, rec.off_tools = {}, {}
  if type(spec.auto_approve) == "table" then
    for _, t in ipairs(spec.auto_approve) do rec.auto[t] = true end
  end
  for _, t in ipairs(spec.disabled_tools or {}) do rec.off_tools[t] = true end
end

local OPTS = {
  on_state = "function", on_change = "function", on_message = "function", approve = "function", verify = "function",
  on_error = "function", on_stderr = "function", on_input = "function", inputs = "table", env = "table",
  client = "table", restart = "table", connect_timeout_ms = "number", request_timeout_ms = "number",
  separator = "string", max_name_length = "number", wait = "boolean", variables = "table",
  trust = "function", trusted = "boolean", honor_auto_approve = "boolean", trust_dir = "string",
  sandbox = "table", allow_cmd = "boolean", auth_provider = "function", background_start = "boolean",
}

-- The options config.load takes from the hub's (trust decides what a file may start).
local function load_opts(opts)
  return { on_input = opts.on_input, inputs = opts.inputs, env = opts.env, variables = opts.variables,
    trust = opts.trust, trusted = opts.trusted, honor_auto_approve = opts.honor_auto_approve,
    trust_dir = opts.trust_dir, allow_cmd = opts.allow_cmd }
end

--- Start a hub over every enabled server of a config (a path, a decoded table, or the result of
--- mcp.config.load). Waits until every server is ready or failed unless opts.wait == false.
--- The first start is the caller's and may log in; with opts.background_start it is background
--- work no one asked for (a host's startup): a refresh or a grant without a user, never a login,
--- and a server that needs one waits in "login_required" (hub:restart(name) logs in); nor is
--- anything asked when the config is read (no trust hook, no on_input): a server whose entry
--- needs that waits in "answer_required" (hub:restart(name) asks).
---@param cfg string|table
---@param opts table|nil see docs/API.md "Many servers (mcp.hub)"
---@return mcp.Hub|nil hub, mcp.Error|nil err
function M.new(cfg, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("mcp.hub: opts must be a table", 2) end
  for k, v in pairs(opts) do
    local want = OPTS[k]
    if want == nil then error("mcp.hub: unknown option '" .. tostring(k) .. "'", 2) end
    if type(v) ~= want then error(("mcp.hub: option '%s' must be a %s, got %s"):format(k, want, type(v)), 2) end
  end
  local lopts = load_opts(opts)
  lopts.keep_going = true
  -- a start no one asked for asks no one either: no trust question, no ${input:...} (_needs_answer)
  if opts.background_start then lopts.ask = false end
  local loaded, err = config.load(cfg, lopts)
  if not loaded then return nil, err end
  local restart = opts.restart or {}
  local self = setmetatable({
    config = loaded,
    opts = opts,
    sep = opts.separator or "__",
    max_name = opts.max_name_length or 64,
    restart_policy = {
      max = restart.max or 5, base_ms = restart.base_ms or 500, max_ms = restart.max_ms or 30000,
      stable_ms = restart.stable_ms or 60000,
    },
    recs = {},
    order = loaded.order,
    waiters = {},
    closed = false,
    names = { tools = {}, prompts = {} },
  }, Hub)
  local prefixes = assign_prefixes(loaded.order, self.sep)
  for _, name in ipairs(loaded.order) do
    local rec = {
      name = name, prefix = prefixes[name], state = "new", attempts = 0, generation = 0,
      always = {}, stderr_tail = {}, tools = {}, resources = {}, templates = {}, prompts = {},
      inflight = {}, retiring = {},
    }
    set_spec(rec, loaded.servers[name])
    self.recs[name] = rec
  end
  self:_rebuild()
  for _, name in ipairs(loaded.order) do
    local rec = self.recs[name]
    if rec.spec.error and rec.spec.error.kind == "unasked" then
      self:_needs_answer(rec, rec.spec.error)
    elseif rec.spec.error then
      -- Its entry could not be read (an unset variable, say): that server fails, the others start.
      self:_set_state(rec, "failed", { error = rec.spec.error })
      self:_report(rec.spec.error)
    elseif rec.spec.disabled then
      self:_set_state(rec, "disabled")
    else
      if rec.spec.trust_warning then
        self:_report(hub_error("config", "server '" .. name .. "': " .. rec.spec.trust_warning, { server = name }))
      end
      self:_start(rec, opts.background_start == true)
    end
  end
  if opts.wait ~= false then self:wait() end
  return self
end

-- ---- state -------------------------------------------------------------------------------------

function Hub:_report(err)
  local on_error = self.opts.on_error
  if on_error then
    sched.spawn_handler(function(e) io.stderr:write("mcp.hub: on_error failed: ", term.escape(e), "\n") end, on_error, err)
  end
end

local SETTLED = { ready = true, failed = true, disabled = true, login_required = true, answer_required = true }
-- The states that wait for the user's action (a login, an answer): a call gets "unavailable" with
-- the reason as its cause, and the state keeps its error, as failed and restarting do.
local WAITS_FOR_USER = { login_required = true, answer_required = true }

function Hub:_settled()
  for _, name in ipairs(self.order) do
    if not SETTLED[self.recs[name].state] then return false end
  end
  return true
end

-- A restart's keeper (Hub:_keep_restarts) cancelled.
local function drop_keeper(rec)
  if rec.keeper then rec.keeper:cancel() end
  rec.keeper, rec.kept = nil, nil
end

function Hub:_check_waiters()
  if #self.waiters == 0 or not (self.closed or self:_settled()) then return end
  local ws = self.waiters
  self.waiters = {}
  for _, name in ipairs(self.order) do drop_keeper(self.recs[name]) end
  for _, w in ipairs(ws) do w() end
end

function Hub:_set_state(rec, state, info)
  rec.state = state
  rec.info = info
  if state ~= "failed" and state ~= "restarting" and not WAITS_FOR_USER[state] then rec.error = nil end
  if info and info.error then rec.error = info.error end
  local cb = self.opts.on_state
  if cb and not self.closed then
    sched.spawn_handler(function(e) self:_report(hub_error("handler", "on_state raised: " .. tostring(e))) end,
      cb, rec.name, state, info or {})
  end
  self:_check_waiters()
end

function Hub:_changed(kind, rec)
  self:_rebuild()
  local cb = self.opts.on_change
  if cb and not self.closed then
    sched.spawn_handler(function(e) self:_report(hub_error("handler", "on_change raised: " .. tostring(e))) end,
      cb, kind, rec.name)
  end
end

--- Wait until every server is ready, failed or disabled (none connecting or restarting), at most
--- ms milliseconds when given. In a task it suspends the task.
---@param ms number|nil
---@return boolean settled
function Hub:wait(ms)
  if self.closed or self:_settled() then return self:_settled() end
  sched.await(function(cb)
    local timer
    local function waiter()
      if timer then timer:cancel() end
      cb()
    end
    self.waiters[#self.waiters + 1] = waiter
    self:_keep_restarts()
    if ms then
      timer = core.timer(ms, function()
        timer = nil
        -- (no longer a waiter: the restarts' keepers go with the last one)
        for i = #self.waiters, 1, -1 do
          if self.waiters[i] == waiter then table.remove(self.waiters, i) end
        end
        if #self.waiters == 0 then
          for _, name in ipairs(self.order) do drop_keeper(self.recs[name]) end
        end
        cb()
      end)
    end
  end)
  return self:_settled()
end

-- ---- one server's life -------------------------------------------------------------------------

local CLIENT_KEYS = {
  client_name = true, name = true, client_version = true, capabilities = true, on_elicitation_request = true,
  on_sampling_request = true, on_roots_list = true, roots = true, protocol_version = true, max_retries = true,
  -- 2025-11-25: what the handlers take (URL mode, tools in sampling), trace context and spans
  elicitation_url = true, sampling_tools = true, trace_context = true, on_span_start = true, on_span_end = true,
}

function Hub:_transport_factory(rec)
  local spec, mcp = rec.spec, require("mcp")
  if spec.type == "stdio" then
    local on_stderr = self.opts.on_stderr
    local tail = rec.stderr_tail
    local tcfg = {
      command = spec.command, args = spec.args, env = spec.env, cwd = spec.cwd, sandbox = self:_sandbox(spec),
      stderr = function(line)
        tail[#tail + 1] = line
        if #tail > 20 then table.remove(tail, 1) end
        if on_stderr then on_stderr(rec.name, line) end
      end,
    }
    return function() return mcp.stdio_transport(tcfg) end
  end
  local tcfg = { url = spec.url, headers = spec.headers, oauth = static_oauth(spec.oauth) }
  -- A server without static tokens in its entry logs in through the host's provider (a 401 runs
  -- the flow): the provider the hook gives, if any, and how long its login may take.
  rec.login_ms = nil
  if self.opts.auth_provider and (tcfg.oauth == nil or next(tcfg.oauth) == nil) then
    local p, login_ms = self.opts.auth_provider(rec.name, spec)
    tcfg.auth_provider = p
    if p ~= nil and type(login_ms) == "number" then rec.login_ms = login_ms end
  end
  if spec.type == "sse" or rec.legacy_sse then return function() return mcp.sse_transport(tcfg) end end
  return function() return mcp.http_transport(tcfg) end
end

-- A server's sandbox: its entry's, else the hub's (opts.sandbox); what best_effort could not
-- enforce goes to on_error. A file that is not trusted cannot replace the host's sandbox with a
-- wider one of its own: there the hub's wins.
function Hub:_sandbox(spec)
  local sb = spec.sandbox
  if sb == nil or (spec.trusted == false and self.opts.sandbox ~= nil) then sb = self.opts.sandbox end
  if sb == nil then return nil end
  if type(sb) == "string" then sb = { preset = sb } end
  local c = {}
  for k, v in pairs(sb) do c[k] = v end
  c.on_error = c.on_error or function(e)
    e.server = spec.name
    self:_report(e)
  end
  return c
end

-- Whether err (or what caused it) says that a login is needed and was not started (login_required).
local function login_required(err)
  return errors.in_cause_chain(err, function(e) return e.oauth_error == "login_required" end)
end

function Hub:_new_client(rec)
  local ccfg = {}
  for k, v in pairs(self.opts.client or {}) do
    if not CLIENT_KEYS[k] then error("mcp.hub: option client." .. tostring(k) .. " is not a shared client setting", 3) end
    ccfg[k] = v
  end
  ccfg.request_timeout_ms = rec.spec.timeout_ms or self.opts.request_timeout_ms
  -- Unset: the client's default (60 s for a stdio server's first start, else request_timeout_ms).
  ccfg.connect_timeout_ms = self.opts.connect_timeout_ms or rec.spec.timeout_ms
  ccfg.on_error = function(e)
    e.server = e.server or rec.name
    self:_report(e)
  end
  local on_message = self.opts.on_message
  if on_message then
    ccfg.on_message = function(direction, msg) return on_message(direction, msg, rec.name) end
  end
  ccfg.auto_reinitialize = false -- a lost session is the hub's to recover (_recover_session): new lists, states
  -- a lost session no call saw (a server that only sends notifications, a restart while idle)
  ccfg.on_session_lost = function(lost)
    if rec.client == lost and rec.state == "ready" then self:_recover_session(rec, lost) end
  end
  local factory = self:_transport_factory(rec)
  ccfg.transport_factory = factory
  if rec.login_ms then
    -- a login in the browser runs inside the connect: give the person the time it allows
    ccfg.connect_timeout_ms = math.max(ccfg.connect_timeout_ms or ccfg.request_timeout_ms or 0, rec.login_ms)
  end
  local client
  ccfg.on_close = function(reason)
    if rec.client == client then self:_on_closed(rec, client, reason) end
  end
  client = require("mcp.client").new(factory(), ccfg)
  -- Follow list_changed: refresh that list and tell on_change.
  -- (no one asked for the new list: background work, which never logs in; where it needs a login
  -- the server waits for the user's restart, as after a restart of the hub's own)
  local function follow(kind)
    return function()
      if rec.client ~= client or rec.state ~= "ready" then return end
      local err = client:_in_background(self._refresh, self, rec, client, kind)
      if rec.client ~= client then return end
      if login_required(err) and rec.state == "ready" then return self:_needs_login(rec, err) end
      self:_changed(kind, rec)
    end
  end
  client:on_tools_list_changed(follow("tools"))
  client:on_resources_list_changed(follow("resources"))
  client:on_prompts_list_changed(follow("prompts"))
  return client
end

-- Fetch one list of a connected server (kind: tools, resources, prompts) into rec.
function Hub:_refresh(rec, client, kind)
  local caps = client:server_capabilities()
  if kind == "tools" then
    rec.tools = {}
    if caps.tools == nil then return end
    local list, err = client:list_all_tools()
    if rec.client ~= client then return end
    if list then rec.tools = list else self:_report(err) end
    return err
  elseif kind == "resources" then
    rec.resources, rec.templates = {}, {}
    if caps.resources == nil then return end
    local list, err = client:list_all_resources()
    if rec.client ~= client then return end
    if list then rec.resources = list else self:_report(err) end
    local tl, terr = client:list_all_resource_templates()
    if rec.client ~= client then return end
    if tl then rec.templates = tl elseif terr.code ~= errors.ERROR_CODES.METHOD_NOT_FOUND then self:_report(terr) end
    return err or terr
  elseif kind == "prompts" then
    rec.prompts = {}
    if caps.prompts == nil then return end
    local list, err = client:list_all_prompts()
    if rec.client ~= client then return end
    if list then rec.prompts = list else self:_report(err) end
    return err
  end
end

local function stderr_hint(rec)
  local tail = rec.stderr_tail
  if #tail == 0 then return "" end
  local from = math.max(1, #tail - 4)
  return " (stderr: " .. table.concat(tail, " | ", from) .. ")"
end

-- Connect client: as the user's (a login may run), or, background, as the hub's own work, which
-- no one asked for (a restart): a refresh or a grant without a user, never a login
-- (Client:_in_background; lua/mcp/auth/transport.lua).
local function connect_client(client, background)
  if background then return client:_in_background(client.connect, client) end
  return client:connect()
end

-- The three lists of a client just connected; the first listing's error that says a login is
-- needed, if any.
function Hub:_refresh_lists(rec, client)
  local need
  for _, kind in ipairs({ "tools", "resources", "prompts" }) do
    local err = self:_refresh(rec, client, kind)
    if need == nil and login_required(err) then need = err end
  end
  return need
end

-- Connect rec with a fresh client, in the calling task (or blocking). Returns ok, err. background:
-- the hub's own restart, which never starts a login (connect_client).
function Hub:_connect(rec, background)
  rec.generation = rec.generation + 1
  local gen = rec.generation
  local old = rec.client
  rec.client = nil
  if old then old:close() end
  for i = #rec.stderr_tail, 1, -1 do rec.stderr_tail[i] = nil end
  local client, cok, err
  repeat
    local ok
    ok, client = pcall(self._new_client, self, rec)
    if not ok then
      return nil, hub_error("config", "server '" .. rec.name .. "': " .. tostring(client), { server = rec.name })
    end
    rec.client = client
    cok, err = connect_client(client, background)
    if rec.generation ~= gen or self.closed then
      client:close()
      return nil, hub_error("closed", "server '" .. rec.name .. "' was stopped while connecting", { server = rec.name })
    end
    -- A url given without a type that answers the first POST as a legacy HTTP+SSE server does:
    -- that server is one (the specification's backwards-compatibility rule), from now on.
    local fall_back = not cok and rec.spec.type_inferred and not rec.legacy_sse and errors.is_legacy_sse_hint(err)
    if fall_back then
      rec.legacy_sse = true
      rec.client = nil
      client:close()
    end
  until not fall_back
  if not cok then
    rec.client = nil
    client:close()
    local e = hub_error(err.kind, "server '" .. rec.name .. "' failed to start: " .. tostring(err.message)
      .. stderr_hint(rec), { server = rec.name, cause = err })
    return nil, e
  end
  -- (the listing is background work too: a server that wants another scope for tools/list, say,
  -- gets no login from it either)
  local need
  if background then
    need = client:_in_background(self._refresh_lists, self, rec, client)
  else
    need = self:_refresh_lists(rec, client)
  end
  if rec.client ~= client then
    return nil, hub_error("closed", "server '" .. rec.name .. "' went away while listing", { server = rec.name })
  end
  if need and background then
    rec.client = nil
    client:close()
    return nil, hub_error(need.kind, "server '" .. rec.name .. "' could not list what it offers: "
      .. tostring(need.message), { server = rec.name, cause = need })
  end
  rec.ready_since = core.now_ms()
  self:_changed("all", rec)
  self:_set_state(rec, "ready")
  return true
end

-- First start (or a restart from restart()/enable()): connect in a task; failure -> failed.
-- background: the first start of a hub made with background_start (no one asked for it): never
-- a login, and a server that needs one waits in "login_required" (_needs_login).
function Hub:_start(rec, background)
  self:_set_state(rec, "connecting")
  local g0 = rec.generation
  sched.spawn_handler(function(e)
    self:_set_state(rec, "failed", { error = hub_error("handler", "server '" .. rec.name .. "': " .. tostring(e)) })
  end, function()
    if rec.generation ~= g0 or self.closed then return end -- stopped before the task ran
    local ok, err = self:_connect(rec, background)
    if not ok and rec.generation == g0 + 1 and not self.closed then
      if background and login_required(err) then return self:_needs_login(rec, err) end
      self:_set_state(rec, "failed", { error = err })
    end
  end)
end

-- The server went away while ready (a crashed stdio server, a dropped stream): restart it with
-- exponential backoff, giving up after restart.max consecutive attempts.
function Hub:_on_closed(rec, client, reason)
  if self.closed or rec.client ~= client or rec.state ~= "ready" then return end
  rec.client = nil
  client:close()
  local err = hub_error("closed", "server '" .. rec.name .. "' stopped: " .. tostring(reason) .. stderr_hint(rec),
    { server = rec.name })
  self:_schedule_restart(rec, err)
end

-- A server that cannot be called leaves the lists (a lost session's reconnection kept the old
-- client's lists until its connect ended): its tools, resources and prompts are not offered.
function Hub:_drop_lists(rec)
  rec.tools, rec.resources, rec.templates, rec.prompts = {}, {}, {}, {}
  self:_changed("all", rec)
end

function Hub:_schedule_restart(rec, err)
  local r = self.restart_policy
  if rec.ready_since and core.now_ms() - rec.ready_since >= r.stable_ms then rec.attempts = 0 end
  rec.ready_since = nil
  self:_drop_lists(rec)
  rec.attempts = rec.attempts + 1
  if rec.attempts > r.max then
    self:_set_state(rec, "failed", { error = hub_error(err.kind, err.message .. "; gave up after " .. r.max
      .. " restarts", { server = rec.name, cause = err }) })
    return
  end
  local delay = r.base_ms * 2 ^ (rec.attempts - 1)
  if delay > r.max_ms then delay = r.max_ms end
  local gen = rec.generation
  self:_set_state(rec, "restarting", { error = err, attempt = rec.attempts, delay_ms = delay })
  -- weak: a pending restart is background work, which keeps no mcp.run() (nor a blocking call)
  -- waiting for it; it runs whenever the loop runs (a host's, a call's). hub:wait() waits for it
  -- (_keep_restarts).
  rec.timer = core.timer(delay, function()
    rec.timer = nil
    drop_keeper(rec) -- (the task spawned below, or the state a user's action set, is waited for now)
    if self.closed or rec.generation ~= gen or rec.state ~= "restarting" then return end
    sched.spawn_handler(function(e)
      self:_set_state(rec, "failed", { error = hub_error("handler", "server '" .. rec.name .. "': " .. tostring(e)) })
    end, function()
      if self.closed or rec.generation ~= gen or rec.state ~= "restarting" then return end
      local ok, cerr = self:_connect(rec, true) -- (no one asked: never a login)
      if ok or self.closed or rec.generation ~= gen + 1 then return end
      if login_required(cerr) then return self:_needs_login(rec, cerr) end
      self:_schedule_restart(rec, cerr)
    end)
  end, true)
  -- read after the timer is armed, so never before its deadline: a keeper due before the restart
  -- (the clock moved between the two reads) left the wait with nothing in flight in between
  rec.restart_due = core.now_ms() + delay
  self:_keep_restarts()
end

-- While someone waits for the hub (hub:wait), each weak restart timer has a strong one due with
-- it (rec.keeper, which does nothing), so that the wait is for something in flight. The keeper is
-- due at or after the restart (an equal deadline runs after it: timers fire in the order armed),
-- and the restart drops it.
function Hub:_keep_restarts()
  if #self.waiters == 0 then return end
  for _, name in ipairs(self.order) do
    local rec = self.recs[name]
    if rec.timer and rec.kept ~= rec.timer then -- (a new restart timer: a keeper of its own)
      drop_keeper(rec)
      local k
      k = core.timer(math.max(0, rec.restart_due - core.now_ms()), function()
        if rec.keeper == k then rec.keeper, rec.kept = nil, nil end
      end)
      rec.keeper, rec.kept = k, rec.timer
    end
  end
end

-- A restart of the hub's own (or a first start with background_start) found that the server
-- needs a login, which it does not start (no one asked): the server waits in "login_required",
-- not restarted again on the timer, until the user restarts it (hub:restart, hub:reconnect,
-- hub:enable after a disable; :McpLogin in Neovim).
function Hub:_needs_login(rec, err)
  local e = hub_error(err.kind, "server '" .. rec.name .. "' needs a login (a start no one asked for starts "
    .. "none): restart it to log in (hub:restart)", { server = rec.name, cause = err })
  e.oauth_error = "login_required"
  self:_drop_lists(rec)
  -- (on_state says it, with this error; the transport gave the OAuth error to on_error already)
  self:_set_state(rec, "login_required", { error = e })
end

-- A first start with background_start read a server's entry without asking (config.load's ask =
-- false), and the entry needs an answer of the user's: the trust question of a file outside their
-- own configuration, or an ${input:...}. No one asked for that start, so nothing was asked and the
-- server did not start: it waits in "answer_required" until the user's restart (hub:restart,
-- hub:reconnect, hub:enable), which reads its entry again (_reload) and asks.
function Hub:_needs_answer(rec, err)
  local e = hub_error("unasked", "server '" .. rec.name .. "' waits for your answer (a start no one asked for "
    .. "asks nothing: " .. tostring(err.message) .. "): restart it to be asked (hub:restart)",
    { server = rec.name, cause = err })
  self:_set_state(rec, "answer_required", { error = e })
end

-- An HTTP session the server no longer knows: 404, or a 400 whose message names the session.
local function session_lost(err)
  if err == nil then return false end
  if err.status_code == 404 then return true end
  if err.status_code == 400 then
    local text = (tostring(err.message) .. " " .. tostring(err.response_body or "")):lower()
    return text:find("session", 1, true) ~= nil
  end
  return false
end
M.session_lost = session_lost

-- Reconnect an HTTP server whose session was lost, once for all the calls that noticed it.
function Hub:_recover_session(rec, client)
  if rec.client ~= client then
    -- another call already reconnected (or is doing it)
    if rec.recovering then sched.await(function(cb) rec.recovering[#rec.recovering + 1] = cb end) end
    return rec.client ~= nil and rec.state == "ready"
  end
  if rec.recovering then
    sched.await(function(cb) rec.recovering[#rec.recovering + 1] = cb end)
    return rec.client ~= nil and rec.state == "ready"
  end
  rec.recovering = {}
  self:_set_state(rec, "restarting", { error = hub_error("closed", "server '" .. rec.name .. "' lost the session",
    { server = rec.name }), attempt = 1, delay_ms = 0 })
  -- the hub's own work, whether or not a call met the loss: never a login (_needs_login)
  local ok, err = self:_connect(rec, true)
  if not ok and not self.closed then
    if login_required(err) then
      self:_needs_login(rec, err)
    else
      self:_drop_lists(rec)
      self:_set_state(rec, "failed", { error = err })
    end
  end
  local ws = rec.recovering
  rec.recovering = nil
  for _, w in ipairs(ws) do w() end
  return ok == true
end

-- Run fn(client) on rec's client; when the HTTP session was lost, reconnect and run it once more.
function Hub:_route(rec, method, fn)
  if rec.state ~= "ready" or rec.client == nil then
    local why = rec.state == "disabled" and "is disabled"
      or ("is not ready (" .. rec.state .. (rec.error and ("; " .. tostring(rec.error.message)) or "") .. ")")
    local e = hub_error("unavailable", "server '" .. rec.name .. "' " .. why, { server = rec.name, method = method,
      cause = WAITS_FOR_USER[rec.state] and rec.error or nil })
    -- a call does not log in: the user's restart does (see _needs_login)
    if rec.state == "login_required" then e.oauth_error = "login_required" end
    return nil, e
  end
  local client = rec.client
  -- counted, so that reconnect() closes a replaced client only once its calls have ended
  rec.inflight[client] = (rec.inflight[client] or 0) + 1
  local ok, res, err = sched.pcall(fn, client)
  rec.inflight[client] = rec.inflight[client] - 1
  if rec.inflight[client] == 0 then
    rec.inflight[client] = nil
    if rec.retiring[client] then
      rec.retiring[client] = nil
      client:close()
    end
  end
  if not ok then error(res, 0) end
  if res == nil and session_lost(err) and rec.spec.type ~= "stdio" then
    if self:_recover_session(rec, client) then
      res, err = fn(rec.client)
    elseif rec.state == "login_required" then
      return self:_route(rec, method, fn) -- (its error: unavailable, login_required)
    end
  end
  if res == nil and err then err.server = err.server or rec.name end
  return res, err
end

-- ---- aggregation ---------------------------------------------------------------------------------

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return setmetatable(c, getmetatable(t))
end

-- Rebuild the namespaced tool and prompt names from every ready server, in config order, so a
-- name only depends on the config and the servers' own lists.
function Hub:_rebuild()
  local sep, max = self.sep, self.max_name
  for _, kind in ipairs({ "tools", "prompts" }) do
    local used, list, by = {}, json.array(), {}
    for _, name in ipairs(self.order) do
      local rec = self.recs[name]
      for _, item in ipairs(rec[kind]) do
        if type(item) == "table" and type(item.name) == "string"
            and not (kind == "tools" and rec.off_tools[item.name]) then
          local full = rec.prefix .. sep .. sanitize(item.name)
          if #full > max then full = full:sub(1, max - 7) .. "_" .. short_hash(name .. "\0" .. item.name) end
          local base, k = full, 2
          while used[full] do
            local suffix = "_" .. k
            full = (#base + #suffix > max) and (base:sub(1, max - #suffix) .. suffix) or (base .. suffix)
            k = k + 1
          end
          used[full] = true
          local c = copy(item)
          c.name, c.server, c.original_name = full, name, item.name
          list[#list + 1] = c
          by[full] = { rec = rec, name = item.name, def = item }
        end
      end
    end
    self[kind .. "_list"] = list
    self.names[kind] = by
  end
  local resources, templates, uris = json.array(), json.array(), {}
  for _, name in ipairs(self.order) do
    local rec = self.recs[name]
    for _, r in ipairs(rec.resources) do
      if type(r) == "table" and type(r.uri) == "string" then
        local c = copy(r)
        c.server = name
        resources[#resources + 1] = c
        if not uris[r.uri] then uris[r.uri] = rec end
      end
    end
    for _, t in ipairs(rec.templates) do
      if type(t) == "table" then
        local c = copy(t)
        c.server = name
        templates[#templates + 1] = c
      end
    end
  end
  self.resources_list, self.templates_list, self.uris = resources, templates, uris
end

--- Every tool of every ready server: copies of the servers' definitions with `name` namespaced
--- (`server__tool`), `server` and `original_name`. Tools in a server's disabled_tools are left out.
---@return table[]
function Hub:list_tools() return self.tools_list end

--- Every prompt, namespaced the same way as tools.
---@return table[]
function Hub:list_prompts() return self.prompts_list end

--- Every resource of every ready server, each with `server`.
---@return table[]
function Hub:list_resources() return self.resources_list end

--- Every resource template of every ready server, each with `server`.
---@return table[]
function Hub:list_resource_templates() return self.templates_list end

--- The server and the server's own name behind a namespaced tool or prompt name.
---@param name string
---@param kind string|nil "tools" (default) or "prompts"
---@return string|nil server, string|nil original_name
function Hub:resolve(name, kind)
  local hit = self.names[kind or "tools"][name]
  if hit then return hit.rec.name, hit.name end
  return nil
end

function Hub:_server_or_raise(name, fname)
  local rec = self.recs[name]
  if rec == nil then error("mcp.hub:" .. fname .. ": no server named '" .. tostring(name) .. "'", 3) end
  return rec
end

local function split_opts(opts)
  if opts == nil then return nil, nil end
  if type(opts) ~= "table" then error("mcp.hub: options must be a table", 3) end
  if opts.server == nil then return nil, opts end
  local o = {}
  for k, v in pairs(opts) do if k ~= "server" then o[k] = v end end
  return opts.server, o
end

-- Ask a verify or approve hook (it may block or yield: sched.pcall, also in a task on PUC 5.1).
-- Returns the answer ("allow", "always", "deny"), the reason, and what the hook raised (denied).
local function ask_hook(hook, req, answers)
  local ok, answer, reason = sched.pcall(hook, req)
  if not ok then return "deny", nil, answer end
  if answer == true then answer = "allow" end
  if answer == false or answer == nil then answer = "deny" end
  if not answers[answer] then
    error("mcp.hub: " .. answers.name .. " must answer " .. answers.list .. ", got " .. tostring(answer), 0)
  end
  return answer, reason
end

local VERIFY_ANSWERS = { allow = true, deny = true, name = "verify", list = '"allow" or "deny"' }
local APPROVE_ANSWERS = { allow = true, deny = true, always = true, name = "approve", list = '"allow", "deny" or "always"' }

-- Approval: the verify hook on every call (an integrity check: auto_approve does not skip it),
-- then auto_approve (true or the tool listed), an earlier "always", else the approve hook.
-- Returns true, or nil, reason (denied), or nil, nil, raised, hook name (the hook raised: denied).
function Hub:_approve(rec, tool, full, arguments, def)
  local verify, hook = self.opts.verify, self.opts.approve
  local consented = rec.spec.auto_approve == true or rec.auto[tool] or rec.always[tool] or hook == nil
  if consented and verify == nil then return true end
  local req = {
    server = rec.name, tool = tool, name = full, arguments = arguments or json.object(),
    annotations = def and type(def.annotations) == "table" and def.annotations or json.object(), definition = def,
  }
  if verify ~= nil then
    local answer, reason, raised = ask_hook(verify, req, VERIFY_ANSWERS)
    if raised ~= nil then return nil, nil, raised, "verify" end
    if answer ~= "allow" then return nil, reason end
  end
  if consented then return true end
  local answer, reason, raised = ask_hook(hook, req, APPROVE_ANSWERS)
  if raised ~= nil then return nil, nil, raised, "approve" end
  if answer == "always" then rec.always[tool] = true end
  if answer == "deny" then return nil, reason end
  return true
end

-- A namespaced name that no ready server lists, whose prefix is a server's that is on its way
-- (connecting, restarting): "unavailable" from that server, not "not_found", so a caller that
-- retries on unavailable waits out a restart; also one that waits for the user (login_required,
-- answer_required: the error says so). (A failed or disabled server's stays not_found.)
function Hub:_unavailable_owner(name, method)
  local at = name:find(self.sep, 1, true)
  if at == nil then return nil end
  local prefix = name:sub(1, at - 1)
  for _, sname in ipairs(self.order) do
    local rec = self.recs[sname]
    if rec.prefix == prefix and (rec.state == "restarting" or rec.state == "connecting" or WAITS_FOR_USER[rec.state]) then
      return self:_route(rec, method, function() end)
    end
  end
  return nil
end

--- Call a tool by its namespaced name (or by the server's own name with opts.server). Runs the
--- approval hook first; a denied call (also one whose hook raised: err.cause is what it raised)
--- returns nil, err with kind "denied" and the tool is not called.
---@param name string
---@param arguments table|nil
---@param opts table|nil the client's call_tool opts, plus server
---@return table|nil result, mcp.Error|nil err
function Hub:call_tool(name, arguments, opts)
  if type(name) ~= "string" then error("mcp.hub:call_tool: name must be a string", 2) end
  if arguments ~= nil and type(arguments) ~= "table" then error("mcp.hub:call_tool: arguments must be a table", 2) end
  local server, copts = split_opts(opts)
  local rec, tool, def
  if server ~= nil then
    rec, tool = self:_server_or_raise(server, "call_tool"), name
    for _, t in ipairs(rec.tools) do if t.name == name then def = t end end
  else
    local hit = self.names.tools[name]
    if hit == nil then
      local _, uerr = self:_unavailable_owner(name, "tools/call")
      if uerr then return nil, uerr end
      return nil, hub_error("not_found", "unknown tool '" .. name .. "' (no ready server of this hub has it)",
        { method = "tools/call" })
    end
    rec, tool, def = hit.rec, hit.name, hit.def
  end
  if rec.off_tools[tool] then
    return nil, hub_error("denied", "tool '" .. tool .. "' of server '" .. rec.name .. "' is disabled in the config",
      { server = rec.name, method = "tools/call" })
  end
  local full = rec.prefix .. self.sep .. sanitize(tool)
  local ok, reason, raised, which = self:_approve(rec, tool, full, arguments, def)
  if not ok and raised ~= nil then
    return nil, hub_error("denied", "call to tool '" .. tool .. "' of server '" .. rec.name
      .. "' was denied: the " .. which .. " hook raised: " .. tostring(raised),
      { server = rec.name, method = "tools/call", cause = raised })
  end
  if not ok then
    return nil, hub_error("denied", "call to tool '" .. tool .. "' of server '" .. rec.name .. "' was denied"
      .. (reason and (": " .. tostring(reason)) or ""), { server = rec.name, method = "tools/call" })
  end
  return self:_route(rec, "tools/call", function(c) return c:call_tool(tool, arguments, copts) end)
end

--- Get a prompt by its namespaced name (or the server's own name with opts.server).
---@param name string
---@param arguments table|nil
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Hub:get_prompt(name, arguments, opts)
  if type(name) ~= "string" then error("mcp.hub:get_prompt: name must be a string", 2) end
  local server, copts = split_opts(opts)
  local rec, prompt
  if server ~= nil then
    rec, prompt = self:_server_or_raise(server, "get_prompt"), name
  else
    local hit = self.names.prompts[name]
    if hit == nil then
      local _, uerr = self:_unavailable_owner(name, "prompts/get")
      if uerr then return nil, uerr end
      return nil, hub_error("not_found", "unknown prompt '" .. name .. "'", { method = "prompts/get" })
    end
    rec, prompt = hit.rec, hit.name
  end
  return self:_route(rec, "prompts/get", function(c) return c:get_prompt(prompt, arguments, copts) end)
end

local function template_matches(template, uri)
  if type(template) ~= "string" then return false end
  local pat = "^" .. template:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"):gsub("{[^}]*}", ".+") .. "$"
  return uri:match(pat) ~= nil
end

--- Read a resource: the server that listed the URI (or whose template matches it), or opts.server.
---@param uri string
---@param opts table|nil
---@return table|nil result, mcp.Error|nil err
function Hub:read_resource(uri, opts)
  if type(uri) ~= "string" then error("mcp.hub:read_resource: uri must be a string", 2) end
  local server, copts = split_opts(opts)
  local rec = server ~= nil and self:_server_or_raise(server, "read_resource") or self.uris[uri]
  if rec == nil then
    for _, t in ipairs(self.templates_list) do
      if template_matches(t.uriTemplate, uri) then
        rec = self.recs[t.server]
        break
      end
    end
  end
  if rec == nil then
    return nil, hub_error("not_found", "no server of this hub lists the resource " .. uri .. " (pass opts.server)",
      { method = "resources/read" })
  end
  return self:_route(rec, "resources/read", function(c) return c:read_resource(uri, copts) end)
end

-- ---- servers ---------------------------------------------------------------------------------------

--- The servers in config order: {name, state, type, error, client, attempts, prefix}.
---@return table[]
function Hub:servers()
  local out = {}
  for _, name in ipairs(self.order) do
    local rec = self.recs[name]
    -- (spec: the entry as last read; a restart that read it again, and asked, gives the new one)
    out[#out + 1] = { name = name, state = rec.state, type = rec.legacy_sse and "sse" or rec.spec.type,
      error = rec.error, client = rec.client, spec = rec.spec,
      attempts = rec.attempts, prefix = rec.prefix }
  end
  return out
end

--- The connected client of a server (nil unless ready): for anything the hub does not route.
---@param name string
---@return mcp.Client|nil
function Hub:client(name)
  local rec = self:_server_or_raise(name, "client")
  return rec.state == "ready" and rec.client or nil
end

--- A server's state: "connecting", "ready", "failed", "restarting", "disabled", "login_required"
--- (a restart of the hub's own, or a background_start, needed a login, which it does not start:
--- hub:restart(name) logs in) or "answer_required" (a background_start did not ask the trust
--- question or an ${input:...} its entry needs: hub:restart(name) asks).
---@param name string
---@return string state, mcp.Error|nil error
function Hub:state(name)
  local rec = self:_server_or_raise(name, "state")
  return rec.state, rec.error
end

local function stop(self, rec)
  rec.generation = rec.generation + 1
  if rec.timer then rec.timer:cancel(); rec.timer = nil end
  drop_keeper(rec)
  local c = rec.client
  rec.client = nil
  rec.tools, rec.resources, rec.templates, rec.prompts = {}, {}, {}, {}
  if c then c:close() end
end

--- Stop and start a server again (restart counter reset); waits like mcp.hub unless wait == false.
---@param name string
---@param wait boolean|nil
function Hub:restart(name, wait)
  local rec = self:_server_or_raise(name, "restart")
  if self.closed then return end
  stop(self, rec)
  rec.attempts = 0
  self:_changed("all", rec)
  if rec.spec.error and not self:_reload(rec) then return end
  self:_start(rec)
  if wait ~= false then self:wait() end
end

-- Connect a second client for rec while rec.client goes on serving. Returns it or nil, err.
function Hub:_connect_beside(rec)
  local ok, client = pcall(self._new_client, self, rec)
  if not ok then
    return nil, hub_error("config", "server '" .. rec.name .. "': " .. tostring(client), { server = rec.name })
  end
  local cok, err = client:connect()
  if not cok then
    client:close()
    return nil, hub_error(err.kind, "server '" .. rec.name .. "' failed to reconnect: " .. tostring(err.message)
      .. stderr_hint(rec), { server = rec.name, cause = err })
  end
  return client
end

--- Reconnect a ready server without a gap: a new client connects while the old one goes on
--- serving calls; then the new one takes over and the old one is closed once the calls it carries
--- have ended. When the new one cannot connect, the old one stays (nil, err). A server that is not
--- ready is restarted instead. In the calling task (or blocking) unless wait == false.
---@param name string
---@param wait boolean|nil
---@return boolean|nil ok, mcp.Error|nil err
function Hub:reconnect(name, wait)
  local rec = self:_server_or_raise(name, "reconnect")
  if self.closed then return nil, hub_error("closed", "the hub is closed", { server = name }) end
  local old, gen = rec.client, rec.generation
  if rec.state ~= "ready" or old == nil then
    self:restart(name, wait)
    return true
  end
  if wait == false then
    sched.spawn_handler(function(e) self:_report(hub_error("handler", "reconnect raised: " .. tostring(e))) end,
      function()
        local ok, err = self:reconnect(name)
        if not ok then self:_report(err) end
      end)
    return true
  end
  local client, err = self:_connect_beside(rec)
  if not client then return nil, err end
  if self.closed or rec.client ~= old or rec.generation ~= gen then
    client:close()
    return nil, hub_error("closed", "server '" .. name .. "' was stopped while reconnecting", { server = name })
  end
  rec.generation = gen + 1
  rec.client, rec.attempts = client, 0
  self:_refresh(rec, client, "tools")
  self:_refresh(rec, client, "resources")
  self:_refresh(rec, client, "prompts")
  if rec.inflight[old] then rec.retiring[old] = true else old:close() end
  if rec.client ~= client then
    -- stopped (disabled, restarted, closed) while listing: its state is what stopped it
    return nil, hub_error("closed", "server '" .. name .. "' was stopped while reconnecting", { server = name })
  end
  rec.ready_since = core.now_ms()
  self:_changed("all", rec)
  self:_set_state(rec, "ready")
  return true
end

-- Read a server's entry again, enabled (one the config disabled, or one that could not be read,
-- whose variables may be set by now). true, or false with the server marked failed.
function Hub:_reload(rec)
  local raw = rec.spec.raw
  if type(raw) == "table" then
    raw = {}
    for k, v in pairs(rec.spec.raw) do raw[k] = v end
    raw.disabled, raw.enabled = nil, nil
  end
  -- The file's input declarations come along, so ${input:...} is asked as declared (a password
  -- hidden, the description shown).
  local decls = {}
  for _, d in pairs(self.config.inputs or {}) do
    decls[#decls + 1] = { id = d.id, type = d.type, description = d.description, password = d.password,
      default = d.default, options = d.options }
  end
  table.sort(decls, function(a, b) return a.id < b.id end)
  local doc = { mcpServers = { [rec.name] = raw } }
  if #decls > 0 then doc.inputs = decls end
  -- Read with the trust the file had: a server of an untrusted file is asked about again (a yes
  -- remembered for the content the entry came from counts, and a yes is remembered for it, while
  -- the file still has that content: a yes for content no longer on disk would replace the file's
  -- record, and the answers remembered for it as it is now would be lost).
  local lopts = load_opts(self.opts)
  lopts.file, lopts.trusted = self.config.file, self.config.trusted ~= false
  local sha = self.config.sha256
  if sha and lopts.file then
    local text = files.read(lopts.file)
    if text and config.trust.hash(text) == sha then lopts.sha256 = sha end
  end
  local loaded, err = config.load(doc, lopts)
  if not loaded then
    self:_set_state(rec, "failed", { error = err })
    self:_report(err)
    return false
  end
  set_spec(rec, loaded.servers[rec.name])
  return true
end

--- Stop a server and mark it disabled (its tools leave the lists).
---@param name string
function Hub:disable(name)
  local rec = self:_server_or_raise(name, "disable")
  stop(self, rec)
  self:_changed("all", rec)
  self:_set_state(rec, "disabled")
end

--- Start a disabled server (a server disabled in the config is interpolated now), or one waiting
--- in "answer_required" (its entry is read again, and asks).
---@param name string
---@param wait boolean|nil
function Hub:enable(name, wait)
  local rec = self:_server_or_raise(name, "enable")
  if (rec.state ~= "disabled" and rec.state ~= "answer_required") or self.closed then return end
  if (rec.spec.disabled or rec.spec.error) and not self:_reload(rec) then return end
  rec.attempts = 0
  self:_start(rec)
  if wait ~= false then self:wait() end
end

--- Close every server (idempotent). Outside a task it waits, bounded, until they are reaped.
function Hub:close()
  if self.closed then return true end
  self.closed = true
  local clients = {}
  for _, name in ipairs(self.order) do
    local rec = self.recs[name]
    if rec.client then clients[#clients + 1] = rec.client end
    rec.generation = rec.generation + 1
    if rec.timer then rec.timer:cancel(); rec.timer = nil end
    drop_keeper(rec)
    rec.client = nil
    rec.tools, rec.resources, rec.templates, rec.prompts = {}, {}, {}, {}
  end
  self:_rebuild()
  -- Close them all at once (in tasks, where close returns at once), then wait for the lot.
  for _, c in ipairs(clients) do sched.spawn(function() c:close() end) end
  -- In a host's loop (mcp.nvim) the tasks and the reaping run on its next steps.
  if sched.in_host_loop() then
    self:_check_waiters()
    return true
  end
  sched.wait_until(function()
    if sched.has_ready() then return false end
    for _, c in ipairs(clients) do
      local t = c.transport
      if t.reaped and not t:reaped() then return false end
      if t.busy and t:busy() then return false end
    end
    return true
  end, 5000)
  self:_check_waiters()
  return true
end
Hub.__close = Hub.close

return M
