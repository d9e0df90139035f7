--- The raw message surface (mcp.message_transport): for a host that already owns the connection
--- to a server (a process it spawned, a socket, an editor's job channel). The host hands lua-mcp
--- each message it reads with t:receive(text), takes lua-mcp's messages out through its send
--- function, and reports the end with t:closed(reason). The object implements the transport
--- contract, so mcp.new_client(t) works as with any transport.
local M = {}

---@class mcp.MessageTransport
local T = {}
T.__index = T

--- Contract: start(events). Messages received before start are delivered then.
function T:start(events)
  if self.is_closed then return nil, "the message transport is closed" end
  if self.events then return nil, "the message transport is already started" end
  self.events = events
  local early = self.early
  self.early = nil
  for _, item in ipairs(early) do
    if item.closed then
      events.close(item.reason)
    else
      events.message(item.text)
    end
  end
  return true
end

--- Contract: send(text, send_opts) calls the host's send function.
function T:send(text, send_opts)
  if self.is_closed then return nil, "the message transport is closed" end
  return self.host_send(text, send_opts or {})
end

--- Contract: close(wait_ms) calls the host's close function (once).
function T:close(wait_ms)
  if self.is_closed then return true end
  self.is_closed = true
  if self.host_close then self.host_close(wait_ms) end
  return true
end

--- Hand lua-mcp one message the host read (JSON text of one message or a batch, no framing).
---@param text string
function T:receive(text)
  if type(text) ~= "string" then error("mcp.message_transport: receive(text) expects a string", 2) end
  if self.is_closed then return end
  if self.events then self.events.message(text) else self.early[#self.early + 1] = { text = text } end
end

--- Tell lua-mcp the connection is gone (the process exited, the socket closed).
---@param reason string|nil
function T:closed(reason)
  reason = reason ~= nil and tostring(reason) or "the connection closed"
  if self.events then
    self.events.close(reason)
  elseif self.early then
    self.early[#self.early + 1] = { closed = true, reason = reason }
  end
end

---@return boolean
function T:is_open()
  return not self.is_closed and self.events ~= nil
end

--- Create a message transport. host: {send = fn(text, send_opts) -> true | nil, err (must not
--- yield), close = fn(wait_ms) (optional)}.
---@param host table
---@return mcp.MessageTransport
function M.new(host)
  if type(host) ~= "table" or type(host.send) ~= "function" then
    error("mcp.message_transport: {send = function(text, send_opts) ... end} expected", 2)
  end
  if host.close ~= nil and type(host.close) ~= "function" then
    error("mcp.message_transport: close must be a function", 2)
  end
  for k in pairs(host) do
    if k ~= "send" and k ~= "close" then
      require("mcp.util.options").check({ [k] = true }, { send = true, close = true }, "mcp.message_transport", 2)
    end
  end
  return setmetatable({ host_send = host.send, host_close = host.close, early = {} }, T)
end

return M
