# Sourced by the scripts that run a placement_server of their own (demo_server.sh, bench_server.sh):
#   start_placement_server SERVER_BINARY WORK_DIR [flags...]   starts it on 127.0.0.1 (a free port) with its
#       data under WORK_DIR/data, stdout and log in WORK_DIR; sets PID and ADDRESS once it listens (30 s at most)
#   stop_placement_server   SIGTERM, up to 5 s to drain, then SIGKILL; safe to call when it is not running
PID=""
ADDRESS=""

start_placement_server() {
  local server="$1" work="$2"
  shift 2
  "$server" --listen 127.0.0.1:0 --data_dir "$work/data" "$@" > "$work/stdout" 2> "$work/server.log" &
  PID=$!
  for _ in $(seq 1 300); do  # 30 s for the "listening on HOST:PORT" line
    ADDRESS="$(sed -n 's/^listening on //p' "$work/stdout" | head -n 1)"
    [ -n "$ADDRESS" ] && return 0
    if ! kill -0 "$PID" 2>/dev/null; then
      echo "placement_server exited before listening:" >&2
      cat "$work/server.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "placement_server did not start listening within 30 s" >&2
  return 1
}

stop_placement_server() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PID" 2>/dev/null || true
  fi
}
