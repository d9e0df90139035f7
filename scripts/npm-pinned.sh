#!/usr/bin/env bash
# Idempotent install of a pinned set of npm packages into an npm prefix: the package.json on stdin
# names every package at its exact version ("name": "1.2.3", or an alias "name": "npm:pkg@1.2.3").
# Instant when the prefix already holds exactly that package.json; after an install every package
# must be at its pinned version, or it fails. interop/install.sh and oidc/install.sh use it.
#
#   bash scripts/npm-pinned.sh LABEL PREFIX <package.json
set -euo pipefail

LABEL=$1
PREFIX=$2
want=$(cat)

log() { printf '%s install: %s\n' "$LABEL" "$*"; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  log "node and npm are needed (make deps installs them)" >&2
  exit 1
fi

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
# every package at the pinned version, or fail (a package.json may spell it with a leading v,
# which npm normalises away)
node -e '
  const fs = require("fs"), path = require("path");
  const [label, prefix] = process.argv.slice(1);
  const deps = JSON.parse(fs.readFileSync(path.join(prefix, "package.json"), "utf8")).dependencies;
  let bad = 0;
  for (const [name, spec] of Object.entries(deps)) {
    const want = spec.startsWith("npm:") ? spec.slice(spec.lastIndexOf("@") + 1) : spec;
    let got = "absent";
    try {
      got = JSON.parse(fs.readFileSync(path.join(prefix, "node_modules", name, "package.json"), "utf8")).version;
    } catch (e) {}
    if (String(got).replace(/^v/, "") !== want) {
      console.error(`${label} install: ${name}: expected ${want}, found ${got}`);
      bad++;
    }
  }
  process.exit(bad === 0 ? 0 : 1);
' "$LABEL" "$PREFIX"
printf '%s\n' "$want" >"$PREFIX/.installed"
log "installed"
