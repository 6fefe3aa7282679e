#!/usr/bin/env bash
# Client vs server CPU per request: `echolab load` against `echolab serve --model epoll`, closed
# loop, side by side in the same run, so both see the same machine noise.
#
#   scripts/client-vs-server.sh [REPEATS] [DURATION] [SERVER_WORKERS...] 
#
# Environment: CONNECTIONS (default "50 500"), SIZE (128), THREADS (client --threads values to
# compare, "default" for none; default "default"), LOAD_ARGS (extra `load` flags), ECHOLAB
# (default target/release/echolab). Prints one CSV row per run on stdout. The repeats are the
# outer loop, so slow drifts in machine load spread over every configuration alike.
set -euo pipefail

repeats=${1:-3}
duration=${2:-10s}
shift $(( $# > 2 ? 2 : $# ))
workers=("${@:-2}")
connections=(${CONNECTIONS:-50 500})
size=${SIZE:-128}
bin=${ECHOLAB:-target/release/echolab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# utime + stime of a process, in seconds (fields 14 and 15 of /proc/PID/stat, after the comm).
cpu_s() {
    local ticks
    ticks=$(sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}')
    echo "scale=3; $ticks / $(getconf CLK_TCK)" | bc
}

threads=(${THREADS:-default})
echo "server_workers,client_threads,connections,repeat,requests,duration_s,req_per_s,client_cpu_s,server_cpu_s,client_cpu_s_per_M,server_cpu_s_per_M,client_over_server"
for r in $(seq 1 "$repeats"); do
  for w in "${workers[@]}"; do
    for t in "${threads[@]}"; do
      for c in "${connections[@]}"; do
            thread_args=()
            [ "$t" != default ] && thread_args=(--threads "$t")
            "$bin" serve --model epoll --addr 127.0.0.1:0 --workers "$w" >"$work/serve.out" 2>"$work/serve.err" &
            server=$!
            for _ in $(seq 1 100); do
                grep -q " pid=" "$work/serve.out" && break
                sleep 0.05
            done
            addr=$(head -1 "$work/serve.out" | awk '{print $3}')
            before=$(cpu_s "$server")
            rm -rf "$work/load"
            # shellcheck disable=SC2086
            if ! "$bin" load --target "$addr" --connections "$c" --duration "$duration" --size "$size" \
                --out "$work/load" --quiet "${thread_args[@]}" ${LOAD_ARGS:-} >/dev/null 2>"$work/load.err"; then
                echo "load failed ($w workers, $c connections, repeat $r): $(cat "$work/load.err")" >&2
            fi
            after=$(cpu_s "$server")
            kill -TERM "$server"
            wait "$server" || true
            python3 - "$work/load/summary.json" "$w" "$c" "$r" "$before" "$after" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
w, c, r = sys.argv[2:5]
server = float(sys.argv[6]) - float(sys.argv[5])
client = s["client_cpu_user_s"] + s["client_cpu_sys_s"]
n = s["requests_completed"]
m = n / 1e6
print(f"{w},{s['threads']},{c},{r},{n},{s['duration_s']:.2f},{s['throughput_rps']:.0f},{client:.2f},{server:.2f},"
      f"{client / m:.2f},{server / m:.2f},{client / server:.2f}")
EOF
      done
    done
  done
done
