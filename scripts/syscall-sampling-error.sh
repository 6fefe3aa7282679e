#!/usr/bin/env bash
# How far the sampled system-call counts (src/experiment/request_cost.rs: windows of 10 ms
# every 200 ms, scaled to the whole time) are from the exact counts of the same calls: a
# one-worker server pinned to CPU 0 under an open-loop `echolab load` on CPU 1, counted
# both ways at once (examples/count_calls.rs --check), per model and round.
#
#   scripts/syscall-sampling-error.sh [ROUNDS] [DURATION_S]
#
# Environment: MODELS (default "epoll select uring"), CONNECTIONS (100), RATE (10000),
# ECHOLAB (target/release/echolab), COUNTER (target/release/examples/count_calls),
# WINDOWS ("PERIOD_MS WINDOW_MS", other windows than the runner's).
# Prints per run the sampled/exact ratio of every system call, the wait, read and write
# calls, then per model the median ratio with the lowest and highest.
set -euo pipefail
rounds=${1:-5}
duration=${2:-5}
bin=${ECHOLAB:-target/release/echolab}
counter=${COUNTER:-target/release/examples/count_calls}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "model,round,syscalls,wait,read,write"
for r in $(seq 1 "$rounds"); do
    for model in ${MODELS:-epoll select uring}; do
        taskset -c 0 "$bin" serve --model "$model" --workers 1 --addr 127.0.0.1:0 >"$work/serve.out" 2>/dev/null &
        server=$!
        for _ in $(seq 1 100); do grep -q "^listening on" "$work/serve.out" && break; sleep 0.05; done
        addr=$(head -1 "$work/serve.out" | awk '{print $3}')
        taskset -c 1 "$counter" "$server" "$duration" --check ${WINDOWS:-} >"$work/counts" &
        counting=$!
        rm -rf "$work/load"
        taskset -c 1 "$bin" load --target "$addr" --connections "${CONNECTIONS:-100}" \
            --rate "${RATE:-10000}" --duration "${duration}s" --size 64 --out "$work/load" --quiet \
            >/dev/null 2>&1 || true
        wait "$counting"
        kill -TERM "$server"; wait "$server" || true
        python3 - "$work/counts" "$model" "$r" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
sampled = dict(kv.split("=") for kv in lines[0].split())
exact = dict(kv.split("=") for kv in lines[1].split()[1:])
ratio = lambda k: f"{int(sampled[k]) / int(exact[k]):.3f}" if int(exact[k]) else "-"
print(",".join([sys.argv[2], sys.argv[3]] + [ratio(k) for k in ("syscalls", "wait", "read", "write")]))
PY
    done
done | tee "$work/runs.csv"
python3 - "$work/runs.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), fieldnames=["model", "round", "syscalls", "wait", "read", "write"]))
for model in dict.fromkeys(r["model"] for r in rows):
    parts = []
    for k in ("syscalls", "wait", "read", "write"):
        v = sorted(float(r[k]) for r in rows if r["model"] == model and r[k] != "-")
        if v:
            parts.append(f"{k} {statistics.median(v):.3f} ({v[0]:.3f}-{v[-1]:.3f})")
    print(f"{model} sampled/exact: " + ", ".join(parts))
PY
