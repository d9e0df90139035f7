#!/usr/bin/env bash
# lua-mcp vs the official TypeScript SDK client: runs every row of the benchmark for each client
# over stdio and streamable HTTP, against the same tiny C server, and prints one table
# (bench/report.lua). Called by `make bench` (which builds the module and the server first);
# see bench/README.md.
#
#   bash bench/run.sh            full run, REPEAT=3 (median of 3), writes bench/results.md
#   QUICK=1 bash bench/run.sh    short run (CI), REPEAT=1, writes build/bench/results.md
#
# Environment: SERVER (default build/bench/tiny_server), SDK_VERSION, SDK_DIR (npm prefix, default
# .deps/bench-npm), REPEAT, OUT (results file), CLIENTS (default "lua5.4 luajit ts-sdk"),
# TRANSPORTS (default "stdio http"), ROWS (default "connect connect_nodisc seq inflight big1m big10m
# list1000 scale flood"), SCALE_NOFILE (the soft fd limit the scale row starts with, default 1024).
# Exits non-zero only when the benchmark cannot run (a driver fails); never on the numbers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

QUICK=${QUICK:-}
[[ $QUICK == 0 ]] && QUICK=
SERVER=${SERVER:-$PWD/build/bench/tiny_server}
SDK_VERSION=${SDK_VERSION:-1.32.2}
SDK_DIR=${SDK_DIR:-$PWD/.deps/bench-npm}
CLIENTS=${CLIENTS:-lua5.4 luajit ts-sdk}
TRANSPORTS=${TRANSPORTS:-stdio http}
ROWS=${ROWS:-connect connect_nodisc seq inflight big1m big10m list1000 scale flood}
SCALE_NOFILE=${SCALE_NOFILE:-1024}
BENCH_DIR=$PWD/build/bench
if [[ -n $QUICK ]]; then
  REPEAT=${REPEAT:-1}
  OUT=${OUT:-$BENCH_DIR/results.md}
else
  REPEAT=${REPEAT:-3}
  OUT=${OUT:-$PWD/bench/results.md}
fi
RAW=$BENCH_DIR/raw-$$.txt
mkdir -p "$BENCH_DIR"

# Operations measured and unmeasured warm-up operations per row: "N WARMUP".
declare -A COUNT
if [[ -n $QUICK ]]; then
  COUNT=([connect]="5 1" [connect_nodisc]="5 1" [seq]="2000 200" [inflight]="1280 640" [big1m]="3 2" [big10m]="2 2"
         [list1000]="3 2" [scale]="20 0" [flood]="1000 200")
else
  COUNT=([connect]="40 3" [connect_nodisc]="40 3" [seq]="20000 1000" [inflight]="20000 1280" [big1m]="30 3" [big10m]="10 3"
         [list1000]="30 3" [scale]="1000 0" [flood]="10000 640")
fi

log() { printf 'bench: %s\n' "$*" >&2; }

# --- the TypeScript SDK, pinned, in a gitignored npm prefix -----------------------------------
sdk_version() {
  local pj=$SDK_DIR/node_modules/@modelcontextprotocol/sdk/package.json
  [[ -f $pj ]] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" || true
}
if [[ " $CLIENTS " == *" ts-sdk "* ]]; then
  command -v node >/dev/null || { log "node not found (the ts-sdk client needs Node >= 18)"; exit 1; }
  if [[ $(sdk_version) != "$SDK_VERSION" ]]; then
    log "installing @modelcontextprotocol/sdk@$SDK_VERSION into $SDK_DIR"
    mkdir -p "$SDK_DIR"
    npm install --prefix "$SDK_DIR" --no-audit --no-fund --no-update-notifier --save-exact \
      --loglevel=error "@modelcontextprotocol/sdk@$SDK_VERSION" >&2
  fi
  [[ $(sdk_version) == "$SDK_VERSION" ]] || { log "@modelcontextprotocol/sdk@$SDK_VERSION missing in $SDK_DIR"; exit 1; }
fi
[[ -x $SERVER ]] || { log "$SERVER not built (make bench builds it)"; exit 1; }

# --- running one driver -------------------------------------------------------------------------
LUA_ENV=(env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4
         "LUA_PATH=$PWD/lua/?.lua;$PWD/lua/?/init.lua;;")

set_cmd() { # client -> CMD, the driver's command line
  case $1 in
    lua5.4) CMD=("${LUA_ENV[@]}" "LUA_CPATH=$PWD/build/5.4/?.so;$BENCH_DIR/5.4/?.so;;" lua5.4 "$PWD/bench/lua_driver.lua") ;;
    luajit) CMD=("${LUA_ENV[@]}" "LUA_CPATH=$PWD/build/luajit/?.so;$BENCH_DIR/luajit/?.so;;" luajit "$PWD/bench/lua_driver.lua") ;;
    # --no-warnings: the SDK's HTTP transport makes undici print a MaxListenersExceededWarning
    # per request after 1,500 (bench/README.md); the warnings are noise here, the cost is kept.
    ts-sdk) CMD=(env "MCP_BENCH_SDK_DIR=$SDK_DIR" node --no-warnings "$PWD/bench/ts_driver.mjs") ;;
    *) log "unknown client $1"; exit 1 ;;
  esac
}

# start_http, stop_http (a fresh server per process)
# shellcheck source=bench/http_server.sh
source "$PWD/bench/http_server.sh"

run_one() { # client transport row
  local client=$1 transport=$2 row=$3 target n warm out rc=0
  read -r n warm <<<"${COUNT[$row]}"
  if [[ $transport == http ]]; then
    start_http
    target=$HTTP_URL
  else
    target=$SERVER
  fi
  set_cmd "$client"
  if [[ $row == scale ]]; then
    # The scale row starts from the usual soft fd limit (1024): its servers need more, which
    # lua-mcp's core raises on demand (Node raises its own at start-up).
    out=$(ulimit -Sn "$SCALE_NOFILE" 2>/dev/null || true
          timeout 600 "${CMD[@]}" "$row" "$transport" "$target" "$n" "$warm") || rc=$?
  else
    out=$(timeout 600 "${CMD[@]}" "$row" "$transport" "$target" "$n" "$warm") || rc=$?
  fi
  stop_http
  if ((rc != 0)) || [[ $out != *BENCH* ]]; then
    log "FAILED: $client $transport $row (exit $rc)"
    printf '%s\n' "$out" >&2
    exit 1
  fi
  printf '%s\n' "$out" | grep '^BENCH ' | sed "s/\$/ repeat=$rep/" >>"$RAW"
  printf '%s\n' "$out" | grep '^BENCH ' | sed 's/^BENCH /  /' >&2
}

# The floor of a sequential HTTP call (bench/floor_http.c), run (against its own fresh server) just
# before each lua-mcp client's sequential HTTP row, so that every lua-mcp run has a floor run made
# under the same load a moment before: report.lua divides each pair (pair=<client>).
run_floor_http() { # client
  local n out rc=0
  read -r n _ <<<"${COUNT[seq]}"
  start_http
  out=$(timeout 600 "$BENCH_DIR/floor_http" "$HTTP_URL" "$n") || rc=$?
  stop_http
  if ((rc != 0)) || [[ $out != *BENCH* ]]; then
    log "FAILED: floor_http (exit $rc)"
    printf '%s\n' "$out" >&2
    exit 1
  fi
  printf '%s\n' "$out" | grep '^BENCH ' | sed "s/\$/ repeat=$rep pair=$1/" >>"$RAW"
  printf '%s\n' "$out" | grep -v '^BENCH ' | sed 's/^/  /' >&2
}

: >"$RAW"
t0=$SECONDS
log "$([[ -n $QUICK ]] && echo QUICK || echo full) run: clients [$CLIENTS], transports [$TRANSPORTS], rows [$ROWS], $REPEAT repeat(s); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 1; rep <= REPEAT; rep++)); do
  for row in $ROWS; do
    for transport in $TRANSPORTS; do
      [[ $row == scale && $transport != stdio ]] && continue # the scale row is stdio only
      [[ $row == flood && $transport != http ]] && continue  # the flood row is HTTP only
      for client in $CLIENTS; do
        if [[ $row == seq && $transport == http && $client != ts-sdk && -x $BENCH_DIR/floor_http ]]; then
          run_floor_http "$client"
        fi
        run_one "$client" "$transport" "$row"
      done
    done
  done
done
log "measured in $((SECONDS - t0)) s"
# The floor of a sequential stdio call on this machine (bench/floor.c), for the notes.
if [[ -x $BENCH_DIR/floor && " $ROWS " == *" seq "* ]]; then
  read -r n _ <<<"${COUNT[seq]}"
  export BENCH_FLOOR="$("$BENCH_DIR/floor" "$SERVER" "$n" 2>&1 | tail -n1)"
  log "$BENCH_FLOOR"
fi

# --- the table ---------------------------------------------------------------------------------
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- src lua 2>/dev/null) ]]; then commit="$commit+dirty (src/ or lua/ modified)"; fi
export BENCH_CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
export BENCH_CORES="$(nproc)"
export BENCH_MEM="$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
export BENCH_OS="$(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)"
export BENCH_LUA="$(lua5.4 -v 2>&1 | head -n1 | awk '{print $1, $2}')"
export BENCH_LUAJIT="$(luajit -v 2>&1 | head -n1 | awk '{print $1, $2}')"
export BENCH_NODE="$(node --version 2>/dev/null || echo -)"
export BENCH_SDK="$(sdk_version)"
export BENCH_CURL="$(pkg-config --modversion libcurl 2>/dev/null || echo '?')"
export BENCH_COMMIT="${BENCH_COMMIT:-$commit}"
export BENCH_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
export BENCH_MODE="$([[ -n $QUICK ]] && echo "QUICK=1 (short run, not for comparison)" || echo "full")"
export BENCH_REPEAT="$REPEAT"
export BENCH_SCALE_NOFILE="$SCALE_NOFILE"
export BENCH_COUNTS="$(for r in $ROWS; do printf '%s=%s+%s ' "$r" ${COUNT[$r]}; done)"
lua5.4 bench/report.lua "$RAW" "$OUT"
rm -f "$RAW"
log "wrote $OUT"
