--- The OAuth extensions of MCP for clients with no person present: client credentials (SEP-1046:
--- client_secret_basic, or private_key_jwt with an ES256/RS256 key), workload identity federation
--- (an RFC 7523 JWT bearer grant from a workload token read from a file or a function),
--- enterprise-managed authorization (SEP-990: an RFC 8693 token exchange of the user's ID token at
--- the enterprise IdP for an ID-JAG, then the JWT bearer grant with it at the MCP server's
--- authorization server), and DPoP (RFC 9449) on top of any provider.
---
--- Each is a provider for mcp.auth.auth / the HTTP transports: the flow discovers the
--- authorization server as for any provider, then calls `provider:prepare_grant(scope, ctx)`
--- instead of sending a user to the authorization URL. A new grant is the refresh: when the token
--- expires or is refused, the flow asks again (a workload token is read again then).
--- Keys and assertions are never logged nor put in an error message.
local core = require("mcp.core")
local dpop = require("mcp.auth.dpop")
local fetch = require("mcp.fetch")
local jose = require("mcp.jose")
local json = require("mcp.json")
local oerr = require("mcp.auth.errors")
local provider = require("mcp.auth.provider")
local url = require("mcp.auth.url")

local M = {}

M.JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
M.CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
M.TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
M.ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
M.ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

--- Seconds an assertion of ours lives (RFC 7523: short).
M.ASSERTION_LIFETIME = 60
--- A workload token closer than this to its exp is read again before it is used.
M.EXPIRY_MARGIN = 10

local function check(cond, msg)
  if not cond then error("mcp.auth: " .. msg, 3) end
end

-- The general provider's methods (tokens, save_tokens, invalidate_credentials, ...) under ours.
local Base = getmetatable(provider.new({ redirect_url = "http://127.0.0.1/" }))

local Machine = setmetatable({}, { __index = Base })
Machine.__index = Machine

function Machine:__tostring()
  return "mcp.auth." .. self._kind .. "(" .. self._client_id .. ")"
end

-- No user, no redirect: the flow never gets here with prepare_grant, but a stray call fails clearly.
function Machine:redirect_to_authorization()
  return nil, oerr.new(oerr.INVALID_REQUEST, "a " .. self._kind .. " provider has no authorization step")
end

function Machine:save_code_verifier() end

local function expiry_of(jwt)
  local d = jose.decode(jwt)
  local exp = d and d.payload and d.payload.exp
  return type(exp) == "number" and exp or nil
end

--- Client authentication at the token endpoint: private_key_jwt (RFC 7523 section 2.2, `aud` the
--- issuer), client_secret_basic, client_secret_post, or none (the client_id only).
function Machine:add_client_authentication(headers, params, token_url, metadata)
  local id = self._client_id
  local method = self._auth_method
  if method == "private_key_jwt" then
    local aud = type(metadata) == "table" and type(metadata.issuer) == "string" and metadata.issuer or token_url
    params.client_id = id
    params.client_assertion_type = M.CLIENT_ASSERTION_TYPE
    params.client_assertion = jose.jwt({ iss = id, sub = id, aud = aud }, self._key,
      { kid = self._kid, lifetime = M.ASSERTION_LIFETIME })
  elseif method == "client_secret_basic" then
    headers.Authorization = "Basic " .. core.base64_encode(fetch.form_escape(id) .. ":" .. fetch.form_escape(self._secret))
  elseif method == "client_secret_post" then
    params.client_id = id
    params.client_secret = self._secret
  else
    params.client_id = id
  end
end

-- The flow only gets here for a pinned issuer; checked again where the credential is built.
local function pinned(self, ctx)
  local issuer = type(ctx) == "table" and ctx.issuer or nil
  for _, i in ipairs(self._issuers) do
    if i == issuer then return true end
  end
  return nil, oerr.new(oerr.INVALID_CLIENT, "the " .. self._kind .. " credentials are pinned to "
    .. table.concat(self._issuers, ", ") .. "; not sent to " .. tostring(issuer))
end

local function scope_of(self, scope)
  if self._scope ~= nil then return self._scope ~= "" and self._scope or nil end
  return scope
end

-- Common options: client_id, issuer or allowed_issuers (required: the credentials go only
-- there), client_secret or private_key (+ kid), token_endpoint_auth_method, scope, store, key,
-- on_tokens.
local function new_machine(kind, opts, auth_required)
  check(type(opts) == "table", kind .. ": options table expected")
  check(type(opts.client_id) == "string" and opts.client_id ~= "", kind .. ": client_id expected")
  check(opts.client_secret == nil or type(opts.client_secret) == "string", kind .. ": client_secret must be a string")
  check(opts.scope == nil or type(opts.scope) == "string", kind .. ": scope must be a string")
  check(opts.private_key == nil or opts.client_secret == nil, kind .. ": give client_secret or private_key, not both")
  local key, method = nil, opts.token_endpoint_auth_method
  if opts.private_key ~= nil then
    local err
    key, err = jose.resolve_key(opts.private_key)
    if key == nil then return nil, err end
    check(key:is_private(), kind .. ": private_key must be a private key")
    if opts.alg ~= nil and opts.alg ~= jose.algorithm(key) then
      return nil, oerr.new(oerr.INVALID_CLIENT, ("%s: signing_algorithm %s does not fit the key (%s)")
        :format(kind, tostring(opts.alg), jose.algorithm(key)))
    end
    method = method or "private_key_jwt"
  elseif opts.client_secret ~= nil then
    method = method or "client_secret_basic"
  else
    check(not auth_required, kind .. ": client_secret or private_key expected")
    method = method or "none"
  end
  local info = { client_id = opts.client_id, issuer = opts.issuer, allowed_issuers = opts.allowed_issuers }
  -- Every provider here sends a credential (a secret, an assertion, a workload token, an ID-JAG):
  -- pinned to its authorization server, never to the one a (malicious) MCP server names.
  provider.check_pinned(info, kind, true)
  local base = provider.new({
    redirect_url = "http://127.0.0.1/", -- never used: no user, no redirect
    client_information = info,
    store = opts.store,
    key = opts.key or (kind .. ":" .. opts.client_id),
    on_tokens = opts.on_tokens,
  })
  base._kind = kind
  base._client_id = opts.client_id
  base._secret = opts.client_secret
  base._key = key
  base._kid = opts.kid
  base._auth_method = method
  base._scope = opts.scope
  base._issuers = opts.allowed_issuers or { opts.issuer }
  return base
end

-- ---- client credentials (SEP-1046) -----------------------------------------------------------

local ClientCredentials = setmetatable({}, { __index = Machine })
ClientCredentials.__index = ClientCredentials
ClientCredentials.__tostring = Machine.__tostring

function ClientCredentials:prepare_grant(scope, ctx)
  local ok, err = pinned(self, ctx)
  if not ok then return nil, err end
  return { grant_type = "client_credentials", scope = scope_of(self, scope) }
end

--- A client credentials provider. opts: client_id; issuer or allowed_issuers (required: the
--- authorization server(s) the credentials may be sent to; raises without); client_secret (client_secret_basic, or
--- token_endpoint_auth_method = "client_secret_post") or private_key (private_key_jwt: a key
--- object, PEM text, { pem = ..., passphrase = ... } or { file = ..., passphrase = ... }) with an
--- optional kid and alg ("ES256"/"RS256", checked against the key); scope (default: the flow's
--- choice); store and key (where the tokens go, default a memory store); on_tokens(tokens).
---@param opts table
---@return table|nil provider
---@return mcp.Error|nil err the private key cannot be loaded
function M.client_credentials(opts)
  local p, err = new_machine("client_credentials", opts, true)
  if p == nil then return nil, err end
  return setmetatable(p, ClientCredentials)
end

-- ---- workload identity federation (JWT bearer, RFC 7523 section 2.1) -------------------------

local Workload = setmetatable({}, { __index = Machine })
Workload.__index = Workload
Workload.__tostring = Machine.__tostring

local function read_file(path)
  local f, why = io.open(path, "rb")
  if f == nil then return nil, why end
  local s = f:read("*a")
  f:close()
  return (s or ""):gsub("%s+$", "")
end

-- The workload token, read again (file, function) when the one in hand is about to expire.
function Workload:assertion()
  local src, token, err = self._source, nil, nil
  for attempt = 1, 2 do
    if type(src) == "string" then
      token = src
    elseif type(src) == "function" then
      token, err = src(attempt > 1)
    else
      token, err = read_file(src.file)
      if token == nil then
        return nil, oerr.new(oerr.INVALID_REQUEST, "cannot read the workload token file " .. src.file
          .. ": " .. tostring(err))
      end
    end
    if type(token) ~= "string" or token == "" then
      return nil, oerr.new(oerr.INVALID_REQUEST, "no workload token" .. (err and (": " .. tostring(err)) or ""))
    end
    if jose.decode(token) == nil then
      return nil, oerr.new(oerr.INVALID_REQUEST, "the workload token is not a JWT")
    end
    local exp = expiry_of(token)
    if exp == nil or exp > jose.now() + M.EXPIRY_MARGIN then return token end
    if type(src) == "string" then break end
  end
  return nil, oerr.new(oerr.INVALID_GRANT, "the workload token has expired (exp " .. tostring(expiry_of(token))
    .. "); it is not sent")
end

function Workload:prepare_grant(scope, ctx)
  local ok, perr = pinned(self, ctx)
  if not ok then return nil, perr end
  local token, err = self:assertion()
  if token == nil then return nil, err end
  return { grant_type = M.JWT_BEARER, assertion = token, scope = scope_of(self, scope) }
end

--- A workload identity provider: the JWT bearer grant with a token the platform gives the
--- workload (a CI runner's OIDC token, a Kubernetes service account token, ...). opts: client_id;
--- issuer or allowed_issuers (required, as for client_credentials);
--- token (a JWT string), token_file (a path read at each grant) or token_fn(stale) -> JWT
--- (called at each grant; stale is true when the previous answer had expired); client_secret or
--- private_key when the authorization server authenticates the client (default: none); scope,
--- store, key, on_tokens. A token within EXPIRY_MARGIN seconds of its exp is read again once,
--- and never sent expired.
---@param opts table
---@return table|nil provider
---@return mcp.Error|nil err
function M.workload_identity(opts)
  check(type(opts) == "table", "workload_identity: options table expected")
  local n = (opts.token ~= nil and 1 or 0) + (opts.token_file ~= nil and 1 or 0) + (opts.token_fn ~= nil and 1 or 0)
  check(n == 1, "workload_identity: give one of token, token_file, token_fn")
  check(opts.token == nil or type(opts.token) == "string", "workload_identity: token must be a string")
  check(opts.token_file == nil or type(opts.token_file) == "string", "workload_identity: token_file must be a path")
  check(opts.token_fn == nil or type(opts.token_fn) == "function", "workload_identity: token_fn must be a function")
  local p, err = new_machine("workload_identity", opts, false)
  if p == nil then return nil, err end
  p._source = opts.token or opts.token_fn or { file = opts.token_file }
  return setmetatable(p, Workload)
end

-- ---- enterprise-managed authorization (SEP-990) ----------------------------------------------

local Enterprise = setmetatable({}, { __index = Machine })
Enterprise.__index = Enterprise
Enterprise.__tostring = Machine.__tostring

-- RFC 8693 at the IdP: the user's ID token for an Identity Assertion JWT Authorization Grant.
function Enterprise:exchange(scope, ctx)
  local idp = self._idp
  local id_token, why = self._id_token(ctx)
  if type(id_token) ~= "string" or id_token == "" then
    return nil, oerr.new(oerr.INVALID_REQUEST, "no ID token from the id_token hook" .. (why and (": " .. tostring(why)) or ""))
  end
  local form = {
    grant_type = M.TOKEN_EXCHANGE,
    requested_token_type = M.ID_JAG_TYPE,
    subject_token = id_token,
    subject_token_type = M.ID_TOKEN_TYPE,
    audience = ctx.issuer,
    resource = ctx.resource,
    scope = scope,
  }
  local headers = { Accept = "application/json" }
  if idp.client_secret ~= nil then
    headers.Authorization = "Basic " .. core.base64_encode(fetch.form_escape(idp.client_id) .. ":"
      .. fetch.form_escape(idp.client_secret))
  elseif idp.client_id ~= nil then
    form.client_id = idp.client_id
  end
  local res, err = fetch.request({ method = "POST", url = idp.token_endpoint, headers = headers, form = form,
    timeout_ms = ctx.timeout_ms })
  if not res then return nil, oerr.wrap(err, "token exchange at the IdP") end
  if res.status < 200 or res.status >= 300 then return nil, oerr.from_response(res.status, res.body) end
  local doc = json.decode(res.body)
  if type(doc) ~= "table" or type(doc.access_token) ~= "string" or doc.access_token == "" then
    return nil, oerr.new(oerr.SERVER_ERROR, "the IdP's token exchange answer has no access_token",
      { status_code = res.status })
  end
  if doc.issued_token_type ~= M.ID_JAG_TYPE then
    return nil, oerr.new(oerr.SERVER_ERROR, "the IdP issued " .. tostring(doc.issued_token_type)
      .. ", not an ID-JAG (" .. M.ID_JAG_TYPE .. ")")
  end
  return doc.access_token
end

function Enterprise:prepare_grant(scope, ctx)
  local ok, perr = pinned(self, ctx)
  if not ok then return nil, perr end
  scope = scope_of(self, scope)
  local jag, err = self:exchange(scope, ctx)
  if jag == nil then return nil, err end
  return { grant_type = M.JWT_BEARER, assertion = jag, scope = scope }
end

--- An enterprise-managed authorization provider (SEP-990). opts: client_id; issuer or
--- allowed_issuers (required, as for client_credentials); client_secret or
--- private_key (the client at the MCP server's authorization server); idp = { token_endpoint
--- (https, or http on loopback), client_id, client_secret? }; id_token(ctx) -> the user's ID
--- token from the enterprise IdP (the host's single sign-on; ctx has issuer, resource,
--- server_url), or id_token as a string; scope, store, key, on_tokens.
---@param opts table
---@return table|nil provider
---@return mcp.Error|nil err
function M.enterprise(opts)
  check(type(opts) == "table", "enterprise: options table expected")
  local idp = opts.idp
  check(type(idp) == "table" and type(idp.token_endpoint) == "string", "enterprise: idp.token_endpoint expected")
  local u = url.parse(idp.token_endpoint)
  check(u ~= nil and (u.scheme == "https" or url.is_loopback(u.host)),
    "enterprise: idp.token_endpoint must be https (http on loopback only)")
  check(idp.client_id == nil or type(idp.client_id) == "string", "enterprise: idp.client_id must be a string")
  check(type(opts.id_token) == "function" or type(opts.id_token) == "string",
    "enterprise: id_token (a function or a string) expected")
  local p, err = new_machine("enterprise", opts, true)
  if p == nil then return nil, err end
  p._idp = { token_endpoint = idp.token_endpoint, client_id = idp.client_id, client_secret = idp.client_secret }
  local t = opts.id_token
  p._id_token = type(t) == "function" and t or function() return t end
  return setmetatable(p, Enterprise)
end

-- ---- DPoP (RFC 9449) on any provider ---------------------------------------------------------

local Dpop = {}
Dpop.__index = function(self, k)
  local v = Dpop[k]
  if v ~= nil then return v end
  local inner = rawget(self, "_inner")[k]
  if type(inner) == "function" then
    return function(s, ...)
      if s == self then s = rawget(self, "_inner") end
      return inner(s, ...)
    end
  end
  return inner
end

function Dpop:__tostring()
  return "mcp.auth.dpop(" .. tostring(rawget(self, "_inner")) .. ")"
end

function Dpop:prepare_token_request(headers, params, token_url)
  local inner = rawget(self, "_inner")
  if type(inner.prepare_token_request) == "function" then inner:prepare_token_request(headers, params, token_url) end
  self._sent[token_url] = self.dpop:nonce(token_url) or false
  headers.DPoP = self.dpop:proof("POST", token_url)
end

function Dpop:token_response(res, _, token_url)
  local sent = self._sent[token_url]
  return self.dpop:observe(token_url, res.status, res.headers, res.body, sent or nil)
end

function Dpop:save_tokens(tokens)
  local t = {}
  for k, v in pairs(tokens) do t[k] = v end
  t.dpop_key_pem = self.dpop:export().key_pem -- the key goes with the token bound to it
  rawget(self, "_inner"):save_tokens(t)
end

--- The headers of one MCP request with the current token: `Authorization: DPoP <token>` and a
--- fresh proof (`ath`, the origin's nonce) for a DPoP-bound token, else `Authorization: Bearer`.
---@param method string
---@param request_url string
---@return table|nil headers nil without a token
function Dpop:request_headers(method, request_url)
  local tokens = rawget(self, "_inner"):tokens()
  if type(tokens) ~= "table" or type(tokens.access_token) ~= "string" then return nil end
  self._last_url = request_url
  if type(tokens.token_type) == "string" and tokens.token_type:lower() == "dpop" then
    self._sent[request_url] = self.dpop:nonce(request_url) or false
    return { Authorization = "DPoP " .. tokens.access_token,
      DPoP = self.dpop:proof(method, request_url, tokens.access_token) }
  end
  return { Authorization = "Bearer " .. tokens.access_token }
end

--- After an MCP response: true when it is a use_dpop_nonce challenge with a new nonce (send the
--- request again, once, with request_headers' new proof). request_url defaults to the URL of the
--- last request_headers call.
function Dpop:resource_response(status, headers, body, request_url)
  request_url = request_url or self._last_url
  if request_url == nil then return false end
  local sent = self._sent[request_url]
  return self.dpop:observe(request_url, status, headers, body, sent or nil)
end

--- DPoP for a provider (any of mcp.auth's): every token request carries a proof (retried once
--- on use_dpop_nonce), the key is saved with the tokens (`dpop_key_pem`, in the provider's token
--- store) and found there again, and request_headers / resource_response serve the MCP requests.
--- opts: key (a key spec as for mcp.jose.resolve_key; default the stored key, else a new EC
--- P-256 key).
---@param p table a provider
---@param opts table|nil
---@return table|nil provider
---@return mcp.Error|nil err
function M.with_dpop(p, opts)
  check(type(p) == "table", "with_dpop: provider expected")
  opts = opts or {}
  local key = opts.key
  if key == nil then
    local tokens = type(p.tokens) == "function" and p:tokens() or nil
    if type(tokens) == "table" and type(tokens.dpop_key_pem) == "string" then key = tokens.dpop_key_pem end
  end
  local state, err = dpop.new({ key = key })
  if state == nil then return nil, err end
  return setmetatable({ _inner = p, dpop = state, _sent = {} }, Dpop)
end

return M
