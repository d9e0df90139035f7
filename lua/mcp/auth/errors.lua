--- MCPClientOAuthError: what the OAuth flow returns when it fails. It keeps mcp.Error's shape:
--- `code` is a JSON-RPC code or nil (always nil here: no JSON-RPC error carried it), and the OAuth
--- error code (RFC 6749 §5.2: "invalid_grant", "invalid_client", ..., or "server_error" for
--- anything that is not a well-formed OAuth error) is `oauth_error`; `message` the server's
--- error_description or ours,
--- `status_code` the HTTP status when a response carried the error, `cause` the underlying
--- error. Messages never hold a token, code, verifier or client secret.
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

---@class mcp.OAuthError
---@field code nil JSON-RPC code (nil: an OAuth failure is local or from an authorization server)
---@field oauth_error string OAuth error code ("invalid_grant", "server_error", ...)
---@field message string
---@field status_code integer|nil the HTTP status (of the refused MCP exchange, or the authorization server's)
---@field www_authenticate string|nil the refused MCP exchange's WWW-Authenticate value
---@field cause any
---@field kind string always "oauth"
---@field method string|nil the MCP request that needed authorization
local OAuthError = { __mcp_error = true }
OAuthError.__index = OAuthError
M.OAuthError = OAuthError

M.SERVER_ERROR = "server_error"
M.INVALID_CLIENT = "invalid_client"
M.INVALID_GRANT = "invalid_grant"
M.UNAUTHORIZED_CLIENT = "unauthorized_client"
M.INVALID_REQUEST = "invalid_request"
M.ACCESS_DENIED = "access_denied"
--- Local refusals of the flow (not from an authorization server).
M.INVALID_METADATA = "invalid_metadata"
M.AUTHORIZATION_SERVER_MISMATCH = "authorization_server_mismatch"
M.INVALID_STATE = "invalid_state"
M.INVALID_ISSUER = "invalid_issuer"
M.INSECURE_URL = "insecure_url"
M.UNAUTHORIZED = "unauthorized"
--- The interactive login waited authorization_timeout_ms and no redirect came (not a refusal).
M.AUTHORIZATION_TIMEOUT = "authorization_timeout"
--- The login was ended by the host (provider:close()) before the redirect came.
M.LOGIN_CANCELLED = "login_cancelled"
--- A login is needed, and was not started: what was refused is an exchange no call waits on (the
--- GET stream reconnecting, a notification, a background reconnection), which may only refresh.
M.LOGIN_REQUIRED = "login_required"

function OAuthError:__tostring()
  local s = "MCP OAuth error (" .. tostring(self.oauth_error) .. ")"
  if self.method then s = s .. " [" .. self.method .. "]" end
  s = s .. ": " .. tostring(self.message)
  if self.status_code then s = s .. " [HTTP " .. tostring(self.status_code) .. "]" end
  return s
end

--- Same OAuth error code as other (an OAuthError or a code string).
function OAuthError:is(other)
  if type(other) == "string" then return self.oauth_error == other end
  return getmetatable(other) == OAuthError and other.oauth_error == self.oauth_error
end

--- Create an OAuth error (NewMCPClientOAuthError).
---@param oauth_error string|nil the OAuth error code (nil: "server_error")
---@param message string
---@param opts table|nil status_code, cause
---@return mcp.OAuthError
function M.new(oauth_error, message, opts)
  opts = opts or {}
  return setmetatable({
    code = nil,
    oauth_error = oauth_error or M.SERVER_ERROR,
    message = message ~= nil and errors.redact_userinfo(message) or "OAuth error",
    status_code = opts.status_code,
    cause = opts.cause,
    kind = "oauth",
  }, OAuthError)
end

--- True for an OAuth error (an mcp.OAuthError).
---@param v any
---@return boolean
function M.is_oauth_error(v)
  return getmetatable(v) == OAuthError
end

--- IsInvalidClientError: true for an OAuthError with oauth_error "invalid_client".
---@param v any
---@return boolean
function M.is_invalid_client(v) return M.is_oauth_error(v) and v.oauth_error == M.INVALID_CLIENT end
--- IsInvalidGrantError: true for an OAuthError with oauth_error "invalid_grant".
---@param v any
---@return boolean
function M.is_invalid_grant(v) return M.is_oauth_error(v) and v.oauth_error == M.INVALID_GRANT end
--- IsUnauthorizedClientError: true for an OAuthError with oauth_error "unauthorized_client".
---@param v any
---@return boolean
function M.is_unauthorized_client(v) return M.is_oauth_error(v) and v.oauth_error == M.UNAUTHORIZED_CLIENT end

local MAX_RAW = 200

--- ParseOAuthErrorResponse: an error response of an authorization server as an OAuthError.
--- A body {error, error_description?} gives that code; anything else a server_error quoting
--- (the start of) the body.
---@param status integer|nil
---@param body string|nil
---@return mcp.OAuthError
function M.from_response(status, body)
  local doc = type(body) == "string" and body ~= "" and json.decode(body) or nil
  if type(doc) == "table" and type(doc.error) == "string" and doc.error:match("^[%w_%-%.]+$") then
    local msg = type(doc.error_description) == "string" and doc.error_description or doc.error
    return M.new(doc.error, msg, { status_code = status })
  end
  local raw = tostring(body or ""):sub(1, MAX_RAW):gsub("[%c]", " ")
  return M.new(M.SERVER_ERROR, ("HTTP %s: Invalid OAuth error response. Raw body: %s"):format(tostring(status), raw),
    { status_code = status })
end

--- An mcp.Error (a transport failure, say) as the cause of a server_error.
function M.wrap(err, message)
  return M.new(M.SERVER_ERROR, (message and (message .. ": ") or "") .. tostring(err and err.message or err),
    { cause = err, status_code = err and err.status_code })
end

-- mcp.is_error accepts OAuth errors too (they carry __mcp_error).
M.is_error = errors.is_error

return M
