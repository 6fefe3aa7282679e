#!/usr/bin/env bash
# System calls per request of each one-worker model and of the load generator, from
# `strace -c -f` on both sides (server pinned to CPU 0, load to CPU 1), 128 B messages.
#
#   scripts/syscalls-per-request.sh
#
# Environment: CONNECTIONS (default "50 500"), MODELS ("epoll uring poll select tokio"),
# ECHOLAB (target/release/echolab), OUT (where strace's tables go; a temporary directory).
# Prints one line per side and run: the calls per completed request, most frequent first.
set -u
bin=${ECHOLAB:-target/release/echolab}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
for c in ${CONNECTIONS:-50 500}; do
for model in ${MODELS:-epoll uring poll select tokio}; do
  args="--model $model --workers 1"
  taskset -c 0 strace -c -f -o "$out"/server-$model-$c.txt $bin serve $args --addr 127.0.0.1:0 > "$out"/serve.out 2>"$out"/serve.err &
  spid=$!
  for i in $(seq 100); do grep -q "^listening on" "$out"/serve.out 2>/dev/null && break; sleep 0.1; done
  addr=$(head -1 "$out"/serve.out | awk '{print $3}')
  rm -rf "$out"/load
  taskset -c 1 strace -c -f -o "$out"/load-$model-$c.txt $bin load --target $addr --connections $c --duration 3s --size 128 --out "$out"/load --quiet >/dev/null 2>"$out"/load.err
  n=$(python3 -c "import json;print(json.load(open('"$out"/load/summary.json'))['requests_completed'])")
  kill -TERM $(pgrep -P $spid) 2>/dev/null; wait $spid 2>/dev/null
  for side in server load; do
    python3 - "$out"/$side-$model-$c.txt $n $side $model $c <<'PY'
import sys
f, n, side, model, c = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
rows = []
for line in open(f):
    p = line.split()
    if len(p) >= 5 and p[0][0].isdigit() and p[-1] != 'total':
        calls = int(p[3]); name = p[-1]
        rows.append((calls, name))
rows.sort(reverse=True)
per = ", ".join(f"{name} {calls/n:.3f}" for calls, name in rows[:6] if calls/n > 0.005)
tot = sum(c for c,_ in rows)/n
print(f"{side:6} {model:6} c={c:3} requests={n} syscalls/req={tot:.2f}: {per}")
PY
  done
done; done
