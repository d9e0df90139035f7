#!/usr/bin/env bash
# Idempotent install of the oidc leg's npm packages (make oidc runs it): oidc-provider (an
# OpenID-certified authorization server), jose (JWT verification in the resource server) and the
# official TypeScript SDK (the MCP server behind it), each pinned, into the npm prefix
# $OIDC_PREFIX (default .deps/oidc, ignored by git). Instant when the prefix already holds that set
# (scripts/npm-pinned.sh).
#
#   OIDC_PREFIX=DIR bash oidc/install.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PREFIX=${OIDC_PREFIX:-.deps/oidc}

bash scripts/npm-pinned.sh oidc "$PREFIX" <<'JSON'
{
  "private": true,
  "type": "module",
  "dependencies": {
    "oidc-provider": "9.13.3",
    "jose": "6.2.18",
    "@modelcontextprotocol/sdk": "1.32.2",
    "express": "5.3.0"
  }
}
JSON
