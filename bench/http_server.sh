# Sourced by bench/run.sh and bench/floor_ratio.sh: one bench/tiny_server --http at a time.
# Needs SERVER (the tiny_server binary) and BENCH_DIR; start_http [CPU] starts a fresh one
# (pinned to CPU with taskset when given) and sets HTTP_URL; stop_http stops it (also on EXIT).

HTTP_PID=
stop_http() {
  if [[ -n $HTTP_PID ]]; then
    kill "$HTTP_PID" 2>/dev/null || true
    wait "$HTTP_PID" 2>/dev/null || true
    HTTP_PID=
  fi
}
trap stop_http EXIT

start_http() { # [cpu] -> HTTP_URL
  local portfile=$BENCH_DIR/port-$$ i pin=()
  [[ -n ${1:-} ]] && pin=(taskset -c "$1")
  rm -f "$portfile"
  "${pin[@]}" "$SERVER" --http 0 --idle-exit 120 >"$portfile" &
  HTTP_PID=$!
  for ((i = 0; i < 200; i++)); do
    [[ -s $portfile ]] && break
    sleep 0.02
  done
  [[ -s $portfile ]] || { echo "bench: the HTTP server did not start" >&2; exit 1; }
  HTTP_URL="http://127.0.0.1:$(head -n 1 "$portfile")/mcp"
  rm -f "$portfile"
}
