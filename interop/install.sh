#!/usr/bin/env bash
# Idempotent install of the interop suite's npm packages (make interop runs it): the official
# TypeScript SDK client and every server of interop/servers.lua, each at its pinned version, into
# the npm prefix $INTEROP_PREFIX (default .deps/interop, ignored by git; not .deps/npm, the test
# peers of make deps). Instant when the prefix already holds exactly that set.
#
#   INTEROP_PREFIX=DIR LUA=lua5.4 bash interop/install.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PREFIX=${INTEROP_PREFIX:-.deps/interop}
LUA=${LUA:-lua5.4}
# The client the servers are compared against (its 2.x line speaks 2026-07-28).
CLIENT_PKG=@modelcontextprotocol/client
CLIENT_VERSION=2.4.0

log() { printf 'interop install: %s\n' "$*"; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "interop install: node and npm are needed (make deps installs them)" >&2
  exit 1
fi

# package.json with every package pinned: the servers' list comes from interop/servers.lua.
want=$(
  "$LUA" - "$CLIENT_PKG" "$CLIENT_VERSION" <<'LUA'
    local s = dofile("interop/servers.lua")
    local deps = { { arg[1], arg[2] } }
    -- a server with an alias installs under that name (npm's "npm:" alias): a second version of a package
    for _, v in ipairs(s.servers) do
      deps[#deps + 1] = v.alias and { v.alias, "npm:" .. v.package .. "@" .. v.version } or { v.package, v.version }
    end
    table.sort(deps, function(a, b) return a[1] < b[1] end)
    local out = {}
    for i, d in ipairs(deps) do out[i] = ("    %q: %q"):format(d[1], d[2]) end
    io.write("{\n  \"private\": true,\n  \"dependencies\": {\n", table.concat(out, ",\n"), "\n  }\n}\n")
LUA
)

mkdir -p "$PREFIX"
exec 9>"$PREFIX/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

if [[ -f $PREFIX/.installed && $(cat "$PREFIX/.installed") == "$want" && -d $PREFIX/node_modules ]]; then
  log "present in $PREFIX"
  exit 0
fi

log "installing into $PREFIX (node $(node --version))"
printf '%s\n' "$want" >"$PREFIX/package.json"
rm -f "$PREFIX/.installed"
npm install --prefix "$PREFIX" --no-audit --no-fund --no-update-notifier --loglevel=error
# every package at the pinned version, or fail
"$LUA" - "$PREFIX" "$CLIENT_PKG" "$CLIENT_VERSION" <<'LUA'
  local s = dofile("interop/servers.lua")
  local prefix = arg[1]
  local bad = 0
  local function check(pkg, version)
    local f = io.open(prefix .. "/node_modules/" .. pkg .. "/package.json", "rb")
    local got = f and f:read("*a"):match("\"version\"%s*:%s*\"([^\"]+)\"")
    if f then f:close() end
    -- (a package.json may spell it with a leading v, which npm normalises away)
    if got == nil or got:gsub("^v", "") ~= version then
      io.stderr:write(("interop install: %s: expected %s, found %s\n"):format(pkg, version, tostring(got)))
      bad = bad + 1
    end
  end
  check(arg[2], arg[3])
  for _, v in ipairs(s.servers) do check(v.alias or v.package, v.version) end
  os.exit(bad == 0 and 0 or 1)
LUA
printf '%s\n' "$want" >"$PREFIX/.installed"
log "installed"
