#!/usr/bin/env bash
# lua-mcp's sequential stdio tools/call against the floor (bench/floor.c), side by side in one run
# (issue 17): ROUNDS rounds, each running the floor and then the lua-mcp `seq stdio` row of every
# client in CLIENTS, one process after the other, so that each lua-mcp run is compared with a floor
# run made under the same load a moment before. Prints, per client, the ratios of each round and
# their median: calls/s as a share of the floor's, and CPU per call as a multiple of the floor's.
# Called by `make bench-floor-ratio` (which builds the module, the floor and the server first).
#
# Environment: ROUNDS (default 5), CALLS (measured calls per run, default 20000), WARMUP (unmeasured
# calls first, default 1000; the floor warms up CALLS/20), CLIENTS (default "lua5.4 luajit").
# Never judges the numbers; exits non-zero only when a run fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-20000}
WARMUP=${WARMUP:-1000}
CLIENTS=${CLIENTS:-lua5.4 luajit}
BENCH_DIR=$PWD/build/bench
SERVER=$BENCH_DIR/tiny_server
FLOOR=$BENCH_DIR/floor
for f in "$SERVER" "$FLOOR"; do
  [[ -x $f ]] || { echo "floor_ratio: $f not built (make bench-floor-ratio builds it)" >&2; exit 1; }
done
LUA_ENV=(env -u LUA_PATH_5_2 -u LUA_PATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_2 -u LUA_CPATH_5_3 -u LUA_CPATH_5_4
         "LUA_PATH=$PWD/lua/?.lua;$PWD/lua/?/init.lua;;")

# floor -> "calls_per_s us_cpu_per_call"
run_floor() {
  "$FLOOR" "$SERVER" "$CALLS" | awk '{ for (i = 1; i <= NF; i++) { if ($(i) == "calls/s,") r = $(i - 1); if ($(i) == "us") c = $(i - 1) } }
    END { if (r == "" || c == "") exit 1; print r, c }'
}

# client -> "calls_per_s us_cpu_per_call"
run_client() {
  local abi=$1 exe=$1
  [[ $1 == lua5.4 ]] && abi=5.4
  "${LUA_ENV[@]}" "LUA_CPATH=$PWD/build/$abi/?.so;$BENCH_DIR/$abi/?.so;;" "$exe" "$PWD/bench/lua_driver.lua" \
    seq stdio "$SERVER" "$CALLS" "$WARMUP" |
    awk '/^BENCH/ { for (i = 1; i <= NF; i++) { split($(i), kv, "="); v[kv[1]] = kv[2] } }
      END { if (v["ops"] == "") exit 1; printf "%.0f %.2f\n", v["ops"] / (v["wall_ms"] / 1000), v["cpu_s"] / v["ops"] * 1e6 }'
}

declare -A RATE CPU
printf '%-7s %-6s %10s %10s %12s %12s %9s %9s\n' round client calls/s floor/s "CPU us/call" "floor us" "rate" "CPU"
for ((r = 1; r <= ROUNDS; r++)); do
  read -r frate fcpu < <(run_floor)
  for c in $CLIENTS; do
    read -r crate ccpu < <(run_client "$c")
    rr=$(awk -v a="$crate" -v b="$frate" 'BEGIN { printf "%.3f", a / b }')
    cr=$(awk -v a="$ccpu" -v b="$fcpu" 'BEGIN { printf "%.3f", a / b }')
    RATE[$c]+="$rr "
    CPU[$c]+="$cr "
    printf '%-7s %-6s %10s %10s %12s %12s %8.1f%% %8.2fx\n' "$r" "$c" "$crate" "$frate" "$ccpu" "$fcpu" \
      "$(awk -v x="$rr" 'BEGIN { print x * 100 }')" "$cr"
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
for c in $CLIENTS; do
  printf '%s: median over %d rounds: %.1f%% of the floor'"'"'s calls/s, %.2fx its CPU per call (target: >= 95%%, <= 1.25x)\n' \
    "$c" "$ROUNDS" "$(echo "${RATE[$c]}" | median | awk '{ print $1 * 100 }')" "$(echo "${CPU[$c]}" | median)"
done
