--- The Lua objects around the core's transports (stdio, streamable HTTP, legacy SSE). An object
--- holds its C handle (`t.handle`): the session is bound to the handle in C
--- (mcp.transport.attach), so messages go between transport and session without a Lua string
--- per message; the object wraps start and close, declares its capabilities
--- (`t.capabilities`, docs/API.md "Transports") and passes the host's calls (session_id, pid,
--- ...) on to the handle. Nothing here touches the handle's metatable.
local M = {}

--- A class of such objects: its own methods go into the returned table; each name in forward
--- becomes a method that calls the handle's method of that name.
---@param forward string[]
---@return table
function M.class(forward)
  local class = {}
  class.__index = class
  for _, name in ipairs(forward) do
    class[name] = function(self, ...)
      local h = self.handle
      return h[name](h, ...)
    end
  end
  return class
end

--- An object of class around handle, with capabilities and the other fields of t (a new table
--- when nil).
---@param class table
---@param handle userdata
---@param capabilities table
---@param t table|nil
---@return table
function M.new(class, handle, capabilities, t)
  t = t or {}
  t.handle, t.capabilities = handle, capabilities
  return setmetatable(t, class)
end

return M
