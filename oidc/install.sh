#!/usr/bin/env bash
# Idempotent install of the oidc leg's npm packages (make oidc runs it): oidc-provider (an
# OpenID-certified authorization server), jose (JWT verification in the resource server) and the
# official TypeScript SDK (the MCP server behind it), each pinned, into the npm prefix
# $OIDC_PREFIX (default .deps/oidc, ignored by git). Instant when the prefix already holds that set.
#
#   OIDC_PREFIX=DIR bash oidc/install.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PREFIX=${OIDC_PREFIX:-.deps/oidc}
# name@version, one per line: the whole pinned set
PINS=(
  "oidc-provider@9.13.3"
  "jose@6.2.18"
  "@modelcontextprotocol/sdk@1.32.2"
  "express@5.3.0"
)

log() { printf 'oidc install: %s\n' "$*"; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "oidc install: node and npm are needed (make deps installs them)" >&2
  exit 1
fi

want=$(printf '%s\n' "${PINS[@]}")

mkdir -p "$PREFIX"
exec 9>"$PREFIX/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

if [[ -f $PREFIX/.installed && $(cat "$PREFIX/.installed") == "$want" && -d $PREFIX/node_modules ]]; then
  log "present in $PREFIX"
  exit 0
fi

log "installing into $PREFIX (node $(node --version))"
{
  printf '{\n  "private": true,\n  "type": "module",\n  "dependencies": {\n'
  n=${#PINS[@]}
  for i in "${!PINS[@]}"; do
    p=${PINS[$i]}
    name=${p%@*}
    ver=${p##*@}
    sep=","
    [[ $((i + 1)) -eq $n ]] && sep=""
    printf '    "%s": "%s"%s\n' "$name" "$ver" "$sep"
  done
  printf '  }\n}\n'
} >"$PREFIX/package.json"
rm -f "$PREFIX/.installed"
npm install --prefix "$PREFIX" --no-audit --no-fund --no-update-notifier --loglevel=error
# every package at the pinned version, or fail
bad=0
for p in "${PINS[@]}"; do
  name=${p%@*}
  ver=${p##*@}
  got=$(node -e 'try{console.log(require(process.argv[1]).version)}catch(e){console.log("absent")}' \
    "$PWD/$PREFIX/node_modules/$name/package.json")
  if [[ $got != "$ver" ]]; then
    echo "oidc install: $name: expected $ver, found $got" >&2
    bad=1
  fi
done
[[ $bad -eq 0 ]] || exit 1
printf '%s\n' "$want" >"$PREFIX/.installed"
log "installed"
