--- The protocol eras behind one interface. A client holds one era object (client.era), made by
--- Client:connect through M.decide: lua/mcp/era/legacy.lua (initialize, sessions, 2024-11-05 ..
--- 2025-11-25) or lua/mcp/era/modern.lua (server/discover, 2026-07-28). client.lua calls only the
--- methods of M.INTERFACE and never asks which era it has; the eras reach the client only through
--- its internal interface (docs/ARCHITECTURE.md, The protocol eras).
local legacy = require("mcp.era.legacy")
local modern = require("mcp.modern")
local json = require("mcp.json")
local probe = require("mcp.probe")
local protocol = require("mcp.protocol")

local M = {}

--- The methods every era object implements (spec/era_spec.lua checks both).
M.INTERFACE = {
  "capabilities", -- () -> the ClientCapabilities this client declares
  "request", -- (method, params, opts) -> result | nil, err
  "ping", -- (opts) -> {} | nil, err
  "set_logging_level", -- (level, opts) -> {} | nil, err
  "subscribe", -- (uri, opts) -> {} | nil, err
  "unsubscribe", -- (uri, opts) -> {} | nil, err
  "on_notification", -- (method, params) -> false to drop it
  "handlers_changed", -- () the notification handlers changed
  "roots_changed", -- () -> true | nil, err: the roots changed
  "is_task_result", -- (method, res, opts) -> whether call_tool follows res as a task
  "tool_call_params", -- (params, task) -> the tools/call params (asked only with a task)
  "tool_result", -- (res, opts) -> the tools/call result (a task followed) | nil, err (asked only without content)
  "tools_page", -- (res, first) -> the tools/list page as the client returns it
  "list_tasks", -- (opts) -> tasks | nil, err
  "start", -- (init, reattached) -> true | nil, err: the connection is up
  "clear_cache", -- () forget cached results
  "connection_closed", -- (reason) the transport closed (legacy SSE: connect again in the background)
  "close", -- () the era ends
}

--- A legacy era object.
---@param client mcp.Client
---@param o table client_info, connect_timeout_ms
---@return mcp.LegacyEra
function M.legacy(client, o)
  return legacy.new(client, o)
end

--- A modern era object speaking version.
---@param client mcp.Client
---@param o table client_info, tool_headers, max_input_rounds
---@param version string
---@return mcp.ModernEra
function M.modern(client, o, version)
  -- loaded only for a modern connection: a legacy server's client never maps the modern era
  return require("mcp.era.modern").new(client, { version = version, tool_headers = o.tool_headers, client_info = o.client_info,
    max_input_rounds = o.max_input_rounds })
end

-- The server/discover probe. Returns "modern", init_result, era; "legacy", version|nil
-- (initialize, with that version when the server named one); "restart" (a stdio server closed
-- on the probe); or nil, err (a modern server we cannot talk to: never a fallback). While it
-- waits, the client's era is the probe's; after, idle (the legacy one).
local function discover(client, o, idle)
  local retried = false
  local version = modern.MODERN_PROTOCOL_VERSION
  while true do
    local era = M.modern(client, o, version)
    client:_set_transport_version(version)
    local opts, watch = probe.start({ timeout_ms = o.discovery_timeout_ms, startup_ms = o.discovery_startup_ms,
      spawned = client:_can_respawn(), authorizing = client:_authorizing() }, retried)
    client:_use_era(era, watch)
    local res, err = client:request("server/discover", nil, opts)
    client:_use_era(idle, nil)
    err = watch:finish(err)
    if res ~= nil then
      local init = modern.init_result_from_discover(res)
      if init then
        init.protocolVersion = version
        return "modern", init, era
      end
      break
    end
    if err.kind == "closed" and client:_can_respawn() then
      -- A server that could not start at all (126/127: the command was not found or could not
      -- run; or it died before reading the probe) is not started a second time: that would only
      -- print its errors twice.
      if probe.failed_at_start(err) then return nil, err end
      return "restart", err
    end
    local what, v = modern.classify_probe_error(err, retried)
    if what == nil then return nil, v end
    if what ~= "retry" then
      if err.kind == "timeout" then client:_report(probe.fallback_error(err)) end
      client:_set_transport_version(nil)
      return "legacy", v
    end
    version, retried = v, true
  end
  client:_set_transport_version(nil)
  return "legacy"
end

--- Decide the protocol era of a new connection (the transport is started): the server/discover
--- probe (unless a legacy version was asked for, there is a session to reattach to, or discovery
--- is off) with its fallback to initialize, the modern era without the probe (a modern o.want
--- with discovery off), or the initialize handshake (or o.reattach's result).
---@param client mcp.Client
---@param o table want (the configured protocol_version), version (the one initialize asks for),
--- reattach (an InitializeResult), discovery (the config allows the probe and the transport
--- supports it), discovery_timeout_ms, discovery_startup_ms, and the eras' settings (client_info, tool_headers,
--- max_input_rounds, connect_timeout_ms)
---@return table|nil era, table|mcp.Error init_or_err the InitializeResult (or the probe's stand-in)
function M.decide(client, o)
  local idle = M.legacy(client, o)
  local version, want = o.version, o.want
  local wants_modern = want == nil or modern.is_modern_version(want)
  if o.reattach == nil and wants_modern and o.discovery then
    local what, x, era = discover(client, o, idle)
    if what == nil then return nil, x end
    if what == "modern" then return era, x end
    if what == "restart" then
      local ok, err = client:_restart_after_probe(x)
      if not ok then return nil, err end
    elseif x ~= nil then
      version = x -- the server named the legacy version to use
    end
  elseif o.reattach == nil and want ~= nil and modern.is_modern_version(want) then
    -- Modern without the probe: the server's capabilities are not known.
    return M.modern(client, o, want), { protocolVersion = want, capabilities = json.object(), serverInfo = json.object() }
  end
  if modern.is_modern_version(version) then version = protocol.PROTOCOL_VERSION end
  client:_use_era(idle, nil)
  local init, err = idle:initialize(version, o.reattach)
  if init == nil then return nil, err end
  return idle, init
end

return M
