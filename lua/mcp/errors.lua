--- Structured errors: every expected failure of lua-mcp is returned as `nil, err` with err an
--- mcp.Error. `code` is the JSON-RPC code when the server answered with an error, nil for local
--- failures (timeouts, closed connections), so a local error can never pass for a server's.
local M = {}

---@class mcp.Error
---@field code integer|nil JSON-RPC error code (nil for local failures)
---@field message string
---@field data any
---@field kind string "rpc"|"timeout"|"cancelled"|"closed"|"transport"|"protocol"|"config"|"handler"|"validation"|"verification"|"declined"|"oauth"|"sandbox"|"untrusted"|"unasked"|"busy"|"unavailable"|"denied"|"not_found"
---@field method string|nil the request that failed
---@field status_code integer|nil HTTP status for transport failures
---@field cause any
local Error = {}
Error.__index = Error
M.Error = Error

M.ERROR_CODES = {
  PARSE_ERROR = -32700,
  INVALID_REQUEST = -32600,
  METHOD_NOT_FOUND = -32601,
  INVALID_PARAMS = -32602,
  INTERNAL_ERROR = -32603,
  TOOL_NOT_FOUND = -32000,
  TOOL_EXECUTION_FAIL = -32001,
  RESOURCE_NOT_FOUND = -32002,
  UNAUTHORIZED = -32003,
  -- 2026-07-28 (modern era) codes
  HEADER_MISMATCH = -32020,
  MISSING_REQUIRED_CLIENT_CAPABILITY = -32021,
  UNSUPPORTED_PROTOCOL_VERSION = -32022,
}

function Error:__tostring()
  local parts = { "MCP error" }
  if self.method then parts[#parts + 1] = " (" .. self.method .. ")" end
  parts[#parts + 1] = ": " .. tostring(self.message)
  local tags = {}
  if self.code ~= nil then tags[#tags + 1] = "code " .. tostring(self.code) end
  if self.status_code ~= nil then tags[#tags + 1] = "HTTP " .. tostring(self.status_code) end
  if self.kind ~= "rpc" then tags[#tags + 1] = self.kind end
  if #tags > 0 then parts[#parts + 1] = " [" .. table.concat(tags, ", ") .. "]" end
  return table.concat(parts)
end

--- True when this error has the same JSON-RPC code as `other` (an mcp.Error or a number).
---@param other mcp.Error|integer
---@return boolean
function Error:is(other)
  if type(other) == "number" then return self.code == other end
  if getmetatable(other) == Error then
    if other.code ~= nil then return self.code == other.code end
    return self.kind == other.kind
  end
  return false
end

--- Text with the password of every URL in it (`scheme://user:password@host`) replaced by `***`:
--- a URL with credentials in it never shows them in an error message.
---@param s any
---@return string|nil
function M.redact_userinfo(s)
  if s == nil then return nil end
  return (tostring(s):gsub("(%a[%w+.%-]*://[^/?#@%s:]*):[^/?#%s]*@", "%1:***@"))
end

--- Create an error (the reference's NewMCPClientError).
---@param code integer|nil
---@param message string
---@param data any
---@param opts table|nil kind, method, status_code, url, response_body, cause
---@return mcp.Error
function M.new(code, message, data, opts)
  opts = opts or {}
  local e = setmetatable({
    code = code,
    message = message ~= nil and M.redact_userinfo(message) or "unknown error",
    data = data,
    kind = opts.kind or (code ~= nil and "rpc" or "transport"),
    method = opts.method,
    status_code = opts.status_code,
    url = M.redact_userinfo(opts.url),
    response_body = opts.response_body,
    cause = opts.cause,
  }, Error)
  return e
end

---@param v any
---@return boolean
function M.is_error(v)
  local mt = getmetatable(v)
  return mt == Error or (type(mt) == "table" and rawget(mt, "__mcp_error") == true)
end

--- Whether err, or an error its cause chain holds (at most 8 deep), satisfies pred.
---@param err any
---@param pred fun(e: table): boolean
---@return boolean
function M.in_cause_chain(err, pred)
  for _ = 1, 8 do
    if type(err) ~= "table" then return false end
    if pred(err) then return true end
    err = err.cause
  end
  return false
end

local LEGACY_SSE_STATUS = { [400] = true, [404] = true, [405] = true }

--- True when a streamable HTTP connect failed as a legacy HTTP+SSE (2024-11-05) server answers
--- it: the POST refused with HTTP 400, 404 or 405 (the specification's backwards-compatibility
--- rule). A client that was given only a URL then tries mcp.sse_transport on it.
---@param err any
---@return boolean
function M.is_legacy_sse_hint(err)
  return M.is_error(err) and err.kind == "transport" and LEGACY_SSE_STATUS[err.status_code] == true
end

--- Sentinels, compared by code with err:is(mcp.errors.method_not_found).
M.errors = {
  parse_error = M.new(M.ERROR_CODES.PARSE_ERROR, "Parse error"),
  invalid_request = M.new(M.ERROR_CODES.INVALID_REQUEST, "Invalid request"),
  method_not_found = M.new(M.ERROR_CODES.METHOD_NOT_FOUND, "Method not found"),
  invalid_params = M.new(M.ERROR_CODES.INVALID_PARAMS, "Invalid params"),
  internal_error = M.new(M.ERROR_CODES.INTERNAL_ERROR, "Internal error"),
  tool_not_found = M.new(M.ERROR_CODES.TOOL_NOT_FOUND, "Tool not found"),
  tool_execution_fail = M.new(M.ERROR_CODES.TOOL_EXECUTION_FAIL, "Tool execution failed"),
  resource_not_found = M.new(M.ERROR_CODES.RESOURCE_NOT_FOUND, "Resource not found"),
  unauthorized = M.new(M.ERROR_CODES.UNAUTHORIZED, "Unauthorized"),
  timeout = M.new(nil, "Request timed out", nil, { kind = "timeout" }),
  closed = M.new(nil, "Connection closed", nil, { kind = "closed" }),
  cancelled = M.new(nil, "Request cancelled", nil, { kind = "cancelled" }),
}

--- A request timed out (the reference's NewTimeoutError).
---@param operation string|nil the method that timed out
---@param ms number|nil the timeout, for the message
---@return mcp.Error err kind "timeout"
function M.timeout(operation, ms)
  return M.new(nil, "request timed out" .. (ms and (" after " .. ms .. " ms") or ""), nil,
    { kind = "timeout", method = operation })
end

--- A transport-level failure (the reference's NewTransportError).
---@param message string
---@param cause any the underlying error
---@return mcp.Error err kind "transport"
function M.transport(message, cause)
  return M.new(nil, message, nil, { kind = "transport", cause = cause })
end

return M
