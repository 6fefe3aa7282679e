#!/usr/bin/env bash
# What counting a server's system calls and context switches (src/experiment/request_cost.rs)
# costs it: the same one-worker server and load with and without the counters attached
# (examples/count_calls.rs), the two orders alternating round by round, as server CPU per
# request. Server pinned to CPU 0, load generator and counter to CPU 1.
#
#   scripts/request-cost-overhead.sh [ROUNDS] [DURATION_S]
#
# Environment: MODELS (default "epoll tokio threads"), CONNECTIONS (50), SIZE (64),
# ECHOLAB (target/release/echolab), COUNTER (target/release/examples/count_calls).
# Prints one CSV row per run, then per model the median ratio of CPU per request
# counted/not counted over the rounds, with the lowest and highest.
set -euo pipefail
rounds=${1:-5}
duration=${2:-5}
bin=${ECHOLAB:-target/release/echolab}
counter=${COUNTER:-target/release/examples/count_calls}
[ -x "$counter" ] || cargo build --release --example count_calls >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cpu_s() {
    sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($12 + $13) / hz}'
}

one() { # model round counted
    taskset -c 0 "$bin" serve --model "$1" --workers 1 --addr 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
    local server=$!
    for _ in $(seq 1 100); do grep -q "^listening on" "$work/serve.out" && break; sleep 0.05; done
    local addr pid
    addr=$(head -1 "$work/serve.out" | awk '{print $3}')
    pid=$server
    local counts=""
    if [ "$3" = yes ]; then
        taskset -c 1 "$counter" "$pid" "$((duration + 1))" >"$work/counts" &
        sleep 0.2
    fi
    local before after
    before=$(cpu_s "$pid")
    rm -rf "$work/load"
    taskset -c 1 "$bin" load --target "$addr" --connections "${CONNECTIONS:-50}" --duration "${duration}s" \
        --size "${SIZE:-64}" --out "$work/load" --quiet >/dev/null 2>"$work/load.err"
    after=$(cpu_s "$pid")
    if [ "$3" = yes ]; then wait %2 2>/dev/null || true; counts=$(cat "$work/counts"); fi
    kill -TERM "$server"; wait "$server" || true
    python3 - "$work/load/summary.json" "$1" "$2" "$3" "$before" "$after" "$counts" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
model, r, counted, before, after, counts = sys.argv[2:8]
n = s["requests_completed"]
cpu = float(after) - float(before)
print(f"{model},{r},{counted},{n},{cpu:.2f},{cpu / n * 1e6:.3f},{counts}")
PY
}

echo "model,round,counted,requests,server_cpu_s,server_cpu_us_per_req,counts" | tee "$work/runs.csv"
for r in $(seq 1 "$rounds"); do
    for model in ${MODELS:-epoll tokio threads}; do
        if [ $((r % 2)) = 1 ]; then order="no yes"; else order="yes no"; fi
        for counted in $order; do one "$model" "$r" "$counted" | tee -a "$work/runs.csv"; done
    done
done
python3 - "$work/runs.csv" <<'PY'
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1])))
for model in dict.fromkeys(r["model"] for r in runs):
    per = {}
    for r in runs:
        if r["model"] == model:
            per.setdefault(r["round"], {})[r["counted"]] = float(r["server_cpu_us_per_req"])
    ratios = sorted(p["yes"] / p["no"] for p in per.values() if "yes" in p and "no" in p)
    print(f"{model}: counted/not counted CPU per request, median {statistics.median(ratios):.3f} "
          f"(lowest {ratios[0]:.3f}, highest {ratios[-1]:.3f}, {len(ratios)} rounds)")
PY
