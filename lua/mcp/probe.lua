--- The deadline of the server/discover probe. The probe decides the protocol era, so a clock must
--- not decide it for a server that is merely slow to start: a server the transport spawns (stdio)
--- has `protocol_discovery_startup_ms` to show it is alive (any line on its stdout: the answer, a
--- notification, a banner), and from that first sign of life `protocol_discovery_timeout_ms`.
--- A server that is already up (streamable HTTP, a retried probe) has
--- `protocol_discovery_timeout_ms` from the send, as before. A fallback to initialize that a
--- deadline decided is reported to on_error (fallback_error): the era then says nothing about the
--- server. Measured against real servers: docs/INTEROP.md.
local core = require("mcp.core")
local errors = require("mcp.errors")

local M = {}

local Watch = {}
Watch.__index = Watch

-- The cancel token interface send_attempt reads (cancelled, _attach), fired by the watch's timer.
local function token()
  local t = { cancelled = false }
  function t:_attach(hook) self.hook = hook end
  function t:cancel(reason)
    if self.cancelled then return end
    self.cancelled, self.reason = true, reason
    if self.hook then self.hook(reason) end
  end
  return t
end

-- The time the probe's exchange is held for an authorization (a login: the transport's
-- authorizing()) is the user's, not the server's: a deadline that falls in it, or less than ms
-- after its end, moves to ms after the end. Returns the ms to wait again, or nil.
local function postponed(self)
  if self.authorizing == nil then return nil end
  local busy, ended = self.authorizing()
  if busy then return self.ms end
  local left = ended and (ended + self.ms - core.now_ms())
  if left and left > 0 then return left end
  return nil
end

function Watch:_arm(ms, why)
  if self.timer then self.timer:cancel() end
  self.timer = core.timer(ms, function()
    self.timer = nil
    local later = postponed(self)
    if later then return self:_arm(later, why) end
    self.expired = why
    self.token:cancel(why)
  end)
end

--- Start watching one probe.
---@param o table timeout_ms (protocol_discovery_timeout_ms), startup_ms
--- (protocol_discovery_startup_ms), spawned (the transport starts its server: it has a start-up),
--- authorizing (the transport's authorizing(), nil when it has no OAuth: see postponed)
---@param alive boolean the server has already answered (a retried probe)
---@return table opts the per-call options to send the probe with
---@return table watch call watch:alive() on every sign of life, watch:finish(err) after it
function M.start(o, alive)
  local w = setmetatable({ ms = o.timeout_ms, authorizing = o.authorizing }, Watch)
  if alive or not o.spawned then
    if w.authorizing == nil or not (w.ms and w.ms > 0) then return { timeout_ms = w.ms }, w end
    w.token, w.lively = token(), true
    w:_arm(w.ms, "no answer within " .. w.ms .. " ms (protocol_discovery_timeout_ms)")
    return { timeout_ms = 0, cancel = w.token }, w
  end
  local startup = o.startup_ms
  w.token = token()
  w:_arm(startup, "the server wrote nothing within " .. startup .. " ms of its start (protocol_discovery_startup_ms)")
  return { timeout_ms = 0, cancel = w.token }, w
end

--- The server showed it is alive: the probe now has protocol_discovery_timeout_ms.
function Watch:alive()
  if self.token == nil or self.lively or self.expired or self.done then return end
  self.lively = true
  self:_arm(self.ms, "no answer within " .. self.ms .. " ms of the server's first line (protocol_discovery_timeout_ms)")
end

--- The probe is answered or failed: stop the timer. An expiry becomes a timeout error.
---@param err mcp.Error|nil
---@return mcp.Error|nil
function Watch:finish(err)
  self.done = true
  if self.timer then self.timer:cancel() end
  self.timer = nil
  if err ~= nil and self.expired and err.kind == "cancelled" then
    return errors.new(nil, "request timed out: " .. self.expired, nil,
      { kind = "timeout", method = "server/discover", cause = err })
  end
  return err
end

--- Whether the probe's close says the server never started: its exit status 126 or 127 (the
--- shell's or env's "cannot execute" and "command not found", as npx and uvx wrappers pass on),
--- or it went before reading its input (the stdio transport saw the probe still unread in its
--- stdin pipe: it died of its own start, so a second start would only die again and print its
--- errors twice). A server that read the probe and then closed is started again for initialize.
---@param err mcp.Error
---@return boolean
function M.failed_at_start(err)
  local msg = tostring(err.message)
  local status = msg:match("exited with status (%d+)")
  return status == "126" or status == "127" or msg:find("before reading its input", 1, true) ~= nil
end

--- The on_error report of a fallback to initialize that a deadline decided.
---@param err mcp.Error the probe's timeout
---@return mcp.Error
function M.fallback_error(err)
  return errors.new(nil, "server/discover got no answer (" .. err.message .. "); fell back to initialize. "
    .. "A 2026-07-28 server slower than that needs a longer protocol_discovery_startup_ms or "
    .. "protocol_discovery_timeout_ms; a legacy protocol_version skips the probe",
    nil, { kind = "timeout", method = "server/discover", cause = err })
end

return M
