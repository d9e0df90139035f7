--- The transport contract (docs/API.md "Transports"): what the client needs of a transport, and
--- the one place that attaches any transport to a session. A transport is any object with
---   start(events) -> true | nil, err      returns once messages can be sent; may wait
---   send(text, send_opts) -> true | nil, err
---   close(wait_ms)
--- and optionally `capabilities`, a table naming the optional methods it offers (docs/API.md).
--- The core's transports (stdio, streamable HTTP, legacy SSE: Lua objects holding a C handle,
--- mcp.transport.native) talk to the session in C, bound to the handle; any other object is
--- carried by a C bridge (core.lua_transport) that queues what crosses it and dispatches from the
--- loop, so its events may fire at any time, even inside send.
local core = require("mcp.core")
local errors = require("mcp.errors")
local sched = require("mcp.sched")

local M = {}

--- How long close() waits by default for a transport to finish (server reaped, DELETE done).
M.CLOSE_WAIT_MS = 5000

local REQUIRED = { "start", "send", "close" }

local function callable(v)
  if type(v) == "function" then return true end
  local mt = (type(v) == "table" or type(v) == "userdata") and getmetatable(v)
  return type(mt) == "table" and mt.__call ~= nil
end

local function core_handle(h)
  if type(h) ~= "userdata" then return nil end
  local mt = getmetatable(h)
  if type(mt) == "table" and mt.__mcp_transport == true then return h end
  return nil
end

--- The C handle of one of the core's transports (stdio, HTTP, SSE): the object's `handle`
--- (mcp.transport.native), or the handle itself; nil for any other transport.
---@param t any
---@return userdata|nil
function M.handle(t)
  if type(t) == "table" then return core_handle(rawget(t, "handle")) end
  return core_handle(t)
end

--- Whether t is one of the core's transports (stdio, HTTP, SSE): its messages go between it and
--- the session in C.
---@param t any
---@return boolean
function M.is_native(t)
  return M.handle(t) ~= nil
end

--- Check that t has the contract's methods. Returns true or nil, err (kind "config").
---@param t any
---@return boolean|nil ok, mcp.Error|nil err
function M.check(t)
  if type(t) ~= "table" and type(t) ~= "userdata" then
    return nil, errors.new(nil, "the transport must be an object with start, send and close methods, got a "
      .. type(t), nil, { kind = "config" })
  end
  local missing = {}
  for _, name in ipairs(REQUIRED) do
    local ok, v = pcall(function() return t[name] end)
    if not ok or not callable(v) then missing[#missing + 1] = name end
  end
  if #missing > 0 then
    return nil, errors.new(nil, "the transport breaks the contract: it has no " .. table.concat(missing, ", ")
      .. " method" .. (#missing > 1 and "s" or "") .. " (see docs/API.md, Transports)", nil, { kind = "config" })
  end
  return true
end

-- The events a Lua transport delivers, bound to its bridge. They only queue (the bridge
-- dispatches from the loop), so they may be called from anywhere, also inside send.
local function bridge_events(bridge)
  local ev = {}
  --- A message from the peer: JSON text (one message or a batch), or a decoded table.
  function ev.message(msg)
    if type(msg) == "table" then msg = require("mcp.json").encode(msg) end
    if type(msg) ~= "string" then
      bridge:push_error("protocol", "the transport delivered a " .. type(msg) .. " instead of a JSON message")
      return
    end
    bridge:push_message(msg)
  end
  --- A failure: with request_id, that request fails (err.status_code / response_headers /
  --- response_body are kept); without, a diagnostic that goes to the client's on_error.
  function ev.error(err, request_id)
    local msg = type(err) == "table" and tostring(err.message or err) or tostring(err)
    if request_id ~= nil then
      local status, headers, body
      if type(err) == "table" then
        status = tonumber(err.status_code)
        body = type(err.response_body) == "string" and err.response_body or nil
        if type(err.response_headers) == "table" then
          local lines = {}
          for name, value in pairs(err.response_headers) do
            if type(name) == "string" and (type(value) == "string" or type(value) == "number") then
              lines[#lines + 1] = name .. ": " .. tostring(value) .. "\r\n"
            end
          end
          headers = table.concat(lines)
        end
      end
      bridge:push_failure(request_id, msg, status, body, headers)
    else
      bridge:push_error("transport", msg)
    end
  end
  --- The connection is gone for good (every request in flight fails with reason).
  function ev.close(reason)
    bridge:push_closed(reason ~= nil and tostring(reason) or "the transport closed")
  end
  return ev
end

--- Attach transport t to a new session (core.session). Returns session, events (the events
--- table to pass to t:start; nil for the core's transports) or nil, err.
---@param t any
---@param handler function the session's event handler
---@return userdata|nil session, table|mcp.Error|nil events_or_err
function M.attach(t, handler)
  local handle = M.handle(t)
  if handle ~= nil then
    local ok, session = pcall(core.session, handle, handler)
    if not ok then return nil, errors.new(nil, tostring(session), nil, { kind = "config" }) end
    return session, nil
  end
  local ok, err = M.check(t)
  if not ok then return nil, err end
  local bridge = core.lua_transport(function(text, send_opts) return t:send(text, send_opts) end)
  local session = core.session(bridge, handler)
  return session, bridge_events(bridge)
end

local function describe(v)
  return type(v) == "string" and ("'" .. v .. "'") or type(v)
end

--- Start t: t:start(events, start_opts) under the contract. On any failure t is closed (whatever
--- it started is released) and nil, err returned: a raise or nil, err from start (kind
--- "transport", or the err itself when it is an mcp.Error), a return that is neither true nor
--- nil, err (kind "config").
---@param t any
---@param events table|nil
---@param start_opts table|nil timeout_ms: how long start may wait (the client's connect_timeout_ms or
---  request_timeout_ms); own: the start is the client's own work, no call asked for it (HTTP OAuth: never a login)
---@return boolean|nil ok, mcp.Error|nil err
function M.start(t, events, start_opts)
  -- start may wait (legacy SSE: for the endpoint event): a task yields through sched.pcall
  local ok, res, err = sched.pcall(t.start, t, events, start_opts or {})
  local failure
  if not ok then
    failure = errors.new(nil, "failed to connect transport: start() raised: " .. tostring(res), nil,
      { kind = "transport" })
  elseif res == nil or res == false then
    if errors.is_error(err) then
      failure = err
    else
      failure = errors.new(nil, "failed to connect transport: " .. tostring(err or "start() failed"), nil,
        { kind = "transport" })
    end
  elseif res ~= true then
    failure = errors.new(nil, "the transport breaks the contract: start() must return true or nil, err; it returned "
      .. describe(res), nil, { kind = "config" })
  end
  if failure == nil then return true end
  pcall(t.close, t, 0)
  return nil, failure
end

--- Close t under the contract (a raising close is reported, not propagated).
---@param t any
---@param wait_ms number|nil
---@return boolean|nil ok, string|nil err
function M.close(t, wait_ms)
  local ok, err = pcall(t.close, t, wait_ms or M.CLOSE_WAIT_MS)
  if not ok then return nil, tostring(err) end
  return true
end

return M
