--- An in-process transport pair (mcp.memory_transport_pair): two connected endpoints that each
--- implement the transport contract, for tests and for embedding a server written in Lua in the
--- same process. What one endpoint sends, the other's events.message receives (with the send
--- options as a second argument), from the loop, in order; closing one closes the other.
local core = require("mcp.core")

local M = {}

---@class mcp.MemoryTransport
local Endpoint = {}
Endpoint.__index = Endpoint

local function deliver_all(self)
  self.scheduled = false
  while self.head <= self.tail and self.events and not self.stopped do
    local item = self.queue[self.head]
    self.queue[self.head] = nil
    self.head = self.head + 1
    if item.close then
      self.stopped = true
      if self.events.close then self.events.close(item.reason) end
    else
      self.events.message(item.text, item.opts)
    end
  end
end

local function enqueue(self, item)
  self.tail = self.tail + 1
  self.queue[self.tail] = item
  if not self.scheduled and self.events then
    self.scheduled = true
    core.timer(0, function() deliver_all(self) end)
  end
end

--- Start receiving: events.message(text, send_opts) for each message the peer sends,
--- events.close(reason) when the peer closes. Messages sent before start wait for it.
---@param events table
---@return boolean|nil ok, string|nil err
function Endpoint:start(events)
  if self.closed then return nil, "the memory transport is closed" end
  if self.events then return nil, "the memory transport is already started" end
  if type(events) ~= "table" or type(events.message) ~= "function" then
    return nil, "start(events) needs events.message"
  end
  self.events = events
  if self.head <= self.tail and not self.scheduled then
    self.scheduled = true
    core.timer(0, function() deliver_all(self) end)
  end
  return true
end

--- Send one message (JSON text) to the peer.
---@param text string
---@param send_opts table|nil
---@return boolean|nil ok, string|nil err
function Endpoint:send(text, send_opts)
  if type(text) ~= "string" then error("memory transport: send(text) expects a string", 2) end
  if self.closed then return nil, "the memory transport is closed" end
  local peer = self.peer
  if peer.closed then return nil, "the peer closed the memory transport" end
  enqueue(peer, { text = text, opts = send_opts })
  return true
end

--- Close this endpoint; the peer's events.close fires with "the peer closed the connection".
---@param wait_ms number|nil unused (nothing to wait for)
---@return boolean
function Endpoint:close(wait_ms)
  local _ = wait_ms
  if self.closed then return true end
  self.closed = true
  self.stopped = true
  local peer = self.peer
  if not peer.closed then enqueue(peer, { close = true, reason = "the peer closed the connection" }) end
  return true
end

---@return boolean
function Endpoint:is_open()
  return not self.closed and self.events ~= nil
end

local function endpoint()
  return setmetatable({ queue = {}, head = 1, tail = 0, scheduled = false, closed = false }, Endpoint)
end

--- Two connected endpoints (client side, server side).
---@return mcp.MemoryTransport, mcp.MemoryTransport
function M.pair()
  local a, b = endpoint(), endpoint()
  a.peer, b.peer = b, a
  return a, b
end

return M
