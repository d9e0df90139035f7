--- DPoP (RFC 9449): sender-constrained tokens. A proof is a JWT signed by the client's key, with
--- the public key in its header, bound to one HTTP request (`htm`, `htu`), to the access token it
--- accompanies (`ath`) and, when the server asks for one, to a server nonce.
---
--- `dpop.new()` holds what a client keeps: its key (ES256 by default; export() and restore() carry
--- it through a token store) and the last nonce each origin gave (`DPoP-Nonce`), which every later
--- proof for that origin carries.
local core = require("mcp.core")
local jose = require("mcp.jose")
local json = require("mcp.json")

local M = {}

--- The `htu` of a request URL: the URL without its query and fragment (RFC 9449 section 4.2).
---@param url string
---@return string
function M.htu(url)
  if type(url) ~= "string" then error("mcp.auth.dpop.htu: url must be a string", 2) end
  return (url:gsub("[?#].*$", ""))
end

--- The `ath` of an access token: base64url(SHA-256(token)) (RFC 9449 section 4.2).
---@param access_token string
---@return string
function M.ath(access_token)
  return jose.base64url_encode(core.sha256(access_token))
end

--- The origin a nonce belongs to: scheme://authority, lower-cased; nil when url has none.
---@param url string
---@return string|nil
function M.origin(url)
  local o = type(url) == "string" and url:match("^(%a[%w+.-]*://[^/?#]+)")
  return o and o:lower() or nil
end

---@class mcp.auth.dpop.ProofOptions
---@field access_token string|nil adds `ath` (resource requests)
---@field nonce string|nil the server's nonce
---@field now integer|nil `iat` (default now)
---@field jti string|nil default: 128 fresh random bits

--- A DPoP proof for one request: header `typ` "dpop+jwt", `alg`, `jwk` (the public key); claims
--- `jti`, `htm`, `htu`, `iat`, and `ath` / `nonce` when given.
---@param key mcp.pkey a private EC P-256 or RSA key
---@param method string the HTTP method, e.g. "POST"
---@param url string the request URL (query and fragment are left out of `htu`)
---@param opts mcp.auth.dpop.ProofOptions|nil
---@return string proof
function M.proof(key, method, url, opts)
  if not jose.is_key(key) then error("mcp.auth.dpop.proof: key must be a key object", 2) end
  if type(method) ~= "string" or not method:match("^[%w!#$%%&'*+.^_`|~-]+$") then
    error("mcp.auth.dpop.proof: method must be an HTTP method", 2)
  end
  if type(url) ~= "string" or M.origin(url) == nil then
    error("mcp.auth.dpop.proof: url must be an absolute URL", 2)
  end
  opts = opts or {}
  local claims = {
    jti = opts.jti or jose.new_jti(),
    htm = method,
    htu = M.htu(url),
    iat = opts.now or jose.now(),
  }
  if opts.access_token ~= nil then claims.ath = M.ath(opts.access_token) end
  if opts.nonce ~= nil then claims.nonce = opts.nonce end
  local header = { typ = "dpop+jwt", alg = jose.algorithm(key), jwk = jose.public_jwk(key) }
  return jose.sign(header, claims, key)
end

local function header_value(headers, name)
  if type(headers) ~= "table" then return nil end
  local v = headers[name]
  if v ~= nil then return v end
  for k, val in pairs(headers) do
    if type(k) == "string" and k:lower() == name then return val end
  end
  return nil
end

-- The `error` of a DPoP / Bearer challenge, or of an OAuth error body.
local function challenge_error(headers, body)
  local www = header_value(headers, "www-authenticate")
  if type(www) == "string" then
    local e = www:match('[Ee][Rr][Rr][Oo][Rr]%s*=%s*"([^"]*)"') or www:match("[Ee][Rr][Rr][Oo][Rr]%s*=%s*([^%s,]+)")
    if e ~= nil then return e end
  end
  if type(body) == "string" and body:find("use_dpop_nonce", 1, true) then
    local t = json.decode(body)
    if type(t) == "table" then return t.error end
  elseif type(body) == "table" then
    return body.error
  end
  return nil
end

--- True when a response asks for a DPoP nonce: a 401 from a resource server with
--- `WWW-Authenticate: DPoP error="use_dpop_nonce"` or a 400 from an authorization server with the
--- OAuth error "use_dpop_nonce" (RFC 9449 sections 8 and 9).
---@param status integer
---@param headers table|nil response headers
---@param body string|table|nil response body (text or decoded JSON)
---@return boolean
function M.is_nonce_challenge(status, headers, body)
  if status ~= 400 and status ~= 401 then return false end
  return challenge_error(headers, body) == "use_dpop_nonce"
end

---@class mcp.auth.dpop.State
---@field key mcp.pkey
---@field nonces table<string, string> origin -> last nonce
local State = {}
State.__index = State

function State:__tostring()
  return "mcp.auth.dpop (" .. jose.algorithm(self.key) .. ", thumbprint " .. self:thumbprint() .. ")"
end

--- A client's DPoP state. `key`: a key object, PEM text or { pem = } / { file = } (see
--- mcp.jose.resolve_key); a new EC P-256 key when absent.
---@param opts { key: any }|nil
---@return mcp.auth.dpop.State|nil state
---@return mcp.Error|nil err when the key cannot be loaded
function M.new(opts)
  opts = opts or {}
  local key, err
  if opts.key == nil then
    key = jose.generate_key("EC")
  else
    key, err = jose.resolve_key(opts.key)
    if key == nil then return nil, err end
  end
  if not key:is_private() then error("mcp.auth.dpop.new: the key must be a private key", 2) end
  return setmetatable({ key = key, nonces = {} }, State)
end

--- The RFC 7638 thumbprint of the public key (the token's `cnf.jkt`).
---@return string
function State:thumbprint()
  return (jose.thumbprint(self.key))
end

--- The nonce last given by url's origin, if any.
---@param url string
---@return string|nil
function State:nonce(url)
  local origin = M.origin(url)
  return origin and self.nonces[origin] or nil
end

--- A proof for a request to url, carrying the origin's nonce when one is known.
---@param method string
---@param url string
---@param access_token string|nil for resource requests (adds `ath`)
---@return string proof
function State:proof(method, url, access_token)
  return M.proof(self.key, method, url, { access_token = access_token, nonce = self:nonce(url) })
end

--- Records the `DPoP-Nonce` of a response from url. Returns true when the response is a nonce
--- challenge that brought a nonce other than `sent_nonce` (the one the rejected proof carried):
--- then, and only then, retrying with a new proof can succeed, so a server that keeps refusing
--- the nonce it gave cannot make the client loop.
---@param url string
---@param status integer
---@param headers table|nil
---@param body string|table|nil
---@param sent_nonce string|nil
---@return boolean retry
function State:observe(url, status, headers, body, sent_nonce)
  local origin = M.origin(url)
  local nonce = header_value(headers, "dpop-nonce")
  if origin ~= nil and type(nonce) == "string" and nonce ~= "" and not nonce:find('[^\33-\126]')
      and not nonce:find('["\\]') then -- NQCHAR (RFC 9449 section 8)
    self.nonces[origin] = nonce
  end
  if not M.is_nonce_challenge(status, headers, body) then return false end
  local now_nonce = origin and self.nonces[origin]
  return now_nonce ~= nil and now_nonce ~= sent_nonce
end

--- What a token store keeps to reuse the key: { key_pem = PKCS#8 PEM }. Secret: store it as
--- carefully as a refresh token.
---@return table
function State:export()
  return { key_pem = self.key:pem(true) }
end

--- A state from what export() gave.
---@param saved table
---@return mcp.auth.dpop.State|nil state
---@return mcp.Error|nil err
function M.restore(saved)
  if type(saved) ~= "table" or type(saved.key_pem) ~= "string" then
    error("mcp.auth.dpop.restore: expected the table export() returned", 2)
  end
  return M.new({ key = saved.key_pem })
end

return M
