--- JOSE for the OAuth extensions: keys, JWS compact serialization (RFC 7515), JWTs (RFC 7519),
--- public JWKs (RFC 7517) and their thumbprints (RFC 7638). ES256 and RS256 only.
---
--- Every cryptographic operation (key generation, PEM parsing, signing, verification, SHA-256,
--- randomness) is OpenSSL's libcrypto, reached through the C core (src/pkey.c, src/digest.c).
--- Keys are `mcp.pkey` objects: tostring(key) and every error message name the kind of key,
--- never its material.
local core = require("mcp.core")
local errors = require("mcp.errors")
local json = require("mcp.json")

local M = {}

local function config_error(message, cause)
  return errors.new(nil, message, nil, { kind = "config", cause = cause })
end

local function invalid(message)
  return errors.new(nil, message, nil, { kind = "validation" })
end

-- ---------------------------------------------------------------------------------------------
-- base64url (RFC 4648 section 5, no padding)

--- base64url without padding (RFC 7515 section 2).
---@param bytes string
---@return string
function M.base64url_encode(bytes)
  return core.base64_encode(bytes, "url")
end

--- Decodes base64url (padding tolerated); nil and a message on anything else.
---@param text string
---@return string|nil bytes
---@return string|nil err
function M.base64url_decode(text)
  return core.base64_decode(text, "url")
end

--- `n` random bytes (1 to 4096) from libcrypto's generator.
---@param n integer
---@return string
function M.random_bytes(n)
  return core.random_bytes(n)
end

--- A fresh JWT ID: 128 random bits, base64url.
---@return string
function M.new_jti()
  return M.base64url_encode(M.random_bytes(16))
end

--- Seconds since the epoch, an integer (the clock JWT claims use).
---@return integer
function M.now()
  return math.floor(os.time())
end

-- ---------------------------------------------------------------------------------------------
-- keys

--- True for a key object (from generate_key, load_key, load_key_file or public_key_from_jwk).
---@param v any
---@return boolean
function M.is_key(v)
  return core.is_pkey(v)
end

--- A new key: "EC" (P-256, for ES256; the default) or "RSA" (`bits`, default 2048, for RS256).
---@param kind "EC"|"RSA"|nil
---@param bits integer|nil
---@return mcp.pkey
function M.generate_key(kind, bits)
  return core.pkey_generate(kind or "EC", bits)
end

--- A key from PEM text: a private key (PKCS#8, encrypted PKCS#8 with `passphrase`, SEC1
--- "EC PRIVATE KEY", PKCS#1 "RSA PRIVATE KEY") or a public key ("PUBLIC KEY"). EC keys must be on
--- P-256 and RSA keys have 2048 bits or more. Never prompts for a passphrase.
---@param pem string
---@param passphrase string|nil
---@return mcp.pkey|nil key
---@return mcp.Error|nil err kind "config"; the message never contains the key
function M.load_key(pem, passphrase)
  if type(pem) ~= "string" then error("mcp.jose.load_key: pem must be a string", 2) end
  if passphrase ~= nil and type(passphrase) ~= "string" then
    error("mcp.jose.load_key: passphrase must be a string", 2)
  end
  local key, err = core.pkey_load(pem, passphrase)
  if key == nil then return nil, config_error("invalid key: " .. err) end
  return key
end

--- A key from a PEM file (see load_key). The error names the file, never its contents.
---@param path string
---@param passphrase string|nil
---@return mcp.pkey|nil key
---@return mcp.Error|nil err
function M.load_key_file(path, passphrase)
  if type(path) ~= "string" then error("mcp.jose.load_key_file: path must be a string", 2) end
  local f, why = io.open(path, "rb")
  if f == nil then return nil, config_error("cannot read key file " .. path .. ": " .. tostring(why)) end
  local pem = f:read("*a")
  f:close()
  local key, err = M.load_key(pem or "", passphrase)
  if key == nil then return nil, config_error("invalid key in " .. path .. ": " .. err.message:gsub("^invalid key: ", "")) end
  return key
end

--- The key a configuration names: a key object, PEM text, or a table `{ pem = ..., file = ...,
--- passphrase = ... }` (one of pem, file).
---@param spec mcp.pkey|string|table
---@return mcp.pkey|nil key
---@return mcp.Error|nil err
function M.resolve_key(spec)
  if M.is_key(spec) then return spec end
  if type(spec) == "string" then return M.load_key(spec) end
  if type(spec) == "table" then
    if spec.pem ~= nil and spec.file ~= nil then error("mcp.jose: give a key as pem or file, not both", 2) end
    if type(spec.pem) == "string" then return M.load_key(spec.pem, spec.passphrase) end
    if type(spec.file) == "string" then return M.load_key_file(spec.file, spec.passphrase) end
  end
  error("mcp.jose: a key is a key object, PEM text or { pem = ... } / { file = ... }", 2)
end

--- The JWS algorithm of a key: "ES256" for EC P-256, "RS256" for RSA.
---@param key mcp.pkey
---@return "ES256"|"RS256"
function M.algorithm(key)
  return key:kind() == "EC" and "ES256" or "RS256"
end

--- The public JWK of a key (RFC 7517/7518): { kty = "EC", crv = "P-256", x, y } or
--- { kty = "RSA", n, e }. Never any private member.
---@param key mcp.pkey
---@return table
function M.public_jwk(key)
  local p = key:public_numbers()
  if p.kty == "EC" then
    return { kty = "EC", crv = p.crv, x = M.base64url_encode(p.x), y = M.base64url_encode(p.y) }
  end
  return { kty = "RSA", n = M.base64url_encode(p.n), e = M.base64url_encode(p.e) }
end

local REQUIRED = { EC = { "crv", "kty", "x", "y" }, RSA = { "e", "kty", "n" } }

--- The RFC 7638 SHA-256 thumbprint (base64url) of a public JWK or of a key: the hash of the
--- required members in lexicographic order, as compact JSON.
---@param jwk_or_key table|mcp.pkey
---@return string|nil thumbprint
---@return mcp.Error|nil err
function M.thumbprint(jwk_or_key)
  local jwk = M.is_key(jwk_or_key) and M.public_jwk(jwk_or_key) or jwk_or_key
  if type(jwk) ~= "table" then error("mcp.jose.thumbprint: expected a JWK table or a key", 2) end
  local names = REQUIRED[jwk.kty]
  if names == nil then return nil, invalid("JWK thumbprint: unsupported kty " .. tostring(jwk.kty)) end
  local parts = {}
  for i, name in ipairs(names) do
    local v = jwk[name]
    -- Only base64url text and curve names: no JSON escaping can be needed.
    if type(v) ~= "string" or not v:match("^[%w_%-]+$") then
      return nil, invalid("JWK thumbprint: member " .. name .. " is missing or malformed")
    end
    parts[i] = '"' .. name .. '":"' .. v .. '"'
  end
  return M.base64url_encode(core.sha256("{" .. table.concat(parts, ",") .. "}"))
end

-- The DER SubjectPublicKeyInfo of a public JWK, so libcrypto can read it as a PEM public key.
local function der_len(n)
  if n < 0x80 then return string.char(n) end
  if n < 0x100 then return string.char(0x81, n) end
  return string.char(0x82, math.floor(n / 256), n % 256)
end

local function der(tag, content)
  return string.char(tag) .. der_len(#content) .. content
end

local function der_uint(bytes)
  bytes = bytes:gsub("^%z+", "")
  if bytes == "" or bytes:byte(1) >= 0x80 then bytes = "\0" .. bytes end
  return der(0x02, bytes)
end

local OID_EC = "\6\7\42\134\72\206\61\2\1" -- 1.2.840.10045.2.1
local OID_P256 = "\6\8\42\134\72\206\61\3\1\7" -- 1.2.840.10045.3.1.7
local OID_RSA = "\6\9\42\134\72\134\247\13\1\1\1" -- 1.2.840.113549.1.1.1

--- A public key object from a public JWK (EC P-256 or RSA), to verify signatures with.
---@param jwk table
---@return mcp.pkey|nil key
---@return mcp.Error|nil err
function M.public_key_from_jwk(jwk)
  if type(jwk) ~= "table" then return nil, invalid("JWK: not an object") end
  local spki
  if jwk.kty == "EC" then
    if jwk.crv ~= "P-256" then return nil, invalid("JWK: unsupported curve " .. tostring(jwk.crv)) end
    local x = type(jwk.x) == "string" and M.base64url_decode(jwk.x)
    local y = type(jwk.y) == "string" and M.base64url_decode(jwk.y)
    if not x or not y or #x ~= 32 or #y ~= 32 then return nil, invalid("JWK: malformed EC coordinates") end
    spki = der(0x30, der(0x30, OID_EC .. OID_P256) .. der(0x03, "\0\4" .. x .. y))
  elseif jwk.kty == "RSA" then
    local n = type(jwk.n) == "string" and M.base64url_decode(jwk.n)
    local e = type(jwk.e) == "string" and M.base64url_decode(jwk.e)
    if not n or not e or #n == 0 or #e == 0 or #n > 2048 then return nil, invalid("JWK: malformed RSA key") end
    spki = der(0x30, der(0x30, OID_RSA .. "\5\0") .. der(0x03, "\0" .. der(0x30, der_uint(n) .. der_uint(e))))
  else
    return nil, invalid("JWK: unsupported kty " .. tostring(jwk.kty))
  end
  local b64 = core.base64_encode(spki):gsub("(" .. ("."):rep(64) .. ")", "%1\n")
  local pem = "-----BEGIN PUBLIC KEY-----\n" .. b64:gsub("\n$", "") .. "\n-----END PUBLIC KEY-----\n"
  local key, err = core.pkey_load(pem)
  if key == nil then return nil, invalid("JWK: " .. err) end
  return key
end

-- ---------------------------------------------------------------------------------------------
-- JWS compact serialization

local ALGS = { ES256 = "EC", RS256 = "RSA" }

--- Signs a JWS in compact serialization. `header.alg` defaults to the key's algorithm and must
--- fit the key; `payload` is a table (encoded as JSON) or the payload bytes.
---@param header table
---@param payload table|string
---@param key mcp.pkey a private key
---@return string token
function M.sign(header, payload, key)
  if type(header) ~= "table" then error("mcp.jose.sign: header must be a table", 2) end
  if not M.is_key(key) then error("mcp.jose.sign: key must be a key object", 2) end
  local h = {}
  for k, v in pairs(header) do h[k] = v end
  h.alg = h.alg or M.algorithm(key)
  if ALGS[h.alg] ~= key:kind() then
    error("mcp.jose.sign: alg " .. tostring(h.alg) .. " does not fit " .. tostring(key), 2)
  end
  local body = type(payload) == "table" and json.encode(payload) or payload
  if type(body) ~= "string" then error("mcp.jose.sign: payload must be a table or a string", 2) end
  local input = M.base64url_encode(json.encode(h)) .. "." .. M.base64url_encode(body)
  return input .. "." .. M.base64url_encode(key:sign(h.alg, input))
end

---@class mcp.jose.Decoded
---@field header table the protected header
---@field payload table|nil the claims, when the payload is a JSON object
---@field payload_bytes string
---@field signing_input string
---@field signature string raw signature bytes

--- Splits and decodes a compact JWS without verifying it.
---@param token string
---@return mcp.jose.Decoded|nil decoded
---@return mcp.Error|nil err
function M.decode(token)
  if type(token) ~= "string" then return nil, invalid("JWS: not a string") end
  local h64, p64, s64 = token:match("^([%w_%-]+)%.([%w_%-]*)%.([%w_%-]*)$")
  if h64 == nil then return nil, invalid("JWS: not a compact serialization (three base64url parts)") end
  local hbytes, pbytes, sig = M.base64url_decode(h64), M.base64url_decode(p64), M.base64url_decode(s64)
  if not hbytes or not pbytes or not sig then return nil, invalid("JWS: invalid base64url") end
  local header = json.decode(hbytes)
  if type(header) ~= "table" or json.is_array(header) then
    return nil, invalid("JWS: the header is not a JSON object")
  end
  local payload = json.decode(pbytes)
  return {
    header = header,
    payload = type(payload) == "table" and not json.is_array(payload) and payload or nil,
    payload_bytes = pbytes,
    signing_input = h64 .. "." .. p64,
    signature = sig,
  }
end

--- Verifies a compact JWS with a key (private or public). The header's alg must be the one the
--- key is for ("none" and HMAC are refused).
---@param token string
---@param key mcp.pkey
---@return mcp.jose.Decoded|nil decoded
---@return mcp.Error|nil err
function M.verify(token, key)
  if not M.is_key(key) then error("mcp.jose.verify: key must be a key object", 2) end
  local d, err = M.decode(token)
  if d == nil then return nil, err end
  local alg = d.header.alg
  if ALGS[alg] == nil then return nil, invalid("JWS: unsupported alg " .. tostring(alg)) end
  if ALGS[alg] ~= key:kind() then return nil, invalid("JWS: alg " .. alg .. " does not fit the key") end
  if not key:verify(alg, d.signing_input, d.signature) then return nil, invalid("JWS: bad signature") end
  return d
end

-- ---------------------------------------------------------------------------------------------
-- JWT

---@class mcp.jose.JwtOptions
---@field kid string|nil key ID for the header
---@field typ string|nil header typ (default "JWT")
---@field header table|nil more header parameters (jwk, ...)
---@field lifetime integer|nil seconds until exp (default 300) when claims has no exp
---@field now integer|nil the issue time (default jose.now())

--- Signs a JWT: `claims` plus `iat` (now), `exp` (now + lifetime) and a fresh `jti` when the
--- claims do not have them; header `typ` "JWT", `alg` from the key, `kid` when given.
---@param claims table
---@param key mcp.pkey
---@param opts mcp.jose.JwtOptions|nil
---@return string token
function M.jwt(claims, key, opts)
  if type(claims) ~= "table" then error("mcp.jose.jwt: claims must be a table", 2) end
  opts = opts or {}
  local now = opts.now or M.now()
  local c = {}
  for k, v in pairs(claims) do c[k] = v end
  if c.iat == nil then c.iat = now end
  if c.exp == nil then c.exp = now + (opts.lifetime or 300) end
  if c.jti == nil then c.jti = M.new_jti() end
  local header = {}
  for k, v in pairs(opts.header or {}) do header[k] = v end
  header.typ = opts.typ or header.typ or "JWT"
  header.kid = opts.kid or header.kid
  return M.sign(header, c, key)
end

return M
