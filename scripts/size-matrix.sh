#!/usr/bin/env bash
# The message-size matrix: every model at every message size, one worker, echo throughput
# and server RSS, interleaved and repeated (docs/benchmarks.md, "Message size x model").
#
#   scripts/size-matrix.sh [ROUNDS] [DURATION] > matrix.csv
#
# Each run starts a fresh `echolab serve --model M --workers 1` (pinned to CPU 0 with 2 or
# more CPUs) and drives it with `echolab load --connections C --size S --duration D` (pinned
# to CPU 1), closed loop. Rounds are the outer loop and, within a round, every size runs
# every model back to back, so slow drifts of a shared machine spread over all of them alike.
# Environment: SIZES (default "64 4096 65536 1048576"), MODELS ("threads select poll epoll
# uring tokio"), CONNECTIONS (200), ECHOLAB (target/release/echolab), ENGINE (the load's
# --engine, epoll; uring to compare the load engines against one server model).
# Prints one CSV row per run on stdout, then (on stderr) the Markdown table: per size and
# model, the median and min–max over the rounds of MiB/s echoed (bytes received by the
# client / duration) and of the server's peak RSS (VmHWM), and the ratio of medians to epoll.
set -euo pipefail

rounds=${1:-3}
duration=${2:-5s}
sizes=(${SIZES:-64 4096 65536 1048576})
models=(${MODELS:-threads select poll epoll uring tokio})
connections=${CONNECTIONS:-200}
bin=${ECHOLAB:-target/release/echolab}
engine=${ENGINE:-epoll}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

server_pin=() load_pin=()
if [ "$(nproc)" -ge 2 ]; then server_pin=(taskset -c 0) load_pin=(taskset -c 1); fi

echo "round,size,model,connections,load_exit,requests,mismatches,duration_s,mib_per_s,server_peak_rss_kib" | tee "$work/rows.csv"
for r in $(seq 1 "$rounds"); do
  for size in "${sizes[@]}"; do
    for model in "${models[@]}"; do
        "${server_pin[@]}" "$bin" serve --model "$model" --workers 1 --addr 127.0.0.1:0 \
            >"$work/serve.out" 2>"$work/serve.err" &
        server=$!
        for _ in $(seq 1 400); do
            grep -q "^listening on" "$work/serve.out" && break
            sleep 0.05
        done
        addr=$(head -1 "$work/serve.out" | awk '{print $3}')
        # The server's own pid (its announcement names it), whatever wraps it.
        pid=$(head -1 "$work/serve.out" | sed -n 's/.* pid=\([0-9]*\).*/\1/p')
        rm -rf "$work/load"
        status=0
        "${load_pin[@]}" "$bin" load --engine "$engine" --target "$addr" --connections "$connections" \
            --duration "$duration" --size "$size" --out "$work/load" --quiet \
            >/dev/null 2>"$work/load.err" || status=$?
        peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
        if [ "$status" != 0 ]; then
            echo "size-matrix.sh: $model at $size B: load exited with $status" >&2
            tail -3 "$work/load.err" "$work/serve.err" >&2
        fi
        kill -TERM "$pid"
        wait "$server" || echo "$model exited with $? on SIGTERM" >&2
        python3 - "$work/load/summary.json" "$r" "$size" "$model" "$connections" "$status" "$peak" <<'PY' | tee -a "$work/rows.csv"
import json, sys
r, size, model, conns, status, peak = sys.argv[2:8]
try:
    s = json.load(open(sys.argv[1]))
    mib = s["bytes_received"] / s["duration_s"] / 2**20 if s["duration_s"] else 0.0
    print(f"{r},{size},{model},{conns},{status},{s['requests_completed']},{s['mismatches']},{s['duration_s']:.2f},{mib:.3f},{peak}")
except (OSError, ValueError, KeyError):
    print(f"{r},{size},{model},{conns},{status},0,0,0,0,{peak}")
PY
    done
  done
done

python3 - "$work/rows.csv" >&2 <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sizes = sorted({int(r["size"]) for r in rows})
models = list(dict.fromkeys(r["model"] for r in rows))
def label(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"
def cell(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"
print(f"| size | model | MiB/s median (min–max) | vs epoll | server peak RSS MiB median (min–max) | vs epoll | failed runs |")
print("|---|---|---|---|---|---|---|")
for size in sizes:
    at = [r for r in rows if int(r["size"]) == size]
    def values(model, key):
        return [float(r[key]) for r in at if r["model"] == model]
    epoll_mib = values("epoll", "mib_per_s")
    epoll_rss = values("epoll", "server_peak_rss_kib")
    for model in models:
        mib, rss = values(model, "mib_per_s"), values(model, "server_peak_rss_kib")
        if not mib:
            continue
        failed = sum(1 for r in at if r["model"] == model and (r["load_exit"] != "0" or r["mismatches"] != "0"))
        rel_mib = f"{statistics.median(mib) / statistics.median(epoll_mib):.2f}x" if epoll_mib and statistics.median(epoll_mib) else "—"
        rel_rss = f"{statistics.median(rss) / statistics.median(epoll_rss):.2f}x" if epoll_rss else "—"
        print(f"| {label(size)} | {model} | {cell(mib, lambda v: f'{v:,.0f}' if v >= 100 else f'{v:.1f}' if v >= 1 else f'{v:.2f}')} | {rel_mib} | "
              f"{cell([v / 1024 for v in rss], lambda v: f'{v:.1f}')} | {rel_rss} | {failed} |")
PY
