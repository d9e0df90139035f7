--- lua-mcp: a Model Context Protocol client. `local mcp = require("mcp")`.
--- See docs/API.md for the whole API and docs/MAPPING.md for its mapping to the reference.
-- first, before any module loads mcp.core: a module built for another Lua is refused by name
local core = require("mcp.util.abi").require_core()
local client = require("mcp.client")
local errors = require("mcp.errors")
local json = require("mcp.json")
local protocol = require("mcp.protocol")
local sched = require("mcp.sched")
local stdio = require("mcp.transport.stdio")

local mcp = {}

mcp.VERSION = client.VERSION
mcp.core = core

-- protocol constants
for k, v in pairs(protocol) do
  if type(v) ~= "function" then mcp[k] = v end
end
mcp.discover_result_server_info = protocol.discover_result_server_info

-- errors
mcp.Error = errors.Error
mcp.ERROR_CODES = errors.ERROR_CODES
mcp.errors = errors.errors
mcp.new_error = errors.new
mcp.is_error = errors.is_error
mcp.is_legacy_sse_hint = errors.is_legacy_sse_hint
mcp.timeout_error = errors.timeout
mcp.transport_error = errors.transport

-- JSON
mcp.json = json
mcp.null = json.null
mcp.array = json.array
mcp.object = json.object

-- scheduling and the loop
mcp.spawn = sched.spawn
mcp.run = sched.run
mcp.sleep = sched.sleep
mcp.loop = sched.loop
mcp.on_task_error = sched.on_task_error

-- transports and clients
mcp.stdio_transport = stdio.transport
mcp.new_client = client.new
mcp.Client = client.Client

--- Create a client over any transport and connect it (CreateMCPClient; unlike Go, it connects,
--- as the TypeScript createMCPClient does).
---@param config table|nil
---@param transport userdata
---@return mcp.Client|nil, mcp.Error|nil
function mcp.create_client(config, transport)
  local c = client.new(transport, config)
  local ok, err = c:connect()
  if not ok then return nil, err end
  return c
end

local options = require("mcp.util.options")
local TRANSPORT_KEYS = {
  env = true, cwd = true, working_dir = true, stderr = true, max_message_size = true,
  max_write_queue = true, max_stderr_lines = true, sandbox = true,
}

--- Start a server as a child process and connect to it over stdio (CreateStdioMCPClient).
---@param command string
---@param args string[]|nil
---@param opts table|nil stdio transport fields (env, cwd, stderr, max_message_size, max_write_queue,
--- max_stderr_lines) and client config fields
---@return mcp.Client|nil, mcp.Error|nil
function mcp.create_stdio_client(command, args, opts)
  if type(command) ~= "string" then error("mcp.create_stdio_client: command must be a string", 2) end
  if args ~= nil and type(args) ~= "table" then error("mcp.create_stdio_client: args must be an array", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("mcp.create_stdio_client: opts must be a table", 2) end
  opts = opts or {}
  local known = {}
  for k in pairs(TRANSPORT_KEYS) do known[k] = true end
  for k in pairs(client.CONFIG_FIELDS) do known[k] = true end
  options.check(opts, known, "mcp.create_stdio_client: opts", 2)
  local tcfg, ccfg = { command = command, args = args }, {}
  for k, v in pairs(opts) do
    if TRANSPORT_KEYS[k] then tcfg[k] = v else ccfg[k] = v end
  end
  ccfg.transport_factory = ccfg.transport_factory or function() return stdio.transport(tcfg) end
  return mcp.create_client(ccfg, stdio.transport(tcfg))
end

local http = require("mcp.transport.http")
mcp.http_transport = http.http_transport
mcp.sse_transport = http.sse_transport
mcp.REDIRECT_ERROR = http.REDIRECT_ERROR
mcp.REDIRECT_FOLLOW = http.REDIRECT_FOLLOW

--- Connect to a server over streamable HTTP (CreateHTTPMCPClient). opts: the transport fields of
--- mcp.http_transport (headers, redirect, timeout_ms, oauth, initial_session_id, ...) and client
--- config fields; `transport_on_error` is the transport's own on_error.
---@param url string
---@param opts table|nil
---@return mcp.Client|nil, mcp.Error|nil
function mcp.create_http_client(url, opts)
  if type(url) ~= "string" then error("mcp.create_http_client: url must be a string", 2) end
  local tcfg, ccfg = http.split_options(url, opts, "mcp.create_http_client", 2)
  ccfg.transport_factory = ccfg.transport_factory or function() return http.http_transport(tcfg) end
  return mcp.create_client(ccfg, http.http_transport(tcfg))
end

--- Connect to a server over the legacy HTTP+SSE transport (CreateSSEMCPClient).
---@param url string
---@param opts table|nil
---@return mcp.Client|nil, mcp.Error|nil
function mcp.create_sse_client(url, opts)
  if type(url) ~= "string" then error("mcp.create_sse_client: url must be a string", 2) end
  local tcfg, ccfg = http.split_options(url, opts, "mcp.create_sse_client", 2)
  ccfg.transport_factory = ccfg.transport_factory or function() return http.sse_transport(tcfg) end
  return mcp.create_client(ccfg, http.sse_transport(tcfg))
end

--- A cancellation token for one call: pass it as opts.cancel, then token:cancel(reason).
function mcp.cancel_token()
  local token = { cancelled = false }
  function token:_attach(hook) self.hook = hook end
  function token:cancel(reason)
    if self.cancelled then return end
    self.cancelled = true
    self.reason = reason or "cancelled by the client"
    if self.hook then self.hook(self.reason) end
  end
  return token
end

--- Drive lua-mcp from Neovim's event loop (lua/mcp/nvim.lua: a poll handle on mcp.loop.fd(), a
--- timer for mcp.loop.timeout(), tasks run through vim.schedule, blocking calls wait with vim.wait).
---@param opts table|nil see require("mcp.nvim").setup
---@return table mcp
function mcp.setup_nvim(opts)
  require("mcp.nvim").setup(opts)
  return mcp
end

-- The rest loads on first use (getmetatable(mcp).lazy: field -> loader), so a script that only
-- calls tools does not pay, in start-up time and heap (and so in the collector's pace), for
-- OAuth, the hub, config files, skills, schemas and the agent tools.
local function field(module, name)
  return function()
    local m = require(module)
    if name == nil then return m end
    return m[name]
  end
end
local LAZY = {
  memory_transport_pair = field("mcp.transport.memory", "pair"),
  message_transport = field("mcp.transport.message", "new"),
  -- tools for agents, content, elicitation/sampling/roots ergonomics, MCP Apps, drift
  -- (docs/AGENTS.md)
  tools = field("mcp.tools"),
  get_tools_for_agent = field("mcp.tools", "get_tools_for_agent"),
  new_tool_converter = field("mcp.tools", "new_tool_converter"),
  convert_content = field("mcp.content", "convert_content"),
  elicitation = field("mcp.elicitation"),
  sampling = field("mcp.handlers.sampling"),
  roots = field("mcp.handlers.roots"),
  apps = field("mcp.tools.apps"),
  schema = field("mcp.schema"),
  skills = field("mcp.skills"),
  fingerprint_tools = field("mcp.tools.drift", "fingerprint_tools"),
  detect_tool_drift = field("mcp.tools.drift", "detect_tool_drift"),
  -- OAuth (mcp.auth) and plain HTTP requests on the loop
  auth = field("mcp.auth"),
  http_request = field("mcp.fetch", "request"),
  -- tool parameter headers (x-mcp-header)
  headers = field("mcp.tools.headers"),
  get_tool_header_bindings = field("mcp.tools.headers", "get_tool_header_bindings"),
  create_tool_headers = field("mcp.tools.headers", "create_tool_headers"),
  encode_header_value = field("mcp.tools.headers", "encode_header_value"),
  HEADER_VALUE_STRING = field("mcp.tools.headers", "VALUE_STRING"),
  HEADER_VALUE_INTEGER = field("mcp.tools.headers", "VALUE_INTEGER"),
  HEADER_VALUE_BOOLEAN = field("mcp.tools.headers", "VALUE_BOOLEAN"),
  -- server configuration files (mcpServers, VS Code, mcphub)
  config = field("mcp.config"),
  -- many servers from one config, connected concurrently, aggregated and supervised (mcp/hub.lua)
  hub = field("mcp.hub", "new"),
}

setmetatable(mcp, {
  lazy = LAZY,
  __index = function(t, k)
    local load = LAZY[k]
    if load == nil then return nil end
    local v = load()
    rawset(t, k, v)
    return v
  end,
})

return mcp
