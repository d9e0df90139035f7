--- The 2026-07-28 ("modern") protocol's wire rules, as functions of their inputs: the per-request
--- `_meta`, `resultType`, multi round-trip requests (SEP-2322), reading server/discover and
--- classifying a failed probe, and the HTTP request headers (Mcp-Method, Mcp-Name, Mcp-Param-*).
--- The era's state (version, log level, tool bindings, cache, listen) lives in the era object,
--- lua/mcp/era/modern.lua, which calls these; nothing here holds state or talks to the C core.
local errors = require("mcp.errors")
-- x-mcp-header bindings (and the JSON Schema code under them) load on the first modern request:
-- a client of a 2025 server never needs them.
local headers = setmetatable({}, {
  __index = function(t, k)
    local m = require("mcp.tools.headers")
    setmetatable(t, { __index = m })
    return m[k]
  end,
})
local json = require("mcp.json")
local protocol = require("mcp.protocol")

local M = {}

M.MODERN_PROTOCOL_VERSION = protocol.LATEST_PROTOCOL_VERSION
M.META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
M.META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
M.META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
M.META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
M.META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


--- The methods a server may answer with input_required (SEP-2322).
M.INPUT_METHODS = { ["tools/call"] = true, ["prompts/get"] = true, ["resources/read"] = true }

local MODERN_CODES = {}
for _, c in ipairs(protocol.MODERN_PROTOCOL_ERROR_CODES) do MODERN_CODES[c] = true end

--- Is version one of the stateless (2026-07-28 and later) versions this client speaks?
---@param version any
---@return boolean
function M.is_modern_version(version)
  return type(version) == "string" and protocol.is_supported(version) and version >= M.MODERN_PROTOCOL_VERSION
end

local function copy(t)
  local c = {}
  if type(t) == "table" then
    for k, v in pairs(t) do c[k] = v end
  end
  return setmetatable(c, getmetatable(t))
end

-- ---- the per-request _meta ---------------------------------------------------------------------

--- params with the modern `_meta` keys merged in (the caller's own `_meta` keys are kept; ours win
--- on a collision, as in the reference). Never modifies params.
---@param params table|nil
---@param version string the protocol version of the era
---@param capabilities table the ClientCapabilities for this request
---@param client_info table {name=, version=}
---@param log_level string|nil the level set_logging_level asked for
---@return table
function M.with_meta(params, version, capabilities, client_info, log_level)
  local p = json.object(copy(params))
  local meta = json.object(copy(p._meta))
  meta[M.META_PROTOCOL_VERSION] = version or M.MODERN_PROTOCOL_VERSION
  meta[M.META_CLIENT_CAPABILITIES] = capabilities
  meta[M.META_CLIENT_INFO] = { name = client_info.name, version = client_info.version }
  if log_level ~= nil and meta[M.META_LOG_LEVEL] == nil then
    meta[M.META_LOG_LEVEL] = log_level
  end
  p._meta = meta
  return p
end

-- ---- results -----------------------------------------------------------------------------------

--- The resultType of a modern result: "complete" (also when absent, as the specification says),
--- "input_required", or "task"; any other value is an error.
---@param method string
---@param res any
---@return string|nil result_type, mcp.Error|nil err
function M.result_type(method, res)
  if type(res) ~= "table" then
    return nil, errors.new(nil, "invalid " .. method .. " result: not an object", res,
      { kind = "protocol", method = method })
  end
  local rt = res.resultType
  if rt == nil or rt == "complete" then return "complete" end
  if rt == "input_required" or rt == "task" then return rt end
  return nil, errors.new(nil, "invalid " .. method .. " result: unknown resultType " .. tostring(rt), res,
    { kind = "protocol", method = method })
end

--- The params of the next round: the original params, the responses and the server's
--- requestState echoed untouched (absent when the server sent none).
---@param params table|nil the caller's params
---@param responses table
---@param res table the InputRequiredResult
---@return table
function M.retry_params(params, responses, res)
  local p = json.object(copy(params))
  p.inputResponses = responses
  p.requestState = res.requestState
  return p
end

-- ---- discovery ---------------------------------------------------------------------------------

--- Read a server/discover result: a synthesised InitializeResult when the server speaks the modern
--- version, else nil (the caller falls back to initialize).
---@param res any
---@return table|nil
function M.init_result_from_discover(res)
  if type(res) ~= "table" or type(res.supportedVersions) ~= "table" then return nil end
  local speaks = false
  for _, v in ipairs(res.supportedVersions) do
    if v == M.MODERN_PROTOCOL_VERSION then speaks = true end
  end
  if not speaks then return nil end
  local info = protocol.discover_result_server_info(res)
  if info == nil and type(res.serverInfo) == "table" and type(res.serverInfo.name) == "string" then
    info = res.serverInfo -- some servers put it in the result body
  end
  return {
    protocolVersion = M.MODERN_PROTOCOL_VERSION,
    capabilities = type(res.capabilities) == "table" and res.capabilities or json.object(),
    serverInfo = info or json.object(),
    instructions = type(res.instructions) == "string" and res.instructions or nil,
    supportedVersions = res.supportedVersions,
    ttlMs = res.ttlMs,
    cacheScope = res.cacheScope,
  }
end

--- Classify a failed probe. Returns "legacy" (fall back to initialize), "retry", version (the
--- server is modern and named a version we speak: probe again with it, once), "initialize",
--- version (it named only legacy versions we speak), or nil, err (a modern server we cannot talk
--- to, or an authorization the client could not get: a hard failure, never a fallback).
---@param err mcp.Error
---@param retried boolean whether this probe was already the retry
function M.classify_probe_error(err, retried)
  -- A server that wants authorization the client could not get (no OAuth configured, the flow
  -- refused, a scope never granted) would refuse initialize the same way: no fallback.
  local challenge = type(err.response_headers) == "table" and err.response_headers["www-authenticate"] or ""
  if err.kind == "oauth" or err.status_code == 401
      or (err.status_code == 403 and tostring(challenge):find("insufficient_scope", 1, true)) then
    return nil, err
  end
  if err.kind ~= "rpc" or not MODERN_CODES[err.code] then return "legacy" end
  if err.code == errors.ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION and not retried then
    local supported = type(err.data) == "table" and err.data.supported
    if type(supported) == "table" then
      for _, v in ipairs(supported) do
        if M.is_modern_version(v) then return "retry", v end
      end
      local best
      for _, v in ipairs(supported) do
        if protocol.is_supported(v) and not M.is_modern_version(v) and (best == nil or v > best) then best = v end
      end
      if best then return "initialize", best end
    end
  end
  return nil, errors.new(err.code, "protocol discovery failed: " .. err.message, err.data,
    { kind = "rpc", method = "server/discover", status_code = err.status_code, cause = err })
end

-- ---- HTTP request headers ------------------------------------------------------------------------

--- Mcp-Method, Mcp-Name and, for tools/call, the tool's Mcp-Param-* headers, as {name = value}.
---@param bindings table tool name -> its x-mcp-header bindings (M.filter_tools fills it)
---@param method string
---@param params table|nil
---@return table|nil hdrs, mcp.Error|nil err
function M.request_headers(bindings, method, params)
  local h = { ["Mcp-Method"] = method }
  local name
  if method == "tools/call" or method == "prompts/get" then
    name = params and params.name
  elseif method == "resources/read" then
    name = params and params.uri
  end
  if type(name) == "string" then h["Mcp-Name"] = headers.encode_header_value(name) end
  if method == "tools/call" and type(name) == "string" then
    local tool = bindings[name]
    local args = params.arguments
    if tool and #tool > 0 and type(args) == "table" then
      local extra, err = headers.create_tool_headers(tool, args)
      if not extra then
        return nil, errors.new(nil, 'Failed to create MCP headers for tool "' .. name .. '": ' .. err.message,
          nil, { kind = "validation", method = method, cause = err })
      end
      for k, v in pairs(extra) do h[k] = v end
    end
  end
  return h
end

--- Drop the tools whose x-mcp-header bindings are invalid (given to report with the tool's name
--- and the reason) and remember the bindings of the others for call_tool.
---@param tools table the tools/list page's array (filtered into a new array)
---@param bindings table tool name -> bindings, updated
---@param report fun(err: mcp.Error)
---@return table tools
function M.filter_tools(tools, bindings, report)
  local kept = json.array()
  for _, tool in ipairs(tools) do
    local name = type(tool) == "table" and tool.name
    if type(name) ~= "string" then
      kept[#kept + 1] = tool
    else
      local found, err = headers.get_tool_header_bindings(tool.inputSchema)
      if found then
        bindings[name] = found
        kept[#kept + 1] = tool
      else
        bindings[name] = nil
        report(errors.new(nil, 'Ignoring MCP tool "' .. name .. '": ' .. err.message, tool,
          { kind = "protocol", method = "tools/list" }))
      end
    end
  end
  return kept
end

return M
