--- The MCP authorization flow (mcp.Auth, TS auth()): discovery, client registration, the
--- authorization code grant with PKCE, refresh, and the checks of MCP 2025-11-25 and 2026-07-28.
--- One call runs the flow as far as it can: "AUTHORIZED" when the provider holds a usable token
--- afterwards, "REDIRECT" when the user must visit the authorization URL (handed to
--- provider:redirect_to_authorization) and the flow resumes with the code later. A provider whose
--- redirect_to_authorization returns the redirect URL it landed on (headless and interactive
--- providers) completes the flow in the same call.
local core = require("mcp.core")
local discovery = require("mcp.auth.discovery")
local fetch = require("mcp.fetch")
local json = require("mcp.json")
local oerr = require("mcp.auth.errors")
local url = require("mcp.auth.url")

local M = {}

M.AUTHORIZED = "AUTHORIZED"
M.REDIRECT = "REDIRECT"

-- Per-provider memory of the flow in progress (state, recorded issuer, last scope asked for).
local memo = setmetatable({}, { __mode = "k" })
local function memo_of(provider)
  local m = memo[provider]
  if not m then
    m = {}
    memo[provider] = m
  end
  return m
end
M._memo = memo_of

-- ---- provider access ------------------------------------------------------------------------

--- A provider member that is a method or a plain value (redirect_url, client_metadata, ...).
local function get(p, name, ...)
  local v = p[name]
  if type(v) == "function" then return v(p, ...) end
  return v
end

local function has(p, name) return type(p[name]) == "function" end

local function invalidate(provider, scope)
  if has(provider, "invalidate_credentials") then provider:invalidate_credentials(scope) end
  local m = memo_of(provider)
  if scope == "all" or scope == "tokens" then m.scope = nil end
  if scope == "all" or scope == "verifier" then m.pending = nil end
end
M.invalidate = invalidate

-- ---- small helpers --------------------------------------------------------------------------

local function b64url(bytes) return core.base64_encode(bytes, "url") end

--- GenerateOAuthPKCE: a 43-character verifier from 32 random bytes and its S256 challenge.
---@return string verifier, string challenge
function M.pkce()
  local verifier = b64url(core.random_bytes(32))
  return verifier, b64url(core.sha256(verifier))
end

--- A random state value (128 bits).
function M.random_state()
  return b64url(core.random_bytes(16))
end

local function split_scope(s)
  local out = {}
  for w in tostring(s or ""):gmatch("%S+") do out[#out + 1] = w end
  return out
end

local function contains(list, v)
  if type(list) ~= "table" then return false end
  for _, x in ipairs(list) do
    if x == v then return true end
  end
  return false
end

--- The union of two space-separated scope strings, in order of first appearance (nil if empty).
---@param a string|nil
---@param b string|nil
---@return string|nil
function M.union_scopes(a, b)
  local seen, out = {}, {}
  for _, s in ipairs({ a or "", b or "" }) do -- (ipairs would stop at a nil a)
    for _, w in ipairs(split_scope(s)) do
      if not seen[w] then
        seen[w] = true
        out[#out + 1] = w
      end
    end
  end
  return #out > 0 and table.concat(out, " ") or nil
end

--- SelectOAuthScope: the challenge's scope, else the resource's scopes_supported, else the
--- client metadata's scope; offline_access is added when the authorization server lists it.
---@param challenge_scope string|nil the scope of a WWW-Authenticate challenge
---@param prm table|nil the protected resource metadata
---@param client_metadata table|nil the provider's client metadata
---@param as_meta table|nil the authorization server metadata
---@return string|nil scope
function M.select_scope(challenge_scope, prm, client_metadata, as_meta)
  local scope = challenge_scope
  if (scope == nil or scope == "") and type(prm) == "table" and type(prm.scopes_supported) == "table"
      and #prm.scopes_supported > 0 then
    scope = table.concat(prm.scopes_supported, " ")
  end
  if (scope == nil or scope == "") and type(client_metadata) == "table" and type(client_metadata.scope) == "string" then
    scope = client_metadata.scope
  end
  if scope == "" then scope = nil end
  if scope and type(as_meta) == "table" and contains(as_meta.scopes_supported, "offline_access")
      and not contains(split_scope(scope), "offline_access") then
    scope = scope .. " offline_access"
  end
  return scope
end

--- checkResourceAllowed: may a token for `resource` be used at `server_url`? Same origin, and
--- the server's path at or under the resource's path.
---@param server_url string
---@param resource string the resource indicator
---@return boolean
function M.resource_allowed(server_url, resource)
  local s, r = url.parse(server_url), url.parse(resource)
  if not s or not r or url.origin(s) ~= url.origin(r) then return false end
  local rp, sp = r.path, s.path
  if rp:sub(-1) ~= "/" then rp = rp .. "/" end
  if sp:sub(-1) ~= "/" then sp = sp .. "/" end
  return sp:sub(1, #rp) == rp
end

--- application_type for registration: "native" when every redirect URI is loopback http(s) or a
--- custom scheme, else "web".
---@param redirect_uris string[]|nil
---@return string application_type "native"|"web"
function M.application_type(redirect_uris)
  if type(redirect_uris) ~= "table" or #redirect_uris == 0 then return "native" end
  for _, r in ipairs(redirect_uris) do
    local u = url.parse(r)
    if u and not url.is_loopback(u.host) then return "web" end
  end
  return "native"
end

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- ---- token endpoint -------------------------------------------------------------------------

local function choose_auth_method(info, meta)
  local supported = type(meta) == "table" and type(meta.token_endpoint_auth_methods_supported) == "table"
    and meta.token_endpoint_auth_methods_supported or nil
  local secret = type(info.client_secret) == "string" and info.client_secret ~= ""
  local m = info.token_endpoint_auth_method
  if type(m) == "string" and (supported == nil or contains(supported, m)) then return m end
  if supported == nil then return secret and "client_secret_post" or "none" end
  if secret and contains(supported, "client_secret_basic") then return "client_secret_basic" end
  if secret and contains(supported, "client_secret_post") then return "client_secret_post" end
  if contains(supported, "none") then return "none" end
  return secret and "client_secret_basic" or "none"
end
M.choose_auth_method = choose_auth_method

local function add_client_auth(ctx, headers, params)
  local provider, info = ctx.provider, ctx.info
  if has(provider, "add_client_authentication") then
    provider:add_client_authentication(headers, params, ctx.token_endpoint, ctx.meta)
    return
  end
  local method = choose_auth_method(info, ctx.meta)
  if method == "client_secret_basic" then
    local cred = fetch.form_escape(info.client_id) .. ":" .. fetch.form_escape(info.client_secret or "")
    headers.Authorization = "Basic " .. core.base64_encode(cred)
  elseif method == "client_secret_post" then
    params.client_id = info.client_id
    params.client_secret = info.client_secret
  else
    params.client_id = info.client_id
  end
end

local function expires_at(expires_in)
  local n = tonumber(expires_in)
  if n and n > 0 then return os.time() + math.floor(n) end
  return nil
end

--- POST a grant to the token endpoint (redirects refused). Returns the tokens or nil, err.
local function token_request(ctx, grant)
  local headers, params, res, err
  -- At most two POSTs: a provider's token_response may ask for one more (a DPoP nonce, RFC 9449
  -- section 8); client authentication and proofs are built afresh for it (new jti).
  for _ = 1, 2 do
    headers = { Accept = "application/json" }
    params = copy(grant)
    if ctx.resource then params.resource = ctx.resource end
    add_client_auth(ctx, headers, params)
    if has(ctx.provider, "prepare_token_request") then
      ctx.provider:prepare_token_request(headers, params, ctx.token_endpoint)
    end
    res, err = fetch.request({ method = "POST", url = ctx.token_endpoint, headers = headers, form = params,
      timeout_ms = ctx.timeout_ms, refuse_addresses = url.connect_guard(ctx.server_url) })
    if not res then return nil, oerr.wrap(err, "token request") end
    if not (has(ctx.provider, "token_response") and ctx.provider:token_response(res, headers, ctx.token_endpoint)) then
      break
    end
  end
  if res.status >= 300 and res.status < 400 then
    return nil, oerr.new(oerr.SERVER_ERROR, "the token endpoint redirected (HTTP " .. res.status .. "); refused",
      { status_code = res.status })
  end
  if res.status < 200 or res.status >= 300 then return nil, oerr.from_response(res.status, res.body) end
  local doc = json.decode(res.body)
  if type(doc) ~= "table" or type(doc.access_token) ~= "string" or doc.access_token == "" then
    if type(doc) == "table" and doc.error then return nil, oerr.from_response(res.status, res.body) end
    return nil, oerr.new(oerr.SERVER_ERROR, "the token endpoint's answer has no access_token", { status_code = res.status })
  end
  -- A token that cannot go into a header is never saved (it would lock the store).
  local tok_ok, tok_why = require("mcp.auth.transport").check_token(doc.access_token)
  if not tok_ok then return nil, oerr.new(oerr.SERVER_ERROR, "the token endpoint's answer: " .. tok_why) end
  if doc.token_type ~= nil and (type(doc.token_type) ~= "string" or doc.token_type:lower() ~= "bearer")
      and not has(ctx.provider, "prepare_token_request") then
    return nil, oerr.new(oerr.SERVER_ERROR, "unsupported token_type " .. tostring(doc.token_type))
  end
  local tokens = {
    access_token = doc.access_token,
    token_type = doc.token_type or "Bearer",
    expires_in = tonumber(doc.expires_in),
    expires_at = expires_at(doc.expires_in),
    refresh_token = type(doc.refresh_token) == "string" and doc.refresh_token or nil,
    scope = type(doc.scope) == "string" and doc.scope or params.scope,
    id_token = type(doc.id_token) == "string" and doc.id_token or nil,
    issuer = ctx.pin.issuer,
    authorization_server = ctx.pin.authorization_server,
    token_endpoint = ctx.pin.token_endpoint,
  }
  return tokens
end

local function pin_matches(stored, pin)
  if type(stored) ~= "table" then return false end
  if stored.issuer ~= nil and stored.issuer ~= pin.issuer then return false end
  -- Credentials pinned to a list of issuers (client secrets, keys, workload tokens) go nowhere else.
  if type(stored.allowed_issuers) == "table" and not contains(stored.allowed_issuers, pin.issuer) then return false end
  if stored.authorization_server ~= nil and stored.authorization_server ~= pin.authorization_server then return false end
  return true
end

-- ---- registration ---------------------------------------------------------------------------

-- (widen: the registration's scope is the union of the client metadata's and `scope`, for a
-- registration made again to cover more scope than the last one)
local function register(ctx, scope, widen)
  local provider = ctx.provider
  local endpoint
  if ctx.meta then
    endpoint = ctx.meta.registration_endpoint
    if type(endpoint) ~= "string" then
      return nil, oerr.new(oerr.INVALID_CLIENT, "the authorization server " .. ctx.as_url
        .. " offers no client registration, and the provider has no client information for it")
    end
  else
    endpoint = url.resolve(ctx.as_url, "/register")
  end
  local ok, why = url.check_fetchable(endpoint, ctx.server_url)
  if not ok then return nil, oerr.new(oerr.INSECURE_URL, "registration endpoint: " .. why) end
  local body = copy(get(provider, "client_metadata"))
  local redirect = get(provider, "redirect_url")
  if body.redirect_uris == nil and redirect then body.redirect_uris = { redirect } end
  body.grant_types = body.grant_types or { "authorization_code", "refresh_token" }
  body.response_types = body.response_types or { "code" }
  body.application_type = body.application_type or M.application_type(body.redirect_uris)
  if widen then
    body.scope = M.union_scopes(body.scope, scope)
  elseif body.scope == nil and scope then
    body.scope = scope
  end
  if body.token_endpoint_auth_method == nil then
    local supported = ctx.meta and ctx.meta.token_endpoint_auth_methods_supported
    if type(supported) == "table" and supported[1] ~= nil and not contains(supported, "none") then
      body.token_endpoint_auth_method = supported[1]
    else
      body.token_endpoint_auth_method = "none"
    end
  end
  local res, err = fetch.request({ method = "POST", url = endpoint, json = body,
    headers = { Accept = "application/json" }, timeout_ms = ctx.timeout_ms,
    refuse_addresses = url.connect_guard(ctx.server_url) })
  if not res then return nil, oerr.wrap(err, "client registration") end
  if res.status < 200 or res.status >= 300 then return nil, oerr.from_response(res.status, res.body) end
  local info = json.decode(res.body)
  if type(info) ~= "table" or type(info.client_id) ~= "string" or info.client_id == "" then
    return nil, oerr.new(oerr.SERVER_ERROR, "the registration answer has no client_id", { status_code = res.status })
  end
  info.issuer = ctx.pin.issuer
  info.authorization_server = ctx.pin.authorization_server
  -- (a registration of the flow's own, which it may make again: see reregister_reason)
  info.dynamic_registration = true
  if has(provider, "on_dynamic_registration") then provider:on_dynamic_registration(info) end
  return info
end

-- ---- the flow -------------------------------------------------------------------------------

--- Parse a redirect (callback) URL or table into {code, state, iss, error, error_description}.
function M.parse_callback(cb)
  if type(cb) == "table" then return cb end
  local u = url.parse(cb)
  if not u then return nil end
  local q = url.parse_query(u.query)
  return { code = q.code, state = q.state, iss = q.iss, error = q.error, error_description = q.error_description }
end

local function redeem(ctx, cb)
  local provider, pending = ctx.provider, ctx.pending or {}
  -- The code is redeemed where it was issued: a discovery that now names another authorization
  -- server or token endpoint than the login began with is refused, nothing is sent.
  if pending.issuer ~= nil and (pending.issuer ~= ctx.pin.issuer
      or (pending.token_endpoint ~= nil and pending.token_endpoint ~= ctx.token_endpoint)) then
    return nil, oerr.new(oerr.INVALID_ISSUER, ("the login began at %s (token endpoint %s); discovery now names %s "
      .. "(%s): the code is not redeemed"):format(tostring(pending.issuer), tostring(pending.token_endpoint),
      tostring(ctx.pin.issuer), tostring(ctx.token_endpoint)))
  end
  -- RFC 9207 first: a response from the wrong issuer is not looked at any further.
  local expected = pending.issuer or ctx.pin.issuer
  if cb.iss ~= nil then
    if cb.iss ~= expected then
      return nil, oerr.new(oerr.INVALID_ISSUER, ("the authorization response's iss %q is not the issuer %q")
        :format(tostring(cb.iss), tostring(expected)))
    end
  elseif pending.iss_supported then
    return nil, oerr.new(oerr.INVALID_ISSUER, "the authorization server promised an iss parameter "
      .. "(authorization_response_iss_parameter_supported) and the response has none")
  end
  local want_state = pending.state
  if has(provider, "stored_state") then want_state = provider:stored_state() or want_state end
  if want_state ~= nil and cb.state ~= want_state then
    return nil, oerr.new(oerr.INVALID_STATE, "OAuth state parameter mismatch - possible CSRF attack")
  end
  if cb.error ~= nil then
    return nil, oerr.new(cb.error, cb.error_description or cb.error)
  end
  if type(cb.code) ~= "string" or cb.code == "" then
    return nil, oerr.new(oerr.INVALID_REQUEST, "the authorization response has no code")
  end
  local verifier = get(provider, "code_verifier")
  if type(verifier) ~= "string" or verifier == "" then
    return nil, oerr.new(oerr.INVALID_REQUEST, "no PKCE code verifier saved for this authorization")
  end
  local tokens, err = token_request(ctx, {
    grant_type = "authorization_code", code = cb.code, code_verifier = verifier,
    redirect_uri = get(provider, "redirect_url"),
  })
  if not tokens then return nil, err end
  memo_of(provider).pending = nil
  provider:save_tokens(tokens)
  return M.AUTHORIZED
end

local function authorization_url(ctx, scope, state, challenge)
  local meta = ctx.meta
  local endpoint = meta and meta.authorization_endpoint or url.resolve(ctx.as_url, "/authorize")
  if type(endpoint) ~= "string" then
    return nil, oerr.new(oerr.INVALID_METADATA, "the authorization server metadata has no authorization_endpoint")
  end
  local u = url.parse(endpoint)
  if not u or (u.scheme ~= "https" and not url.is_loopback(u.host)) then
    return nil, oerr.new(oerr.INSECURE_URL, "the authorization endpoint must be an https URL (http only on loopback)")
  end
  if meta and type(meta.response_types_supported) == "table" and not contains(meta.response_types_supported, "code") then
    return nil, oerr.new(oerr.INVALID_METADATA, "the authorization server does not support response type code")
  end
  local params = {
    response_type = "code", client_id = ctx.info.client_id, code_challenge = challenge,
    code_challenge_method = "S256", redirect_uri = get(ctx.provider, "redirect_url"), state = state,
    scope = scope, resource = ctx.resource,
  }
  if scope and contains(split_scope(scope), "offline_access") then params.prompt = "consent" end
  local sep = endpoint:find("?", 1, true) and "&" or "?"
  return endpoint .. sep .. fetch.form_encode(params)
end

-- 1. protected resource metadata (RFC 9728; none at all: the 2025-03-26 rules) and the
-- authorization server it names, checked for this server; returns as_url, prm or nil, err.
local function authorization_server(provider, o)
  local server_url = o.server_url
  local prm, perr = discovery.protected_resource_metadata(server_url, {
    resource_metadata_url = o.resource_metadata_url, protocol_version = o.protocol_version, timeout_ms = o.timeout_ms,
  })
  if perr and perr.oauth_error == oerr.INSECURE_URL then return nil, perr end
  if prm and (type(prm.authorization_servers) ~= "table" or type(prm.authorization_servers[1]) ~= "string") then
    prm = nil
  end
  local as_url = prm and prm.authorization_servers[1] or url.origin(server_url)
  local ok, why = url.check_fetchable(as_url, server_url)
  if not ok then return nil, oerr.new(oerr.INSECURE_URL, "authorization server " .. as_url .. ": " .. why) end
  if has(provider, "validate_authorization_server_url") then
    local vok, verr = provider:validate_authorization_server_url(as_url, server_url)
    if not vok then return nil, oerr.new(oerr.INSECURE_URL, verr or ("authorization server " .. as_url .. " refused")) end
  end
  return as_url, prm
end

-- 2. the resource indicator (RFC 8707), exactly as the resource names itself: true and the
-- resource (nil for none), or nil, err.
local function resource_indicator(provider, server_url, prm)
  if has(provider, "validate_resource_url") then
    local r, rerr = provider:validate_resource_url(server_url, prm and prm.resource)
    if r == nil and rerr then return nil, oerr.new(oerr.INVALID_REQUEST, rerr) end
    return true, r
  elseif prm then
    if type(prm.resource) ~= "string" or not M.resource_allowed(server_url, prm.resource) then
      return nil, oerr.new(oerr.INVALID_REQUEST, ("Protected resource %s does not match expected %s (or origin)")
        :format(tostring(prm.resource), url.strip_fragment(server_url)))
    end
    return true, prm.resource
  end
  return true, nil
end

-- 3. authorization server metadata (RFC 8414, OpenID Connect; none: the default endpoints) and
-- the token endpoint: the flow's context, or nil, err.
local function flow_context(provider, o, as_url, prm, resource)
  local server_url, timeout = o.server_url, o.timeout_ms
  local meta, merr = discovery.authorization_server_metadata(as_url, server_url, {
    protocol_version = o.protocol_version, timeout_ms = timeout, legacy = prm == nil,
  })
  if merr then return nil, merr end
  local token_endpoint = meta and meta.token_endpoint or url.resolve(as_url, "/token")
  if type(token_endpoint) ~= "string" then
    return nil, oerr.new(oerr.INVALID_METADATA, "the authorization server metadata has no token_endpoint")
  end
  local ok, why = url.check_fetchable(token_endpoint, server_url)
  if not ok then return nil, oerr.new(oerr.INSECURE_URL, "token endpoint: " .. why) end
  local pin = { issuer = meta and meta.issuer or as_url, authorization_server = as_url, token_endpoint = token_endpoint }
  return {
    provider = provider, server_url = server_url, as_url = as_url, meta = meta, prm = prm, resource = resource,
    token_endpoint = token_endpoint, pin = pin, timeout_ms = timeout, pending = memo_of(provider).pending,
  }
end

-- The provider's tokens and client information, forgotten when another issuer issued them
-- (credentials are bound to their issuer: another one means start over there).
local function pinned_credentials(provider, pin)
  local tokens = get(provider, "tokens")
  if tokens ~= nil and not pin_matches(tokens, pin) then
    invalidate(provider, "tokens")
    tokens = nil
  end
  local info = get(provider, "client_information")
  if info ~= nil and (type(info) ~= "table" or type(info.client_id) ~= "string" or not pin_matches(info, pin)) then
    if type(info) == "table" and info.client_id then invalidate(provider, "client") end
    info = nil
  end
  return tokens, info
end

-- 4. a client when the provider has none: a Client ID Metadata Document or a dynamic registration.
local function new_client(ctx, o, scope)
  local provider, pin, meta = ctx.provider, ctx.pin, ctx.meta
  if has(provider, "prepare_grant") then
    return nil, oerr.new(oerr.INVALID_CLIENT, "the provider has no client information for " .. pin.issuer
      .. " (a client of a grant without a user is registered beforehand)")
  end
  if o.authorization_code or o.callback then
    return nil, oerr.new(oerr.INVALID_CLIENT, "Existing OAuth client information is required when exchanging an authorization code")
  end
  local info
  local cimd = get(provider, "client_metadata_url")
  if type(cimd) == "string" and meta and meta.client_id_metadata_document_supported == true then
    info = { client_id = cimd, token_endpoint_auth_method = "none", issuer = pin.issuer,
      authorization_server = pin.authorization_server }
  else
    if not has(provider, "save_client_information") then
      return nil, oerr.new(oerr.INVALID_CLIENT, "no client information for " .. pin.issuer
        .. ", and the provider cannot save the information of a dynamic registration")
    end
    local rerr
    info, rerr = register(ctx, scope)
    if not info then return nil, rerr end
  end
  if has(provider, "save_client_information") then provider:save_client_information(info) end
  return info
end

-- 4b. a grant without a user (client credentials, JWT bearer: mcp.auth.extensions): the
-- provider builds it; no refresh token is expected, a new grant is the refresh.
local function grant_without_user(ctx, scope)
  local provider = ctx.provider
  local grant, gerr = provider:prepare_grant(scope, {
    issuer = ctx.pin.issuer, token_endpoint = ctx.token_endpoint, resource = ctx.resource, metadata = ctx.meta,
    prm = ctx.prm, server_url = ctx.server_url, client_information = ctx.info, timeout_ms = ctx.timeout_ms,
  })
  if grant == nil then
    return nil, oerr.is_oauth_error(gerr) and gerr or oerr.new(oerr.INVALID_REQUEST, tostring(gerr))
  end
  local new, terr = token_request(ctx, grant)
  if not new then return nil, terr end
  provider:save_tokens(new)
  return M.AUTHORIZED
end

-- Do the tokens' scopes cover `scope`? (A step-up wants more than they carry: never covered.)
local function scope_covered(o, scope, tokens)
  if o.step_up then return false end
  if not (scope and type(tokens) == "table" and type(tokens.scope) == "string") then return true end
  local have = {}
  for _, w in ipairs(split_scope(tokens.scope)) do have[w] = true end
  for _, w in ipairs(split_scope(scope)) do
    if not have[w] and w ~= "offline_access" then return false end
  end
  return true
end

-- The refresh grant: AUTHORIZED, or nil, err to stop, or false to go on with a new authorization
-- (the authorization server failed as a server_error).
local function refresh_grant(ctx, tokens)
  local new, rerr = token_request(ctx, { grant_type = "refresh_token", refresh_token = tokens.refresh_token })
  if new then
    new.refresh_token = new.refresh_token or tokens.refresh_token
    new.scope = new.scope or tokens.scope
    ctx.provider:save_tokens(new)
    return M.AUTHORIZED
  end
  if rerr.oauth_error ~= oerr.SERVER_ERROR then return nil, rerr end
  return false
end

-- Why a client the flow registered itself must be registered again before a new authorization
-- (nil: it need not): the scope asked for (a step-up) goes beyond the scope it was registered
-- with, which a server that holds clients to their registered scope refuses (invalid_scope); or
-- its redirect URIs do not name the redirect URL this login uses (the interactive provider's
-- port was taken), which a server that matches them exactly refuses. A pre-registered client
-- or a Client ID Metadata Document is never registered again.
local function reregister_reason(ctx, scope)
  local provider, info = ctx.provider, ctx.info
  if type(info) ~= "table" or info.dynamic_registration ~= true or not has(provider, "save_client_information") then
    return nil
  end
  if type(info.scope) == "string" and scope then
    local have = {}
    for _, w in ipairs(split_scope(info.scope)) do have[w] = true end
    -- (offline_access is the authorization server's to grant, as in scope_covered: a server that
    -- leaves it out of registrations must not get a new one at every login)
    for _, w in ipairs(split_scope(scope)) do
      if not have[w] and w ~= "offline_access" then return "scope", M.union_scopes(info.scope, scope) end
    end
  end
  local redirect = get(provider, "redirect_url")
  local listed = get(provider, "client_metadata")
  listed = type(listed) == "table" and listed.redirect_uris or nil
  if type(info.redirect_uris) == "table" and redirect and not contains(info.redirect_uris, redirect)
      and (listed == nil or contains(listed, redirect)) then
    return "redirect", M.union_scopes(info.scope, scope)
  end
  return nil
end

-- The client registered again (reregister_reason): the new registration replaces the old one.
-- The tokens stay until the login replaces them (the access token still serves the calls that
-- need no more scope; a refresh with the old client's refresh token gets invalid_grant, which
-- starts a login). A registration that fails leaves the old one in use: the login is tried with
-- it, as before (a server with port leeway, or that does not hold clients to their scope, takes it).
local function reregister(ctx, scope)
  local why, wanted = reregister_reason(ctx, scope)
  if not why then return end
  local info = register(ctx, wanted, why == "scope")
  if not info then return end
  ctx.provider:save_client_information(info)
  ctx.info = info
end

-- 6. refresh: as refresh_grant; false also when there is no refresh token or more scope is wanted.
local function refresh(ctx, o, scope, tokens)
  if not (scope_covered(o, scope, tokens) and tokens ~= nil and type(tokens.refresh_token) == "string"
      and tokens.refresh_token ~= "") then
    return false
  end
  -- A provider over a shared store refreshes under its lock, with the tokens read again from it
  -- (another process may have rotated them: a used refresh token would cost the whole grant).
  if has(ctx.provider, "locked_refresh") then
    return ctx.provider:locked_refresh(tokens, function(t) return refresh_grant(ctx, t) end)
  end
  return refresh_grant(ctx, tokens)
end

-- 7. a new authorization: PKCE, state, the recorded issuer, then the redirect.
local function new_authorization(ctx, scope)
  local provider, meta = ctx.provider, ctx.meta
  reregister(ctx, scope)
  local state = get(provider, "state") or M.random_state()
  local verifier, challenge = M.pkce()
  local auth_url, aerr = authorization_url(ctx, scope, state, challenge)
  if not auth_url then return nil, aerr end
  ctx.pending = {
    state = state, issuer = ctx.pin.issuer, token_endpoint = ctx.token_endpoint, scope = scope,
    iss_supported = meta ~= nil and meta.authorization_response_iss_parameter_supported == true,
  }
  local m = memo_of(provider)
  m.pending, m.scope = ctx.pending, scope
  provider:save_code_verifier(verifier)
  if has(provider, "save_state") then provider:save_state(state) end
  local landed, lerr = provider:redirect_to_authorization(auth_url)
  if landed == nil then
    if lerr ~= nil then
      return nil, oerr.is_oauth_error(lerr) and lerr or oerr.new(oerr.ACCESS_DENIED, tostring(lerr))
    end
    return M.REDIRECT
  end
  local cb = M.parse_callback(landed)
  if not cb then return nil, oerr.new(oerr.INVALID_REQUEST, "the redirect URL is not a valid URL") end
  return redeem(ctx, cb)
end

-- The error of a flow that may not show anything (interactive false: an exchange no call waits
-- on) and would need a login (or a client registration, which only a login uses).
local function login_required(why)
  return nil, oerr.new(oerr.LOGIN_REQUIRED, "authorization is needed (" .. why .. "): no login is started for "
    .. "an exchange no call waits on; the next call logs in")
end

local function run(provider, o)
  local as_url, prm = authorization_server(provider, o)
  if not as_url then return nil, prm end
  local rok, resource = resource_indicator(provider, o.server_url, prm)
  if not rok then return nil, resource end
  local ctx, cerr = flow_context(provider, o, as_url, prm, resource)
  if not ctx then return nil, cerr end
  local tokens, info = pinned_credentials(provider, ctx.pin)
  local scope = M.select_scope(o.scope, prm, get(provider, "client_metadata"), ctx.meta)
  if info == nil then
    if o.interactive == false and not has(provider, "prepare_grant") then
      return login_required("no client information")
    end
    local ierr
    info, ierr = new_client(ctx, o, scope)
    if not info then return nil, ierr end
  end
  ctx.info = info
  if has(provider, "prepare_grant") then return grant_without_user(ctx, scope) end
  -- 5. a code to redeem (the host finished the redirect itself).
  if o.authorization_code or o.callback then
    local cb = o.callback and M.parse_callback(o.callback)
      or { code = o.authorization_code, state = o.state, iss = o.iss }
    if not cb then return nil, oerr.new(oerr.INVALID_REQUEST, "invalid callback URL") end
    return redeem(ctx, cb)
  end
  local res, ferr = refresh(ctx, o, scope, tokens)
  if res ~= false then return res, ferr end
  if o.interactive == false then
    return login_required(tokens ~= nil and tokens.refresh_token ~= nil and "the token could not be refreshed"
      or "no usable refresh token")
  end
  return new_authorization(ctx, scope)
end

--- Auth: run the flow, and once more after the errors that call for fresh credentials
--- (invalid_client / unauthorized_client: forget everything and register again; invalid_grant:
--- forget the tokens).
---@param provider table
--- With opts.interactive false (an exchange no call waits on) nothing is shown to anyone: a
--- refresh, or a grant without a user (prepare_grant: client credentials, JWT bearer), but never a
--- login nor a registration for one; where one would be needed it fails with login_required.
---@param opts table server_url, resource_metadata_url, scope, step_up (a 403 insufficient_scope: no refresh), authorization_code, state, iss, callback, protocol_version, timeout_ms, interactive (default true)
---@return string|nil result "AUTHORIZED"|"REDIRECT", mcp.OAuthError|nil err
function M.auth(provider, opts)
  if has(provider, "bind_server") then provider:bind_server(opts.server_url) end
  if has(provider, "check_store") then -- (a token store that refuses to be read: nil, err)
    local ok, lerr = provider:check_store()
    if not ok then return nil, lerr end
  end
  local res, err = run(provider, opts)
  if res then return res end
  local retry
  if oerr.is_invalid_client(err) or oerr.is_unauthorized_client(err) then
    invalidate(provider, "all")
    retry = true
  elseif oerr.is_invalid_grant(err) then
    invalidate(provider, "tokens")
    retry = true
  end
  -- A grant without a user (prepare_grant) would only send the same credentials again: the
  -- error is the caller's (workload identity: never retry nor switch grants).
  if not retry or has(provider, "prepare_grant") then return nil, err end
  local o = copy(opts)
  o.authorization_code, o.callback, o.state, o.iss = nil, nil, nil, nil
  return run(provider, o)
end

--- The last scope this provider asked for (for the step-up union).
function M.last_scope(provider)
  return memo_of(provider).scope
end

return M
