#!/usr/bin/env bash
# Idempotent set-up of everything lua-mcp's build and tests need on Debian 12.
#
#   bash scripts/deps.sh        (or: make deps)
#
# 1. Debian packages: installs only the missing ones (apt-get update first). Instant
#    when all are present. Not root and something missing: prints the command to run.
# 2. When node and npm exist: the official MCP test peer
#    @modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION, the official filesystem server
#    (spec/sandbox_spec.lua) and the official TypeScript SDK @modelcontextprotocol/sdk@$MCP_SDK_VERSION
#    (spec/fixtures/sdk_server.mjs builds a server with it) into .deps/npm (skipped when those
#    versions are already there). MCP_SKIP_NPM=1 skips this step.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

EVERYTHING_PKG=@modelcontextprotocol/server-everything
EVERYTHING_VERSION=${MCP_EVERYTHING_VERSION:-2026.8.31}
FILESYSTEM_PKG=@modelcontextprotocol/server-filesystem
FILESYSTEM_VERSION=${MCP_FILESYSTEM_VERSION:-2026.8.31}
SDK_PKG=@modelcontextprotocol/sdk
SDK_VERSION=${MCP_SDK_VERSION:-1.32.2}
NPM_PREFIX=.deps/npm

# Debian packages the build, the tests and the sanitizer/valgrind runs use (lua5.2/lua5.3 and their
# headers: `make test LUA=5.2` / `LUA=5.3`; Debian's lua-busted and lua-cjson serve every version; neovim: the headless
# Neovim specs of `make test-nvim`; Debian's is built with LuaJIT; lua-check and clang-format:
# `make lint` and `make format-check`; lua-rex-pcre2: the optional engine mcp.schema runs the
# patterns its own regex engine cannot with, so both paths are tested).
PACKAGES=(
  lua5.4 liblua5.4-dev lua-cjson libcurl4-openssl-dev lua-busted luarocks
  luajit libluajit-5.1-dev lua5.1 liblua5.1-0-dev lua-compat53-dev
  lua5.3 liblua5.3-dev lua5.2 liblua5.2-dev
  valgrind pkg-config clang libclang-rt-14-dev libssl-dev openssl locales
  neovim lua-check clang-format lua-rex-pcre2
  libsecret-tools gnome-keyring dbus-daemon
)
# Tools that usually come with the image; installed from Debian only if the command is absent.
declare -A TOOL_PACKAGES=([gcc]=gcc [make]=make [node]=nodejs [npm]=npm [curl]=curl)

log() { printf 'deps: %s\n' "$*"; }

missing=()
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null | awk '/ install ok installed$/ {print $1}' || true)
for p in "${PACKAGES[@]}"; do
  if ! grep -qxF "$p" <<<"$installed"; then
    missing+=("$p")
  fi
done
for cmd in gcc make node npm; do
  if ! command -v "$cmd" >/dev/null 2>&1; then
    missing+=("${TOOL_PACKAGES[$cmd]}")
  fi
done

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run as root:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    echo "deps: (or: sudo make deps)" >&2
    exit 1
  fi
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "Debian packages: all present"
fi

# --- a comma decimal-point locale --------------------------------------------
# spec/json_spec.lua checks that the JSON codec keeps '.' when the host sets LC_NUMERIC to one
# (as a game or an editor may); Debian's locales package has the data, localedef builds it.
if [[ $(id -u) -eq 0 ]] && command -v localedef >/dev/null 2>&1 && ! locale -a 2>/dev/null | grep -qix 'de_DE.utf-\{0,1\}8'; then
  log "building the de_DE.UTF-8 locale (json_spec's decimal-comma case)"
  localedef -i de_DE -f UTF-8 de_DE.UTF-8 || log "localedef failed: json_spec's locale case will be pending"
fi

# --- npm test peer ---------------------------------------------------------
if [[ ${MCP_SKIP_NPM:-0} == 1 ]]; then
  log "MCP_SKIP_NPM=1: skipping $EVERYTHING_PKG"
  exit 0
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  log "node/npm not found: skipping $EVERYTHING_PKG (specs that need it should skip)"
  exit 0
fi

installed_version() {
  local pj="$NPM_PREFIX/node_modules/${1:-$EVERYTHING_PKG}/package.json"
  [[ -f $pj ]] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version || "") } catch (e) {}' "$PWD/$pj"
}

mkdir -p "$NPM_PREFIX"
# Serialize concurrent `make deps` runs sharing this checkout.
exec 9>"$NPM_PREFIX/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

WANTED=("$EVERYTHING_PKG@$EVERYTHING_VERSION" "$FILESYSTEM_PKG@$FILESYSTEM_VERSION" "$SDK_PKG@$SDK_VERSION")
all_present() {
  local want
  for want in "${WANTED[@]}"; do
    [[ $(installed_version "${want%@*}") == "${want##*@}" ]] || return 1
  done
  [[ -e $NPM_PREFIX/node_modules/.bin/mcp-server-everything && -e $NPM_PREFIX/node_modules/.bin/mcp-server-filesystem ]]
}

if all_present; then
  log "${WANTED[*]}: present"
  exit 0
fi

log "installing ${WANTED[*]} into $NPM_PREFIX (node $(node --version))"
npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --no-update-notifier --save-exact \
  --loglevel=error "${WANTED[@]}"

for want in "${WANTED[@]}"; do
  got=$(installed_version "${want%@*}")
  if [[ $got != "${want##*@}" ]]; then
    echo "deps: expected $want in $NPM_PREFIX, found '${got:-nothing}'" >&2
    exit 1
  fi
done
log "${WANTED[*]}: installed"
