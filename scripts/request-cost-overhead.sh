#!/usr/bin/env bash
# What counting a server's system calls (src/experiment/measurement/request_cost.rs) costs it, in
# echolab steps: the same scenario (one worker pinned to CPU 0, an open-loop load below
# saturation on CPU 1) run with ECHOLAB_COUNT_SYSCALLS=0 (context switches only),
# `sampled` (system calls in sampled windows) and 1 (every system call over the whole
# load), the three interleaved round by round in a turning order. Prints each row, then
# per model and mode the median ratio to mode 0's in the same round, with the lowest and
# highest, of the server's CPU per request and of the response time's mean, p50 and p99,
# and the system calls per request each counting mode read.
#
#   scripts/request-cost-overhead.sh [ROUNDS] [DURATION]
#
# Environment: MODELS (default "epoll select uring"), CONNECTIONS (100), RATE (10000),
# ECHOLAB (target/release/echolab), OUT (a temporary directory).
set -euo pipefail
rounds=${1:-5}
duration=${2:-5s}
bin=${ECHOLAB:-target/release/echolab}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
models=$(printf '"%s", ' ${MODELS:-epoll select uring})
cat >"$out/overhead.toml" <<TOML
name = "request-cost-overhead"
models = [${models%, }]
[server]
workers = 1
cpus = [0]
[load]
size = 64
duration = "$duration"
rate = ${RATE:-10000}
connect_rate = 10000
connect_timeout = "5s"
cpus = [1]
[sweep]
connections = [${CONNECTIONS:-100}]
TOML
modes=(0 sampled 1)
for r in $(seq 1 "$rounds"); do
    for k in 0 1 2; do
        mode=${modes[$(((r + k) % 3))]}
        dir="$out/round-$r-$mode"
        ECHOLAB_COUNT_SYSCALLS=$mode "$bin" run "$out/overhead.toml" --out "$dir" --quiet >/dev/null
    done
done
python3 - "$out" "$rounds" <<'PY'
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for r in range(1, rounds + 1):
    for mode in ("0", "sampled", "1"):
        for row in csv.DictReader(open(f"{out}/round-{r}-{mode}/results.csv")):
            rows[(row["model"], r, mode)] = row
print("model,round,mode,requests,server_cpu_us_per_request,server_syscalls_per_req,server_wait_calls_per_req")
for (model, r, mode), row in rows.items():
    print(f"{model},{r},{mode},{row['requests']},{row['server_cpu_us_per_request']},"
          f"{row['server_syscalls_per_req']},{row['server_wait_calls_per_req']}")
def spread(v):
    v = sorted(v)
    return f"median {statistics.median(v):.3f} (lowest {v[0]:.3f}, highest {v[-1]:.3f}, n = {len(v)})"
def ratios(model, mode, column):
    return [float(rows[(model, r, mode)][column]) / float(rows[(model, r, "0")][column])
            for r in range(1, rounds + 1)
            if (model, r, mode) in rows and (model, r, "0") in rows]
for model in dict.fromkeys(m for m, _, _ in rows):
    for mode in ("sampled", "1"):
        calls = [float(rows[(model, r, mode)]["server_syscalls_per_req"] or "nan")
                 for r in range(1, rounds + 1) if (model, r, mode) in rows]
        waits = [float(rows[(model, r, mode)]["server_wait_calls_per_req"] or "nan")
                 for r in range(1, rounds + 1) if (model, r, mode) in rows]
        name = "sampled" if mode == "sampled" else "whole"
        print(f"{model} {name}/off CPU per request: "
              f"{spread(ratios(model, mode, 'server_cpu_us_per_request'))}; "
              f"syscalls per request {spread(calls)}; wait calls per request {spread(waits)}")
        for column in ("mean_us", "p50_us", "p99_us"):
            print(f"{model} {name}/off {column}: {spread(ratios(model, mode, column))}")
PY
