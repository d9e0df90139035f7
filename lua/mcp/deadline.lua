--- Per-call timeouts that the core's fixed request timer cannot express (the TypeScript SDK's
--- `resetTimeoutOnProgress` and `maxTotalTimeout`):
---
---   reset_timeout_on_progress = true   every notifications/progress for the call restarts its
---                                      timeout_ms, so a long call that keeps reporting lives on
---   max_total_timeout_ms = n            the call fails after n ms whatever progress it reports
---
--- When either is set, the call's timers live here (loop timers) instead of in the session, and
--- expiry cancels the request (notifications/cancelled is sent) and completes it as a timeout,
--- exactly as the session's own timer would. `timeout_ms = 0` means no timeout.
local core = require("mcp.core")

local M = {}

local Deadline = {}
Deadline.__index = Deadline

--- Check the timeout options of one call (misuse raises, at the caller's caller's level).
---@param opts table per-call options
---@param level integer error level
function M.check_options(opts, level)
  local t = opts.timeout_ms
  if t ~= nil and (type(t) ~= "number" or t ~= t or t < 0) then
    error("mcp: timeout_ms must be a number >= 0 (0 = no timeout)", level + 1)
  end
  local m = opts.max_total_timeout_ms
  if m ~= nil and (type(m) ~= "number" or m ~= m or m <= 0) then
    error("mcp: max_total_timeout_ms must be a number > 0", level + 1)
  end
  local r = opts.reset_timeout_on_progress
  if r ~= nil and type(r) ~= "boolean" then
    error("mcp: reset_timeout_on_progress must be a boolean", level + 1)
  end
end

--- A deadline for one call, or nil when the session's fixed timer does the job.
---@param session userdata the client's C session
---@param opts table per-call options
---@param timeout_ms number the call's timeout (0 = none)
---@param client mcp.Client|nil the client
---@return table|nil
function M.new(session, opts, timeout_ms, client)
  if not opts.reset_timeout_on_progress and opts.max_total_timeout_ms == nil then return nil end
  return setmetatable({
    session = session,
    client = client,
    timeout_ms = timeout_ms,
    reset = opts.reset_timeout_on_progress == true,
    max_total_ms = opts.max_total_timeout_ms,
  }, Deadline)
end

function Deadline:_expire(message)
  if self.done or self.expired then return end
  self.expired = message
  if self.id then self.session:cancel(self.id, message) end
end

function Deadline:_arm()
  if self.timer then self.timer:cancel() end
  self.timer = nil
  if self.timeout_ms > 0 then
    local ms = self.timeout_ms
    self.timer = core.timer(ms, function() self:_expire("request timed out after " .. ms .. " ms") end)
  end
end

--- The progress handler to register for the call: restarts the timeout (when asked), then calls
--- the user's handler (or none). Returns nil when there is nothing to register.
---@param user_fn function|nil
---@return function|nil
function Deadline:progress_handler(user_fn)
  if not self.reset then return user_fn end
  return function(params)
    if not self.done and not self.expired then self:_arm() end
    if user_fn then return user_fn(params) end
  end
end

--- The request went out with this id: start the timers.
---@param id integer
function Deadline:start(id)
  self.id = id
  self:_arm()
  if self.max_total_ms then
    local ms = self.max_total_ms
    self.total_timer = core.timer(ms, function()
      self:_expire("request timed out after " .. ms .. " ms (max_total_timeout_ms)")
    end)
  end
end

--- The call completed: stop the timers; a cancellation caused by expiry becomes a timeout.
---@return string|nil kind, string|nil message
function Deadline:finish(kind, message)
  self.done = true
  if self.timer then self.timer:cancel() end
  if self.total_timer then self.total_timer:cancel() end
  self.timer, self.total_timer = nil, nil
  if self.expired and kind == "cancelled" then return "timeout", self.expired end
  return kind, message
end

return M
