-- TLS fixtures of the hostile matrix: certificates made at setup with the openssl command (a test
-- CA and leaves for 127.0.0.1) in a temp dir, and the HTTPS server that serves them
-- (spec/hostile/servers/https_server.mjs). `local tls = require("hostile.tls")`.
local mcp = require("mcp")
local helper = require("helper")

local M = {}

-- Under ASan the sanitizer's LD_PRELOAD must not reach the tools we run.
local function prefix()
  return helper.sanitizer() and "env -u LD_PRELOAD " or ""
end

local function run(cmd)
  local ok = os.execute(prefix() .. cmd .. " >/dev/null 2>&1")
  return ok == true or ok == 0 -- 5.1/LuaJIT: a status number; 5.2+: true|nil
end

local function write(path, text)
  local fh = assert(io.open(path, "w"))
  fh:write(text)
  fh:close()
end

--- Whether the openssl command is there to make the certificates.
function M.have_openssl()
  return helper.have_command("openssl")
end

-- A P-256 key and a certificate signing request for CN=127.0.0.1 (the SAN comes from the ext file).
local NEW_KEY = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

--- Make the certificates in a new temp dir: {dir=, ca=<dir>/ca.pem} and, each as NAME.pem
--- (the certificate) and NAME.key:
---   selfsigned  a self-signed leaf for IP:127.0.0.1
---   good        signed by the test CA, IP:127.0.0.1, valid for two days
---   expired     signed by the test CA, IP:127.0.0.1, expired yesterday (-days -1)
---   misnamed    signed by the test CA, valid, its only name DNS:other.invalid
function M.make_certs()
  local p = assert(io.popen("mktemp -d", "r"))
  local dir = assert(p:read("*l"))
  p:close()
  local q = function(name) return "'" .. dir .. "/" .. name .. "'" end
  write(dir .. "/req.cnf", table.concat({
    "[req]", "distinguished_name = dn", "prompt = no",
    "[dn]", "CN = lua-mcp test CA",
    "[ca]", "basicConstraints = critical,CA:TRUE", "keyUsage = critical,keyCertSign,cRLSign",
    "subjectKeyIdentifier = hash",
    "[selfsigned]", "subjectAltName = IP:127.0.0.1", "basicConstraints = CA:FALSE",
    "extendedKeyUsage = serverAuth", "",
  }, "\n"))
  write(dir .. "/leaf.ext", "subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n")
  write(dir .. "/misnamed.ext", "subjectAltName = DNS:other.invalid\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n")
  local ok = run(("openssl req -x509 -config %s -extensions ca %s -keyout %s -out %s -days 2")
    :format(q("req.cnf"), NEW_KEY, q("ca.key"), q("ca.pem")))
  ok = ok and run(("openssl req -x509 -config %s -extensions selfsigned %s -subj /CN=127.0.0.1 -keyout %s -out %s -days 2")
    :format(q("req.cnf"), NEW_KEY, q("selfsigned.key"), q("selfsigned.pem")))
  local leaves = { { "good", "leaf.ext", 2 }, { "expired", "leaf.ext", -1 }, { "misnamed", "misnamed.ext", 2 } }
  for i, leaf in ipairs(leaves) do
    local name, ext, days = leaf[1], leaf[2], leaf[3]
    ok = ok and run(("openssl req -new -config %s %s -subj /CN=127.0.0.1 -keyout %s -out %s")
      :format(q("req.cnf"), NEW_KEY, q(name .. ".key"), q(name .. ".csr")))
    ok = ok and run(("openssl x509 -req -in %s -CA %s -CAkey %s -set_serial %d -days %d -extfile %s -out %s")
      :format(q(name .. ".csr"), q("ca.pem"), q("ca.key"), 100 + i, days, q(ext), q(name .. ".pem")))
  end
  if not ok then
    M.remove(dir)
    error("openssl could not make the test certificates in " .. dir)
  end
  return { dir = dir, ca = dir .. "/ca.pem" }
end

--- Remove the temp dir of make_certs (only a directory mktemp -d named: .../tmp.XXXXXXXXXX).
function M.remove(dir)
  if dir ~= nil and dir:match("^/[%w/._-]*/tmp%.%w+$") then run("rm -rf '" .. dir .. "'") end
end

M.NAMES = { "selfsigned", "good", "expired", "misnamed" }

--- Start the HTTPS server on the certificates: {ports = {name = port}, f=}.
function M.start_https(certs)
  local f = assert(io.popen(("%snode %s/spec/hostile/servers/https_server.mjs '%s' %s 2>/dev/null")
    :format(prefix(), helper.root, certs.dir, table.concat(M.NAMES, " ")), "r"))
  local line = f:read("*l") or ""
  local ok, st = pcall(mcp.json.decode, line)
  assert(ok and type(st) == "table" and type(st.ports) == "table", "https_server.mjs did not start: " .. line)
  return { f = f, ports = st.ports }
end

--- The URL of the server's port for the certificate name.
function M.url(srv, name, path)
  return ("https://127.0.0.1:%d/%s"):format(srv.ports[name], path or "mcp")
end

--- What the server saw: {requests = {[path] = N}, tls_errors = N, pid = N} (fetched without
--- verification).
function M.state(srv)
  local f = assert(io.popen(("%scurl -sk %s"):format(prefix(), M.url(srv, "good", "state")), "r"))
  local out = f:read("*a")
  f:close()
  return mcp.json.decode(out)
end

function M.stop_https(srv)
  if srv == nil then return end
  local st = M.state(srv)
  if st and st.pid then helper.kill(st.pid, "TERM") end
  srv.f:close()
end

return M
