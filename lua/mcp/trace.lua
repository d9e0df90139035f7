--- Traffic tracing: client config `on_message(direction, message)` sees every JSON-RPC message
--- the Lua layer sends ("send") or receives ("receive"), as a decoded table
--- ({jsonrpc, id, method, params} / {jsonrpc, id, result} / {jsonrpc, id, error}). It is
--- installed by wrapping the client's C session in a proxy, so untraced clients pay nothing.
--- Two messages the C core sends itself are traced as it tells the Lua layer of them: its answer
--- to a server's `ping` (the session reports each ping and whether its answer went out) and the
--- `notifications/cancelled` it sends when a request times out (same requestId and reason).
--- The callback runs synchronously (from inside the loop's dispatch for received messages):
--- it must not yield or wait; an error in it goes to the client's on_error.
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function emit(client, direction, msg)
  local fn = client:_hook("on_message")
  if not fn then return end
  local ok, err = pcall(fn, direction, msg)
  if not ok then
    client:_report(errors.new(nil, "on_message raised: " .. tostring(err), nil, { kind = "handler" }))
  end
end
M.emit = emit

--- The incoming side: called from Client:_on_event for server requests and notifications.
function M.incoming(client, kind, a, b, c)
  if kind == "request" then
    emit(client, "receive", { jsonrpc = "2.0", id = a, method = b, params = c })
  elseif kind == "notification" then
    emit(client, "receive", { jsonrpc = "2.0", method = a, params = b })
  elseif kind == "ping" then -- answered by the core (session.c); b: whether the answer went out
    emit(client, "receive", { jsonrpc = "2.0", id = a, method = "ping" })
    if b then emit(client, "send", { jsonrpc = "2.0", id = a, result = json.object() }) end
  end
end

--- Wrap a C session so that the messages sent through it and the responses to its requests
--- are traced. Every other method is forwarded unchanged.
---@param client table the mcp.Client
---@param session userdata
---@return table proxy
function M.wrap(client, session)
  session:trace_pings(true)
  local proxy = {}
  function proxy:request(method, params, timeout, cb, id, ...)
    local traced_id
    local rid, err = session:request(method, params, timeout, function(res, code, message, data, kind, status, ...)
      if kind == nil then
        emit(client, "receive", { jsonrpc = "2.0", id = traced_id, result = res })
      elseif kind == "rpc" then
        emit(client, "receive", { jsonrpc = "2.0", id = traced_id, error = { code = code, message = message, data = data } })
      elseif kind == "timeout" then
        -- the core told the server at that moment (session.c on_timeout), with this reason
        emit(client, "send", { jsonrpc = "2.0", method = "notifications/cancelled",
          params = { requestId = traced_id, reason = message } })
      end
      return cb(res, code, message, data, kind, status, ...)
    end, id, ...)
    if rid then
      traced_id = rid
      emit(client, "send", { jsonrpc = "2.0", id = rid, method = method, params = params })
    end
    return rid, err
  end
  function proxy:notify(method, params, ...)
    local ok, err = session:notify(method, params, ...)
    if ok then emit(client, "send", { jsonrpc = "2.0", method = method, params = params }) end
    return ok, err
  end
  function proxy:respond(id, result, ...)
    emit(client, "send", { jsonrpc = "2.0", id = id, result = result })
    return session:respond(id, result, ...)
  end
  function proxy:respond_error(id, code, message, data, ...)
    emit(client, "send", { jsonrpc = "2.0", id = id, error = { code = code, message = message, data = data } })
    return session:respond_error(id, code, message, data, ...)
  end
  function proxy:cancel(id, reason, ...)
    emit(client, "send", { jsonrpc = "2.0", method = "notifications/cancelled",
      params = { requestId = id, reason = reason } })
    return session:cancel(id, reason, ...)
  end
  return setmetatable(proxy, {
    __index = function(_, k)
      local v = session[k]
      if type(v) == "function" then
        return function(_, ...) return v(session, ...) end
      end
      return v
    end,
  })
end

return M
