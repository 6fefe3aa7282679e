#!/usr/bin/env bash
# Client CPU per request against its C floors (benchmarks/c/epoll_client, uring_client): every
# client drives the same one-worker server, in the same run, so all see the same machine noise.
#
#   scripts/client-floor.sh [ROUNDS] [SECONDS]          (defaults: 3 rounds of 5 s)
#
# Server: `echolab serve --model epoll --workers 1 --addr 127.0.0.1:0`, or SERVER (a command,
# split on spaces, whose first stdout line is "listening on HOST:PORT ..."); a fresh one per
# run. With 2 or more CPUs the server is pinned to CPU 0 and the client to CPU 1.
# Clients (CLIENTS, default "echolab c-epoll c-uring", plus echolab-uring when `echolab load`
# has --engine):
#   echolab        $ECHOLAB load --target ADDR --connections C --duration Ns --size 128 --quiet
#   echolab-uring  the same plus ECHOLAB_URING_ARGS (default "--engine uring")
#   c-epoll        benchmarks/c/bin/epoll_client HOST PORT C N
#   c-uring        benchmarks/c/bin/uring_client HOST PORT C N [URING_WAIT]
# (built by benchmarks/c/build.sh if missing; all 128-byte messages, closed loop).
# Environment: CONNECTIONS (default "50 500"), ECHOLAB (default target/release/echolab),
# URING_WAIT (uring_client's WAIT, default its own: 16).
# Server CPU: utime + stime from /proc/PID/stat just before and after the client. Client CPU:
# echolab's summary.json client_cpu_user_s + client_cpu_sys_s (the whole run, connecting
# included), the C clients' getrusage from all connections established to the last echo.
# Prints one CSV row per run on stdout; rounds are the outer loop, so slow drifts in the
# machine's load spread over every client alike.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-5}
connections=(${CONNECTIONS:-50 500})
bin=${ECHOLAB:-target/release/echolab}
floors=benchmarks/c/bin
uring_args=${ECHOLAB_URING_ARGS:---engine uring}
server_cmd=${SERVER:-$bin serve --model epoll --workers 1 --addr 127.0.0.1:0}
[ -x "$floors/epoll_client" ] && [ -x "$floors/uring_client" ] || benchmarks/c/build.sh >&2
has_engine=0
"$bin" load --help 2>/dev/null | grep -q -- --engine && has_engine=1
default_clients="echolab c-epoll c-uring"
[ "$has_engine" = 1 ] && default_clients+=" echolab-uring"
clients=(${CLIENTS:-$default_clients})
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

server_pin=() client_pin=()
if [ "$(nproc)" -ge 2 ]; then server_pin=(taskset -c 0) client_pin=(taskset -c 1); fi

# utime + stime of a process, in seconds (fields 14 and 15 of /proc/PID/stat, after the comm).
cpu_s() {
    sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($12 + $13) / hz}'
}

# Runs client $1 at $2 connections against $3 (HOST:PORT); prints the C clients' result line
# "requests N seconds S cpu_user U cpu_sys Y mismatches M" (echolab's summary.json made into one).
run_client() {
    local name=$1 c=$2 addr=$3 host port
    host=${addr%:*} port=${addr##*:}
    host=${host#[} host=${host%]}
    case $name in
    echolab | echolab-uring)
        local extra=()
        # shellcheck disable=SC2206
        [ "$name" = echolab-uring ] && extra=($uring_args)
        rm -rf "$work/load"
        "${client_pin[@]}" "$bin" load --target "$addr" --connections "$c" --duration "${seconds}s" \
            --size 128 --out "$work/load" --quiet "${extra[@]}" >/dev/null || return 1
        python3 - "$work/load/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"requests {s['requests_completed']} seconds {s['duration_s']} cpu_user {s['client_cpu_user_s']} "
      f"cpu_sys {s['client_cpu_sys_s']} mismatches {s['mismatches']}")
PY
        ;;
    c-epoll) "${client_pin[@]}" "$floors/epoll_client" "$host" "$port" "$c" "$seconds" ;;
    c-uring) "${client_pin[@]}" "$floors/uring_client" "$host" "$port" "$c" "$seconds" ${URING_WAIT:-} ;;
    *) echo "client-floor.sh: unknown client $name" >&2; return 1 ;;
    esac
}

echo "client,connections,round,requests,req_per_s,server_cpu_us_per_req,client_cpu_us_per_req,client_over_server,mismatches"
for r in $(seq 1 "$rounds"); do
  for c in "${connections[@]}"; do
    for name in "${clients[@]}"; do
        if [ "$name" = echolab-uring ] && [ "$has_engine" = 0 ] && [ -z "${ECHOLAB_URING_ARGS:-}" ]; then
            echo "client-floor.sh: $bin load has no --engine, echolab-uring skipped" >&2
            continue
        fi
        # shellcheck disable=SC2086
        "${server_pin[@]}" $server_cmd >"$work/serve.out" 2>"$work/serve.err" &
        server=$!
        for _ in $(seq 1 100); do
            grep -q "^listening on" "$work/serve.out" && break
            sleep 0.05
        done
        if ! grep -q "^listening on" "$work/serve.out"; then
            echo "client-floor.sh: the server did not start: $(cat "$work/serve.err")" >&2
            kill -TERM "$server" 2>/dev/null || true
            exit 1
        fi
        addr=$(head -1 "$work/serve.out" | awk '{print $3}')
        before=$(cpu_s "$server")
        status=0
        run_client "$name" "$c" "$addr" >"$work/client.out" 2>"$work/client.err" || status=$?
        after=$(cpu_s "$server" 2>/dev/null || echo nan)
        kill -TERM "$server" 2>/dev/null || true
        wait "$server" || echo "client-floor.sh: the server exited with $? on SIGTERM" >&2
        if [ "$status" != 0 ] || ! grep -q "^requests" "$work/client.out"; then
            echo "client-floor.sh: $name failed ($c connections, round $r, exit $status): $(cat "$work/client.err")" >&2
            continue
        fi
        if [ "$after" = nan ]; then
            echo "client-floor.sh: the server died during $name ($c connections, round $r)" >&2
            continue
        fi
        awk -v name="$name" -v c="$c" -v r="$r" -v before="$before" -v after="$after" '/^requests/ {
            n = $2; s = $4; client = $6 + $8; server = after - before
            if (n == 0 || server <= 0) { printf "%s,%s,%s,%d,,,,,%d\n", name, c, r, n, $10; exit }
            printf "%s,%s,%s,%d,%.0f,%.2f,%.2f,%.2f,%d\n", name, c, r, n, n / s,
                server / n * 1e6, client / n * 1e6, client / server, $10
        }' "$work/client.out"
    done
  done
done
