#!/usr/bin/env bash
# Profiles lua-mcp's hot path on Lua 5.4 against the tiny C server (bench/README.md): called by
# `make bench-profile`, which builds build/bench/lua_prof_host (lua5.4 with symbols).
#   1. callgrind: instructions per sequential stdio tools/call (two runs, 1,000 and 6,000 calls
#      after 200 warm-up calls, differenced), exclusive and inclusive, by function;
#   2. the same per 10 MiB tools/call result (2 and 5 calls after one warm-up);
#   3. Lua VM instructions by Lua function and line (bench/lua_vm_profile.lua);
#   4. perf (when it works here): where the client's CPU time goes, kernel included.
# Writes build/bench/profile/*.txt and prints the heads.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=$PWD/build/bench/profile
HOST=$PWD/build/bench/lua_prof_host
SERVER=$PWD/build/bench/tiny_server
mkdir -p "$OUT"
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;;"
export LUA_CPATH="$PWD/build/5.4/?.so;$PWD/build/bench/5.4/?.so;;"
DRIVER=$PWD/bench/lua_driver.lua

cg() { # out-file driver-args...
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out" "$HOST" "$DRIVER" "$@" >/dev/null 2>"$out.log" ||
    { cat "$out.log" >&2; exit 1; }
}

echo "== callgrind: sequential stdio tools/call (Lua 5.4)"
cg "$OUT/cg.seq.1000.out" seq stdio "$SERVER" 1000 200
cg "$OUT/cg.seq.6000.out" seq stdio "$SERVER" 6000 200
lua5.4 bench/cg_diff.lua "$OUT/cg.seq.1000.out" "$OUT/cg.seq.6000.out" 5000 exclusive 40 >"$OUT/seq-exclusive.txt"
lua5.4 bench/cg_diff.lua "$OUT/cg.seq.1000.out" "$OUT/cg.seq.6000.out" 5000 inclusive 70 >"$OUT/seq-inclusive.txt"
head -n 25 "$OUT/seq-exclusive.txt"
echo
grep -E "instructions per|l_step|process_message|mcp_json_decode_value|decode_value|l_request|mcp_json_encode|luaC_step|l_alloc|luaD_precall|on_stdout|writev|localeconv" \
  "$OUT/seq-inclusive.txt" || true

echo
echo "== callgrind: one 10 MiB tools/call result over stdio (Lua 5.4)"
cg "$OUT/cg.big.2.out" big10m stdio "$SERVER" 2 1
cg "$OUT/cg.big.5.out" big10m stdio "$SERVER" 5 1
lua5.4 bench/cg_diff.lua "$OUT/cg.big.2.out" "$OUT/cg.big.5.out" 3 exclusive 15 | tee "$OUT/big10m-exclusive.txt"

echo
echo "== Lua VM instructions (count hook) for sequential stdio calls"
LUA_VM_PROFILE_STEP=7 LUA_VM_PROFILE_TOP=15 lua5.4 bench/lua_vm_profile.lua "$DRIVER" seq stdio "$SERVER" 5000 0 \
  >/dev/null 2>"$OUT/lua-vm.txt"
head -n 19 "$OUT/lua-vm.txt"

echo
if command -v perf >/dev/null 2>&1 && perf record -q -o "$OUT/perf.probe" -- true >/dev/null 2>&1; then
  echo "== perf (cpu-clock samples of the client process): share by object, then top symbols"
  perf record -q -F 4999 -g -o "$OUT/perf.seq.data" "$HOST" "$DRIVER" seq stdio "$SERVER" 30000 500 >/dev/null 2>&1
  perf report -i "$OUT/perf.seq.data" --no-children --comm lua_prof_host --sort dso -g none 2>/dev/null |
    grep '%' | head -n 8 | tee "$OUT/perf-dso.txt"
  perf report -i "$OUT/perf.seq.data" --no-children --comm lua_prof_host --sort dso,sym -g none 2>/dev/null |
    grep '%' | head -n 20 | tee "$OUT/perf-sym.txt"
  rm -f "$OUT/perf.probe"
else
  echo "== perf: not available here, skipped"
fi
echo
echo "profile: full outputs in $OUT"
