--- Discovery for the OAuth flow: WWW-Authenticate challenges, protected-resource metadata
--- (RFC 9728), authorization-server metadata (RFC 8414 and OpenID Connect Discovery), and the
--- guarded GET they share (https only but on loopback, no internal address a remote server names,
--- redirects followed by hand with every hop re-checked).
local fetch = require("mcp.fetch")
local json = require("mcp.json")
local oerr = require("mcp.auth.errors")
local url = require("mcp.auth.url")

local M = {}

M.MAX_REDIRECTS = 10

---@class mcp.auth.Challenge
---@field scheme string
---@field resource_metadata string|nil
---@field scope string|nil
---@field error string|nil
---@field error_description string|nil

--- ExtractWWWAuthenticateParams: the Bearer challenge's parameters, nil when the header holds no
--- Bearer challenge. resource_metadata is kept only when it is an absolute http(s) URL.
---@param header string|nil
---@return mcp.auth.Challenge|nil
function M.parse_www_authenticate(header)
  if type(header) ~= "string" then return nil end
  local s = header:match("^%s*[Bb][Ee][Aa][Rr][Ee][Rr]%s+(.*)$") or header:match("[,%s][Bb][Ee][Aa][Rr][Ee][Rr]%s+(.*)$")
  if s == nil then
    if header:match("^%s*[Bb][Ee][Aa][Rr][Ee][Rr]%s*$") then return { scheme = "Bearer" } end
    return nil
  end
  local out = { scheme = "Bearer" }
  local i = 1
  while i <= #s do
    local name, rest = s:match("^[%s,]*([%w_%-]+)%s*=%s*()", i)
    if not name then break end
    local value, nexti
    if s:sub(rest, rest) == '"' then
      local buf, j = {}, rest + 1
      while j <= #s do
        local c = s:sub(j, j)
        if c == "\\" then
          buf[#buf + 1] = s:sub(j + 1, j + 1)
          j = j + 2
        elseif c == '"' then
          break
        else
          buf[#buf + 1] = c
          j = j + 1
        end
      end
      value, nexti = table.concat(buf), j + 1
    else
      value = s:match("^([^,%s]*)", rest)
      nexti = rest + #value
    end
    name = name:lower()
    if out[name] == nil and name ~= "scheme" then out[name] = value end
    i = nexti
  end
  if out.resource_metadata and not url.parse(out.resource_metadata) then out.resource_metadata = nil end
  return out
end

--- GET a metadata document; each redirect hop is re-checked with url.check_fetchable and
--- MCP-Protocol-Version is dropped once the request leaves the first origin. Returns the final
--- response (any status) or nil, err.
---@param target string
---@param server_url string the MCP server the flow is for (the SSRF guard's reference)
---@param opts table|nil protocol_version, timeout_ms
function M.get(target, server_url, opts)
  opts = opts or {}
  local first = url.origin(target)
  for _ = 0, M.MAX_REDIRECTS do
    local ok, why = url.check_fetchable(target, server_url)
    if not ok then
      return nil, oerr.new(oerr.INSECURE_URL, "refusing to fetch " .. fetch.redact_url(target) .. ": " .. why)
    end
    local headers = { Accept = "application/json" }
    if opts.protocol_version and url.origin(target) == first then
      headers["MCP-Protocol-Version"] = opts.protocol_version
    end
    local res, err = fetch.request({ url = target, headers = headers, timeout_ms = opts.timeout_ms,
      refuse_addresses = url.connect_guard(server_url) })
    if not res then return nil, oerr.wrap(err, "fetching metadata") end
    local loc = res.headers.location
    if res.status < 300 or res.status >= 400 or loc == nil then return res end
    local nxt = url.resolve(target, loc)
    if not nxt then return nil, oerr.new(oerr.INSECURE_URL, "invalid redirect from " .. fetch.redact_url(target)) end
    target = nxt
  end
  return nil, oerr.new(oerr.SERVER_ERROR, "too many redirects fetching metadata")
end

local function decode_object(res, what)
  local doc = json.decode(res.body)
  if type(doc) ~= "table" or doc[1] ~= nil then
    return nil, oerr.new(oerr.INVALID_METADATA, what .. " at " .. fetch.redact_url(res.url) .. " is not a JSON object",
      { status_code = res.status })
  end
  return doc
end

--- The protected-resource metadata URLs to try, in order (RFC 9728 and MCP 2025-11-25):
--- the challenge's resource_metadata alone, else the path-inserted well-known URL, then the root.
---@param server_url string
---@param resource_metadata_url string|nil
---@return string[]
function M.protected_resource_urls(server_url, resource_metadata_url)
  if resource_metadata_url then return { resource_metadata_url } end
  local u = assert(url.parse(server_url))
  local origin = url.origin(u)
  local path = u.path:gsub("/+$", "")
  local list = {}
  if path ~= "" then list[#list + 1] = origin .. "/.well-known/oauth-protected-resource" .. path end
  list[#list + 1] = origin .. "/.well-known/oauth-protected-resource"
  return list
end

--- DiscoverOAuthProtectedResourceMetadata. Returns the document, or nil and an error; `found`
--- (third value) is false when no URL had a document (404 or other 4xx), i.e. the server
--- predates RFC 9728 and the 2025-03-26 rules apply.
---@param server_url string
---@param opts table|nil resource_metadata_url, protocol_version, timeout_ms
---@return table|nil prm, mcp.OAuthError|nil err, boolean|nil found
function M.protected_resource_metadata(server_url, opts)
  opts = opts or {}
  local rm = opts.resource_metadata_url
  if rm and not url.same_origin(rm, server_url) then
    return nil, oerr.new(oerr.INSECURE_URL, "OAuth protected resource metadata URL " .. fetch.redact_url(rm)
      .. " must have the same origin as the MCP server " .. url.origin(server_url)), true
  end
  for _, target in ipairs(M.protected_resource_urls(server_url, rm)) do
    local res, err = M.get(target, server_url, opts)
    if not res then return nil, err, true end
    if res.status >= 200 and res.status < 300 then
      local doc, derr = decode_object(res, "protected resource metadata")
      if not doc then return nil, derr, true end
      return doc
    elseif res.status < 400 or res.status >= 500 then
      return nil, oerr.new(oerr.SERVER_ERROR, ("HTTP %d trying to load protected resource metadata"):format(res.status),
        { status_code = res.status }), true
    end
  end
  return nil, oerr.new(oerr.SERVER_ERROR, "Resource server does not implement OAuth 2.0 Protected Resource Metadata."), false
end

--- BuildAuthorizationServerDiscoveryURLs: RFC 8414 first, then OpenID Connect Discovery.
---@param issuer string the authorization server URL
---@return string[]
function M.authorization_server_urls(issuer)
  local u = assert(url.parse(issuer))
  local origin = url.origin(u)
  local path = u.path:gsub("/+$", "")
  if path == "" then
    return { origin .. "/.well-known/oauth-authorization-server", origin .. "/.well-known/openid-configuration" }
  end
  return {
    origin .. "/.well-known/oauth-authorization-server" .. path,
    origin .. "/.well-known/openid-configuration" .. path,
    origin .. path .. "/.well-known/openid-configuration",
  }
end

--- The issuer a document must name: the authorization server URL as given, or the same without
--- a trailing slash.
local function issuer_matches(doc_issuer, as_url)
  if doc_issuer == as_url then return true end
  return type(doc_issuer) == "string" and as_url:sub(-1) == "/" and doc_issuer == as_url:sub(1, -2)
end

--- DiscoverAuthorizationServerMetadata. Returns the metadata, or nil and nil when no candidate
--- URL had a document (the 2025-03-26 defaults then apply), or nil and an error: a 5xx, a
--- document that is not JSON, an `issuer` other than the authorization server's (RFC 8414 §3.3),
--- or PKCE S256 not offered. opts.legacy (the 2025-03-26 rules: no protected resource metadata,
--- the MCP server's origin stands in for the authorization server) skips the issuer comparison,
--- since that URL is not an issuer identifier.
---@param as_url string
---@param server_url string
---@param opts table|nil protocol_version, timeout_ms, legacy
---@return table|nil metadata, mcp.OAuthError|nil err
function M.authorization_server_metadata(as_url, server_url, opts)
  for _, target in ipairs(M.authorization_server_urls(as_url)) do
    local res, err = M.get(target, server_url, opts)
    if not res then return nil, err end
    if res.status >= 200 and res.status < 300 then
      local doc, derr = decode_object(res, "authorization server metadata")
      if not doc then return nil, derr end
      if not (opts and opts.legacy) and not issuer_matches(doc.issuer, as_url) then
        return nil, oerr.new(oerr.INVALID_METADATA, ("authorization server metadata at %s names issuer %q, not %q")
          :format(fetch.redact_url(target), tostring(doc.issuer), as_url))
      end
      local methods = doc.code_challenge_methods_supported
      local s256 = false
      if type(methods) == "table" then
        for _, m in ipairs(methods) do s256 = s256 or m == "S256" end
      end
      if not s256 then
        return nil, oerr.new(oerr.INVALID_METADATA, "the authorization server " .. as_url
          .. " does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires")
      end
      return doc
    elseif res.status < 400 or res.status >= 500 then
      return nil, oerr.new(oerr.SERVER_ERROR, ("HTTP %d trying to load authorization server metadata from %s")
        :format(res.status, fetch.redact_url(target)), { status_code = res.status })
    end
  end
  return nil, nil
end

return M
