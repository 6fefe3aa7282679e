#!/usr/bin/env bash
# One-worker echolab models against their C floors (benchmarks/c): the same client, in the
# same run, so every server sees the same machine noise.
#
#   scripts/floor-vs-model.sh [REPEATS] [DURATION]
#
# Servers: benchmarks/c/bin/epoll_echo, benchmarks/c/bin/uring_echo (built by
# benchmarks/c/build.sh if missing), and `echolab serve --workers 1` for each of MODELS
# (default "epoll uring"; add tokio, poll and select to see them against the epoll floor:
# each readiness model is measured right after c-epoll, uring after c-uring).
# With 2 or more CPUs the server is pinned to CPU 0 and the load generator to CPU 1.
# Environment: CONNECTIONS (default "50 500"), SIZE (128), ECHOLAB (target/release/echolab),
# MODELS (above).
# Prints one CSV row per run on stdout; server CPU per million requests is the number to
# compare (the rate moves with the machine's load, the CPU per request much less). The
# repeats are the outer loop, so slow drifts spread over every server alike.
set -euo pipefail

repeats=${1:-3}
duration=${2:-5s}
connections=(${CONNECTIONS:-50 500})
size=${SIZE:-128}
bin=${ECHOLAB:-target/release/echolab}
floors=benchmarks/c/bin
[ -x "$floors/epoll_echo" ] && [ -x "$floors/uring_echo" ] || benchmarks/c/build.sh >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

server_pin=() load_pin=()
if [ "$(nproc)" -ge 2 ]; then server_pin=(taskset -c 0) load_pin=(taskset -c 1); fi

declare -A servers=(
    [c-epoll]="$floors/epoll_echo 0"
    [c-uring]="$floors/uring_echo 0"
)
readiness=() completion=()
for model in ${MODELS:-epoll uring}; do
    case $model in
        epoll | tokio | poll | select) readiness+=("echolab-$model") ;;
        uring) completion+=("echolab-$model") ;;
        *) echo "floor-vs-model.sh: unknown model $model" >&2; exit 2 ;;
    esac
    servers[echolab-$model]="$bin serve --model $model --workers 1 --addr 127.0.0.1:0"
done
order=(c-epoll "${readiness[@]}")
[ ${#completion[@]} -gt 0 ] && order+=(c-uring "${completion[@]}")

# utime + stime of a process, in seconds (fields 14 and 15 of /proc/PID/stat, after the comm).
cpu_s() {
    sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($12 + $13) / hz}'
}

echo "server,connections,repeat,load_exit,requests,duration_s,req_per_s,mismatches,server_cpu_s,server_cpu_s_per_M"
for r in $(seq 1 "$repeats"); do
  for c in "${connections[@]}"; do
    for name in "${order[@]}"; do
        # shellcheck disable=SC2086
        "${server_pin[@]}" ${servers[$name]} >"$work/serve.out" 2>"$work/serve.err" &
        server=$!
        for _ in $(seq 1 100); do
            grep -q "^listening on" "$work/serve.out" && break
            sleep 0.05
        done
        addr=$(head -1 "$work/serve.out" | awk '{print $3}')
        before=$(cpu_s "$server")
        rm -rf "$work/load"
        status=0
        "${load_pin[@]}" "$bin" load --target "$addr" --connections "$c" --duration "$duration" \
            --size "$size" --out "$work/load" --quiet >/dev/null 2>"$work/load.err" || status=$?
        after=$(cpu_s "$server")
        kill -TERM "$server"
        wait "$server" || echo "$name exited with $? on SIGTERM" >&2
        python3 - "$work/load/summary.json" "$name" "$c" "$r" "$status" "$before" "$after" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
name, c, r, status = sys.argv[2:6]
cpu = float(sys.argv[7]) - float(sys.argv[6])
n = s["requests_completed"]
per_m = cpu / (n / 1e6) if n else float("nan")
print(f"{name},{c},{r},{status},{n},{s['duration_s']:.2f},{s['throughput_rps']:.0f},{s['mismatches']},{cpu:.2f},{per_m:.2f}")
PY
    done
  done
done
