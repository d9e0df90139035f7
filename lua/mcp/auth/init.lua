--- mcp.auth: OAuth 2.1 authorization for MCP servers over HTTP (the reference's mcp.Auth and its
--- helpers). Most code only passes a provider to the client:
---
---   local p = mcp.auth.interactive_provider({ client_name = "my-tool" })
---   local client = mcp.create_http_client(url, { auth_provider = p })
---
--- and the HTTP transports run the flow on a 401 (and on a 403 insufficient_scope) and retry.
--- docs/API.md ("OAuth") describes every function and the provider interface.
local discovery = require("mcp.auth.discovery")
local dpop = require("mcp.auth.dpop")
local extensions = require("mcp.auth.extensions")
local flow = require("mcp.auth.flow")
local oerr = require("mcp.auth.errors")
local provider = require("mcp.auth.provider")
local store = require("mcp.auth.store")

local M = {}

M.AUTHORIZED = flow.AUTHORIZED
M.REDIRECT = flow.REDIRECT

--- Run the authorization flow for provider (Auth). opts: server_url (required),
--- resource_metadata_url and scope (from a WWW-Authenticate challenge), authorization_code,
--- state and iss (or callback: the redirect URL) to finish an authorization, protocol_version,
--- timeout_ms, interactive (false: a refresh or a grant without a user only, never a login nor a
--- registration; where one is needed, nil and login_required). Returns "AUTHORIZED" or
--- "REDIRECT", or nil and an mcp.OAuthError.
---@param p table the provider
---@param opts table
---@return string|nil, mcp.OAuthError|nil
function M.auth(p, opts)
  if type(p) ~= "table" then error("mcp.auth.auth: provider table expected", 2) end
  if type(opts) ~= "table" or type(opts.server_url) ~= "string" then
    error("mcp.auth.auth: opts.server_url expected", 2)
  end
  return flow.auth(p, opts)
end

--- Finish an authorization whose redirect the host received itself: callback_url is the URL
--- the browser was sent to (with code, state, iss). Same results as auth. The code is redeemed
--- only at the authorization server and token endpoint the login began with (in this process):
--- when discovery now names others, an `invalid_issuer` error and nothing is sent.
---@param p table
---@param server_url string
---@param callback_url string
---@return string|nil, mcp.OAuthError|nil
function M.finish(p, server_url, callback_url)
  if type(callback_url) ~= "string" then error("mcp.auth.finish: callback_url expected", 2) end
  return M.auth(p, { server_url = server_url, callback = callback_url })
end

-- errors (MCPClientOAuthError)
M.OAuthError = oerr.OAuthError
M.new_error = oerr.new
M.is_oauth_error = oerr.is_oauth_error
M.is_invalid_client = oerr.is_invalid_client
M.is_invalid_grant = oerr.is_invalid_grant
M.is_unauthorized_client = oerr.is_unauthorized_client
M.parse_error_response = oerr.from_response
for _, k in ipairs({ "SERVER_ERROR", "INVALID_CLIENT", "INVALID_GRANT", "UNAUTHORIZED_CLIENT", "INVALID_REQUEST",
  "ACCESS_DENIED", "INVALID_METADATA", "INVALID_STATE", "INVALID_ISSUER", "INSECURE_URL", "UNAUTHORIZED",
  "AUTHORIZATION_TIMEOUT", "LOGIN_CANCELLED", "LOGIN_REQUIRED" }) do
  M[k] = oerr[k]
end

-- discovery and the flow's building blocks
M.parse_www_authenticate = discovery.parse_www_authenticate
M.discover_protected_resource_metadata = discovery.protected_resource_metadata
M.discover_authorization_server_metadata = discovery.authorization_server_metadata
M.authorization_server_discovery_urls = discovery.authorization_server_urls
M.protected_resource_discovery_urls = discovery.protected_resource_urls
M.pkce = flow.pkce
M.select_scope = flow.select_scope
M.union_scopes = flow.union_scopes
M.resource_allowed = flow.resource_allowed
M.application_type = flow.application_type

-- providers and stores
M.provider = provider.new
M.headless_provider = provider.headless
M.follow_authorization = provider.follow_authorization
M.interactive_provider = require("mcp.auth.interactive").new
M.open_in_browser = require("mcp.auth.interactive").open_in_browser
M.memory_store = store.memory
M.file_store = store.file
M.keyring_store = require("mcp.auth.keyring").new

-- the extensions for clients with no person present, and DPoP (mcp.auth.extensions)
M.client_credentials_provider = extensions.client_credentials
M.workload_identity_provider = extensions.workload_identity
M.enterprise_provider = extensions.enterprise
M.with_dpop = extensions.with_dpop
M.dpop = dpop

return M
