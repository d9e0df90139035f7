--- stdio transport configuration: the child's environment (an allowlist of inherited variables
--- plus the caller's) and the mapping of the reference's StdioTransportConfig to the C core.
local core = require("mcp.core")
local native = require("mcp.transport.native")
local options = require("mcp.util.options")
local sched = require("mcp.sched")
local term = require("mcp.util.term")

local M = {}

-- The config each stdio transport was made from (weak keys: the transport object), so a
-- server that died on the discovery probe can be started again.
local configs = setmetatable({}, { __mode = "k" })

--- Inherited from the parent when set, as the reference (and the TS SDK) does.
M.INHERITED_ENV = { "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER" }

local function split_kv(entry, i)
  if type(entry) ~= "string" then error(("mcp.stdio_transport: env[%d] must be a \"KEY=VALUE\" string"):format(i), 4) end
  local k, v = entry:match("^([^=]+)=(.*)$")
  if not k then error(("mcp.stdio_transport: env[%d] must be a \"KEY=VALUE\" string"):format(i), 4) end
  return k, v
end

--- The complete environment of the child: env (a map {KEY=value} or an array {"KEY=value"})
--- wins over the inherited allowlist; inherited values starting with "()" are dropped
--- (shell function exports, Shellshock).
---@param env table|nil
---@return string[]
function M.environment(env)
  local out, seen = {}, {}
  if env ~= nil then
    if type(env) ~= "table" then error("mcp.stdio_transport: env must be a table", 3) end
    for i, entry in ipairs(env) do
      local k, v = split_kv(entry, i)
      seen[k] = true
      out[#out + 1] = k .. "=" .. v
    end
    for k, v in pairs(env) do
      if type(k) == "string" then
        if type(v) ~= "string" and type(v) ~= "number" then
          error(("mcp.stdio_transport: env.%s must be a string"):format(k), 3)
        end
        if k == "" or k:find("=", 1, true) then error("mcp.stdio_transport: invalid env name " .. k, 3) end
        seen[k] = true
        out[#out + 1] = k .. "=" .. tostring(v)
      end
    end
  end
  for _, k in ipairs(M.INHERITED_ENV) do
    local v = os.getenv(k)
    if v ~= nil and not seen[k] and v:sub(1, 2) ~= "()" then
      out[#out + 1] = k .. "=" .. v
    end
  end
  return out
end

--- Lines of a server's stderr waiting for the handler, at most (then they are dropped and counted).
M.DEFAULT_MAX_STDERR_LINES = 1000

local function report_failure(e)
  io.stderr:write("mcp: stderr handler failed: ", term.escape(e), "\n") -- (it may quote the server's line)
end

--- The C callback for a stderr handler fn(line): each line runs in a task of its own (so the
--- handler may yield), never inside the C callback. At most `max` lines wait or run at a time;
--- past that new lines are dropped and counted, and once the handler has caught up it gets one
--- line "mcp: N lines of server stderr dropped (the handler is slower than the server)".
---@param fn fun(line: string)
---@param max integer|nil
---@return fun(line: string)
function M.stderr_queue(fn, max)
  max = max or M.DEFAULT_MAX_STDERR_LINES
  if type(max) ~= "number" or max < 1 then
    error("mcp.stdio_transport: max_stderr_lines must be a positive number", 3)
  end
  local pending, dropped = 0, 0
  local deliver
  local function finished()
    pending = pending - 1
    if pending == 0 and dropped > 0 then
      local n = dropped
      dropped = 0
      deliver(("mcp: %d lines of server stderr dropped (the handler is slower than the server)"):format(n))
    end
  end
  local function run(line)
    fn(line)
    finished()
  end
  local function failed(e)
    report_failure(e)
    finished()
  end
  deliver = function(line)
    if pending >= max then
      dropped = dropped + 1
      return
    end
    pending = pending + 1
    sched.spawn_handler(failed, run, line)
  end
  return deliver
end

--- The stdio transport's config keys (StdioTransportConfig). Another key raises.
M.CONFIG_FIELDS = {
  command = true, args = true, env = true, cwd = true, working_dir = true, stderr = true, max_message_size = true,
  max_write_queue = true, max_stderr_lines = true, sandbox = true,
}

--- The stdio transport object (mcp.transport.native): the C handle's start and close under the
--- contract, its capabilities, and the host's methods passed on to the handle.
---@class mcp.StdioTransport
---@field handle userdata the C transport (the session is bound to it)
---@field capabilities table docs/API.md "Transports"
local Stdio = native.class({ "is_open", "pid", "reaped", "exit_text" })

function Stdio:__tostring() return "mcp.stdio_transport" end

--- Spawn the server. Returns true or nil, err. (events: unused; the session is attached in C.)
--- In a task the start runs on a helper thread and the task waits for it, so a host's step never
--- sleeps until the child reaches exec (issue 28); elsewhere the calling thread waits.
function Stdio:start()
  sched.pace_start() -- in a host loop, one server start per step
  local h = self.handle
  if sched.current() == nil then return h:start() end
  return sched.await(function(done)
    local ok, err = h:start(done)
    if not ok then done(nil, err) end
  end)
end

--- Close stdin and stop the server (SIGTERM, SIGKILL, bounded); outside a task and a host's
--- loop (sched.in_host_loop) wait up to wait_ms (default 5000) until it is reaped. Idempotent.
function Stdio:close(wait_ms)
  local h = self.handle
  h:close()
  if (wait_ms == nil or wait_ms > 0) and not sched.in_host_loop() then
    sched.wait_until(function() return h:reaped() end, wait_ms or 5000)
  end
  return true
end

--- A new, unstarted transport for the same server (one that died on the discovery probe).
function Stdio:respawn()
  return M.respawn(self)
end

-- The 2026-07-28 discovery probe runs on stdio, and a server that died on it is started again.
local CAPABILITIES = { protocol_discovery = true, respawn = true }

local function wrap(ccfg)
  local t = native.new(Stdio, core.stdio_transport(ccfg), CAPABILITIES)
  configs[t] = ccfg
  return t
end

--- Create a stdio transport (NewStdioTransport). cfg: command, args, env, cwd (or working_dir)
--- (strings without NUL bytes, else it raises), stderr ("inherit" | "discard" | function(line); with a sandbox, "inherit" is the host's
--- stderr through a pipe, each line escaped: a confined server gets no terminal),
--- max_message_size, max_write_queue, max_stderr_lines, sandbox (mcp.sandbox: a preset name or
--- {read, write, net, mode}).
---@param cfg table
---@return mcp.StdioTransport
function M.transport(cfg)
  if type(cfg) ~= "table" then error("mcp.stdio_transport: config table expected", 2) end
  options.check(cfg, M.CONFIG_FIELDS, "mcp.stdio_transport: config", 2)
  if type(cfg.command) ~= "string" or cfg.command == "" then
    error("mcp.stdio_transport: command must be a non-empty string", 2)
  end
  local args = cfg.args or {}
  if type(args) ~= "table" then error("mcp.stdio_transport: args must be an array of strings", 2) end
  for i = 1, #args do
    if type(args[i]) ~= "string" then error(("mcp.stdio_transport: args[%d] must be a string"):format(i), 2) end
  end
  local stderr = cfg.stderr
  if stderr ~= nil and type(stderr) ~= "function" and stderr ~= "inherit" and stderr ~= "discard" then
    error('mcp.stdio_transport: stderr must be "inherit", "discard" or a function', 2)
  end
  if (stderr == nil or stderr == "inherit") and cfg.sandbox ~= nil and cfg.sandbox ~= false then
    -- A confined server gets no terminal: on an inherited one it could type into the user's
    -- shell (TIOCSTI), outside the sandbox, or drive it with escapes. Its lines come through a
    -- pipe, escaped, to the host's stderr.
    stderr = function(line) io.stderr:write(term.escape(line), "\n") end
  end
  if type(stderr) == "function" then stderr = M.stderr_queue(stderr, cfg.max_stderr_lines) end
  local ccfg = {
    command = cfg.command,
    args = args,
    env = M.environment(cfg.env),
    cwd = cfg.cwd or cfg.working_dir,
    stderr = stderr,
    max_message_size = cfg.max_message_size,
    max_write_queue = cfg.max_write_queue,
    sandbox = require("mcp.sandbox").resolve(cfg.sandbox), -- confined before exec (mcp.sandbox)
  }
  return wrap(ccfg)
end

--- Is t a transport made by M.transport?
---@param t any
---@return boolean
function M.is_stdio(t)
  return configs[t] ~= nil
end

--- A new, unstarted transport for the same command, arguments and environment as t.
---@param t mcp.StdioTransport a transport made by M.transport
---@return mcp.StdioTransport
function M.respawn(t)
  local ccfg = configs[t]
  if ccfg == nil then error("mcp.stdio.respawn: not a stdio transport", 2) end
  return wrap(ccfg)
end

return M
