-- mcp.jose and the key objects of mcp.core (src/pkey.c): checked against the published vectors of
-- RFC 7515 (A.2 RS256 is deterministic: byte-exact; A.3 ES256 verified), RFC 7638 (thumbprint),
-- and, when the openssl command is installed, cross-checked with it in both directions.
local core = require("mcp.core")
local helper = require("helper")
local jose = require("mcp.jose")

local KEYS = helper.root .. "/spec/fixtures/keys/"

local read = helper.read_file

local function b64d(s)
  return assert(jose.base64url_decode(s))
end

-- RFC 7515 appendix A: the payload and the signing inputs of A.2 (RS256) and A.3 (ES256).
local A_PAYLOAD = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
local A2_INPUT = "eyJhbGciOiJSUzI1NiJ9." .. A_PAYLOAD
local A2_SIG = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
local A2_N = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
local A3_INPUT = "eyJhbGciOiJFUzI1NiJ9." .. A_PAYLOAD
local A3_SIG = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
local A3_X = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
local A3_Y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"

-- The body of a PEM (its base64 lines): no error message may contain any piece of it.
local function assert_no_material(text, pem)
  local body = pem:gsub("%-%-%-%-%-[^\n]*%-%-%-%-%-", ""):gsub("%s", "")
  for i = 1, #body - 12, 6 do
    local piece = body:sub(i, i + 11)
    assert.is_nil(text:find(piece, 1, true), "key material in: " .. text)
  end
end

local function have_openssl()
  local ok = os.execute("openssl version >/dev/null 2>&1")
  return ok == true or ok == 0
end

local function tmpname()
  local p = os.tmpname()
  return p
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- ECDSA r||s (JOSE) to the DER SEQUENCE openssl reads, and back: the test's own small codec.
local function der_int(b)
  b = b:gsub("^%z+", "")
  if b == "" or b:byte(1) >= 0x80 then b = "\0" .. b end
  return "\2" .. string.char(#b) .. b
end

local function raw_to_der(raw)
  local body = der_int(raw:sub(1, 32)) .. der_int(raw:sub(33, 64))
  return "\48" .. string.char(#body) .. body
end

local function der_to_raw(der)
  local pos = der:byte(2) >= 0x80 and 4 or 3
  local out = {}
  for i = 1, 2 do
    assert(der:byte(pos) == 2)
    local len = der:byte(pos + 1)
    local v = der:sub(pos + 2, pos + 1 + len):gsub("^%z+", "")
    out[i] = ("\0"):rep(32 - #v) .. v
    pos = pos + 2 + len
  end
  return out[1] .. out[2]
end

describe("mcp.jose keys", function()
  it("loads the RFC 7515 A.3 EC key (SEC1 PEM) and exports its public JWK exactly", function()
    local key = assert(jose.load_key(read(KEYS .. "rfc7515_a3_ec.pem")))
    assert.equals("EC", key:kind())
    assert.equals(256, key:bits())
    assert.is_true(key:is_private())
    assert.same({ kty = "EC", crv = "P-256", x = A3_X, y = A3_Y }, jose.public_jwk(key))
    assert.equals("ES256", jose.algorithm(key))
  end)

  it("verifies the RFC 7515 A.3 ES256 signature, and refuses it altered", function()
    local key = assert(jose.load_key(read(KEYS .. "rfc7515_a3_ec.pem")))
    local sig = b64d(A3_SIG)
    assert.equals(64, #sig)
    assert.is_true(key:verify("ES256", A3_INPUT, sig))
    assert.is_false(key:verify("ES256", A3_INPUT .. "x", sig))
    local flipped = string.char((sig:byte(1) + 1) % 256) .. sig:sub(2)
    assert.is_false(key:verify("ES256", A3_INPUT, flipped))
    assert.is_false(key:verify("ES256", A3_INPUT, sig:sub(1, 63)))
    assert.is_false(key:verify("ES256", A3_INPUT, ("\0"):rep(64)))
  end)

  it("signs RS256 byte for byte as RFC 7515 A.2 (PKCS#1 v1.5 is deterministic)", function()
    local key = assert(jose.load_key(read(KEYS .. "rfc7515_a2_rsa.pem")))
    assert.equals("RSA", key:kind())
    assert.equals(2048, key:bits())
    assert.equals(A2_SIG, jose.base64url_encode(key:sign("RS256", A2_INPUT)))
    assert.same({ kty = "RSA", n = A2_N, e = "AQAB" }, jose.public_jwk(key))
  end)

  it("loads a public key PEM: it verifies, it cannot sign nor export a private part", function()
    local pub = assert(jose.load_key(read(KEYS .. "rfc7515_a2_rsa_public.pem")))
    assert.is_false(pub:is_private())
    assert.is_true(pub:verify("RS256", A2_INPUT, b64d(A2_SIG)))
    assert.matches("a public key cannot sign", select(2, pcall(pub.sign, pub, "RS256", "x")))
    assert.matches("no private part", select(2, pcall(pub.pem, pub, true)))
    assert.matches("BEGIN PUBLIC KEY", pub:pem())
  end)

  it("signs ES256 in the JOSE form: 64 bytes r||s, each signature different, all verifying", function()
    local key = jose.generate_key()
    assert.equals("EC", key:kind())
    local a, b = key:sign("ES256", "data"), key:sign("ES256", "data")
    assert.equals(64, #a)
    assert.equals(64, #b)
    assert.are_not.equal(a, b) -- ECDSA draws a fresh nonce
    assert.is_true(key:verify("ES256", "data", a))
    assert.is_true(key:verify("ES256", "data", b))
    assert.is_false(jose.generate_key():verify("ES256", "data", a)) -- another key
  end)

  it("round-trips a generated key through PKCS#8 PEM and through its public JWK", function()
    local key = jose.generate_key("EC")
    local pem = key:pem(true)
    assert.matches("^%-%-%-%-%-BEGIN PRIVATE KEY%-%-%-%-%-\n", pem)
    local again = assert(jose.load_key(pem))
    assert.same(jose.public_jwk(key), jose.public_jwk(again))
    local sig = again:sign("ES256", "m")
    local pub = assert(jose.public_key_from_jwk(jose.public_jwk(key)))
    assert.is_false(pub:is_private())
    assert.is_true(pub:verify("ES256", "m", sig))
    assert.equals(key:pem(), pub:pem())
  end)

  it("generates RSA keys for RS256 and rebuilds the public key from the RSA JWK", function()
    local key = jose.generate_key("RSA", 2048)
    assert.equals(2048, key:bits())
    local sig = key:sign("RS256", "m")
    assert.equals(256, #sig)
    local pub = assert(jose.public_key_from_jwk(jose.public_jwk(key)))
    assert.is_true(pub:verify("RS256", "m", sig))
    assert.equals(key:pem(), pub:pem())
    assert.has_error(function() jose.generate_key("RSA", 1024) end)
    assert.has_error(function() jose.generate_key("DSA") end)
  end)

  it("refuses an algorithm that does not fit the key", function()
    local ec = jose.generate_key()
    assert.matches("RS256 does not fit an EC P%-256 key", select(2, pcall(ec.sign, ec, "RS256", "x")))
    assert.matches("invalid option", select(2, pcall(ec.sign, ec, "HS256", "x")))
    assert.matches("RS256 does not fit", select(2, pcall(ec.verify, ec, "RS256", "x", "y")))
  end)

  it("never shows key material in tostring", function()
    local key = assert(jose.load_key(read(KEYS .. "rfc7515_a3_ec.pem")))
    assert.equals("mcp.pkey (EC P-256, private)", tostring(key))
    local rsa = assert(jose.load_key(read(KEYS .. "rfc7515_a2_rsa_public.pem")))
    assert.equals("mcp.pkey (RSA 2048 bits, public)", tostring(rsa))
    assert.is_true(jose.is_key(key))
    assert.is_false(jose.is_key({}))
    assert.is_false(jose.is_key(io.stdout))
  end)

  describe("bad keys", function()
    local function bad(pem, passphrase, pattern)
      local key, err = jose.load_key(pem, passphrase)
      assert.is_nil(key)
      assert.equals("config", err.kind)
      assert.matches(pattern, err.message)
      assert_no_material(tostring(err), pem)
      return err
    end

    it("text that is no PEM", function()
      bad("not a key at all", nil, "not a PEM key")
      bad("", nil, "not a PEM key")
    end)

    it("a damaged PEM", function()
      local pem = read(KEYS .. "rfc7515_a3_ec.pem")
      bad(pem:sub(1, 120) .. "\n-----END EC PRIVATE KEY-----\n", nil, "cannot read the PEM private key")
      local body = pem:gsub("\n(%w)", "\n!%1", 1)
      bad(body, nil, "cannot read the PEM private key")
    end)

    it("an EC key on another curve, an Ed25519 key, an RSA key of 1024 bits", function()
      bad(read(KEYS .. "p384.pem"), nil, "only the P%-256 curve")
      bad(read(KEYS .. "ed25519.pem"), nil, "only EC P%-256 and RSA")
      bad(read(KEYS .. "rsa1024.pem"), nil, "RSA key too small: 1024 bits")
    end)

    it("an encrypted key: no passphrase, a wrong one, the right one", function()
      local pem = read(KEYS .. "rfc7515_a3_ec_encrypted.pem")
      bad(pem, nil, "encrypted: a passphrase is needed")
      local err = bad(pem, "wrong horse", "cannot decrypt the private key")
      assert.is_nil(tostring(err):find("wrong horse", 1, true))
      local key = assert(jose.load_key(pem, "correct horse battery staple"))
      assert.equals(A3_X, jose.public_jwk(key).x)
    end)

    it("a key file that is missing or holds no key: the error names the file only", function()
      local key, err = jose.load_key_file(KEYS .. "missing.pem")
      assert.is_nil(key)
      assert.matches("cannot read key file .*missing%.pem", err.message)
      local path = tmpname()
      write(path, "-----BEGIN PRIVATE KEY-----\nc2VjcmV0IHNlY3JldCBzZWNyZXQ=\n-----END PRIVATE KEY-----\n")
      key, err = jose.load_key_file(path)
      os.remove(path)
      assert.is_nil(key)
      assert.matches("invalid key in " .. path:gsub("%p", "%%%0"), err.message)
      assert.is_nil(tostring(err):find("c2VjcmV0", 1, true))
    end)

    it("misuse raises", function()
      assert.has_error(function() jose.load_key(42) end)
      assert.has_error(function() jose.resolve_key(42) end)
      assert.has_error(function() jose.resolve_key({ pem = "x", file = "y" }) end)
    end)
  end)

  it("resolve_key takes a key, PEM text, { pem } or { file, passphrase }", function()
    local key = jose.generate_key()
    assert.equals(key, jose.resolve_key(key))
    local pem = read(KEYS .. "rfc7515_a3_ec.pem")
    assert.equals(A3_X, jose.public_jwk(assert(jose.resolve_key(pem))).x)
    assert.equals(A3_X, jose.public_jwk(assert(jose.resolve_key({ pem = pem }))).x)
    local k = assert(jose.resolve_key({ file = KEYS .. "rfc7515_a3_ec_encrypted.pem",
      passphrase = "correct horse battery staple" }))
    assert.equals(A3_Y, jose.public_jwk(k).y)
  end)

  describe("with the openssl command", function()
    it("openssl verifies our ES256 signature with our exported public key", function()
      if not have_openssl() then return pending("openssl not installed") end
      local key = jose.generate_key()
      local data, pub, sig = tmpname(), tmpname(), tmpname()
      write(data, "signed by libcrypto through mcp.core")
      write(pub, key:pem())
      write(sig, raw_to_der(key:sign("ES256", "signed by libcrypto through mcp.core")))
      local fh = io.popen(("openssl dgst -sha256 -verify %s -signature %s %s 2>&1"):format(pub, sig, data))
      local out = fh:read("*a")
      fh:close()
      os.remove(data); os.remove(pub); os.remove(sig)
      assert.matches("Verified OK", out)
    end)

    it("we verify what openssl signs with our exported private key", function()
      if not have_openssl() then return pending("openssl not installed") end
      local key = jose.generate_key()
      local data, priv, sig = tmpname(), tmpname(), tmpname()
      write(data, "signed by the openssl command")
      write(priv, key:pem(true))
      local ok = os.execute(("openssl dgst -sha256 -sign %s -out %s %s"):format(priv, sig, data))
      os.remove(priv)
      assert.is_truthy(ok == true or ok == 0)
      local der = read(sig)
      os.remove(data); os.remove(sig)
      assert.is_true(key:verify("ES256", "signed by the openssl command", der_to_raw(der)))
    end)
  end)
end)

describe("mcp.jose thumbprint (RFC 7638)", function()
  it("gives the RFC 7638 section 3.1 value, ignoring optional members", function()
    local jwk = {
      kty = "RSA", e = "AQAB", alg = "RS256", kid = "2011-04-29",
      n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    }
    assert.equals("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", jose.thumbprint(jwk))
  end)

  it("gives RFC 9449's jkt for its example EC key, and a key's thumbprint is its JWK's", function()
    local jwk = { kty = "EC", crv = "P-256", x = "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
      y = "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA" }
    assert.equals("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I", jose.thumbprint(jwk))
    local key = jose.generate_key()
    assert.equals(jose.thumbprint(jose.public_jwk(key)), jose.thumbprint(key))
  end)

  it("refuses a JWK it cannot hash", function()
    local tp, err = jose.thumbprint({ kty = "oct", k = "abc" })
    assert.is_nil(tp)
    assert.matches("unsupported kty", err.message)
    tp, err = jose.thumbprint({ kty = "EC", crv = "P-256", x = 'a","b', y = "c" })
    assert.is_nil(tp)
    assert.matches("member x is missing or malformed", err.message)
  end)
end)

describe("mcp.jose JWS and JWT", function()
  it("signs a compact JWS whose parts decode to what was signed", function()
    local key = jose.generate_key()
    local token = jose.sign({ typ = "JWT" }, { sub = "s", n = 1 }, key)
    local h, p, s = token:match("^([%w_-]+)%.([%w_-]+)%.([%w_-]+)$")
    assert.is_truthy(h and p and s)
    local d = assert(jose.verify(token, key))
    assert.same({ typ = "JWT", alg = "ES256" }, d.header)
    assert.same({ sub = "s", n = 1 }, d.payload)
    assert.equals(64, #d.signature)
    assert.equals(h .. "." .. p, d.signing_input)
  end)

  it("reproduces RFC 7515 A.2 through jose.sign with the same payload bytes", function()
    local key = assert(jose.load_key(read(KEYS .. "rfc7515_a2_rsa.pem")))
    local payload = b64d(A_PAYLOAD)
    local token = jose.sign({}, payload, key)
    local d = assert(jose.verify(token, key))
    assert.equals(payload, d.payload_bytes)
    assert.same({ alg = "RS256" }, d.header)
    -- The RFC's own token verifies too.
    assert.is_truthy(jose.verify(A2_INPUT .. "." .. A2_SIG, key))
    assert.is_truthy(jose.verify(A3_INPUT .. "." .. A3_SIG, assert(jose.load_key(read(KEYS .. "rfc7515_a3_ec.pem")))))
  end)

  it("refuses a tampered token, another key, alg none, HS256 and a wrong alg", function()
    local key = jose.generate_key()
    local token = jose.sign({}, { sub = "a" }, key)
    local h, _, s = token:match("^([^.]+)%.([^.]+)%.([^.]+)$")
    local forged = h .. "." .. jose.base64url_encode('{"sub":"b"}') .. "." .. s
    local d, err = jose.verify(forged, key)
    assert.is_nil(d)
    assert.matches("bad signature", err.message)
    d, err = jose.verify(token, jose.generate_key())
    assert.is_nil(d)
    assert.matches("bad signature", err.message)
    local none = jose.base64url_encode('{"alg":"none"}') .. "." .. jose.base64url_encode('{"sub":"a"}') .. "."
    d, err = jose.verify(none, key)
    assert.is_nil(d)
    assert.matches("unsupported alg none", err.message)
    local hs = jose.base64url_encode('{"alg":"HS256"}') .. "." .. jose.base64url_encode("{}") .. "." .. s
    d, err = jose.verify(hs, key)
    assert.is_nil(d)
    assert.matches("unsupported alg HS256", err.message)
    local rs = jose.base64url_encode('{"alg":"RS256"}') .. "." .. jose.base64url_encode("{}") .. "." .. s
    d, err = jose.verify(rs, key)
    assert.is_nil(d)
    assert.matches("alg RS256 does not fit the key", err.message)
    for _, junk in ipairs({ "", "a.b", "a.b.c.d", "!!.a.b", jose.base64url_encode("[1]") .. ".e30.AA" }) do
      d, err = jose.decode(junk)
      assert.is_nil(d, junk)
      assert.equals("validation", err.kind)
    end
    assert.has_error(function() jose.sign({ alg = "RS256" }, {}, key) end)
    assert.has_error(function() jose.sign({}, {}, "not a key") end)
  end)

  it("jwt adds iat, exp, a fresh jti and the kid; given claims win", function()
    local key = jose.generate_key()
    local t1 = jose.jwt({ iss = "client", sub = "client", aud = "https://as.example" }, key,
      { kid = "k1", lifetime = 120, now = 1000 })
    local d = assert(jose.verify(t1, key))
    assert.same({ alg = "ES256", typ = "JWT", kid = "k1" }, d.header)
    assert.equals(1000, d.payload.iat)
    assert.equals(1120, d.payload.exp)
    assert.matches("^[%w_-]+$", d.payload.jti)
    assert.equals(22, #d.payload.jti) -- 128 bits
    assert.equals("https://as.example", d.payload.aud)
    local d2 = assert(jose.verify(jose.jwt({ sub = "x" }, key), key))
    assert.are_not.equal(d.payload.jti, d2.payload.jti)
    assert.is_true(math.abs(d2.payload.iat - os.time()) <= 5)
    assert.equals(d2.payload.iat + 300, d2.payload.exp)
    local d3 = assert(jose.verify(jose.jwt({ exp = 5, jti = "mine", iat = 1 }, key, { typ = "x+jwt" }), key))
    assert.same({ exp = 5, jti = "mine", iat = 1 }, d3.payload)
    assert.equals("x+jwt", d3.header.typ)
  end)

  it("base64url has no padding and rejects the standard alphabet", function()
    assert.equals("-_8", jose.base64url_encode("\251\255"))
    assert.equals("\251\255", jose.base64url_decode("-_8"))
    assert.is_nil(jose.base64url_decode("+/8"))
    assert.equals(22, #jose.new_jti())
  end)
end)

describe("mcp.core key objects", function()
  it("are collected with their libcrypto key (no leak under ASan/valgrind)", function()
    for _ = 1, 50 do
      local k = core.pkey_generate("EC")
      k:sign("ES256", "x")
      assert.is_nil(core.pkey_load("junk"))
    end
    collectgarbage()
    collectgarbage()
  end)

  it("cannot be forged from Lua: the metatable is protected", function()
    local k = core.pkey_generate("EC")
    assert.is_false(getmetatable(k))
    assert.is_false(core.is_pkey(setmetatable({}, { __index = getmetatable(k) })))
  end)
end)
