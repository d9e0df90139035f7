#!/usr/bin/env bash
# lua-mcp's sequential stdio tools/call against the floor (bench/floor.c's call), side by side in
# one run (issue 17), with the processes pinned. Each round runs the driver's `pair` row once per
# client in CLIENTS: one process that alternates batches of floor calls (bench/benchfloor.c, on a
# server of its own) and of lua-mcp calls, so both sides meet the same machine state. Prints, per
# placement and client, each round's calls/s as a share of the floor's and CPU per call as a
# multiple of the floor's, and their medians.
#
# Placement decides what a round trip costs on a VM, more than either client does: a server on
# the client's CPU answers in ~7 µs; one on the other CPU must be woken by an interprocessor
# interrupt, ~70-90 µs and ~20 µs of the client's CPU (measured here). Unpinned, the scheduler
# picks one or the other run by run. So each placement is measured on its own:
#   split: the client on CPU 0, both servers on CPU 1 (the usual case of a multi-core machine);
#   same:  the client and both servers on CPU 0 (the cost of the clients' own work shows most).
# Called by `make bench-floor-ratio` (which builds the module, the server and bench/benchfloor.c).
#
# Environment: ROUNDS (default 5), CALLS (measured calls per side, default 20000), WARMUP
# (unmeasured calls per side first, default 1000), PAIR_BATCH (calls per batch, default 500),
# CLIENTS (default "lua5.4 luajit"), PLACEMENTS (default "split same"; split needs two CPUs),
# TRANSPORTS (default "stdio http": over HTTP the floor is bench/floor_http.c's call,
# bench/benchfloor_http.c, to the same pinned bench/tiny_server --http).
# Never judges the numbers; exits non-zero only when a run fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-20000}
WARMUP=${WARMUP:-1000}
CLIENTS=${CLIENTS:-lua5.4 luajit}
PLACEMENTS=${PLACEMENTS:-split same}
TRANSPORTS=${TRANSPORTS:-stdio http}
BENCH_DIR=$PWD/build/bench
SERVER=$BENCH_DIR/tiny_server
[[ -x $SERVER ]] || { echo "floor_ratio: $SERVER not built (make bench-floor-ratio builds it)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "floor_ratio: taskset (util-linux) not found" >&2; exit 1; }
LUA_ENV=(env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4
         "LUA_PATH=$PWD/lua/?.lua;$PWD/lua/?/init.lua;;")

# The server as both sides start it (argv[0] only), pinned to a CPU: a generated wrapper.
server_on() { # cpu -> path
  local w=$BENCH_DIR/tiny_server_cpu$1
  printf '#!/bin/sh\nexec taskset -c %s %q\n' "$1" "$SERVER" >"$w"
  chmod +x "$w"
  echo "$w"
}

# start_http CPU, stop_http: an HTTP server pinned to a CPU, for the rounds of one placement
# shellcheck source=bench/http_server.sh
source "$PWD/bench/http_server.sh"

placement_cpus() { # placement -> "client_cpu server_cpu"
  case $1 in
    split) echo "0 1" ;;
    same) echo "0 0" ;;
    *) echo "floor_ratio: unknown placement $1" >&2; exit 1 ;;
  esac
}

# transport placement client -> "rate_ratio cpu_ratio lua_us floor_us lua_cpu_us floor_cpu_us"
run_pair() {
  local transport=$1 placement=$2 abi=$3 exe=$3 client_cpu server_cpu target
  [[ $3 == lua5.4 ]] && abi=5.4
  read -r client_cpu server_cpu < <(placement_cpus "$placement")
  if [[ $transport == stdio ]]; then target=$(server_on "$server_cpu"); else target=$HTTP_URL; fi
  "${LUA_ENV[@]}" "LUA_CPATH=$PWD/build/$abi/?.so;$BENCH_DIR/$abi/?.so;;" taskset -c "$client_cpu" "$exe" \
    "$PWD/bench/lua_driver.lua" pair "$transport" "$target" "$CALLS" "$WARMUP" |
    awk '/^BENCH/ { for (i = 1; i <= NF; i++) { split($(i), kv, "="); v[kv[1]] = kv[2] } }
      END { if (v["ops"] == "" || v["floor_wall_ms"] == "") exit 1
        n = v["ops"]
        printf "%.4f %.4f %.2f %.2f %.2f %.2f\n", v["floor_wall_ms"] / v["wall_ms"], v["cpu_s"] / v["floor_cpu_s"],
          v["wall_ms"] * 1000 / n, v["floor_wall_ms"] * 1000 / n, v["cpu_s"] * 1e6 / n, v["floor_cpu_s"] * 1e6 / n }'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

ncpu=$(nproc)
for transport in $TRANSPORTS; do
for placement in $PLACEMENTS; do
  if [[ $placement == split && $ncpu -lt 2 ]]; then
    echo "placement split: skipped (one CPU)"
    continue
  fi
  if [[ $transport == http ]]; then
    read -r _ server_cpu < <(placement_cpus "$placement")
    start_http "$server_cpu"
  fi
  declare -A RATE=() CPU=()
  echo "== $transport, placement $placement"
  printf '%-6s %-7s %11s %11s %12s %12s %8s %7s\n' round client "us/call" "floor us" "CPU us" "floor CPU" rate CPU
  for ((r = 1; r <= ROUNDS; r++)); do
    for c in $CLIENTS; do
      read -r rr cr lus fus lcpu fcpu < <(run_pair "$transport" "$placement" "$c")
      RATE[$c]+="$rr "
      CPU[$c]+="$cr "
      printf '%-6s %-7s %11s %11s %12s %12s %7.1f%% %6.2fx\n' "$r" "$c" "$lus" "$fus" "$lcpu" "$fcpu" \
        "$(awk -v x="$rr" 'BEGIN { print x * 100 }')" "$cr"
    done
  done
  for c in $CLIENTS; do
    printf '%s, %s, %s: median over %d rounds: %.1f%% of the floor'"'"'s calls/s, %.2fx its CPU per call (target: %s)\n' \
      "$transport" "$placement" "$c" "$ROUNDS" "$(echo "${RATE[$c]}" | median | awk '{ print $1 * 100 }')" \
      "$(echo "${CPU[$c]}" | median)" "$([[ $transport == stdio ]] && echo ">= 95%, <= 1.25x" || echo ">= 90%")"
  done
  unset RATE CPU
  stop_http
done
done
