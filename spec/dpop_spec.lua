-- mcp.auth.dpop: DPoP proofs (RFC 9449) checked the way a server checks them (the verifier below
-- is the spec's own: it rebuilds the key from the proof's jwk and compares every claim), the
-- nonce memory per origin, the bounded nonce retry, and the key's round trip through a store.
local dpop = require("mcp.auth.dpop")
local jose = require("mcp.jose")

-- What a resource server or an authorization server checks (RFC 9449 section 4.3).
local function check_proof(proof, method, url, opts)
  opts = opts or {}
  local d, err = jose.decode(proof)
  if not d then return nil, err.message end
  local h, c = d.header, d.payload
  if h.typ ~= "dpop+jwt" then return nil, "typ" end
  if type(h.jwk) ~= "table" or h.jwk.d ~= nil then return nil, "jwk" end
  local key = jose.public_key_from_jwk(h.jwk)
  if not key or not jose.verify(proof, key) then return nil, "signature" end
  if type(c.jti) ~= "string" or #c.jti < 16 then return nil, "jti" end
  if c.htm ~= method then return nil, "htm" end
  if c.htu ~= url:gsub("[?#].*$", "") then return nil, "htu" end
  if type(c.iat) ~= "number" or math.abs(c.iat - os.time()) > 60 then return nil, "iat" end
  if opts.access_token and c.ath ~= dpop.ath(opts.access_token) then return nil, "ath" end
  if not opts.access_token and c.ath ~= nil then return nil, "unexpected ath" end
  if c.nonce ~= opts.nonce then return nil, "nonce" end
  if opts.jkt and jose.thumbprint(h.jwk) ~= opts.jkt then return nil, "jkt" end
  return c
end

describe("mcp.auth.dpop", function()
  it("computes ath as RFC 9449's example and htu without query and fragment", function()
    assert.equals("fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo", dpop.ath("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"))
    assert.equals("https://rs.example/mcp", dpop.htu("https://rs.example/mcp?x=1#frag"))
    assert.equals("https://rs.example/mcp", dpop.htu("https://rs.example/mcp#frag?x"))
    assert.equals("https://rs.example:8443", dpop.origin("HTTPS://RS.example:8443/mcp?q"))
    assert.is_nil(dpop.origin("/relative"))
  end)

  it("builds a proof a server accepts: typ, public jwk, signature, jti, htm, htu, iat", function()
    local s = assert(dpop.new())
    local proof = s:proof("POST", "https://as.example/token?x=y")
    local c = assert(check_proof(proof, "POST", "https://as.example/token", { jkt = s:thumbprint() }))
    assert.equals("https://as.example/token", c.htu)
    local d = jose.decode(proof)
    assert.same({ "alg", "jwk", "typ" }, (function()
      local k = {}
      for name in pairs(d.header) do k[#k + 1] = name end
      table.sort(k)
      return k
    end)())
    assert.equals("ES256", d.header.alg)
    assert.same(jose.public_jwk(s.key), d.header.jwk)
  end)

  it("binds a resource request's proof to the access token (ath)", function()
    local s = assert(dpop.new())
    local proof = s:proof("POST", "https://rs.example/mcp", "token-1")
    assert.is_truthy(check_proof(proof, "POST", "https://rs.example/mcp", { access_token = "token-1" }))
    local _, why = check_proof(proof, "POST", "https://rs.example/mcp", { access_token = "token-2" })
    assert.equals("ath", why)
  end)

  it("a proof replayed to another URL or with another method fails, and every proof is fresh", function()
    local s = assert(dpop.new())
    local proof = s:proof("POST", "https://rs.example/mcp", "t")
    local _, why = check_proof(proof, "POST", "https://rs.example/other", { access_token = "t" })
    assert.equals("htu", why)
    _, why = check_proof(proof, "POST", "https://evil.example/mcp", { access_token = "t" })
    assert.equals("htu", why)
    _, why = check_proof(proof, "GET", "https://rs.example/mcp", { access_token = "t" })
    assert.equals("htm", why)
    local seen = {}
    for _ = 1, 20 do
      local c = assert(check_proof(s:proof("POST", "https://rs.example/mcp", "t"), "POST", "https://rs.example/mcp",
        { access_token = "t" }))
      assert.is_nil(seen[c.jti], "jti reused")
      seen[c.jti] = true
    end
  end)

  it("an altered proof fails its signature", function()
    local s = assert(dpop.new())
    local proof = s:proof("POST", "https://rs.example/mcp")
    local h, _, sig = proof:match("^([^.]+)%.([^.]+)%.([^.]+)$")
    local c = jose.decode(proof).payload
    c.htu = "https://rs.example/other"
    local forged = h .. "." .. jose.base64url_encode(require("mcp.json").encode(c)) .. "." .. sig
    local _, why = check_proof(forged, "POST", "https://rs.example/other")
    assert.equals("signature", why)
  end)

  it("remembers the nonce per origin and retries once per new nonce (AS: 400, RS: 401)", function()
    local s = assert(dpop.new())
    local as, rs = "https://as.example/token", "https://rs.example/mcp"
    -- The authorization server asks for a nonce (RFC 9449 section 8).
    local first = s:proof("POST", as)
    assert.is_nil(jose.decode(first).payload.nonce)
    local retry = s:observe(as, 400, { ["dpop-nonce"] = "n-as-1" }, '{"error":"use_dpop_nonce"}', nil)
    assert.is_true(retry)
    local second = s:proof("POST", as)
    assert.is_truthy(check_proof(second, "POST", as, { nonce = "n-as-1" }))
    -- The same refusal with the nonce the client already sent: no retry (no loop).
    assert.is_false(s:observe(as, 400, { ["DPoP-Nonce"] = "n-as-1" }, '{"error":"use_dpop_nonce"}', "n-as-1"))
    -- A nonce challenge without any nonce: nothing to retry with.
    assert.is_false(s:observe("https://other.example/token", 400, {}, { error = "use_dpop_nonce" }, nil))
    -- The resource server's nonce is its own (section 9).
    assert.is_nil(s:nonce(rs))
    local www = 'DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"'
    assert.is_true(s:observe(rs, 401, { ["www-authenticate"] = www, ["dpop-nonce"] = "n-rs-1" }, "", nil))
    assert.is_truthy(check_proof(s:proof("POST", rs, "t"), "POST", rs, { access_token = "t", nonce = "n-rs-1" }))
    assert.is_truthy(check_proof(s:proof("POST", as), "POST", as, { nonce = "n-as-1" }))
    -- A success may rotate the nonce: later proofs carry the new one, without a retry.
    assert.is_false(s:observe(rs, 200, { ["dpop-nonce"] = "n-rs-2" }, "", "n-rs-1"))
    assert.equals("n-rs-2", s:nonce(rs .. "?q"))
    -- Any other 401 is not a nonce challenge.
    assert.is_false(s:observe(rs, 401, { ["www-authenticate"] = 'DPoP error="invalid_token"', ["dpop-nonce"] = "n3" },
      "", "n-rs-2"))
    assert.is_false(dpop.is_nonce_challenge(500, {}, '{"error":"use_dpop_nonce"}'))
    -- A nonce that is not NQCHAR* (quotes, controls) is not kept, so it never reaches a proof.
    assert.is_false(s:observe(rs, 401, { ["www-authenticate"] = 'DPoP error="use_dpop_nonce"', ["dpop-nonce"] = 'a"b' },
      "", "n3"))
    assert.equals("n3", s:nonce(rs))
  end)

  it("a server that answers every proof with a fresh nonce is retried only as often as the caller allows", function()
    local s = assert(dpop.new())
    local url, tries, n = "https://rs.example/mcp", 0, 0
    -- The caller's loop, as the token and MCP requests run it: one retry per request at most.
    local function request()
      local sent
      for _ = 1, 2 do
        tries = tries + 1
        sent = s:nonce(url)
        n = n + 1
        local retry = s:observe(url, 401, { ["www-authenticate"] = 'DPoP error="use_dpop_nonce"',
          ["dpop-nonce"] = "nonce-" .. n }, "", sent)
        if not retry then return false end
      end
      return false
    end
    assert.is_false(request())
    assert.equals(2, tries)
  end)

  it("keeps its key through export and restore (the token store); no key material in tostring", function()
    local s = assert(dpop.new())
    local saved = s:export()
    assert.matches("BEGIN PRIVATE KEY", saved.key_pem)
    local again = assert(dpop.restore(saved))
    assert.equals(s:thumbprint(), again:thumbprint())
    local text = tostring(s)
    assert.matches("^mcp.auth.dpop %(ES256, thumbprint [%w_-]+%)$", text)
    local body = saved.key_pem:gsub("%-%-%-%-%-[^\n]*%-%-%-%-%-", ""):gsub("%s", "")
    assert.is_nil(text:find(body:sub(20, 40), 1, true))
  end)

  it("uses a given key (PEM, file, RSA) and refuses a bad or public one", function()
    local rsa = jose.generate_key("RSA")
    local s = assert(dpop.new({ key = rsa:pem(true) }))
    local d = jose.decode(s:proof("GET", "https://rs.example/mcp"))
    assert.equals("RS256", d.header.alg)
    assert.equals("RSA", d.header.jwk.kty)
    assert.is_truthy(check_proof(s:proof("GET", "https://rs.example/mcp"), "GET", "https://rs.example/mcp"))
    local bad, err = dpop.new({ key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" })
    assert.is_nil(bad)
    assert.equals("config", err.kind)
    assert.has_error(function() dpop.new({ key = rsa:pem() }) end, "mcp.auth.dpop.new: the key must be a private key")
    assert.has_error(function() dpop.proof(rsa, "P OST", "https://x.example/") end)
    assert.has_error(function() dpop.proof(rsa, "POST", "/relative") end)
    assert.has_error(function() dpop.proof("key", "POST", "https://x.example/") end)
  end)
end)
