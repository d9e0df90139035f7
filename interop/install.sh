#!/usr/bin/env bash
# Idempotent install of the interop suite's npm packages (make interop runs it): the official
# TypeScript SDK client and every server of interop/servers.lua, each at its pinned version, into
# the npm prefix $INTEROP_PREFIX (default .deps/interop, ignored by git; not .deps/npm, the test
# peers of make deps). Instant when the prefix already holds exactly that set
# (scripts/npm-pinned.sh).
#
#   INTEROP_PREFIX=DIR LUA=lua5.4 bash interop/install.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PREFIX=${INTEROP_PREFIX:-.deps/interop}
LUA=${LUA:-lua5.4}
# The client the servers are compared against (its 2.x line speaks 2026-07-28).
CLIENT_PKG=@modelcontextprotocol/client
CLIENT_VERSION=2.4.0

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
printf '%s\n' "$want" | bash scripts/npm-pinned.sh interop "$PREFIX"
